//! An MPI session's file (feature `mpi`): every rank's plan into one
//! schema-3 file, collectively, by the writer [`MpiOutput`] chooses.
//!
//! Every step that can fail on one rank only ends in [`Serialized::agree`](crate::comm::Serialized::agree), so
//! that every rank returns the same `Ok` or the same `Err` and none waits
//! for a rank that gave up. What crosses MPI is small: counts (one
//! exclusive scan gives each rank its offsets), host names, rank 0's
//! metadata, and region names; never events.

#[cfg(feature = "mpio")]
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::Path;

use crate::assemble::Plan;
use crate::calltree::CallTree;
use crate::comm::{Serialized, decode_strings, encode_strings};
use crate::error::Error;
use crate::fxhash::FxHasher;
#[cfg(feature = "mpio")]
use crate::hdf5::Widths;
use crate::hdf5::{self, Layout3, Part, Strings};
use crate::options::{MpiOutput, Options, read};
use crate::profile::RegionCounters;
use crate::publish::Staged;
use crate::sink::IndexRow;
use crate::value::Value;

/// Fault injection for the failure tests: the rank this variable names
/// fails its part of the write (after the file was created), as a full
/// disk would. Read only in builds with the `mpi` feature.
const FAIL_RANK: &str = "SCOPE_PROFILER_MPI_TEST_FAIL_RANK";

/// The writer an MPI session uses, from the configuration and the build
/// only: the same on every rank (rank-local data choosing differently
/// would deadlock the collectives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writer {
    Direct,
    Parallel,
}

/// The writer `options` ask for: `Parallel` needs the `mpio` feature.
pub fn writer(options: &Options) -> Result<Writer, Error> {
    let parallel = cfg!(feature = "mpio");
    match read::mpi_output(options) {
        MpiOutput::Direct => Ok(Writer::Direct),
        MpiOutput::Auto if parallel => Ok(Writer::Parallel),
        MpiOutput::Auto => Ok(Writer::Direct),
        MpiOutput::Parallel if parallel => Ok(Writer::Parallel),
        MpiOutput::Parallel => Err(Error::InvalidOption {
            option: "mpi_output",
            message: "MpiOutput::Parallel needs parallel HDF5: build scope-profiler with the \
                      `mpio` feature against an HDF5 library with MPI-IO, or use MpiOutput::Direct"
                .to_owned(),
        }),
    }
}

/// The file's totals over every rank, and the options its columns follow.
struct Totals<'a> {
    /// Events, rows, threads, tasks, ranks with tasks.
    total: Vec<u64>,
    options: &'a Options,
    /// Every rank's region counters, which rank 0 adds last.
    counters: &'a [RegionCounters],
}

impl Totals<'_> {
    /// The file's layout with rank 0's `metadata`.
    fn layout<'m>(
        &self,
        metadata: &'m [(String, Value)],
        strings: Strings,
        names: Option<usize>,
    ) -> Layout3<'m> {
        let total = &self.total;
        Layout3 {
            metadata,
            events: total[0] as usize,
            rows: total[1] as usize,
            threads: total[2] as usize,
            tasks: total[3] as usize,
            with_task_ids: total[4] > 0,
            compression: read::compression(self.options),
            chunk_size: read::chunk_size(self.options),
            strings,
            names,
        }
    }
}

/// What this rank wrote: its own call tree, and how.
pub(crate) struct Written {
    pub summary: CallTree,
    pub writer: Writer,
}

