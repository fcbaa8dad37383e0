//! Hostile files (issue 26): each is a file of ours with one part made
//! wrong through the library, read by `read_profile` and `open`; each must
//! be an `Err` that says what is wrong, never a panic, an abort or a huge
//! allocation. Byte-level mutations are in `tests/hostile.rs`.
//!
//! The files are edited through the pure-Rust layer, which a build with
//! the MPI writers (the C layer) does not compile.

use std::path::{Path, PathBuf};

use rust_hdf5::format::messages::datatype::{CompoundMember, DatatypeMessage};

use crate::h5::{File, Group, H5Type, Layout};
use crate::options::Compression;
use crate::profile::Profile;

/// A directory of its own for test `name`.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sp-hostile-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two regions of three calls each, nested by parent ids.
fn profile() -> Profile {
    let mut p = crate::test_support::small_profile();
    p.region_names[1] = "b".into();
    p
}

/// Our file at `path`, then `edit` applied to its root group.
fn hostile(path: &Path, compression: Compression, edit: impl FnOnce(&Group)) {
    crate::write_profile(&profile(), path, compression).unwrap();
    let file = File::open_rw(path).unwrap();
    edit(&file.root().unwrap());
    file.close().unwrap();
}

/// Replaces `group/name` by a dataset of `len` values of `T` (`values`
/// written from 0) stored as `layout`.
fn replace<T: H5Type>(
    root: &Group,
    group: &str,
    name: &str,
    len: usize,
    layout: Layout,
    values: &[T],
) {
    let group = root.group(group).unwrap();
    group.remove(name).unwrap();
    let dtype = <T as rust_hdf5::H5Type>::hdf5_type();
    let d = group.create_typed::<T>(name, dtype, len, layout).unwrap();
    d.write(0, values).unwrap();
}

