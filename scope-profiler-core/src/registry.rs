//! Region names and ids.
//!
//! Every distinct name is interned once per process into an [`Entry`] that
//! lives for the rest of the process; each session numbers the regions it
//! sees in registration order (its [`RegionTable`]), and an entry caches
//! `(session generation, id)` so a name resolved once in a session is never
//! registered again. By-name lookups go through a [`DashMap`] keyed by the
//! name with the Fx hash (names are the program's own, not hostile input).

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use dashmap::DashMap;

use crate::fxhash::FxHasher;
use crate::sync::lock;

/// A region name interned for the life of the process.
#[derive(Debug)]
pub struct Entry {
    pub name: &'static str,
    /// `generation << 32 | id` of the last session that resolved it; the id
    /// is [`DISABLED`] when that session does not record it.
    state: AtomicU64,
    /// What the region's first definition carrying tags or source text
    /// said (null: none yet).
    details: AtomicPtr<Details>,
}

/// The id a session gives a region it does not record (its tags are
/// filtered out, or behind an opt-in tag that is off).
pub(crate) const DISABLED: u32 = u32::MAX;

/// A region's tags and source text, as its definition gives them: a call
/// site's own (a `static`), or leaked once per region for a by-name region.
#[derive(Debug)]
pub struct Details {
    tags: &'static [&'static str],
    source: &'static str,
}

impl Details {
    /// Tags and source text; `const` for call sites.
    pub const fn new(tags: &'static [&'static str], source: &'static str) -> Details {
        Details { tags, source }
    }

    /// The tags.
    pub fn tags_list(&self) -> &'static [&'static str] {
        self.tags
    }

    /// Whether there is nothing to say.
    pub(crate) const fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.source.is_empty()
    }
}

static NO_DETAILS: Details = Details::new(&[], "");

impl Entry {
    /// The id of this region in session `generation`, if it records there.
    #[inline]
    pub fn id_in(&self, generation: u32) -> Option<u32> {
        self.state_in(generation).filter(|&id| id != DISABLED)
    }

    /// The id of this region in session `generation` ([`DISABLED`]
    /// included), if resolved there.
    #[inline]
    pub(crate) fn state_in(&self, generation: u32) -> Option<u32> {
        let state = self.state.load(Ordering::Acquire);
        ((state >> 32) as u32 == generation).then_some(state as u32)
    }

    /// Gives the region `details` unless a definition did already; `false`
    /// if the earlier one had different tags.
    pub(crate) fn define(&self, details: &'static Details) -> bool {
        if details.is_empty() {
            return true;
        }
        let new = details as *const Details as *mut Details;
        match self.details.compare_exchange(
            std::ptr::null_mut(),
            new,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            // SAFETY: a non-null `details` always points to a `Details`
            // that lives for the process (a static or leaked), published
            // with Release by the exchange that stored it.
            Err(old) => details.tags.is_empty() || unsafe { &*old }.tags == details.tags,
        }
    }

    /// The region's definition details (empty if none was given).
    pub(crate) fn details(&self) -> &'static Details {
        let ptr = self.details.load(Ordering::Acquire);
        if ptr.is_null() {
            &NO_DETAILS
        } else {
            // SAFETY: as in `define`: a `Details` that lives for the process.
            unsafe { &*ptr }
        }
    }

    /// The region's tags.
    pub(crate) fn tags(&self) -> &'static [&'static str] {
        self.details().tags
    }

    /// The region's captured source text ("" if none).
    pub fn source_text(&self) -> &'static str {
        self.details().source
    }
}

/// Opt-in tags: process-wide, registered once (typically by a library),
/// never removed; see `register_opt_in_tag`.
static OPT_IN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// Marks `tag` as opt-in: regions carrying it record only in sessions that
/// enable it. Regions resolved earlier in the active session keep their
/// state until its end.
pub fn register_opt_in_tag(tag: &str) {
    let mut tags = lock(&OPT_IN);
    if !tags.contains(&tag) {
        tags.push(Box::leak(tag.into()));
    }
}

/// Which regions a session records, by their tags.
#[derive(Debug, Default)]
pub struct TagFilter {
    /// Opt-in tags enabled (`"*"`: all).
    enabled: Vec<String>,
    /// Only regions carrying one of these, if set.
    only: Option<Vec<String>>,
}

