//! Spilled chunks as compressed blocks: what the spill writer puts in the
//! scratch file, and what `finalize` reads back (issue 25).
//!
//! A chunk's records become four columns of LEB128 varints: the zigzagged
//! difference of each end tick from the previous one (records are in end
//! order, so these are small), the duration in ticks (end - start), the
//! region and the depth. The columns are compressed with LZ4 (lz4_flex's
//! block format): the region and depth columns repeat with the program's
//! loops, and the tick columns have few distinct high bytes. A block is
//!
//! ```text
//! checksum u64 (FNV-1a of what follows) | raw length u32 | LZ4 block
//! ```
//!
//! all little-endian. Encoding runs on the spill writer's thread, never on
//! a recording thread. Decoding checks everything it reads: a block that was
//! changed on disk (a bit flip) is an `InvalidData` error, never a panic or
//! wrong records.

use std::io;

use crate::record::Record;

/// Bytes of a block's header: the checksum and the raw length.
const HEADER: usize = 12;

/// Most bytes one record takes raw: two u64 varints and two u32 varints.
const MAX_RAW_PER_RECORD: usize = 10 + 10 + 5 + 5;

/// Reusable buffers of one encoder (the spill writer keeps one).
#[derive(Default)]
pub struct Encoder {
    raw: Vec<u8>,
    block: Vec<u8>,
}

impl Encoder {
    /// The block of `records`, in a buffer of the encoder's (valid until
    /// the next call).
    pub fn encode(&mut self, records: &[Record]) -> &[u8] {
        let raw = &mut self.raw;
        raw.clear();
        let mut previous = 0u64;
        for r in records {
            push_varint(raw, zigzag(r.end.wrapping_sub(previous) as i64));
            previous = r.end;
        }
        for r in records {
            push_varint(raw, r.end.wrapping_sub(r.start));
        }
        for r in records {
            push_varint(raw, u64::from(r.region));
        }
        for r in records {
            // The flag in the low bit: an ok outcome costs no byte more.
            push_varint(raw, u64::from(r.depth()) << 1 | u64::from(r.ok()));
        }
        seal(raw, &mut self.block);
        &self.block
    }
}

/// Reusable buffers of one reader of spilled blocks.
#[derive(Default)]
pub struct Buffers {
    /// The block as read from the scratch file.
    pub block: Vec<u8>,
    /// Its decompressed columns.
    pub raw: Vec<u8>,
}

/// Decodes `block`, which holds `len` records, into `out` (replacing its
/// contents), using `raw` as scratch space.
///
/// # Errors
/// `InvalidData` naming what is wrong if the block is not what
/// [`Encoder::encode`] made of `len` records.
pub fn decode(
    block: &[u8],
    len: usize,
    raw: &mut Vec<u8>,
    out: &mut Vec<Record>,
) -> io::Result<()> {
    let corrupt = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    unseal(
        block,
        len.saturating_mul(4),
        len.saturating_mul(MAX_RAW_PER_RECORD),
        raw,
    )?;
    out.clear();
    out.resize(len, Record::default());
    let mut at = 0;
    let mut end = 0u64;
    for r in out.iter_mut() {
        end = end.wrapping_add(unzigzag(read_varint(raw, &mut at)?) as u64);
        r.end = end;
    }
    for r in out.iter_mut() {
        r.start = r.end.wrapping_sub(read_varint(raw, &mut at)?);
    }
    for r in out.iter_mut() {
        r.region = u32::try_from(read_varint(raw, &mut at)?)
            .map_err(|_| corrupt("a spilled record's region out of range"))?;
    }
    for r in out.iter_mut() {
        let word = read_varint(raw, &mut at)?;
        let depth = u32::try_from(word >> 1)
            .ok()
            .filter(|&d| d <= Record::MAX_DEPTH)
            .ok_or_else(|| corrupt("a spilled record's depth out of range"))?;
        *r = r.at_depth(depth).with_ok(word & 1 == 1);
    }
    if at != raw.len() {
        return Err(corrupt("a spilled block longer than its records"));
    }
    Ok(())
}

