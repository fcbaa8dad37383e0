//! What a file's datatypes may be read as: the class of each, the checks
//! that make a read refuse a type it would misread (the C layer's
//! `check_converts_to`, with its messages), and the numbers of compound
//! members.

use rust_hdf5::format::messages::datatype::{ByteOrder, DatatypeMessage};

use super::{H5Error, Result};

/// The datatype class of values a read expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Integer,
    Float,
    String,
    Compound,
}

/// The class name of `dtype`, as HDF5 names it in messages.
pub(crate) fn class_name(dtype: &DatatypeMessage) -> &'static str {
    match dtype {
        DatatypeMessage::FixedPoint { .. } => "integer",
        DatatypeMessage::FloatingPoint { .. } => "float",
        DatatypeMessage::FixedString { .. } | DatatypeMessage::VarLenString { .. } => "string",
        DatatypeMessage::Compound { .. } => "compound",
        DatatypeMessage::Enum { .. } => "enum",
        DatatypeMessage::VarLenSequence { .. } => "variable-length",
        DatatypeMessage::Array { .. } => "array",
        DatatypeMessage::Opaque { .. } => "opaque",
        DatatypeMessage::Reference { .. } => "reference",
        DatatypeMessage::BitField { .. } => "bitfield",
        #[allow(unreachable_patterns)]
        _ => "unknown",
    }
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Integer => "integer",
            Class::Float => "float",
            Class::String => "string",
            Class::Compound => "compound",
        }
    }
}

/// Fails unless values of `stored` read as `want` values: the same class,
/// a standard integer (1, 2, 4 or 8 bytes) or float (4 or 8 bytes); for a
/// compound, `members` exactly: names, offsets and sizes, each member
/// itself readable as the expected one.
pub(crate) fn check_converts_to(
    stored: &DatatypeMessage,
    want: Class,
    members: &[(&str, u32, Class)],
) -> Result<()> {
    let class = class_name(stored);
    if class != want.name() {
        return Err(H5Error(format!(
            "holds {class} values where {} values were expected",
            want.name()
        )));
    }
    match stored {
        DatatypeMessage::FixedPoint { size, .. } if [1, 2, 4, 8].contains(size) => Ok(()),
        DatatypeMessage::FloatingPoint { size, .. } if [4, 8].contains(size) => Ok(()),
        DatatypeMessage::FixedString { .. } | DatatypeMessage::VarLenString { .. } => Ok(()),
        DatatypeMessage::Compound {
            size,
            members: stored,
        } => {
            let expected = 8 * members.len() as u32;
            if *size != expected || stored.len() != members.len() {
                return Err(H5Error(format!(
                    "holds compound values of {size} bytes and {} members, not the expected layout",
                    stored.len()
                )));
            }
            for (i, (member, &(name, offset, class))) in stored.iter().zip(members).enumerate() {
                let width = member.datatype.element_size();
                if member.name != name
                    || member.offset != offset
                    || width != 8
                    || member
                        .offset
                        .checked_add(width)
                        .is_none_or(|end| end > *size)
                {
                    return Err(H5Error(format!(
                        "compound member {i} is {:?} at byte {}, expected {name:?} at byte {offset}",
                        member.name, member.offset
                    )));
                }
                check_converts_to(&member.datatype, class, &[])
                    .map_err(|e| H5Error(format!("compound member {name:?} {e}")))?;
            }
            Ok(())
        }
        _ => Err(H5Error(format!(
            "holds {class} values of a nonstandard type"
        ))),
    }
}

