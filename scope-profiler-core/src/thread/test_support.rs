//! A session of the recorder's own making (no `setup`), for the unit
//! tests of this layer: the records and the metadata one thread leaves.

use std::sync::Arc;

use crate::active::{self, Session};
use crate::clock::Anchor;
use crate::lane::{Lane, SegmentCut};
use crate::lanemeta::MetaEntry;
use crate::options::Options;
use crate::record::Record;
use crate::registry::{RegionTable, TagFilter};
use crate::store::{Limits, Store};
use crate::sync::lock;

/// Runs `f` with a session active (one test at a time), then ends it;
/// the records this thread left, in the order stored.
pub(crate) fn recorded(f: impl FnOnce(u32)) -> Vec<Record> {
    recorded_with_metadata(f).0
}

/// As [`recorded`], with the metadata entries of this thread's lane and
/// the number of rows of its blocks.
pub(crate) fn recorded_with_metadata(f: impl FnOnce(u32)) -> (Vec<Record>, Vec<MetaEntry>, usize) {
    in_session(0, |session| {
        f(session.generation);
        records_and_metadata(session)
    })
}

/// Runs `f` with a session active (one test at a time) whose store keeps
/// `memory` bytes of records (spilling past half of it, to a scratch file
/// in the temporary directory; 0: 1 MiB and no disk), then ends it.
pub(crate) fn in_session<R>(memory: usize, f: impl FnOnce(&Arc<Session>) -> R) -> R {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = lock(&SERIAL);
    // The clock `setup` chooses.
    crate::clock::init();
    let generation = active::new_generation();
    let options = Options::new().in_memory();
    let limits = Limits {
        memory: if memory == 0 { 1 << 20 } else { memory },
        disk: if memory == 0 { 0 } else { u64::MAX },
        on_failure: crate::options::OnSpillFailure::KeepInMemory,
        aggregate: false,
        counters: None,
        sample_hz: None,
    };
    let filter = TagFilter::new(&options);
    let session = Arc::new(Session::new(
        generation,
        options,
        Anchor::now(),
        std::time::SystemTime::now(),
        RegionTable::new(generation, filter),
        Store::new(limits, std::env::temp_dir()),
    ));
    if memory != 0 {
        session.store.start_writer();
    }
    assert!(
        active::activate(Arc::clone(&session)),
        "another session is active"
    );
    /// Ends the session however `f` ends (a failed assertion too).
    struct End(Arc<Session>);
    impl Drop for End {
        fn drop(&mut self) {
            active::deactivate(Arc::clone(&self.0), Vec::new());
        }
    }
    let end = End(session);
    f(&end.0)
}

/// The records this thread left in `session`, its lane's metadata entries
/// and the number of rows of its blocks.
fn records_and_metadata(session: &Arc<Session>) -> (Vec<Record>, Vec<MetaEntry>, usize) {
    let native = crate::platform::native_thread_id();
    let lanes: Vec<Arc<Lane>> = lock(&session.store.lanes).clone();
    let lane = lanes
        .iter()
        .find(|l| l.native_id == native)
        .expect("this thread's lane");
    let mut out = Vec::new();
    // The cut before the session ends (its end lets go of the records).
    for segment in lane.cut().segments {
        if let SegmentCut::Memory(chunk, n, _) = segment {
            out.extend_from_slice(&chunk.records()[..n]);
        }
    }
    let metadata = lock(&lane.metadata).clone();
    let rows = lock(&lane.meta_blocks).iter().map(|b| b.published()).sum();
    (out, metadata, rows)
}
