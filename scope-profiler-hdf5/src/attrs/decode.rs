//! The byte-level pieces of [`group_attrs`](super::group_attrs): integers and
//! strings out of raw bytes, and the messages of continuation chunks.

use super::{AttrValue, MAX_MESSAGES, MAX_STRING, Message, Result};
use rust_hdf5::format::checksum::checksum_metadata;
use rust_hdf5::format::messages::datatype::{ByteOrder, DatatypeMessage};

/// A one-element string value is a [`AttrValue::Str`] when its dataspace is scalar.
pub(super) fn strings_value(scalar: bool, mut strings: Vec<String>) -> AttrValue {
    if scalar && strings.len() == 1 {
        AttrValue::Str(strings.pop().unwrap_or_default())
    } else {
        AttrValue::Strs(strings)
    }
}

/// A fixed-length string element: up to its first NUL (null-terminated or
/// null-padded), or without its trailing spaces (space-padded).
pub(super) fn fixed_string(bytes: &[u8], padding: u8) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let mut s = &bytes[..end];
    if padding == 2 {
        while let [rest @ .., b' '] = s {
            s = rest;
        }
    }
    String::from_utf8_lossy(s).into_owned()
}

/// The unsigned integer in `bytes` (at most 8), in `order`.
pub(super) fn ordered_uint(bytes: &[u8], order: ByteOrder) -> u64 {
    let mut v = 0u64;
    match order {
        ByteOrder::LittleEndian => {
            for &b in bytes.iter().rev() {
                v = v << 8 | u64::from(b);
            }
        }
        ByteOrder::BigEndian => {
            for &b in bytes {
                v = v << 8 | u64::from(b);
            }
        }
    }
    v
}

/// A little-endian unsigned integer of `n` (at most 8) bytes.
pub(super) fn read_uint(buf: &[u8], n: usize) -> u64 {
    ordered_uint(&buf[..n.min(8).min(buf.len())], ByteOrder::LittleEndian)
}

/// The bytes of the NUL-terminated name at `offset` in a local heap.
pub(super) fn heap_string(heap: &[u8], offset: u64) -> Result<&[u8]> {
    let rest = usize::try_from(offset)
        .ok()
        .and_then(|o| heap.get(o..))
        .ok_or_else(|| "symbol name offset outside the local heap".to_string())?;
    let end = rest
        .iter()
        .take(MAX_STRING)
        .position(|&b| b == 0)
        .ok_or_else(|| "unterminated symbol name".to_string())?;
    Ok(&rest[..end])
}

/// A short name for a datatype that is reported as [`AttrValue::Other`].
pub(super) fn type_name(t: &DatatypeMessage) -> String {
    match t {
        DatatypeMessage::FixedPoint { size, signed, .. } => {
            format!("{}int{}", if *signed { "" } else { "u" }, size * 8)
        }
        DatatypeMessage::FloatingPoint { size, .. } => format!("float{}", size * 8),
        DatatypeMessage::BitField { size, .. } => format!("bitfield{}", size * 8),
        DatatypeMessage::Opaque { size, .. } => format!("opaque ({size} bytes)"),
        DatatypeMessage::FixedString { size, .. } => format!("string ({size} bytes)"),
        DatatypeMessage::Compound { members, .. } => {
            format!("compound of {} members", members.len())
        }
        DatatypeMessage::Enum { members, .. } => format!("enum of {} members", members.len()),
        DatatypeMessage::VarLenString { .. } => "variable-length string".into(),
        DatatypeMessage::VarLenSequence { .. } => "variable-length sequence".into(),
        DatatypeMessage::Array { dims, base } => format!("array {dims:?} of {}", type_name(base)),
        DatatypeMessage::Reference { .. } => "reference".into(),
    }
}

/// Messages of a version-1 continuation chunk: bare 8-byte envelopes (type
/// u16, size u16, flags, 3 reserved), each body padded to 8 bytes.
pub(super) fn parse_v1_chunk(chunk: &[u8]) -> Result<Vec<Message>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 8 <= chunk.len() {
        let kind = u16::from_le_bytes([chunk[pos], chunk[pos + 1]]);
        let size = usize::from(u16::from_le_bytes([chunk[pos + 2], chunk[pos + 3]]));
        let flags = chunk[pos + 4];
        pos += 8;
        let data = chunk
            .get(pos..pos + size)
            .ok_or_else(|| "v1 continuation message past its chunk".to_string())?;
        pos += size.div_ceil(8) * 8;
        if kind != 0 {
            out.push(Message {
                kind: u8::try_from(kind).unwrap_or(u8::MAX),
                flags,
                creation_index: 0,
                data: data.to_vec(),
            });
        }
        if out.len() > MAX_MESSAGES {
            return Err("object header has too many messages".into());
        }
    }
    Ok(out)
}

/// Messages of a version-2 continuation chunk: "OCHK", envelopes (type u8,
/// size u16, flags, [creation index u16]), a gap, and a checksum.
pub(super) fn parse_v2_chunk(chunk: &[u8], tracks_order: bool) -> Result<Vec<Message>> {
    if chunk.len() < 8 || &chunk[..4] != b"OCHK" {
        return Err("continuation chunk without its OCHK signature".into());
    }
    let end = chunk.len() - 4;
    let stored = u32::from_le_bytes([chunk[end], chunk[end + 1], chunk[end + 2], chunk[end + 3]]);
    if checksum_metadata(&chunk[..end]) != stored {
        return Err("continuation chunk checksum mismatch".into());
    }
    let envelope = if tracks_order { 6 } else { 4 };
    let mut out = Vec::new();
    let mut pos = 4usize;
    while pos + envelope <= end {
        let kind = chunk[pos];
        let size = usize::from(u16::from_le_bytes([chunk[pos + 1], chunk[pos + 2]]));
        let flags = chunk[pos + 3];
        let creation_index = if tracks_order {
            u16::from_le_bytes([chunk[pos + 4], chunk[pos + 5]])
        } else {
            0
        };
        pos += envelope;
        let data = chunk
            .get(pos..pos + size)
            .filter(|_| pos + size <= end)
            .ok_or_else(|| "v2 continuation message past its chunk".to_string())?;
        pos += size;
        out.push(Message {
            kind,
            flags,
            creation_index,
            data: data.to_vec(),
        });
        if out.len() > MAX_MESSAGES {
            return Err("object header has too many messages".into());
        }
    }
    Ok(out)
}
