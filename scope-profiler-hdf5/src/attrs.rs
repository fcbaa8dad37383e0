//! The attributes of a group, read straight from the file's bytes.
//!
//! The pure-Rust crate `rust-hdf5` reads datasets, but has no public way to
//! read the numeric or list attributes of a group or of the root group (only
//! `Group::attr_string`, which is lossy, and `Group::attr_names`). Its
//! `format` module is public, though: superblock, object header, message and
//! heap codecs. This module is the small missing part over that API:
//! [`group_attrs`] finds the group at a path (links in compact link
//! messages, dense link storage, or an old-style symbol table) and decodes
//! its attributes (compact attribute messages or dense storage), with
//! variable-length strings resolved through the global heap.
//!
//! Files come from anywhere, so nothing here trusts the file: every read is
//! bounded by the file's length and by a per-call budget of bytes and reads
//! (which also bounds the crate's own heap and B-tree walks), continuation
//! chains and B-tree walks are bounded and keep a visited set, counts and
//! string lengths are capped, and each call into the crate's decoders runs
//! under `catch_unwind`, so a decoder bug on hostile input becomes an error
//! rather than a crash.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

use decode::{
    fixed_string, heap_string, ordered_uint, parse_v1_chunk, parse_v2_chunk, read_uint,
    strings_value, type_name,
};
use rust_hdf5::format::btree_v1::BTreeV1Node;
use rust_hdf5::format::dense_attr::read_dense_attributes;
use rust_hdf5::format::dense_link::read_dense_links;
use rust_hdf5::format::global_heap::{GlobalHeapCollection, decode_vlen_reference};
use rust_hdf5::format::local_heap::LocalHeapHeader;
use rust_hdf5::format::messages::attr_info::AttributeInfoMessage;
use rust_hdf5::format::messages::attribute::{AttributeEntry, AttributeMessage};
use rust_hdf5::format::messages::continuation::ContinuationMessage;
use rust_hdf5::format::messages::dataspace::DataspaceClass;
use rust_hdf5::format::messages::datatype::{DatatypeMessage, IeeeFormat};
use rust_hdf5::format::messages::link::{LinkMessage, LinkTarget};
use rust_hdf5::format::messages::link_info::LinkInfoMessage;
use rust_hdf5::format::messages::{
    MSG_ATTR_INFO, MSG_ATTRIBUTE, MSG_FLAG_SHARED, MSG_LINK, MSG_LINK_INFO,
    MSG_OBJ_HEADER_CONTINUATION, MSG_SYMBOL_TABLE,
};
use rust_hdf5::format::object_header::ObjectHeader;
use rust_hdf5::format::superblock::{SuperblockV0V1, SuperblockV2V3, SymbolTableCache};
use rust_hdf5::format::symbol_table::SymbolTableNode;
use rust_hdf5::format::{BlockReader, FormatContext, FormatError, FormatResult, UNDEF_ADDR};

/// One attribute of a group, decoded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Attr {
    pub name: String,
    pub value: AttrValue,
}

/// The value of one attribute.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum AttrValue {
    /// Scalar integer of any width/sign/byte order except unsigned 64-bit, as i64.
    Int(i64),
    /// Scalar unsigned 64-bit integer.
    UInt(u64),
    /// Scalar float (32 or 64 bit, either byte order), as f64.
    Float(f64),
    /// Scalar string (fixed-length: ends at first NUL or per its padding;
    /// variable-length via the global heap), UTF-8 lossily.
    Str(String),
    /// Array (any simple dataspace) of strings, fixed or variable-length.
    Strs(Vec<String>),
    /// Anything else (arrays of numbers, compounds, enums, ...): a short
    /// description of what it is.
    Other(String),
}

/// What went wrong, as a readable message.
pub(crate) type Error = String;
type Result<T> = std::result::Result<T, Error>;

