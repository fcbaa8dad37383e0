//! The data of a comparison of several runs: each run's header and tree,
//! the regions' statistics per run (the table of what changed, as `diff`
//! computes it, against the first file), and the scaling key.

use std::path::PathBuf;

use scope_profiler::{self as sp};
use scope_profiler_reader::ProfileReader;
use serde_json::{Value, json};

use super::run;
use crate::Failure;
use crate::stats::{self, Stat};

/// The keys `--scaling-key auto` tries, in order: the first whose value
/// every run has and that differs between runs is the key.
const AUTO_KEYS: [&str; 5] = [
    "mpi_size",
    "omp_num_threads",
    "threads",
    "num_nodes",
    "label",
];

/// A run's value of `key`: a metadata value, or, for `threads` and
/// `mpi_size`, the thread table's length and the ranks of the file.
fn key_value(path: &std::path::Path, reader: &ProfileReader, key: &str) -> Option<Value> {
    match (key, run::meta(reader, key)) {
        (_, Some(sp::Value::Int(i))) => Some(json!(i)),
        (_, Some(sp::Value::UInt(u))) => Some(json!(u)),
        (_, Some(sp::Value::Float(f))) if f.is_finite() => Some(json!(f)),
        (_, Some(sp::Value::Str(s))) => Some(match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => json!(v),
            _ => json!(s),
        }),
        ("threads", _) => Some(json!(reader.threads().len())),
        ("mpi_size", _) => Some(json!(run::ranks(reader))),
        ("label", _) => Some(json!(run::label(path, reader))),
        _ => None,
    }
}

/// The scaling key and each run's value, or why there is none.
fn scaling_key(
    files: &[(PathBuf, ProfileReader)],
    key: Option<&str>,
) -> Result<Option<(String, Vec<Value>)>, Failure> {
    let values = |k: &str| -> Option<Vec<Value>> {
        files
            .iter()
            .map(|(p, r)| key_value(p, r, k))
            .collect::<Option<Vec<_>>>()
    };
    let varies = |v: &[Value]| v.iter().any(|x| *x != v[0]);
    match key {
        Some(k) => match values(k) {
            Some(v) => Ok(Some((k.to_owned(), v))),
            None => {
                let missing: Vec<String> = files
                    .iter()
                    .filter(|(p, r)| key_value(p, r, k).is_none())
                    .map(|(p, _)| p.display().to_string())
                    .collect();
                Err(Failure(format!(
                    "--scaling-key {k}: no such metadata key in {}",
                    missing.join(", ")
                )))
            }
        },
        None => Ok(AUTO_KEYS
            .iter()
            .filter_map(|k| {
                values(k)
                    .filter(|v| varies(v))
                    .map(|v| ((*k).to_owned(), v))
            })
            .next()),
    }
}

fn stat_json(s: Option<&Stat>) -> Value {
    match s {
        Some(s) => json!([s.calls, s.total, s.own, s.mean]),
        None => Value::Null,
    }
}

/// The comparison's data: `runs` (each run's header and tree), `regions`
/// (per region, `[calls, total, own, mean]` per run or null), the
/// scaling key and its values.
pub(crate) fn compare_json(
    files: &[(PathBuf, ProfileReader)],
    key: Option<&str>,
) -> Result<Value, Failure> {
    let mut runs = Vec::new();
    let mut per_run = Vec::new();
    for (path, reader) in files {
        let mut run = run::run_json(path, reader, false)?;
        // The lanes the run's work is spread over: its threads (every
        // rank's), or its ranks when the file has no thread table.
        let lanes = (reader.threads().len() as u64)
            .max(run::ranks(reader))
            .max(1);
        run["lanes"] = serde_json::json!(lanes);
        runs.push(run);
        per_run.push(stats::region_stats(reader)?);
    }
    // Regions in the base's order, then those new in later runs.
    let mut rows: Vec<stats::DiffRow> = stats::diff(&per_run[0], &per_run[0]);
    for other in &per_run[1..] {
        for r in stats::diff(&per_run[0], other) {
            if r.base.is_none() && !rows.iter().any(|x| x.name == r.name) {
                rows.push(r);
            }
        }
    }
    let regions: Vec<Value> = rows
        .iter()
        .map(|r| {
            let stats: Vec<Value> = per_run
                .iter()
                .map(|run| stat_json(run.iter().find(|(n, _)| *n == r.name).map(|(_, s)| s)))
                .collect();
            json!({ "name": r.name, "stats": stats })
        })
        .collect();
    let scaling = scaling_key(files, key)?;
    Ok(json!({
        "runs": runs,
        "regions": regions,
        "scaling_key": scaling.as_ref().map(|(k, _)| k.clone()),
        "scaling_values": scaling.map(|(_, v)| v),
    }))
}