/// Writes every rank's `plan` into one file at `target` (collective: every
/// rank of `comm` calls it). Each rank returns its own call tree, or every
/// rank the same `Err`; on `Err` the file at `target` is untouched.
pub(crate) fn write(
    plan: &mut Plan,
    options: &Options,
    comm: &Serialized<'_>,
    target: &Path,
) -> Result<Written, Error> {
    let writer = comm.agree(writer(options))?;
    // The same path on every rank, or nobody writes.
    let root_path = comm.broadcast(0, target.as_os_str().as_encoded_bytes().to_vec());
    let same = match root_path == target.as_os_str().as_encoded_bytes() {
        true => Ok(()),
        false => Err(Error::invalid_path(
            target,
            format!(
                "rank 0 writes {}: every rank of an MPI session finalizes to the same path",
                String::from_utf8_lossy(&root_path)
            ),
        )),
    };
    comm.agree(same)?;
    set_mpi_metadata(plan, options, comm);
    // Every rank's region counters, for rank 0 to add once the parts are in.
    let counters = gather_counters(plan, comm);

    // Offsets: one exclusive scan (and the totals).
    let local = [
        plan.len() as u64,
        plan.rows() as u64,
        plan.threads.len() as u64,
        plan.tasks.len() as u64,
        u64::from(plan.with_task_ids()),
    ];
    let (before, total) = comm.offsets(&local);
    let part = Part {
        rank: comm.rank(),
        event_base: before[0] as usize,
        row_base: before[1] as usize,
        thread_base: before[2] as usize,
        task_base: before[3] as usize,
    };
    let fail = std::env::var(FAIL_RANK)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        == Some(comm.rank());
    let layout = Totals {
        total,
        options,
        counters: &counters,
    };
    let summary = match writer {
        Writer::Direct => direct(plan, options, comm, target, part, fail, &layout)?,
        Writer::Parallel => parallel(plan, options, comm, target, part, fail, &layout)?,
    };
    Ok(Written { summary, writer })
}

/// Every rank's region counters (`Plan::counters`, each with its rank) on
/// every rank (an all-gather: they are a few values per region); empty if
/// no rank counted.
fn gather_counters(plan: &Plan, comm: &Serialized<'_>) -> Vec<RegionCounters> {
    // A session that counts nothing gathers nothing (a gather of no bytes
    // at all is an error in some MPI libraries).
    if comm.max(&[plan.counters.len() as u64])[0] == 0 {
        return Vec::new();
    }
    let mut fields: Vec<String> = Vec::new();
    for c in &plan.counters {
        fields.push(c.name.clone());
        fields.push(c.num_calls.to_string());
        fields.push(c.event_names.len().to_string());
        fields.extend(c.event_names.iter().cloned());
        fields.extend(c.inclusive.iter().chain(&c.exclusive).map(u64::to_string));
    }
    let mut all = Vec::new();
    for (rank, bytes) in comm
        .all_gather(&encode_strings(&fields))
        .into_iter()
        .enumerate()
    {
        let fields = decode_strings(&bytes);
        let mut it = fields.into_iter();
        let num = |s: Option<String>| s.and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        while let Some(name) = it.next() {
            let mut c = RegionCounters::default();
            c.name = name;
            c.rank = rank as u32;
            c.num_calls = num(it.next());
            let n = num(it.next()) as usize;
            c.event_names = it.by_ref().take(n).collect();
            c.inclusive = (0..n).map(|_| num(it.next())).collect();
            c.exclusive = (0..n).map(|_| num(it.next())).collect();
            all.push(c);
        }
    }
    all
}

/// Region names in id order and the id of each, as the file numbers them:
/// by first appearance, ranks in order (the Python package's order).
#[derive(Default)]
struct RegionIds {
    names: Vec<String>,
    ids: HashMap<String, u32, BuildHasherDefault<FxHasher>>,
}

impl RegionIds {
    /// The ids of `names`, in order.
    fn of(names: Vec<String>) -> RegionIds {
        let mut table = RegionIds::default();
        for name in names {
            table.id(&name);
        }
        table
    }

    /// The id of `name`, a new one if it has none yet.
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The ids of `plan`'s rows (registering the names it adds).
    fn rows(&mut self, plan: &Plan) -> Vec<u32> {
        (0..plan.rows())
            .map(|row| self.id(plan.region_name(row)))
            .collect()
    }
}

/// Row `i` of `plan` as the shared file stores it: the file's region id,
/// this rank, offsets past the ranks before it.
fn file_row<'a>(
    plan: &'a Plan,
    options: &Options,
    ids: &[u32],
    part: Part,
    i: usize,
) -> IndexRow<'a> {
    let mut row = plan.index_row(i);
    row.source_file =
        crate::metadata::shown_source_file(read::metadata_detail(options), row.source_file);
    row.region_id = ids.get(i).copied().unwrap_or(0);
    row.rank = part.rank;
    row.event_offset += part.event_base as u64;
    row
}