impl TagFilter {
    /// The filter of a session with these options, with the tags of the
    /// environment variable `SCOPE_PROFILER_ENABLE_TAGS` (comma-separated)
    /// enabled too, as the Python package reads it at every setup.
    pub fn new(options: &crate::options::Options) -> TagFilter {
        let mut enabled = options.enable_tags.clone();
        if let Ok(env) = std::env::var("SCOPE_PROFILER_ENABLE_TAGS") {
            enabled.extend(
                env.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned),
            );
        }
        enabled.extend(options.region_tags.iter().flatten().cloned());
        TagFilter {
            enabled,
            only: options.region_tags.clone(),
        }
    }

    /// Whether a region carrying `tags` records.
    pub(crate) fn records(&self, tags: &[&str]) -> bool {
        if let Some(only) = &self.only
            && !tags.iter().any(|t| only.iter().any(|o| o == t))
        {
            return false;
        }
        if tags.is_empty() || self.enabled.iter().any(|t| t == "*") {
            return true;
        }
        let opt_in = lock(&OPT_IN);
        let mut gated = tags.iter().filter(|t| opt_in.contains(t)).peekable();
        gated.peek().is_none() || gated.any(|t| self.enabled.iter().any(|e| e == t))
    }
}

/// The entry of the handles made with the `enabled` feature off: named "",
/// in no session, never interned.
#[cfg(not(feature = "enabled"))]
pub fn inert_entry() -> &'static Entry {
    static INERT: Entry = Entry {
        name: "",
        state: AtomicU64::new(0),
        details: AtomicPtr::new(std::ptr::null_mut()),
    };
    &INERT
}

/// `(session generation, region id)` in one word, as entries and call sites
/// cache it.
#[inline]
pub(crate) const fn pack(generation: u32, id: u32) -> u64 {
    (generation as u64) << 32 | id as u64
}

/// An interned entry as a key of the map: hashed and compared by its name,
/// so the map finds it by `&str` and stores one pointer per name.
#[derive(Clone, Copy)]
struct Key(&'static Entry);

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As `str` hashes: `Borrow<str>` requires the same hash.
        self.0.name.hash(state);
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Key {}

impl std::borrow::Borrow<str> for Key {
    fn borrow(&self) -> &str {
        self.0.name
    }
}

type Names = DashMap<Key, (), BuildHasherDefault<FxHasher>>;

static NAMES: LazyLock<Names> = LazyLock::new(Names::default);
/// Serializes interning, and holds the memory interned names and entries
/// are carved from.
static INTERN: Mutex<Arena> = Mutex::new(Arena {
    bytes: &mut [],
    entries: &mut [],
});

/// Blocks of memory that live for the process, handed out in pieces: a
/// name or an entry costs its own size, not a heap allocation's (a 15-byte
/// name took a 32-byte block of its own, an entry 32 bytes for 24). The
/// pieces never move and are never freed (see `intern_new`).
struct Arena {
    /// What is left of the current block for names.
    bytes: &'static mut [u8],
    /// What is left of the current block for entries.
    entries: &'static mut [MaybeUninit<Entry>],
}

/// Bytes of a block for names; a name longer than an eighth of it gets a
/// block of its own.
const NAME_BLOCK: usize = 64 << 10;
/// Entries per block.
const ENTRY_BLOCK: usize = 1024;

impl Arena {
    fn name(&mut self, name: &str) -> &'static str {
        let len = name.len();
        if len > NAME_BLOCK / 8 {
            return Box::leak(name.into());
        }
        if self.bytes.len() < len {
            self.bytes = Box::leak(vec![0u8; NAME_BLOCK].into_boxed_slice());
        }
        let (piece, rest) = std::mem::take(&mut self.bytes).split_at_mut(len);
        self.bytes = rest;
        piece.copy_from_slice(name.as_bytes());
        // The bytes of a `str`: valid UTF-8 (checked again, off the hot path).
        std::str::from_utf8(piece).unwrap_or_default()
    }

    fn entry(&mut self, entry: Entry) -> &'static Entry {
        if self.entries.is_empty() {
            self.entries = Box::leak(Box::new_uninit_slice(ENTRY_BLOCK));
        }
        let (slot, rest) = std::mem::take(&mut self.entries).split_at_mut(1);
        self.entries = rest;
        slot[0].write(entry)
    }
}

/// Entries this thread looked up last, by the address and length of the
/// name it passed: a name written as a literal in a loop is found here with
/// one comparison of its bytes, without hashing or the map's lock.
const RECENT_SLOTS: usize = 8;

thread_local! {
    static RECENT: [Cell<Option<&'static Entry>>; RECENT_SLOTS] =
        const { [const { Cell::new(None) }; RECENT_SLOTS] };
}

/// The process-wide entry for `name`, created on first use.
#[inline]
pub(crate) fn intern(name: &str) -> &'static Entry {
    let slot = ((name.as_ptr() as usize >> 3) ^ name.len()) % RECENT_SLOTS;
    let recent = RECENT.try_with(|r| r[slot].get()).ok().flatten();
    if let Some(entry) = recent.filter(|e| e.name == name) {
        return entry;
    }
    let entry = match NAMES.get(name) {
        Some(found) => found.key().0,
        None => intern_new(name),
    };
    let _ = RECENT.try_with(|r| r[slot].set(Some(entry)));
    entry
}