#[inline]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// `raw` compressed into `block` (replacing its contents) behind the
/// header: its checksum and its raw length.
pub(crate) fn seal(raw: &[u8], block: &mut Vec<u8>) {
    let bound = lz4_flex::block::get_maximum_output_size(raw.len());
    block.clear();
    block.resize(HEADER + bound, 0);
    // The output has the bound's room: compressing cannot fail.
    let n = lz4_flex::block::compress_into(raw, &mut block[HEADER..]).unwrap_or(0);
    block.truncate(HEADER + n);
    block[8..12].copy_from_slice(&(raw.len() as u32).to_le_bytes());
    let sum = fnv1a(&block[8..]);
    block[..8].copy_from_slice(&sum.to_le_bytes());
}

/// What [`seal`] made of bytes numbering `min..=max` back into `raw`
/// (replacing its contents), the checksum checked first.
///
/// # Errors
/// `InvalidData` naming what is wrong with the block.
pub(crate) fn unseal(block: &[u8], min: usize, max: usize, raw: &mut Vec<u8>) -> io::Result<()> {
    let corrupt = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    if block.len() < HEADER {
        return Err(corrupt("a spilled block shorter than its header"));
    }
    let sum = u64::from_le_bytes(block[..8].try_into().unwrap_or_default());
    if fnv1a(&block[8..]) != sum {
        return Err(corrupt("a spilled block whose checksum does not match"));
    }
    let raw_len = u32::from_le_bytes(block[8..12].try_into().unwrap_or_default()) as usize;
    if raw_len > max || raw_len < min {
        return Err(corrupt("a spilled block of an impossible length"));
    }
    raw.clear();
    raw.resize(raw_len, 0);
    let n = lz4_flex::block::decompress_into(&block[HEADER..], raw)
        .map_err(|e| corrupt(&format!("a spilled block that does not decompress: {e}")))?;
    if n != raw_len {
        return Err(corrupt("a spilled block shorter than its stated length"));
    }
    Ok(())
}

#[inline]
pub(crate) fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub(crate) fn read_varint(raw: &[u8], at: &mut usize) -> io::Result<u64> {
    // Most values are one byte (the columns' small differences).
    if let Some(&byte) = raw.get(*at)
        && byte < 0x80
    {
        *at += 1;
        return Ok(u64::from(byte));
    }
    read_long_varint(raw, at)
}

#[cold]
fn read_long_varint(raw: &[u8], at: &mut usize) -> io::Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *raw.get(*at).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "a spilled block cut short")
        })?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "a spilled block with an overlong number",
    ))
}

/// FNV-1a, 64 bits: a bit flip anywhere changes it.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records as a loop of two nested regions makes them, ends in order.
    fn records(n: usize) -> Vec<Record> {
        let mut out = Vec::with_capacity(n);
        let mut t = 1_000_000_000_000u64;
        for i in 0..n as u64 {
            t += 40 + (i * 7919) % 23;
            let depth = (i % 3 == 2) as u32;
            let duration = if depth == 0 { 90 + i % 17 } else { 31 + i % 5 };
            out.push(Record::new(t - duration, t, (i % 3) as u32, 1 - depth));
        }
        out
    }

    #[test]
    fn blocks_decode_to_the_records_they_were_made_of() {
        let mut encoder = Encoder::default();
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        let extremes = vec![
            Record::new(u64::MAX, 0, u32::MAX, Record::MAX_DEPTH).with_ok(true),
            Record::new(9, 10, 2, 0).with_ok(true),
            Record::new(0, u64::MAX, 0, 0),
            Record::new(5, 3, 1, 7),
        ];
        for case in [records(0), records(1), records(100_000), extremes] {
            let block = encoder.encode(&case).to_vec();
            decode(&block, case.len(), &mut raw, &mut out).unwrap();
            assert_eq!(out, case);
        }
    }

    #[test]
    fn a_loop_s_records_take_a_few_bytes_each() {
        let case = records(87_381); // a 2 MiB chunk's worth
        let bytes = Encoder::default().encode(&case).len();
        let per_record = bytes as f64 / case.len() as f64;
        assert!(per_record < 4.0, "{per_record:.2} bytes per record");
    }

    #[test]
    fn every_bit_flip_and_cut_is_an_error_never_a_panic() {
        let case = records(300);
        let block = Encoder::default().encode(&case).to_vec();
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        for bit in 0..block.len() * 8 {
            let mut bad = block.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let err = decode(&bad, case.len(), &mut raw, &mut out).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "bit {bit}");
        }
        for cut in 0..block.len() {
            assert!(decode(&block[..cut], case.len(), &mut raw, &mut out).is_err());
        }
        // The right block for another number of records.
        assert!(decode(&block, case.len() + 1, &mut raw, &mut out).is_err());
    }
}