/// Writes this rank's part with the writer `open` gives: the events, then
/// the rows and lane tables; the call tree.
fn write_part(
    plan: &mut Plan,
    options: &Options,
    ids: &[u32],
    part: Part,
    open: impl FnOnce() -> Result<hdf5::RankWriter, Error>,
) -> Result<CallTree, Error> {
    let mut writer = open()?;
    let tree = plan.emit(&mut writer)?;
    writer.finish(
        plan.rows(),
        &|i| file_row(plan, options, ids, part, i),
        &plan.threads,
        &plan.tasks,
    )?;
    Ok(tree)
}

/// The `Direct` writer: rank 0 reserves the temporary file; the ranks take
/// turns at it in rank order, the region names going from each to the
/// next (with the first failure, if any, instead); rank 0 writes the names
/// and publishes the file.
fn direct(
    plan: &mut Plan,
    options: &Options,
    comm: &Serialized<'_>,
    target: &Path,
    part: Part,
    fail: bool,
    layout: &Totals<'_>,
) -> Result<CallTree, Error> {
    let (rank, size) = (comm.rank(), comm.size());
    let (staged, temp) = stage(comm, target)?;

    // The token: "ok" and the names so far, or "failed", the rank and why.
    let mut token = match rank {
        0 => encode_strings(&["ok"]),
        _ => comm.receive(rank - 1),
    };
    let mut summary = CallTree::default();
    let mut local: Result<(), Error> = Ok(());
    let fields = decode_strings(&token);
    if fields.first().map(String::as_str) == Some("ok") {
        let mut table = RegionIds::of(fields[1..].to_vec());
        let ids = table.rows(plan);
        let metadata = plan.metadata.clone();
        let create = layout.layout(&metadata, Strings::Variable, None);
        let result = match fail {
            true => Err(Error::Usage(format!("{FAIL_RANK} names this rank"))),
            false => write_part(plan, options, &ids, part, || {
                hdf5::open_direct(&temp, target, (rank == 0).then_some(&create), part)
            }),
        };
        match result {
            Ok(tree) => {
                summary = tree;
                let mut fields = vec!["ok".to_owned()];
                fields.extend(table.names);
                token = encode_strings(&fields);
            }
            Err(e) => {
                token = encode_strings(&["failed".to_owned(), rank.to_string(), e.to_string()]);
                local = Err(e);
            }
        }
    }
    if size > 1 {
        comm.send((rank + 1) % size, &token);
        if rank == 0 {
            token = comm.receive(size - 1);
        }
    }
    if rank == 0 {
        let fields = decode_strings(&token);
        local = match fields.first().map(String::as_str) {
            Some("ok") => hdf5::write_direct_names(&temp, target, &fields[1..])
                .and_then(|()| hdf5::append_counters(&temp, target, layout.counters))
                .and_then(|()| staged.map_or(Ok(()), Staged::publish)),
            _ => Err(Error::Rank {
                rank: fields.get(1).and_then(|r| r.parse().ok()).unwrap_or(0),
                message: fields.get(2).cloned().unwrap_or_default(),
            }),
        };
    }
    comm.agree(local)?;
    Ok(summary)
}

/// The `Parallel` writer: every rank learns every rank's region names and
/// string widths, creates the file with the MPI-IO driver (collective),
/// writes its slices, closes it; rank 0 publishes.
#[cfg(feature = "mpio")]
fn parallel(
    plan: &mut Plan,
    options: &Options,
    comm: &Serialized<'_>,
    target: &Path,
    part: Part,
    fail: bool,
    layout: &Totals<'_>,
) -> Result<CallTree, Error> {
    let rank = comm.rank();
    // Rank 0's metadata on every rank: attributes are written collectively.
    let metadata = decode_metadata(&comm.broadcast(0, encode_metadata(&plan.metadata)));
    // Every rank's region names, in rank order: the file's region ids.
    let own: Vec<&str> = (0..plan.rows()).map(|i| plan.region_name(i)).collect();
    let mut table = RegionIds::default();
    for bytes in comm.all_gather(&encode_strings(&own)) {
        for name in decode_strings(&bytes) {
            table.id(&name);
        }
    }
    let ids = table.rows(plan);
    let names = table.names;
    let widths = widths(plan, options, &ids, part, &names, comm);
    let (staged, temp) = stage(comm, target)?;
    let rounds = comm.max(&[plan.len().div_ceil(hdf5::ROUND) as u64])[0] as usize;
    let create = layout.layout(&metadata, Strings::Fixed(widths), Some(names.len()));
    let written = match hdf5::open_parallel(
        &temp,
        target,
        comm.raw(),
        &create,
        (rank == 0).then_some(&names[..]),
        part,
        rounds,
    ) {
        Ok(mut writer) => match fail {
            true => {
                writer.abandon();
                Err(Error::Usage(format!("{FAIL_RANK} names this rank")))
            }
            false => match plan.emit(&mut writer) {
                Ok(tree) => writer
                    .finish(
                        plan.rows(),
                        &|i| file_row(plan, options, &ids, part, i),
                        &plan.threads,
                        &plan.tasks,
                    )
                    .map(|()| tree),
                Err(e) => {
                    writer.abandon();
                    Err(e)
                }
            },
        },
        Err(e) => Err(e),
    };
    // Every rank has closed the file: rank 0 may publish it.
    let summary = comm.agree(written)?;
    let published = match staged {
        Some(staged) => {
            hdf5::append_counters(&temp, target, layout.counters).and_then(|()| staged.publish())
        }
        None => Ok(()),
    };
    comm.agree(published)?;
    Ok(summary)
}

