//! What the fuzz targets share: a scratch file per process, and everything
//! a reader does with a profile.

use std::path::{Path, PathBuf};

use scope_profiler_reader::{ProfileReader, export};

/// `bytes` written to this process's scratch file named `name` (in
/// /dev/shm when there is one: no disk writes per input).
pub fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new("/dev/shm");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("sp-fuzz-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).expect("write the scratch file");
    path
}

/// Open `path`, read every event, walk the call tree (two exports) and read
/// it whole: errors are fine, panics and crashes are what the fuzzers find.
pub fn read_everything(path: &Path) {
    if let Ok(reader) = ProfileReader::open(path) {
        for chunk in reader.chunks(4096) {
            if chunk.is_err() {
                break;
            }
        }
        let _ = reader.folded(&mut std::io::sink());
        let _ = reader.chrome_trace(&mut std::io::sink());
        let _ = reader.call_tree(export::Grouping::Lane);
    }
    let _ = scope_profiler::read_profile(path);
}

/// The real files the structured target edits: ours (plain and
/// compressed), the Python package's and the C API's (copies of
/// `../shared/reference/`).
pub const SEEDS: [&[u8]; 6] = [
    include_bytes!("../seeds/ours.h5"),
    include_bytes!("../seeds/ours-gz.h5"),
    include_bytes!("../seeds/python_schema3.h5"),
    include_bytes!("../seeds/python_features.h5"),
    include_bytes!("../seeds/python_aggregate.h5"),
    include_bytes!("../seeds/c_schema2.h5"),
];

/// Applies the edit script `script` to a copy of a seed: byte 0 picks the
/// seed; then each 6-byte step picks an operation, a field (among the
/// seed's little-endian integers of 4 or 8 bytes that hold a small nonzero
/// value: HDF5's sizes, counts, offsets and addresses, and our values)
/// and a new value: zero, all ones, huge, off by one, shifted, or a byte
/// flipped anywhere.
pub fn edit(script: &[u8]) -> Vec<u8> {
    let Some((&pick, steps)) = script.split_first() else {
        return Vec::new();
    };
    let mut bytes = SEEDS[pick as usize % SEEDS.len()].to_vec();
    let fields = |width: usize, bytes: &[u8]| -> Vec<usize> {
        (0..bytes.len().saturating_sub(width))
            .filter(|&i| {
                let mut v = [0u8; 8];
                v[..width].copy_from_slice(&bytes[i..i + width]);
                let v = u64::from_le_bytes(v);
                (9..1 << 20).contains(&v)
            })
            .collect()
    };
    let (f8, f4) = (fields(8, &bytes), fields(4, &bytes));
    for step in steps.chunks_exact(6) {
        let at = u32::from_le_bytes([step[1], step[2], step[3], 0]) as usize;
        let width = if step[0] & 1 == 0 { 8 } else { 4 };
        let candidates = if width == 8 { &f8 } else { &f4 };
        let arg = u64::from(u16::from_le_bytes([step[4], step[5]]));
        if step[0] >> 5 == 7 || candidates.is_empty() {
            // A bit flip anywhere, or a truncation.
            if step[0] & 2 == 0 {
                let bit = (at * 8 + (arg as usize % 8)) % (bytes.len() * 8).max(1);
                if let Some(b) = bytes.get_mut(bit / 8) {
                    *b ^= 1 << (bit % 8);
                }
            } else {
                bytes.truncate(at % bytes.len().max(1));
            }
            continue;
        }
        let position = candidates[at % candidates.len()];
        let mut old = [0u8; 8];
        old[..width].copy_from_slice(&bytes[position..position + width]);
        let old = u64::from_le_bytes(old);
        let new = match (step[0] >> 1) % 8 {
            0 => 0,
            1 => u64::MAX,
            2 => 1_000_000_000_000_000,
            3 => old.wrapping_add(1 + arg % 16),
            4 => old.wrapping_sub(1 + arg % 16),
            5 => old << (arg % 48),
            6 => arg,
            _ => old.wrapping_mul(arg.max(2)),
        };
        if position + width <= bytes.len() {
            bytes[position..position + width].copy_from_slice(&new.to_le_bytes()[..width]);
        }
    }
    bytes
}