/// A number of a compound member, as stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Number {
    /// The number as an int64 (0 if a float or past int64).
    pub(crate) fn as_i64(self) -> i64 {
        match self {
            Number::Int(v) => v,
            Number::UInt(v) => i64::try_from(v).unwrap_or(0),
            Number::Float(_) => 0,
        }
    }

    /// The number as a uint64 (0 if negative or a float).
    pub(crate) fn as_u64(self) -> u64 {
        match self {
            Number::Int(v) => u64::try_from(v).unwrap_or(0),
            Number::UInt(v) => v,
            Number::Float(_) => 0,
        }
    }

    /// The number as a float64 (0 if an integer: the checks admit no
    /// integer member where a float one belongs).
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Number::Float(v) => v,
            _ => 0.0,
        }
    }

    /// The number of type `dtype` at the start of `bytes`; `None` for any
    /// type but an integer of 1 to 8 bytes or a float of 4 or 8.
    pub(crate) fn decode(dtype: &DatatypeMessage, bytes: &[u8]) -> Option<Number> {
        let (size, order) = match dtype {
            DatatypeMessage::FixedPoint {
                size, byte_order, ..
            }
            | DatatypeMessage::FloatingPoint {
                size, byte_order, ..
            } => (*size as usize, *byte_order),
            _ => return None,
        };
        let raw = bytes.get(..size).filter(|_| (1..=8).contains(&size))?;
        let mut le = [0u8; 8];
        match order {
            ByteOrder::LittleEndian => le[..size].copy_from_slice(raw),
            _ => le[..size]
                .iter_mut()
                .zip(raw.iter().rev())
                .for_each(|(d, s)| *d = *s),
        }
        let bits = u64::from_le_bytes(le);
        Some(match dtype {
            DatatypeMessage::FixedPoint { signed: true, .. } => {
                let shift = 64 - 8 * size as u32;
                Number::Int(((bits << shift) as i64) >> shift)
            }
            DatatypeMessage::FixedPoint { .. } => Number::UInt(bits),
            _ if size == 8 => Number::Float(f64::from_bits(bits)),
            _ if size == 4 => Number::Float(f64::from(f32::from_bits(bits as u32))),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Class, Number, check_converts_to};
    use rust_hdf5::format::messages::datatype::{ByteOrder, CompoundMember, DatatypeMessage};

    #[test]
    fn numbers_decode_every_width_sign_and_order() {
        let i16_be = DatatypeMessage::FixedPoint {
            size: 2,
            byte_order: ByteOrder::BigEndian,
            signed: true,
            bit_offset: 0,
            bit_precision: 16,
        };
        assert_eq!(
            Number::decode(&i16_be, &[0xff, 0xfe]),
            Some(Number::Int(-2))
        );
        let bytes = u64::MAX.to_le_bytes();
        let u64_le = DatatypeMessage::u64_type();
        assert_eq!(
            Number::decode(&u64_le, &bytes),
            Some(Number::UInt(u64::MAX))
        );
        let f64_le = DatatypeMessage::f64_type();
        let half = 2.5f64.to_le_bytes();
        assert_eq!(Number::decode(&f64_le, &half), Some(Number::Float(2.5)));
        assert_eq!(Number::decode(&f64_le, &[0; 4]), None, "too few bytes");
    }

    #[test]
    fn conversions_refuse_another_class_or_compound_layout() {
        let float = DatatypeMessage::f64_type();
        let err = check_converts_to(&float, Class::Integer, &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "holds float values where integer values were expected"
        );
        let member = |name: &str, offset| CompoundMember {
            name: name.into(),
            offset,
            datatype: DatatypeMessage::i64_type(),
        };
        let swapped = DatatypeMessage::compound(16, vec![member("minimum", 0), member("total", 8)]);
        let want = [("total", 0, Class::Integer), ("minimum", 8, Class::Integer)];
        let err = check_converts_to(&swapped, Class::Compound, &want).unwrap_err();
        assert!(
            err.to_string().contains("compound member 0 is \"minimum\""),
            "{err}"
        );
        let right = DatatypeMessage::compound(16, vec![member("total", 0), member("minimum", 8)]);
        check_converts_to(&right, Class::Compound, &want).unwrap();
    }
}