#[cfg(not(feature = "mpio"))]
fn parallel(
    _plan: &mut Plan,
    _options: &Options,
    _comm: &Serialized<'_>,
    _target: &Path,
    _part: Part,
    _fail: bool,
    _layout: &Totals<'_>,
) -> Result<CallTree, Error> {
    Err(Error::Usage(
        "the parallel writer needs the `mpio` feature".to_owned(),
    ))
}

/// Rank 0 reserves the temporary file beside `target` (collective: every
/// rank gets rank 0's error, if any); every rank learns its path. Only rank
/// 0 holds the `Staged` file, which it publishes.
fn stage(
    comm: &Serialized<'_>,
    target: &Path,
) -> Result<(Option<Staged>, std::path::PathBuf), Error> {
    let staged = match comm.rank() {
        0 => Some(Staged::reserve(target)),
        _ => None,
    };
    let staged = comm.agree(staged.transpose())?;
    let temp_bytes = staged
        .as_ref()
        .map(|s| s.path().as_os_str().as_encoded_bytes().to_vec())
        .unwrap_or_default();
    Ok((staged, path_of(comm.broadcast(0, temp_bytes))))
}

/// A path from the bytes of a path sent by another rank.
fn path_of(bytes: Vec<u8>) -> std::path::PathBuf {
    crate::platform::path_from_bytes(bytes)
}

/// The widest string of each string column over every rank.
#[cfg(feature = "mpio")]
fn widths(
    plan: &Plan,
    options: &Options,
    ids: &[u32],
    part: Part,
    names: &[String],
    comm: &Serialized<'_>,
) -> Widths {
    let stored = |s: &str| stored_len(s) as u64;
    let mut local = [0u64; 9];
    local[0] = names.iter().map(|n| stored(n)).max().unwrap_or(0);
    for i in 0..plan.rows() {
        let row = file_row(plan, options, ids, part, i);
        for (slot, s) in [
            row.source_file,
            row.source_text,
            &row.tags,
            &row.event_metadata,
        ]
        .into_iter()
        .enumerate()
        {
            local[1 + slot] = local[1 + slot].max(stored(s));
        }
    }
    local[5] = plan
        .threads
        .iter()
        .map(|t| stored(&t.name))
        .max()
        .unwrap_or(0);
    for t in &plan.tasks {
        local[6] = local[6].max(stored(&t.kind));
        local[7] = local[7].max(stored(&t.name));
        local[8] = local[8].max(stored(&t.coro_name));
    }
    let w: Vec<usize> = comm
        .max(&local)
        .into_iter()
        .map(|w| (w as usize).max(1))
        .collect();
    Widths {
        names: w[0],
        index: [w[1], w[2], w[3], w[4]],
        thread_name: w[5],
        task: [w[6], w[7], w[8]],
    }
}

/// Bytes of `s` as stored (a NUL stored as three bytes and a separator:
/// an upper bound).
#[cfg(feature = "mpio")]
fn stored_len(s: &str) -> usize {
    s.len() + s.matches(['\0', '\u{2400}']).count() * 6
}

