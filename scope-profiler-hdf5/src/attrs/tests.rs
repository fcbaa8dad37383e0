//! Tests of [`group_attrs`]: the reference files against what h5py reads,
//! files rust-hdf5 writes, and thousands of mutated files (no panic, no hang).

use super::*;
use rust_hdf5::format::checksum::checksum_metadata;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::test_support::{REFERENCE_FILES, h5py, reference};

fn attrs_at(path: &Path, group: &[&str]) -> Option<Vec<Attr>> {
    let file = File::open(path).unwrap();
    group_attrs(&file, group).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn int(name: &str, v: i64) -> Attr {
    Attr {
        name: name.into(),
        value: AttrValue::Int(v),
    }
}

fn string(name: &str, v: &str) -> Attr {
    Attr {
        name: name.into(),
        value: AttrValue::Str(v.into()),
    }
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sp-attrs-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What h5py 3.16 reads from the reference files (pasted from its output):
/// root attributes, and `metadata`'s, in h5py's (name) order.
#[test]
fn reference_files_hold_what_h5py_reads() {
    let Some(schema3) = reference("python_schema3.h5") else {
        return;
    };
    assert_eq!(
        attrs_at(&schema3, &[]).unwrap(),
        [
            int("scope_profiler_schema", 3),
            string("storage_layout", "columnar")
        ]
    );
    assert_eq!(
        attrs_at(&schema3, &["metadata"]).unwrap(),
        [
            string("chip_information", "Intel(R) Xeon(R) Processor"),
            int("finalize_time_ns", 303905801951),
            int("mpi_size", 1),
            int("num_nodes", 1),
            int("omp_num_threads", 2),
            string("platform", "Linux-6.18.44-fc-v1045-x86_64-with-glibc2.36"),
            string("python_version", "3.11.7"),
            string("scope_profiler_version", "0.7.5"),
            int("start_time_ns", 303866373049),
            string("timestamp", "2026-12-02T11:15:15.202952+00:00"),
            int("total_cores", 2),
        ]
    );
    let c = reference("c_schema2.h5").unwrap();
    assert_eq!(
        attrs_at(&c, &[]).unwrap(),
        [
            int("scope_profiler_schema", 2),
            string("storage_layout", "columnar")
        ]
    );
    assert_eq!(
        attrs_at(&c, &["metadata"]).unwrap(),
        [
            string("hostname", "vm"),
            string("label", "profile"),
            int("mpi_rank", 0),
            string("source", "native"),
            string("source_language", "c"),
            int("start_time_ns", 297042019795),
            string("timestamp", "2026-12-02T11:15:08+00:00"),
            int("trace_format_version", 2),
        ]
    );
    for name in ["python_features.h5", "python_aggregate.h5"] {
        let path = reference(name).unwrap();
        let root = attrs_at(&path, &[]).unwrap();
        assert_eq!(root[0], int("scope_profiler_schema", 3));
        let layout = if name == "python_aggregate.h5" {
            "aggregate"
        } else {
            "columnar"
        };
        assert_eq!(root[1], string("storage_layout", layout));
        let metadata = attrs_at(&path, &["metadata"]).unwrap();
        assert_eq!(metadata.len(), 11);
        assert_eq!(metadata[0], string("chip_information", "AMD EPYC"));
        assert_eq!(metadata[10], int("total_cores", 2));
    }
    // Groups without attributes, and groups that do not exist.
    assert_eq!(attrs_at(&schema3, &["events"]).unwrap(), []);
    assert_eq!(attrs_at(&schema3, &["rank0", "perf_events", "x"]), None);
    assert_eq!(attrs_at(&schema3, &["metadata", "nothing"]), None);
}

/// Files rust-hdf5 writes (superblock v2/v3, v2 headers): every attribute
/// kind, 40 attributes (dense storage), nested groups, in creation order.
#[test]
fn files_rust_hdf5_writes_read_back_in_creation_order() {
    let dir = scratch("rust-hdf5");
    let path = dir.join("written.h5");
    let mut expected_many = Vec::new();
    {
        let file = rust_hdf5::H5File::options()
            .track_order(true)
            .create(&path)
            .unwrap();
        let root = file.root_group();
        root.set_attr_numeric("z_schema", &3i64).unwrap();
        root.set_attr_string("a_layout", "columnar").unwrap();
        let perf = file
            .create_group("rank0")
            .unwrap()
            .create_group("perf_events")
            .unwrap()
            .create_group("region a")
            .unwrap();
        perf.set_attr_numeric("calls", &7i64).unwrap();
        perf.set_attr_string_array("event_names", &["cycles", "instructions", ""])
            .unwrap();
        perf.set_attr_numeric("max", &u64::MAX).unwrap();
        perf.set_attr_numeric("ratio", &0.25f64).unwrap();
        perf.set_attr_numeric("small", &-5i32).unwrap();
        perf.set_attr_numeric("single", &1.5f32).unwrap();
        perf.set_attr_array_numeric("values", &[1u64, 2, 3])
            .unwrap();
        let many = file.create_group("many").unwrap();
        for i in (0..40).rev() {
            let name = format!("attr{i:02}");
            if i % 2 == 0 {
                many.set_attr_numeric(&name, &(i as i64 * 1000)).unwrap();
                expected_many.push(int(&name, i as i64 * 1000));
            } else {
                let v = format!("value {i}");
                many.set_attr_string(&name, &v).unwrap();
                expected_many.push(string(&name, &v));
            }
        }
        for i in 0..20 {
            file.create_group(&format!("g{i:02}")).unwrap();
        }
        file.close().unwrap();
    }
    assert_eq!(
        attrs_at(&path, &[]).unwrap(),
        [int("z_schema", 3), string("a_layout", "columnar")]
    );
    let perf = attrs_at(&path, &["rank0", "perf_events", "region a"]).unwrap();
    assert_eq!(perf[0], int("calls", 7));
    assert_eq!(
        perf[1].value,
        AttrValue::Strs(vec!["cycles".into(), "instructions".into(), "".into()])
    );
    assert_eq!(perf[2].value, AttrValue::UInt(u64::MAX));
    assert_eq!(perf[3].value, AttrValue::Float(0.25));
    assert_eq!(perf[4].value, AttrValue::Int(-5));
    assert_eq!(perf[5].value, AttrValue::Float(1.5));
    assert!(
        matches!(&perf[6].value, AttrValue::Other(d) if d.contains("[3]")),
        "{perf:?}"
    );
    assert_eq!(perf.len(), 7);
    assert_eq!(attrs_at(&path, &["many"]).unwrap(), expected_many);
    assert_eq!(attrs_at(&path, &["g19"]).unwrap(), []);
    assert_eq!(attrs_at(&path, &["g20"]), None);
    assert_eq!(attrs_at(&path, &["rank0", "perf_events", "region b"]), None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The attributes as one line each, `name<US>kind<US>value` (strings of a
/// list joined with RS), the form the h5py script prints.
fn lines(attrs: &[Attr]) -> Vec<String> {
    attrs
        .iter()
        .map(|a| {
            let (kind, value) = match &a.value {
                AttrValue::Int(v) => ("i", v.to_string()),
                AttrValue::UInt(v) => ("u", v.to_string()),
                AttrValue::Float(v) => ("f", format!("{:?}", v)),
                AttrValue::Str(s) => ("s", s.clone()),
                AttrValue::Strs(v) => ("S", v.join("\u{1e}")),
                AttrValue::Other(_) => ("o", String::new()),
            };
            format!("{}\u{1f}{kind}\u{1f}{value}", a.name)
        })
        .collect()
}

/// Writes test files with h5py (superblock 0 and 3, v1 and v2 continuation
/// chunks, symbol tables, dense attributes and links, creation order, every
/// string kind) and prints what h5py reads from them and from the reference files.
const H5PY_SCRIPT: &str = r#"
import sys, os, h5py, numpy as np
out = sys.argv[1]
def fill(g, n):
    g.attrs["i32"] = np.int32(-7)
    g.attrs["be64"] = np.array(123456789, dtype=">i8")
    g.attrs["u8"] = np.uint8(200)
    g.attrs["u64"] = np.uint64(2**64 - 1)
    g.attrs["f32"] = np.float32(0.5)
    g.attrs["fbe"] = np.array(-2.75, dtype=">f8")
    g.attrs["vstr"] = "variable é"
    g.attrs["fstr"] = np.bytes_(b"fixed")
    g.attrs["vstrs"] = ["a", "bb", ""]
    g.attrs["fstrs"] = np.array([b"x", b"yy"], dtype="S4")
    g.attrs["ints"] = np.arange(3)
    for i in range(n):
        g.attrs["many%03d" % (n - i)] = "s" * (i * 37 % 300)
def build(name, **kw):
    with h5py.File(os.path.join(out, name), "w", **kw) as f:
        fill(f, 5)
        g = f.create_group("rank0/perf_events/region a")
        fill(g, 40)
        g.attrs["calls"] = 3
        g.attrs["event_names"] = ["cycles", "instructions"]
        for i in range(30):
            f.create_group("rank0/perf_events/r%02d" % i).attrs["k"] = i
        big = f.create_group("big", track_order=True)
        for i in range(7):
            big.attrs["big%d" % (9 - i)] = np.bytes_(b"x" * 3000 + str(i).encode())
            f.create_dataset("pad%d" % i, data=np.arange(500))
build("old.h5")
build("ordered.h5", track_order=True)
build("latest.h5", libver="latest")
def kind(v):
    if isinstance(v, np.ndarray) and v.dtype.kind in "OSU" and v.ndim >= 1:
        return "S", "\x1e".join(x.decode() if isinstance(x, bytes) else str(x) for x in v.ravel())
    if isinstance(v, (bytes, np.bytes_)):
        return "s", v.decode()
    if isinstance(v, str):
        return "s", v
    if isinstance(v, np.unsignedinteger) and v.dtype.itemsize == 8:
        return "u", str(int(v))
    if isinstance(v, np.integer):
        return "i", str(int(v))
    if isinstance(v, np.floating):
        return "f", repr(float(v))
    return "o", ""
files = [os.path.join(out, n) for n in ("old.h5", "ordered.h5", "latest.h5")] + sys.argv[2:]
for path in files:
    with h5py.File(path, "r") as f:
        for g in ["", "metadata", "rank0/perf_events/region a", "rank0/perf_events/r29", "big"]:
            if g and g not in f:
                continue
            print("@" + path + "\x1f" + g)
            for k, v in f[g or "/"].attrs.items():
                print(k + "\x1f" + "\x1f".join(kind(v)))
"#;

/// Files h5py writes, and the reference files, read equal to what h5py
/// reads, attribute for attribute and in h5py's order (h5py: `SP_H5PY` or
/// the interop venv; see `test_support::h5py`).
#[test]
fn files_h5py_writes_match_h5py() {
    let Some(python) = h5py() else {
        return;
    };
    let dir = scratch("h5py");
    let mut cmd = std::process::Command::new(python);
    cmd.arg("-c").arg(H5PY_SCRIPT).arg(&dir);
    for name in REFERENCE_FILES {
        if let Some(path) = reference(name) {
            cmd.arg(path);
        }
    }
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let mut groups = 0;
    for block in text.split('@').skip(1) {
        let mut block_lines = block.lines();
        let head = block_lines.next().unwrap();
        let (path, group) = head.split_once('\u{1f}').unwrap();
        let expected: Vec<&str> = block_lines.collect();
        let components: Vec<&str> = group.split('/').filter(|c| !c.is_empty()).collect();
        let got = attrs_at(Path::new(path), &components).unwrap();
        let got = lines(&got);
        assert_eq!(got.len(), expected.len(), "{path} {group}: {got:?}");
        for (g, e) in got.iter().zip(&expected) {
            let (g_kind, e_kind) = (g.split('\u{1f}').nth(1), e.split('\u{1f}').nth(1));
            if g_kind == Some("f") && e_kind == Some("f") {
                let value = |s: &str| s.rsplit('\u{1f}').next().unwrap().parse::<f64>().unwrap();
                assert_eq!(value(g), value(e), "{path} {group}");
            } else {
                assert_eq!(g, e, "{path} {group}");
            }
        }
        groups += 1;
    }
    assert!(groups >= 12 + REFERENCE_FILES.len() * 2, "{groups} groups");
    let _ = std::fs::remove_dir_all(&dir);
}

/// xorshift64: deterministic mutations.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Calls `group_attrs` (over the bytes in memory: writing each mutant to a
/// file would make the test disk-bound) on the three paths of each mutant;
/// returns (calls, panics).
fn run_mutants(mutants: impl Iterator<Item = Vec<u8>>) -> (usize, usize) {
    let paths: [&[&str]; 3] = [&[], &["metadata"], &["rank0", "perf_events", "region a"]];
    let (mut calls, mut panics) = (0, 0);
    for bytes in mutants {
        for group in paths {
            calls += 1;
            if catch_unwind(AssertUnwindSafe(|| attrs_in(&bytes.as_slice(), group))).is_err() {
                panics += 1;
            }
        }
    }
    (calls, panics)
}

/// The checksummed metadata blocks of a version-2 file whose extent is
/// known from the block alone: object headers (chunk 0), fractal heap
/// headers and v2 B-tree headers, as (offset, length, checksum last).
fn checksummed_blocks(file: &[u8]) -> Vec<(usize, usize)> {
    use rust_hdf5::format::chunk_index::btree_v2::Bt2Header;
    use rust_hdf5::format::fractal_heap::FractalHeapHeader;
    let ctx = FormatContext::default_v3();
    let mut out = Vec::new();
    for at in 0..file.len().saturating_sub(4) {
        let rest = &file[at..];
        let len = match &rest[..4] {
            b"OHDR" => ObjectHeader::decode_any(rest).ok().map(|(_, n)| n),
            b"FRHP" => FractalHeapHeader::decode(rest, &ctx)
                .ok()
                .map(|_| FractalHeapHeader::encoded_size(&ctx)),
            b"BTHD" => Bt2Header::decode(rest, &ctx)
                .ok()
                .map(|h| h.encoded_size(&ctx)),
            _ => None,
        };
        if let Some(len) = len.filter(|&n| n > 8 && at + n <= file.len()) {
            out.push((at, len));
        }
    }
    out
}

/// Makes the checksum of every block in `blocks` right again.
fn refix(blocks: &[(usize, usize)], m: &mut [u8]) {
    for &(at, len) in blocks {
        let sum = checksum_metadata(&m[at..at + len - 4]);
        m[at + len - 4..at + len].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Runs `f` on a thread, failing if it takes longer than `limit`.
fn with_watchdog<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("group_attrs hung (no result in {limit:?})"))
}

/// Mutants of `original`: a flip of one byte at every `stride`-th offset,
/// `random` seeded multi-byte overwrites, and truncations (every 1/64th).
fn mutants(original: Vec<u8>, stride: usize, random: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for at in (0..original.len()).step_by(stride) {
        let mut m = original.clone();
        m[at] ^= 0xff;
        out.push(m);
    }
    let mut rng = XorShift(seed);
    for _ in 0..random {
        let mut m = original.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(m.len());
            let len = 1 + rng.below(8);
            for b in m.iter_mut().skip(at).take(len) {
                *b = match rng.below(4) {
                    0 => 0,
                    1 => 0xff,
                    _ => rng.next() as u8,
                };
            }
        }
        out.push(m);
    }
    for cut in (0..original.len()).step_by(original.len() / 64 + 1) {
        out.push(original[..cut].to_vec());
    }
    out
}

/// Every reference file, and a rust-hdf5-written one, mutated thousands of
/// times: every call returns (Ok or Err), none panics (neither here nor
/// inside rust-hdf5's decoders), none hangs.
#[test]
fn mutated_files_never_panic_or_hang() {
    let dir = scratch("hostile");
    let mut sources: Vec<Vec<u8>> = REFERENCE_FILES
        .iter()
        .filter_map(|name| std::fs::read(reference(name)?).ok())
        .collect();
    // A v2/v3 file with dense attributes and checksummed structures.
    let written = dir.join("written.h5");
    {
        let file = rust_hdf5::H5File::options()
            .track_order(true)
            .create(&written)
            .unwrap();
        file.root_group().set_attr_numeric("schema", &3i64).unwrap();
        let g = file.create_group("metadata").unwrap();
        for i in 0..40 {
            g.set_attr_string(&format!("k{i}"), "v").unwrap();
        }
        g.set_attr_string_array("list", &["a", "b"]).unwrap();
        file.close().unwrap();
    }
    sources.push(std::fs::read(&written).unwrap());
    // Under valgrind (SP_MEMCHECK, scripts/memcheck.sh: 20-50x slower) a
    // sample: every 61st flip, 1 in 100 of the other mutations.
    let (step, share) = match std::env::var_os("SP_MEMCHECK") {
        Some(_) => (61, 100),
        None => (1, 1),
    };
    let (calls, panics, caught) = with_watchdog(Duration::from_secs(600), move || {
        let before = CAUGHT_PANICS.load(Ordering::Relaxed);
        let (mut calls, mut panics, mut refixed) = (0, 0, 0);
        for (i, source) in sources.into_iter().enumerate() {
            // One byte flipped at every offset, then random overwrites and
            // truncations; in a checksummed file, the same again with the
            // checksums made right, so that the decoders behind them see the
            // damage too.
            let blocks = checksummed_blocks(&source);
            let flips = (0..source.len()).step_by(step).map(|at| {
                let mut m = source.clone();
                m[at] ^= 0x5a;
                m
            });
            let (c, p) = run_mutants(flips);
            let seed = 0x9e37_79b9_7f4a_7c15 ^ i as u64;
            let randoms = mutants(source.clone(), 1 << 20, 3000 / share, seed);
            let (c2, p2) = run_mutants(randoms.into_iter());
            calls += c + c2;
            panics += p + p2;
            refixed += blocks.len();
            if !blocks.is_empty() {
                let mut rng = XorShift(0x2545_f491_4f6c_dd1d ^ i as u64);
                let fixed = (0..20_000 / share).map(|_| {
                    let (at, len) = blocks[rng.below(blocks.len())];
                    let mut m = source.clone();
                    for _ in 0..1 + rng.below(3) {
                        let pos = at + rng.below(len - 4);
                        m[pos] = if rng.below(3) == 0 {
                            m[pos] ^ 1
                        } else {
                            rng.next() as u8
                        };
                    }
                    refix(&blocks, &mut m);
                    m
                });
                let (c3, p3) = run_mutants(fixed);
                calls += c3;
                panics += p3;
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        let caught = CAUGHT_PANICS.load(Ordering::Relaxed) - before;
        eprintln!("{calls} calls on mutated files ({refixed} blocks re-checksummed)");
        (calls, panics, caught)
    });
    eprintln!("{panics} panics, {caught} caught in rust-hdf5");
    assert!(calls > 300_000 / share, "{calls}");
    assert_eq!(panics, 0);
    assert_eq!(caught, 0);
}
