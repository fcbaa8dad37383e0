//! The pure-Rust layer's own behaviour: a file reopened to add to it (the
//! direct write path and the MPI `Direct` writer's ranks do), its
//! contiguous columns written in place.

use std::io::{Seek, SeekFrom, Write};

use super::{File, Layout};

fn dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sp-pure-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_reopened_file_takes_columns_in_place_and_new_datasets() {
    let dir = dir("reopen");
    let path = dir.join("x.h5");
    let file = File::create(&path).unwrap();
    let root = file.root().unwrap();
    root.write_attr_i64("answer", 42).unwrap();
    let events = root.create_group("events", false).unwrap();
    let durations = events
        .create_dataset::<i64>("durations", 1000, Layout::Preallocated)
        .unwrap();
    assert_eq!(
        durations.offset(),
        None,
        "not known before the metadata is written"
    );
    let index = root.create_group("index", false).unwrap();
    index
        .create_dataset::<u64>("counts", 3, Layout::Contiguous)
        .unwrap();
    let packed = root.create_group("packed", false).unwrap();
    let chunked = packed
        .create_dataset::<i64>(
            "ids",
            100,
            Layout::Deflate {
                chunk: 64,
                level: 1,
            },
        )
        .unwrap();
    chunked.write(0, &(0..100).collect::<Vec<i64>>()).unwrap();
    drop((root, events, index, packed, chunked));

    file.reopen().unwrap();
    let root = file.root().unwrap();
    let at = root
        .group("events")
        .unwrap()
        .dataset("durations")
        .unwrap()
        .offset();
    let at = at.expect("the offset of a preallocated column, once reopened");
    let values: Vec<u8> = (0..1000i64).flat_map(|v| (v * 3).to_le_bytes()).collect();
    let mut os = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    os.seek(SeekFrom::Start(at)).unwrap();
    os.write_all(&values).unwrap();
    drop(os);
    assert!(root.contains("index").unwrap() && root.contains("events").unwrap());
    let index = root.group("index").unwrap();
    index
        .dataset("counts")
        .unwrap()
        .write(0, &[7u64, 8, 9])
        .unwrap();
    index
        .write_strings("names", ["a", "b\0c"].into_iter())
        .unwrap();
    let rank = root.create_group("rank0", false).unwrap();
    rank.write_attr_strs("event_names", &["x", "y"]).unwrap();
    drop((root, index, rank));
    file.close().unwrap();

    let file = File::open(&path).unwrap();
    let root = file.root().unwrap();
    assert_eq!(root.attr("answer").unwrap().read_i64().unwrap(), 42);
    let durations: Vec<i64> = root
        .group("events")
        .unwrap()
        .dataset("durations")
        .unwrap()
        .read()
        .unwrap();
    assert_eq!(durations, (0..1000).map(|v| v * 3).collect::<Vec<i64>>());
    let index = root.group("index").unwrap();
    assert_eq!(
        index.dataset("counts").unwrap().read::<u64>().unwrap(),
        [7, 8, 9]
    );
    assert_eq!(
        index.dataset("names").unwrap().read_strings().unwrap(),
        ["a", "b\0c"]
    );
    let ids: Vec<i64> = root
        .group("packed")
        .unwrap()
        .dataset("ids")
        .unwrap()
        .read()
        .unwrap();
    assert_eq!(ids, (0..100).collect::<Vec<i64>>());
    let names = root.group("rank0").unwrap().attr("event_names").unwrap();
    assert_eq!(names.read_string_list().unwrap(), ["x", "y"]);
    let _ = std::fs::remove_dir_all(&dir);
}