/// At most this many attributes a group.
const MAX_ATTRS: usize = 1 << 16;
/// At most this many bytes a name or a string value.
const MAX_STRING: usize = 1 << 20;
/// At most this many strings in one string-array attribute.
const MAX_STRINGS: usize = 1 << 20;
/// At most this many bytes read from the file by one [`group_attrs`] call.
const READ_BUDGET_BYTES: u64 = 128 << 20;
/// At most this many reads by one [`group_attrs`] call.
const READ_BUDGET_CALLS: u32 = 1 << 20;
/// The first read of an object header; the rest is read once its size is known.
const HEADER_PROBE: usize = 8 << 10;
/// At most this many continuation chunks an object header.
const MAX_CHUNKS: usize = 1 << 12;
/// At most this many messages an object header.
const MAX_MESSAGES: usize = 1 << 17;
/// At most this many nodes a symbol-table B-tree, and this deep.
const MAX_BTREE_NODES: usize = 1 << 16;
const MAX_BTREE_DEPTH: usize = 64;

/// Panics caught inside `rust-hdf5`'s decoders (each one is a decoder bug on
/// hostile input, turned into an error); the hostile-input test expects none.
pub(crate) static CAUGHT_PANICS: AtomicUsize = AtomicUsize::new(0);

/// The attributes of the group at `path` (`[]` = the root group,
/// `["metadata"]`, `["rank0","perf_events","region a"]`), in creation order
/// when the group tracks it, else in name order (what libhdf5's `H5Aiterate2`
/// gives h5py: creation order if tracked, else name order); `Ok(None)` when
/// the group does not exist. The last component may name any object with a
/// header (a dataset too); soft and external links are not followed (an
/// error).
pub(crate) fn group_attrs(file: &File, path: &[&str]) -> Result<Option<Vec<Attr>>> {
    attrs_in(&file, path)
}

/// [`group_attrs`] over any bytes (the tests' mutated files stay in memory).
fn attrs_in(bytes: &dyn Source, path: &[&str]) -> Result<Option<Vec<Attr>>> {
    let mut walk = Walk::open(bytes)?;
    match walk.object(path)? {
        Some(header) => walk.attrs(&header).map(Some),
        None => Ok(None),
    }
}

/// Where the data of the contiguous dataset at `path` lies in the file:
/// its first byte and its size, once allocated; `Ok(None)` for no such
/// object, or one stored otherwise or not allocated yet. (The pure-Rust
/// layer writes uncompressed event columns there directly, as the C layer
/// does through `H5Dget_offset`.)
pub(crate) fn contiguous_data(file: &File, path: &[&str]) -> Result<Option<(u64, u64)>> {
    use rust_hdf5::format::messages::MSG_DATA_LAYOUT;
    use rust_hdf5::format::messages::data_layout::DataLayoutMessage;
    let mut walk = Walk::open(&file)?;
    let Some(header) = walk.object(path)? else {
        return Ok(None);
    };
    let Some(layout) = header.messages.iter().find(|m| m.kind == MSG_DATA_LAYOUT) else {
        return Ok(None);
    };
    let (layout, _) = guarded("decode a data layout", || {
        DataLayoutMessage::decode(&layout.data, &walk.ctx)
    })?;
    Ok(match layout {
        DataLayoutMessage::Contiguous { address, size } if !walk.addr_is_undef(address) => {
            Some((address, size))
        }
        _ => None,
    })
}

/// Runs one call into `rust-hdf5`'s format code: its error as a message, and a
/// panic caught and counted rather than unwinding through the caller.
fn guarded<T>(what: &str, f: impl FnOnce() -> FormatResult<T>) -> Result<T> {
    caught(what, f)?.map_err(|e| format!("{what}: {e}"))
}

/// [`guarded`], keeping the decoder's own error for the caller to inspect.
fn caught<T>(what: &str, f: impl FnOnce() -> FormatResult<T>) -> Result<FormatResult<T>> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        CAUGHT_PANICS.fetch_add(1, Ordering::Relaxed);
        format!("{what}: the decoder panicked (malformed file)")
    })
}

/// What the file is read through: its length, and reads at an offset.
trait Source {
    fn len(&self) -> Result<u64>;
    /// Appends the `n` bytes at `at` (which the caller keeps in the file) to `buf`.
    fn read_at(&self, at: u64, n: u64, buf: &mut Vec<u8>) -> Result<()>;
}

impl Source for &File {
    fn len(&self) -> Result<u64> {
        Ok(self
            .metadata()
            .map_err(|e| format!("file metadata: {e}"))?
            .len())
    }