/// The entry for `name` if it was ever interned.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    NAMES.get(name).map(|found| found.key().0)
}

#[cold]
fn intern_new(name: &str) -> &'static Entry {
    // A name is the profiler's memory, not the caller's allocation.
    let _quiet = crate::counters::suspend();
    let mut arena = lock(&INTERN);
    if let Some(found) = NAMES.get(name) {
        return found.key().0;
    }
    // Interned names live for the process: a program has finitely many region
    // names, and handles and call sites hold `&'static` references to them.
    let name = arena.name(name);
    let entry = arena.entry(Entry {
        name,
        state: AtomicU64::new(0),
        details: AtomicPtr::new(std::ptr::null_mut()),
    });
    NAMES.insert(Key(entry), ());
    entry
}

/// A region as registered in one session: 16 bytes.
#[derive(Clone, Copy, Debug)]
pub struct RegionInfo {
    pub entry: &'static Entry,
    /// Where the region was first defined: an index into [`files`]
    /// (0: unknown) and a line.
    pub file: u32,
    pub line: u32,
}

impl RegionInfo {
    /// `entry`, defined at `file`:`line` ("" / 0 when unknown).
    pub(crate) fn new(entry: &'static Entry, file: &'static str, line: u32) -> RegionInfo {
        RegionInfo {
            entry,
            file: file_id(file),
            line,
        }
    }
}

/// The source files regions were defined in, interned: a region keeps the
/// index of its file, not the file's name. Index 0 is "" (unknown).
struct Files {
    names: Vec<&'static str>,
    ids: HashMap<&'static str, u32, BuildHasherDefault<FxHasher>>,
}

static FILES: LazyLock<Mutex<Files>> = LazyLock::new(|| {
    Mutex::new(Files {
        names: vec![""],
        ids: HashMap::default(),
    })
});

/// The index of `file` in [`files`].
fn file_id(file: &'static str) -> u32 {
    if file.is_empty() {
        return 0;
    }
    let mut files = lock(&FILES);
    if let Some(&id) = files.ids.get(file) {
        return id;
    }
    let id = files.names.len() as u32;
    files.names.push(file);
    files.ids.insert(file, id);
    id
}

/// Every source file interned so far, by index (see [`RegionInfo::file`]).
pub fn files() -> Vec<&'static str> {
    lock(&FILES).names.clone()
}

/// The regions of one session, in registration order; index = region id.
pub struct RegionTable {
    generation: u32,
    regions: Mutex<Vec<RegionInfo>>,
    filter: TagFilter,
}

impl RegionTable {
    pub fn new(generation: u32, filter: TagFilter) -> Self {
        RegionTable {
            generation,
            regions: Mutex::new(Vec::new()),
            filter,
        }
    }

    /// The id of `entry` in this session, registering it (with its source
    /// location, the first definition wins) if needed; [`DISABLED`] if this
    /// session does not record it (decided once, at its first use here).
    pub(crate) fn resolve(&self, entry: &'static Entry, file: &'static str, line: u32) -> u32 {
        if let Some(id) = entry.state_in(self.generation) {
            return id;
        }
        let _quiet = crate::counters::suspend();
        let mut regions = lock(&self.regions);
        if let Some(id) = entry.state_in(self.generation) {
            return id;
        }
        let id = if self.filter.records(entry.tags()) {
            regions.push(RegionInfo::new(entry, file, line));
            regions.len() as u32 - 1
        } else {
            DISABLED
        };
        entry
            .state
            .store(pack(self.generation, id), Ordering::Release);
        id
    }

    /// A copy of the table.
    pub fn snapshot(&self) -> Vec<RegionInfo> {
        lock(&self.regions).clone()
    }

    /// Number of regions registered.
    pub(crate) fn len(&self) -> usize {
        lock(&self.regions).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_by_name() {
        let a = intern("registry-test-a");
        assert!(std::ptr::eq(a, intern(&String::from("registry-test-a"))));
        assert!(!std::ptr::eq(a, intern("registry-test-b")));
        assert_eq!(a.name, "registry-test-a");
    }

    #[test]
    fn ids_are_per_session_in_registration_order() {
        let t1 = RegionTable::new(u32::MAX - 1, TagFilter::default());
        let (x, y) = (intern("registry-test-x"), intern("registry-test-y"));
        assert_eq!(t1.resolve(y, "f.rs", 3), 0);
        assert_eq!(t1.resolve(x, "", 0), 1);
        assert_eq!(t1.resolve(y, "g.rs", 9), 0);
        assert_eq!(t1.snapshot()[0].line, 3);
        let t2 = RegionTable::new(u32::MAX, TagFilter::default());
        assert_eq!(t2.resolve(x, "", 0), 0);
        assert_eq!(x.id_in(u32::MAX), Some(0));
        assert_eq!(x.id_in(u32::MAX - 1), None);
    }
}