/// Sixteen bytes, stored as whatever compound a test names.
#[derive(Clone, Copy, Default)]
struct Pair(#[allow(dead_code)] [i64; 2]);

impl rust_hdf5::H5Type for Pair {
    fn hdf5_type() -> DatatypeMessage {
        DatatypeMessage::compound(16, Vec::new())
    }
    fn element_size() -> usize {
        16
    }
}

impl H5Type for Pair {
    const CLASS: crate::h5::Class = crate::h5::Class::Compound;
    fn read_all(_: &crate::h5::Dataset) -> crate::h5::Result<Vec<Self>> {
        unreachable!("written only")
    }
    fn read_range(_: &crate::h5::Dataset, _: usize, _: &mut [Self]) -> crate::h5::Result<()> {
        unreachable!("written only")
    }
    fn from_attr(_: &crate::attrs::AttrValue) -> crate::h5::Result<Self> {
        unreachable!("written only")
    }
}

/// Both readers fail on `path`, naming it, with a message containing `what`.
fn refused(path: &Path, what: &str) {
    let whole = crate::read_profile(path).map(drop);
    let open = crate::open_reader(path).map(drop);
    for (reader, result) in [("read_profile", whole), ("open", open)] {
        let err = result.expect_err(reader).to_string();
        assert!(err.contains(&path.display().to_string()), "{reader}: {err}");
        assert!(
            err.contains(what),
            "{reader}: {err:?} does not say {what:?}"
        );
    }
}

#[test]
fn a_declared_extent_of_10_15_elements_in_a_small_file_is_an_error() {
    // Before: `vec![0i64; 10^15]` aborted the process ("memory allocation
    // of 8000000000000000 bytes failed").
    let dir = dir("extent");
    let path = dir.join("x.h5");
    let huge = 1_000_000_000_000_000;
    for (group, name) in [
        ("rank_region_index", "source_lines"),
        ("events", "call_ids"),
    ] {
        hostile(&path, Compression::None, |root| {
            replace::<i64>(
                root,
                group,
                name,
                huge,
                Layout::Chunked { chunk: 1024 },
                &[],
            );
        });
        refused(&path, "more than its file holds");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_element_types_are_errors() {
    let dir = dir("types");
    let path = dir.join("x.h5");
    hostile(&path, Compression::None, |root| {
        replace::<f64>(
            root,
            "rank_region_index",
            "region_ids",
            2,
            Layout::Contiguous,
            &[0.0, 1.0],
        );
    });
    refused(
        &path,
        "region_ids: holds float values where integer values were expected",
    );
    hostile(&path, Compression::None, |root| {
        replace::<i64>(
            root,
            "region_table",
            "names",
            2,
            Layout::Contiguous,
            &[0, 1],
        );
    });
    refused(&path, "names: expected strings");
    hostile(&path, Compression::None, |root| {
        let group = root.group("metadata").unwrap();
        group.write_attr_str("x", "y").unwrap();
        root.write_attr_str("scope_profiler_schema", "3").unwrap();
    });
    refused(
        &path,
        "holds string values where integer values were expected",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_summary_compound_of_another_layout_is_refused_before_hdf5_converts_it() {
    // Before: HDF5 converted whatever compound the file declared; a
    // corrupt one crashed in H5T__conv_struct_opt.
    let dir = dir("compound");
    let path = dir.join("x.h5");
    hostile(&path, Compression::None, |root| {
        let group = root.group("rank_region_index").unwrap();
        group.remove("summary_statistics").unwrap();
        let member = |name: &str, offset| CompoundMember {
            name: name.into(),
            offset,
            datatype: DatatypeMessage::i64_type(),
        };
        // Two members swapped: "minimum" where "total" belongs.
        let dtype = DatatypeMessage::compound(16, vec![member("minimum", 0), member("total", 8)]);
        group
            .create_typed::<Pair>("summary_statistics", dtype, 2, Layout::Contiguous)
            .unwrap();
    });
    refused(
        &path,
        "summary_statistics: holds compound values of 16 bytes",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn overlapping_and_out_of_range_rows_are_errors() {
    let dir = dir("rows");
    let path = dir.join("x.h5");
    hostile(&path, Compression::None, |root| {
        replace::<u64>(
            root,
            "rank_region_index",
            "event_offsets",
            2,
            Layout::Contiguous,
            &[0, 2],
        );
    });
    refused(&path, "overlap");
    hostile(&path, Compression::None, |root| {
        replace::<u64>(
            root,
            "rank_region_index",
            "event_offsets",
            2,
            Layout::Contiguous,
            &[0, u64::MAX],
        );
    });
    refused(&path, "claims events");
    hostile(&path, Compression::None, |root| {
        replace::<u32>(
            root,
            "rank_region_index",
            "region_ids",
            2,
            Layout::Contiguous,
            &[0, 7],
        );
    });
    refused(&path, "names region 7 of 2");
    hostile(&path, Compression::None, |root| {
        replace::<i64>(root, "events", "durations", 5, Layout::Contiguous, &[1; 5]);
    });
    refused(&path, "durations has 5 values, expected 6");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_schema_from_the_future_is_an_error() {
    let dir = dir("schema");
    let path = dir.join("x.h5");
    hostile(&path, Compression::None, |root| {
        // Replaces the attribute.
        root.write_attr_i64("scope_profiler_schema", 4).unwrap();
    });
    refused(&path, "unsupported scope_profiler_schema 4");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn huge_chunks_are_refused() {
    // HDF5 allocates a whole chunk to read any of it, and allows no chunk
    // longer than its dataset: the empty extent is refused first.
    let dir = dir("chunks");
    let path = dir.join("x.h5");
    hostile(&path, Compression::None, |root| {
        let layout = Layout::Chunked { chunk: 1 << 24 };
        replace::<i64>(
            root,
            "rank_region_index",
            "source_lines",
            1 << 24,
            layout,
            &[],
        );
    });
    refused(
        &path,
        "source_lines: the dataset declares 16777216 elements",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_deflate_bomb_stops_at_the_chunk_size() {
    // A chunk of 4 values whose zlib stream inflates to 16 MiB.
    let dir = dir("bomb");
    let path = dir.join("x.h5");
    let mut bomb = Vec::new();
    {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(&mut bomb, flate2::Compression::best());
        z.write_all(&vec![0u8; 16 << 20]).unwrap();
        z.finish().unwrap();
    }
    hostile(&path, Compression::Gzip(4), |root| {
        let group = root.group("events").unwrap();
        group.remove("call_ids").unwrap();
        let layout = Layout::Deflate { chunk: 4, level: 4 };
        let d = group
            .create_typed::<i64>("call_ids", DatatypeMessage::i64_type(), 6, layout)
            .unwrap();
        d.write_chunk(0, &bomb).unwrap();
    });
    let reader = crate::open_reader(&path);
    let (index, columns) = reader.unwrap();
    let err = columns
        .read_row(&path, &index.rows[0], 0, 3, 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("inflates past its 32 bytes"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