    fn read_at(&self, at: u64, n: u64, buf: &mut Vec<u8>) -> Result<()> {
        let mut file = *self;
        file.seek(SeekFrom::Start(at))
            .map_err(|e| format!("seek to {at:#x}: {e}"))?;
        file.take(n)
            .read_to_end(buf)
            .map_err(|e| format!("read at {at:#x}: {e}"))?;
        Ok(())
    }
}

impl Source for &[u8] {
    fn len(&self) -> Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }

    fn read_at(&self, at: u64, n: u64, buf: &mut Vec<u8>) -> Result<()> {
        let bytes = usize::try_from(at)
            .ok()
            .zip(usize::try_from(n).ok())
            .and_then(|(at, n)| self.get(at..at.checked_add(n)?))
            .ok_or_else(|| format!("read at {at:#x}: past the end"))?;
        buf.extend_from_slice(bytes);
        Ok(())
    }
}

/// Positional reads of the file, each bounded by its length and all of them
/// by one budget. Addresses are relative to the superblock's base address.
struct FileReader<'a> {
    file: &'a dyn Source,
    len: u64,
    base: u64,
    bytes_left: u64,
    reads_left: u32,
}

impl FileReader<'_> {
    /// Up to `len` bytes at `addr` (fewer only at the end of the file).
    fn read(&mut self, addr: u64, len: usize) -> Result<Vec<u8>> {
        let at = addr
            .checked_add(self.base)
            .filter(|&at| at <= self.len)
            .ok_or_else(|| format!("address {addr:#x} is past the end of the file"))?;
        let n = (len as u64).min(self.len - at);
        if self.reads_left == 0 || n > self.bytes_left {
            return Err("read budget exhausted (malformed file)".into());
        }
        self.reads_left -= 1;
        self.bytes_left -= n;
        let mut buf = Vec::with_capacity(n as usize);
        self.file.read_at(at, n, &mut buf)?;
        Ok(buf)
    }

    /// Exactly `len` bytes at `addr`.
    fn read_exact(&mut self, addr: u64, len: usize, what: &str) -> Result<Vec<u8>> {
        let buf = self.read(addr, len)?;
        if buf.len() < len {
            return Err(format!(
                "{what} at {addr:#x}: {len} bytes past the end of the file"
            ));
        }
        Ok(buf)
    }
}

impl BlockReader for FileReader<'_> {
    fn read_block(&mut self, offset: u64, len: usize) -> FormatResult<Vec<u8>> {
        self.read(offset, len).map_err(FormatError::InvalidData)
    }
}

/// One message of an object header.
struct Message {
    kind: u8,
    flags: u8,
    creation_index: u16,
    data: Vec<u8>,
}

/// An object header's messages, all chunks.
struct Header {
    /// Whether the object tracks attribute creation order (a version-2 flag).
    tracks_attr_order: bool,
    messages: Vec<Message>,
}

/// One `group_attrs` call: the file, its widths, and the caches.
struct Walk<'a> {
    reader: FileReader<'a>,
    ctx: FormatContext,
    root: u64,
    /// The symbol-table B-tree's K for groups (v0/v1 superblock), and the
    /// symbol-table node's K.
    btree_k: u16,
    leaf_k: u16,
    /// Global heap collections read so far, by address.
    global_heaps: HashMap<u64, GlobalHeapCollection>,
}

/// `H5O_HDR_ATTR_CRT_ORDER_TRACKED`.
const HDR_ATTR_CRT_ORDER_TRACKED: u8 = 0x04;
/// The HDF5 file signature.
const SIGNATURE: [u8; 8] = [0x89, b'H', b'D', b'F', b'\r', b'\n', 0x1a, b'\n'];

impl<'a> Walk<'a> {
    /// The header of the object at `path` from the root; `None` if a link
    /// on the way is missing.
    fn object(&mut self, path: &[&str]) -> Result<Option<Header>> {
        let mut addr = self.root;
        for name in path {
            let header = self.header(addr)?;
            match self.find_child(&header, name)? {
                Some(child) => addr = child,
                None => return Ok(None),
            }
        }
        self.header(addr).map(Some)
    }

