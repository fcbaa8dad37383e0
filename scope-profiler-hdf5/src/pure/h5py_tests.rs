//! Every dataset of the reference files (the Python package's and the C
//! API's) and of a file of ours, read through this layer, equals what h5py
//! reads: the same datasets, and each one's values (numbers as stored,
//! strings, compounds member by member). Attributes: `attrs/tests.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::types::Number;
use super::{File, Group};
use crate::test_support::{REFERENCE_FILES, h5py, reference};

/// Prints one JSON object per dataset: its path, kind and values.
const DUMP: &str = r#"
import json, math, sys, h5py, numpy as np
def num(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v
def text(v):
    if isinstance(v, bytes):
        return v.split(b"\0")[0].decode("utf-8", "replace")
    return str(v)
def visit(name, obj):
    if not isinstance(obj, h5py.Dataset):
        return
    dt = obj.dtype
    out = {"path": name}
    if dt.names:
        out["kind"] = "compound"
        out["fields"] = list(dt.names)
        out["values"] = [[num(row[f]) for f in dt.names] for row in obj[()]]
    elif h5py.check_string_dtype(dt) is not None:
        out["kind"] = "string"
        out["values"] = [text(v) for v in obj[()]]
    else:
        out["kind"] = "float" if dt.kind == "f" else "integer"
        out["values"] = [num(v) for v in np.atleast_1d(obj[()])]
    print(json.dumps(out))
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
"#;

/// A number as JSON compares it.
fn json_of(n: Number) -> Value {
    match n {
        Number::Int(v) => Value::from(v),
        Number::UInt(v) => Value::from(v),
        Number::Float(v) if v.is_finite() => Value::from(v),
        Number::Float(v) => Value::from(format!("{v:?}").replace("NaN", "nan")),
    }
}

/// Every dataset under `group` (at `path`), read through this layer.
fn walk(group: &Group, path: &str, out: &mut BTreeMap<String, Value>) {
    for name in group.member_names().unwrap() {
        let here = match path.is_empty() {
            true => name.clone(),
            false => format!("{path}/{name}"),
        };
        if let Ok(child) = group.group(&name) {
            walk(&child, &here, out);
            continue;
        }
        let dataset = group.dataset(&name).unwrap();
        let class = dataset.class().unwrap();
        let value = match class {
            // As stored: a NUL is ␀ in the file (`crate::strings`).
            "string" => Value::from(
                (dataset.read_strings().unwrap().iter())
                    .map(|s| crate::strings::encode(s).into_owned())
                    .collect::<Vec<_>>(),
            ),
            "integer" | "float" => {
                let numbers = dataset.numbers().unwrap();
                Value::from(numbers.into_iter().map(json_of).collect::<Vec<_>>())
            }
            "compound" => Value::Null, // compared against h5py's fields below
            other => panic!("{here}: a {other} dataset"),
        };
        out.insert(here, serde_json::json!({"kind": class, "values": value}));
    }
}

/// Checks `file` against h5py's reading of it; returns the datasets compared.
fn check(python: &Path, file: &Path) -> usize {
    let output = std::process::Command::new(python)
        .args(["-c", DUMP])
        .arg(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "h5py on {}: {stderr}",
        file.display()
    );
    let h5py: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ours_file = File::open(file).unwrap();
    let root = ours_file.root().unwrap();
    let mut ours = BTreeMap::new();
    walk(&root, "", &mut ours);
    let theirs: Vec<&str> = h5py.iter().map(|d| d["path"].as_str().unwrap()).collect();
    let mine: Vec<&str> = ours.keys().map(String::as_str).collect();
    let mut sorted = theirs.clone();
    sorted.sort_unstable();
    assert_eq!(mine, sorted, "{}: the datasets", file.display());
    for dataset in &h5py {
        let path = dataset["path"].as_str().unwrap();
        let kind = dataset["kind"].as_str().unwrap();
        assert_eq!(ours[path]["kind"], kind, "{}: {path}", file.display());
        let values = match kind {
            "compound" => {
                let (group, name) = path.rsplit_once('/').unwrap_or(("", path));
                let group = match group {
                    "" => root.group("").unwrap_or_else(|_| ours_file.root().unwrap()),
                    g => g
                        .split('/')
                        .fold(ours_file.root().unwrap(), |g, n| g.group(n).unwrap()),
                };
                let fields: Vec<&str> = dataset["fields"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_str().unwrap())
                    .collect();
                let columns = group
                    .dataset(name)
                    .unwrap()
                    .compound_columns(&fields)
                    .unwrap();
                let rows = columns.iter().flatten().map(Vec::len).next().unwrap_or(0);
                let rows: Vec<Value> = (0..rows)
                    .map(|r| {
                        let row = columns.iter().map(|c| json_of(c.as_ref().unwrap()[r]));
                        Value::from(row.collect::<Vec<_>>())
                    })
                    .collect();
                Value::from(rows)
            }
            _ => ours[path]["values"].clone(),
        };
        assert_eq!(values, dataset["values"], "{}: {path}", file.display());
    }
    h5py.len()
}

#[test]
fn every_dataset_reads_as_h5py_reads_it() {
    let Some(python) = h5py() else {
        return;
    };
    let mut files: Vec<std::path::PathBuf> = REFERENCE_FILES
        .iter()
        .filter_map(|n| reference(n))
        .collect();
    // A file of ours: compressed columns, every table.
    let dir = std::env::temp_dir().join(format!("sp-h5py-datasets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ours = dir.join("ours.h5");
    let profile = crate::test_support::small_profile();
    crate::write_profile(&profile, &ours, crate::options::Compression::Gzip(4)).unwrap();
    files.push(ours);
    let mut datasets = 0;
    for file in &files {
        datasets += check(&python, file);
    }
    // The four reference files and ours hold at least this many.
    assert!(
        files.len() < 5 || datasets >= 60,
        "{datasets} datasets compared"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