/// Rank 0's metadata as one message.
#[cfg(feature = "mpio")]
fn encode_metadata(metadata: &[(String, Value)]) -> Vec<u8> {
    let mut fields: Vec<Cow<'_, str>> = Vec::new();
    for (key, value) in metadata {
        fields.push(Cow::Borrowed(key));
        match value {
            Value::Int(v) => {
                fields.push(Cow::Borrowed("i"));
                fields.push(Cow::Owned(v.to_string()));
            }
            Value::UInt(v) => {
                fields.push(Cow::Borrowed("u"));
                fields.push(Cow::Owned(v.to_string()));
            }
            Value::Float(v) => {
                // Rust's shortest round-trip digits: parsed back exactly.
                fields.push(Cow::Borrowed("f"));
                fields.push(Cow::Owned(v.to_string()));
            }
            Value::Str(s) => {
                fields.push(Cow::Borrowed("s"));
                fields.push(Cow::Borrowed(s));
            }
            // As the serial writer stores them: their JSON text.
            other => {
                fields.push(Cow::Borrowed("s"));
                fields.push(Cow::Owned(other.to_string()));
            }
        }
    }
    encode_strings(&fields)
}

/// The metadata [`encode_metadata`] made.
#[cfg(feature = "mpio")]
fn decode_metadata(bytes: &[u8]) -> Vec<(String, Value)> {
    let fields = decode_strings(bytes);
    fields
        .chunks_exact(3)
        .map(|f| {
            let value = match f[1].as_str() {
                "i" => Value::Int(f[2].parse().unwrap_or(0)),
                "u" => Value::UInt(f[2].parse().unwrap_or(0)),
                "f" => Value::Float(f[2].parse().unwrap_or(f64::NAN)),
                _ => Value::Str(f[2].clone()),
            };
            (f[0].clone(), value)
        })
        .collect()
}

/// The MPI entries of the run description: `mpi_size`, `num_nodes` (the
/// distinct host names), `total_cores` (the Python package's `mpi_size *
/// omp_num_threads`) and, at the full level, every rank's host name
/// (`rank_hostnames`, a JSON list in rank order). Collective.
fn set_mpi_metadata(plan: &mut Plan, options: &Options, comm: &Serialized<'_>) {
    let host = crate::metadata::hostname();
    let hosts: Vec<String> = comm
        .all_gather(host.as_bytes())
        .into_iter()
        .map(|h| String::from_utf8_lossy(&h).into_owned())
        .collect();
    let mut distinct = hosts.clone();
    distinct.sort();
    distinct.dedup();
    let size = i64::from(comm.size());
    let omp = plan
        .metadata
        .iter()
        .find(|(k, _)| k == "omp_num_threads")
        .and_then(|(_, v)| match v {
            Value::Int(n) => Some(*n),
            _ => None,
        })
        .unwrap_or(1);
    for (key, value) in &mut plan.metadata {
        match key.as_str() {
            "mpi_size" => *value = Value::Int(size),
            "num_nodes" => *value = Value::Int(distinct.len() as i64),
            "total_cores" => *value = Value::Int(size * omp),
            _ => {}
        }
    }
    if read::metadata_detail(options) == crate::options::MetadataDetail::Full {
        plan.metadata.push((
            "rank_hostnames".to_owned(),
            Value::Str(crate::sink::tags_json(&hosts)),
        ));
    }
}

#[cfg(all(test, feature = "mpio"))]
mod tests {
    use super::*;

    /// Rank 0's metadata crosses to the other ranks as the serial writer
    /// stores it: integers, unsigned integers and floats as themselves,
    /// strings as they are, anything else as its JSON text.
    #[test]
    fn metadata_crosses_ranks_as_the_file_stores_it() {
        let metadata = vec![
            ("i".to_owned(), Value::Int(-3)),
            ("u".to_owned(), Value::UInt(u64::MAX)),
            ("f".to_owned(), Value::Float(0.1)),
            ("s".to_owned(), Value::Str("a\u{0}b".into())),
            ("b".to_owned(), Value::Bool(true)),
        ];
        let back = decode_metadata(&encode_metadata(&metadata));
        let mut want = metadata.clone();
        want[4].1 = Value::Str("true".into());
        assert_eq!(back, want);
    }
}