    /// Finds the superblock (at 0, 512, 1024, ...) and the root group.
    fn open(file: &'a dyn Source) -> Result<Self> {
        let len = file.len()?;
        let mut reader = FileReader {
            file,
            len,
            base: 0,
            bytes_left: READ_BUDGET_BYTES,
            reads_left: READ_BUDGET_CALLS,
        };
        let mut at = 0u64;
        loop {
            if at.saturating_add(8) > len {
                return Err("no HDF5 superblock signature".into());
            }
            if reader.read(at, 8)? == SIGNATURE {
                break;
            }
            at = if at == 0 { 512 } else { at.saturating_mul(2) };
        }
        let buf = reader.read(at, 512)?;
        let (ctx, base, root, btree_k, leaf_k) = match buf.get(8) {
            Some(0 | 1) => {
                let sb = guarded("superblock", || SuperblockV0V1::decode(&buf))?;
                let ctx = FormatContext {
                    sizeof_addr: sb.sizeof_offsets,
                    sizeof_size: sb.sizeof_lengths,
                };
                let root = sb.root_symbol_table_entry.obj_header_addr;
                (
                    ctx,
                    sb.base_address,
                    root,
                    sb.btree_internal_k,
                    sb.sym_leaf_k,
                )
            }
            Some(2 | 3) => {
                let sb = guarded("superblock", || SuperblockV2V3::decode(&buf))?;
                let ctx = FormatContext {
                    sizeof_addr: sb.sizeof_offsets,
                    sizeof_size: sb.sizeof_lengths,
                };
                // libhdf5's defaults; a v2/v3 file keeps other values in the
                // superblock extension, and uses no symbol table by default.
                (
                    ctx,
                    sb.base_address,
                    sb.root_group_object_header_address,
                    16,
                    4,
                )
            }
            Some(v) => return Err(format!("unsupported superblock version {v}")),
            None => return Err("truncated superblock".into()),
        };
        if !matches!(ctx.sizeof_addr, 2 | 4 | 8) || !matches!(ctx.sizeof_size, 2 | 4 | 8) {
            return Err("unsupported address or length width".into());
        }
        reader.base = base;
        Ok(Self {
            reader,
            ctx,
            root,
            btree_k,
            leaf_k,
            global_heaps: HashMap::new(),
        })
    }

    /// Whether `addr` is the undefined address (all ones, at the file's width).
    fn addr_is_undef(&self, addr: u64) -> bool {
        let bits = 8 * u32::from(self.ctx.sizeof_addr);
        addr == UNDEF_ADDR || (bits < 64 && addr == (1u64 << bits) - 1)
    }

    /// The object header at `addr`, continuation chunks included.
    fn header(&mut self, addr: u64) -> Result<Header> {
        if self.addr_is_undef(addr) {
            return Err("undefined object header address".into());
        }
        let probe = self.reader.read(addr, HEADER_PROBE)?;
        let (oh, _) = match caught("object header", || ObjectHeader::decode_any(&probe))? {
            // Chunk 0 is longer than the probe: read exactly what it says it
            // needs (the read fails past the end of the file).
            Err(FormatError::BufferTooShort { needed, .. }) if needed > probe.len() => {
                let full = self.reader.read_exact(addr, needed, "object header")?;
                guarded("object header", || ObjectHeader::decode_any(&full))?
            }
            decoded => decoded.map_err(|e| format!("object header at {addr:#x}: {e}"))?,
        };
        let v2 = probe.starts_with(b"OHDR");
        let tracks = v2 && oh.flags & HDR_ATTR_CRT_ORDER_TRACKED != 0;
        let mut messages: Vec<Message> = oh
            .messages
            .into_iter()
            .map(|m| Message {
                kind: m.msg_type,
                flags: m.flags,
                creation_index: m.creation_index,
                data: m.data,
            })
            .collect();

        // Continuation chunks, breadth first; each chunk once.
        let mut seen: HashSet<u64> = HashSet::new();
        seen.insert(addr);
        let mut next = 0;
        let mut chunks = 0;
        while next < messages.len() {
            if messages.len() > MAX_MESSAGES {
                return Err("object header has too many messages".into());
            }
            let m = &messages[next];
            next += 1;
            if m.kind != MSG_OBJ_HEADER_CONTINUATION {
                continue;
            }
            let ctx = self.ctx;
            let data = m.data.clone();
            let cont = guarded("continuation message", || {
                ContinuationMessage::decode(&data, &ctx)
            })?
            .0;
            chunks += 1;
            if chunks > MAX_CHUNKS {
                return Err("object header has too many continuation chunks".into());
            }
            if !seen.insert(cont.offset) {
                return Err("object header continuation chunks form a cycle".into());
            }
            let len = usize::try_from(cont.length)
                .map_err(|_| "continuation chunk length overflows".to_string())?;
            let chunk = self
                .reader
                .read_exact(cont.offset, len, "continuation chunk")?;
            let parsed = if v2 {
                parse_v2_chunk(&chunk, tracks)?
            } else {
                parse_v1_chunk(&chunk)?
            };
            messages.extend(parsed);
        }
        Ok(Header {
            tracks_attr_order: tracks,
            messages,
        })
    }

    /// The address of the object `name` links to from the group `header`.
    fn find_child(&mut self, header: &Header, name: &str) -> Result<Option<u64>> {
        let ctx = self.ctx;
        let mut link_info = None;
        let mut symbol_table = None;
        for m in &header.messages {
            match m.kind {
                MSG_LINK => {
                    let link = guarded("link message", || LinkMessage::decode(&m.data, &ctx))?.0;
                    if link.name == name {
                        return hard_target(&link);
                    }
                }
                MSG_LINK_INFO => {
                    link_info =
                        Some(guarded("link info", || LinkInfoMessage::decode(&m.data, &ctx))?.0);
                }
                MSG_SYMBOL_TABLE => {
                    let sa = usize::from(ctx.sizeof_addr);
                    if m.data.len() < 2 * sa {
                        return Err("truncated symbol table message".into());
                    }
                    symbol_table = Some((read_uint(&m.data, sa), read_uint(&m.data[sa..], sa)));
                }
                _ => {}
            }
        }
        if let Some(linfo) = link_info
            && linfo.fractal_heap_address != UNDEF_ADDR
        {
            let reader = &mut self.reader;
            let links = guarded("dense links", || read_dense_links(&linfo, &ctx, reader))?;
            if let Some(link) = links.iter().find(|l| l.name == name) {
                return hard_target(link);
            }
        }
        if let Some((btree, heap)) = symbol_table {
            return self.symbol_table_lookup(btree, heap, name);
        }
        Ok(None)
    }

    /// Looks `name` up in an old-style group: a v1 B-tree of symbol-table
    /// nodes, names in a local heap.
    fn symbol_table_lookup(&mut self, btree: u64, heap: u64, name: &str) -> Result<Option<u64>> {
        let (sa, ss) = (
            usize::from(self.ctx.sizeof_addr),
            usize::from(self.ctx.sizeof_size),
        );
        let heap_buf = self.reader.read(heap, 4 + 4 + 2 * ss + sa)?;
        let hh = guarded("local heap", || LocalHeapHeader::decode(&heap_buf, sa, ss))?;
        let heap_len =
            usize::try_from(hh.data_size).map_err(|_| "local heap size overflows".to_string())?;
        let names = self
            .reader
            .read_exact(hh.data_addr, heap_len, "local heap")?;

        let node_max = u16::try_from(2 * u32::from(self.btree_k)).unwrap_or(u16::MAX);
        let leaf_max = u16::try_from(2 * u32::from(self.leaf_k)).unwrap_or(u16::MAX);
        let node_len = 8 + 2 * sa + (2 * usize::from(node_max) + 1) * (sa + ss);
        let entry_len = ss + sa + 4 + 4 + 16;
        let leaf_len = 8 + usize::from(leaf_max) * entry_len;

        let mut seen = HashSet::new();
        let mut stack = vec![(btree, None::<u8>, 0usize)];
        while let Some((addr, level, depth)) = stack.pop() {
            if depth > MAX_BTREE_DEPTH || seen.len() >= MAX_BTREE_NODES {
                return Err("symbol table B-tree too deep or too large".into());
            }
            if !seen.insert(addr) {
                return Err("symbol table B-tree revisits a node".into());
            }
            let buf = self.reader.read(addr, node_len)?;
            let node = guarded("symbol table B-tree node", || {
                BTreeV1Node::decode(&buf, sa, ss, node_max)
            })?;
            if level.is_some_and(|l| node.level != l) {
                return Err("symbol table B-tree levels are inconsistent".into());
            }
            if node.level > 0 {
                // Children in reverse, so that the stack visits them in order.
                for &child in node.children.iter().rev() {
                    stack.push((child, Some(node.level - 1), depth + 1));
                }
                continue;
            }
            for &snod in &node.children {
                if !seen.insert(snod) {
                    return Err("symbol table B-tree revisits a node".into());
                }
                let buf = self.reader.read(snod, leaf_len)?;
                let node = guarded("symbol table node", || {
                    SymbolTableNode::decode(&buf, sa, ss, leaf_max)
                })?;
                for entry in &node.entries {
                    if heap_string(&names, entry.name_offset)? == name.as_bytes() {
                        if matches!(entry.cache, SymbolTableCache::SoftLink { .. }) {
                            return Err(format!("{name:?} is a soft link"));
                        }
                        return Ok(Some(entry.obj_header_addr));
                    }
                }
            }
        }
        Ok(None)
    }

    /// The attributes of the object whose header is `header`, in order.
    fn attrs(&mut self, header: &Header) -> Result<Vec<Attr>> {
        let ctx = self.ctx;
        let mut found: Vec<(Option<u16>, String, AttrValue)> = Vec::new();
        for m in &header.messages {
            if found.len() > MAX_ATTRS {
                return Err("too many attributes".into());
            }
            match m.kind {
                MSG_ATTRIBUTE => {
                    let order = header.tracks_attr_order.then_some(m.creation_index);
                    if m.flags & MSG_FLAG_SHARED != 0 {
                        return Err("shared (SOHM or committed) attribute message: not read".into());
                    }
                    let entry = guarded("attribute", || AttributeEntry::parse(&m.data, &ctx))?;
                    let (name, value) = self.entry(&entry)?;
                    found.push((order, name, value));
                }
                MSG_ATTR_INFO => {
                    let ainfo = guarded("attribute info", || {
                        AttributeInfoMessage::decode(&m.data, &ctx)
                    })?
                    .0;
                    if !ainfo.is_dense() {
                        continue;
                    }
                    let reader = &mut self.reader;
                    let entries = guarded("dense attributes", || {
                        read_dense_attributes(&ainfo, &ctx, reader)
                    })?;
                    if entries.len() > MAX_ATTRS {
                        return Err("too many attributes".into());
                    }
                    for entry in &entries {
                        let (name, value) = self.entry(entry)?;
                        found.push((entry.creation_index(), name, value));
                    }
                }
                _ => {}
            }
        }
        if found.len() > MAX_ATTRS {
            return Err("too many attributes".into());
        }
        if header.tracks_attr_order {
            found.sort_by_key(|(order, _, _)| order.unwrap_or(u16::MAX));
        } else {
            found.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
        }
        Ok(found
            .into_iter()
            .map(|(_, name, value)| Attr { name, value })
            .collect())
    }

    /// One attribute's name and value.
    fn entry(&mut self, entry: &AttributeEntry) -> Result<(String, AttrValue)> {
        let name = entry.name();
        if name.len() > MAX_STRING {
            return Err("attribute name longer than 1 MiB".into());
        }
        let value = match entry.decoded() {
            Ok(attr) => self.value(attr)?,
            Err(reason) => AttrValue::Other(format!("undecodable attribute: {reason}")),
        };
        Ok((name.to_string(), value))
    }

    /// Decodes an attribute's value.
    fn value(&mut self, attr: &AttributeMessage) -> Result<AttrValue> {
        let scalar = match attr.dataspace.class {
            DataspaceClass::Null => return Ok(AttrValue::Other("empty (null dataspace)".into())),
            DataspaceClass::Scalar => true,
            DataspaceClass::Simple => false,
        };
        let count = attr
            .dataspace
            .dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| "attribute dataspace too large".to_string())?;
        let count = if scalar { 1 } else { count };
        let data = &attr.data;
        let shape = || {
            if scalar {
                "scalar".to_string()
            } else {
                format!("shape {:?}", attr.dataspace.dims)
            }
        };
        Ok(match &attr.datatype {
            DatatypeMessage::FixedPoint {
                size,
                byte_order,
                signed,
                ..
            } if scalar && matches!(size, 1 | 2 | 4 | 8) && data.len() >= *size as usize => {
                let n = *size as usize;
                let raw = ordered_uint(&data[..n], *byte_order);
                match (signed, n) {
                    (false, 8) => AttrValue::UInt(raw),
                    (false, _) => AttrValue::Int(raw as i64),
                    (true, _) => {
                        let shift = 64 - 8 * n as u32;
                        AttrValue::Int(((raw << shift) as i64) >> shift)
                    }
                }
            }
            DatatypeMessage::FloatingPoint {
                size, byte_order, ..
            } if scalar && data.len() >= *size as usize => {
                let raw = ordered_uint(&data[..*size as usize], *byte_order);
                match attr.datatype.ieee_format() {
                    Some(IeeeFormat::Binary32) => {
                        AttrValue::Float(f64::from(f32::from_bits(raw as u32)))
                    }
                    Some(IeeeFormat::Binary64) => AttrValue::Float(f64::from_bits(raw)),
                    _ => AttrValue::Other(format!("{}-byte float, non-IEEE layout", size)),
                }
            }
            DatatypeMessage::FixedString { size, padding, .. } => {
                let size = *size as usize;
                if size == 0 || count > MAX_STRINGS || data.len() / size < count {
                    return Ok(AttrValue::Other(format!("fixed string, {}", shape())));
                }
                let strings: Vec<String> = data
                    .chunks_exact(size)
                    .take(count)
                    .map(|s| fixed_string(s, *padding))
                    .collect();
                strings_value(scalar, strings)
            }
            DatatypeMessage::VarLenString { .. } => {
                let width = 4 + usize::from(self.ctx.sizeof_addr) + 4;
                if count > MAX_STRINGS || data.len() / width < count {
                    return Ok(AttrValue::Other(format!(
                        "variable-length string, {}",
                        shape()
                    )));
                }
                let mut strings = Vec::with_capacity(count);
                for element in data.chunks_exact(width).take(count) {
                    strings.push(self.vlen_string(element)?);
                }
                strings_value(scalar, strings)
            }
            other => AttrValue::Other(format!("{}, {}", type_name(other), shape())),
        })
    }

    /// One variable-length string, from its global heap reference.
    fn vlen_string(&mut self, element: &[u8]) -> Result<String> {
        let ctx = self.ctx;
        let (len, addr, index) = guarded("variable-length string", || {
            decode_vlen_reference(element, &ctx)
        })?;
        let len = len as usize;
        if len == 0 {
            return Ok(String::new());
        }
        if len > MAX_STRING {
            return Err("variable-length string longer than 1 MiB".into());
        }
        if self.addr_is_undef(addr) || addr == 0 {
            return Err("variable-length string with no heap collection".into());
        }
        if !self.global_heaps.contains_key(&addr) {
            if self.global_heaps.len() >= 1 << 12 {
                return Err("too many global heap collections".into());
            }
            let head = self.reader.read(addr, 16)?;
            let size = guarded("global heap", || {
                GlobalHeapCollection::decode_size(&head, &ctx)
            })?;
            let buf = self
                .reader
                .read_exact(addr, size, "global heap collection")?;
            let coll = guarded("global heap", || GlobalHeapCollection::decode(&buf, &ctx))?.0;
            self.global_heaps.insert(addr, coll);
        }
        let object = u16::try_from(index)
            .ok()
            .and_then(|i| self.global_heaps.get(&addr)?.get_object(i))
            .ok_or_else(|| format!("global heap object {index} missing at {addr:#x}"))?;
        let bytes = object
            .get(..len)
            .ok_or_else(|| "variable-length string longer than its heap object".to_string())?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The address of a hard link's object; other links are errors.
fn hard_target(link: &LinkMessage) -> Result<Option<u64>> {
    match &link.target {
        LinkTarget::Hard { address } => Ok(Some(*address)),
        _ => Err(format!("{:?} is not a hard link", link.name)),
    }
}

mod decode;
#[cfg(test)]
mod tests;
