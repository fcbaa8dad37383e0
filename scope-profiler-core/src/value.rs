//! Per-call metadata values and the JSON they are stored as: the file's
//! `tags` and `event_metadata` columns are JSON text, as the Python package
//! writes them (`json.dumps`: `", "` and `": "` separators).
//!
//! The runtime writes and reads this JSON itself instead of depending on
//! `serde_json`, whose `Value` brings trait impls (`PartialEq<Value> for
//! u8`, ...) that change type inference in the user's crate (see
//! ARCHITECTURE.md, Dependencies). It is read with the runtime's one JSON
//! reader, [`crate::json::Parser`] (strict: what it refuses is listed
//! there): from text (`parse_*`), or from a parser already inside a
//! document (`read_*`, as the JSON profile reader does, so a profile is
//! parsed once). Values other than scalars (lists, objects) are kept as
//! their JSON text.

use crate::json::{self, Kind, Number, Parser};

/// One metadata value: what [`call_metadata`](crate::callmeta::call_metadata) attaches to calls
/// (the file's `event_metadata` column, JSON per call), and what the run's
/// metadata holds ([`Options::metadata`](crate::options::Options::metadata), the
/// file's `/metadata` attributes: `Int` an int64 attribute, `UInt` a uint64
/// one, `Float` a float64 one, `Str` a UTF-8 string; `Bool`, `Null` and
/// `Json` are stored as their JSON text, a string).
///
/// Every integer type, `f32`/`f64`, `bool`, `&str`, `String` and `char`
/// convert into it.
///
/// ```
/// use scope_profiler::Value;
/// assert_eq!(Value::from(12u8), Value::Int(12));
/// assert_eq!(Value::from(u64::MAX), Value::UInt(u64::MAX));
/// assert_eq!(Value::from("predictor"), Value::Str("predictor".into()));
/// assert_eq!(Value::from(0.5).to_json(), "0.5");
/// assert_eq!(Value::from("a\"b").to_json(), r#""a\"b""#);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// An integer above `i64::MAX`.
    UInt(u64),
    /// A float (written as JSON cannot hold NaN or infinities: `NaN`,
    /// `Infinity`, `-Infinity`, as Python's `json.dumps` writes them).
    Float(f64),
    /// A string, any UTF-8.
    Str(String),
    /// A list or an object read from a file, kept as its JSON text.
    Json(String),
}

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                match i64::try_from(v) {
                    Ok(v) => Value::Int(v),
                    // Only i128 can miss i64; beyond u64 it is kept as text.
                    #[allow(unreachable_patterns)]
                    Err(_) => match u64::try_from(v) {
                        Ok(v) => Value::UInt(v),
                        Err(_) => Value::Json(v.to_string()),
                    },
                }
            }
        }
    )*};
}
from_signed!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float(v)
    }
}

impl From<f32> for Value {
    fn from(v: f32) -> Value {
        Value::Float(v.into())
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(v)
    }
}

impl From<char> for Value {
    fn from(v: char) -> Value {
        Value::Str(v.to_string())
    }
}

impl Value {
    /// The value as JSON text.
    ///
    /// ```
    /// use scope_profiler::Value;
    /// assert_eq!(Value::from(true).to_json(), "true");
    /// assert_eq!(Value::from(-3).to_json(), "-3");
    /// assert_eq!(Value::from(2.0).to_json(), "2.0");
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    pub(crate) fn write_json(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Value::UInt(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Float(v) => write_float(out, *v),
            Value::Str(s) => write_json_string(out, s),
            Value::Json(raw) => out.push_str(raw),
        }
    }
}

/// The value as text: a string as it is, anything else as its JSON text
/// (how a table or a report shows a metadata value).
///
/// ```
/// use scope_profiler::Value;
/// assert_eq!(Value::from(42).to_string(), "42");
/// assert_eq!(Value::from("rust").to_string(), "rust");
/// assert_eq!(Value::from(0.5).to_string(), "0.5");
/// assert_eq!(Value::from(true).to_string(), "true");
/// ```
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Str(s) => f.write_str(s),
            other => f.write_str(&other.to_json()),
        }
    }
}

/// A float as Python's `json.dumps` writes it (`1.0`, `0.1`, `1e+20`,
/// `NaN`, `Infinity`): Rust's shortest round-trip digits, with a `.0` for
/// integral values.
fn write_float(out: &mut String, v: f64) {
    use std::fmt::Write;
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    } else if v == v.trunc() && v.abs() < 1e16 {
        let _ = write!(out, "{v:.1}");
    } else {
        let _ = write!(out, "{v}");
    }
}

/// Appends `s` as a JSON string.
pub(crate) fn write_json_string(out: &mut String, s: &str) {
    json::escaped(s, |piece| out.push_str(piece));
}

/// Appends one call's metadata as a JSON object (`{"k": v, ...}`).
pub(crate) fn write_json_object(out: &mut String, entries: &[(String, Value)]) {
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_json_string(out, key);
        out.push_str(": ");
        value.write_json(out);
    }
    out.push('}');
}

/// One call's metadata: keys in the order they were set.
pub type CallMetadata = Vec<(String, Value)>;

/// Reads a row's `event_metadata` (a JSON list of objects, one per call);
/// `None` if the text is not such a list.
pub fn parse_event_metadata(text: &str) -> Option<Vec<CallMetadata>> {
    json::whole(text, read_event_metadata).ok()
}

/// Reads a JSON list of strings (a row's `tags`); `None` if it is not one.
pub fn parse_string_list(text: &str) -> Option<Vec<String>> {
    json::whole(text, read_string_list).ok()
}

/// The next value of `p`, a list of objects, one per call (a row's
/// `event_metadata`).
pub fn read_event_metadata(p: &mut Parser<'_>) -> json::Result<Vec<CallMetadata>> {
    let mut calls = Vec::new();
    p.array(|p| {
        calls.push(read_object(p)?);
        Ok(())
    })?;
    Ok(calls)
}

/// The next value of `p`, a list of strings (a row's `tags`).
pub fn read_string_list(p: &mut Parser<'_>) -> json::Result<Vec<String>> {
    let mut items = Vec::new();
    p.array(|p| {
        items.push(p.string()?.into_owned());
        Ok(())
    })?;
    Ok(items)
}

/// The next value of `p`, an object: its keys and values in order.
pub fn read_object(p: &mut Parser<'_>) -> json::Result<CallMetadata> {
    let mut entries = Vec::new();
    p.object(|p, key| {
        let key = key.into_owned();
        entries.push((key, read_value(p)?));
        Ok(())
    })?;
    Ok(entries)
}

/// The next value of `p`: strings, booleans, numbers and null as
/// themselves (an integer past `i64::MAX` as [`Value::UInt`], exact), lists
/// and objects as their JSON text ([`Value::Json`]).
pub fn read_value(p: &mut Parser<'_>) -> json::Result<Value> {
    Ok(match p.kind()? {
        Kind::String => Value::Str(p.string()?.into_owned()),
        Kind::Bool => Value::Bool(p.bool()?),
        Kind::Null => {
            p.null()?;
            Value::Null
        }
        Kind::Number => match p.number()? {
            Number::Int(v) => Value::Int(v),
            Number::UInt(v) => Value::UInt(v),
            Number::Float(v) => Value::Float(v),
        },
        Kind::Object | Kind::Array => Value::Json(p.raw()?.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_through_json() {
        let calls = vec![
            vec![],
            vec![
                ("step".to_owned(), Value::Int(-3)),
                ("phase".to_owned(), Value::from("pré\"dictor\n\u{1}🦀")),
                ("x".to_owned(), Value::Float(0.25)),
                ("big".to_owned(), Value::UInt(u64::MAX)),
                ("ok".to_owned(), Value::Bool(false)),
                ("none".to_owned(), Value::Null),
                (
                    "list".to_owned(),
                    Value::Json("[1, {\"a\": \"]\"}]".to_owned()),
                ),
            ],
        ];
        let mut text = String::from("[");
        for (i, call) in calls.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            write_json_object(&mut text, call);
        }
        text.push(']');
        assert_eq!(parse_event_metadata(&text), Some(calls));
        assert_eq!(parse_event_metadata("[]"), Some(vec![]));
        assert_eq!(parse_event_metadata("[{}"), None);
        assert_eq!(
            parse_event_metadata(r#"[{"s": "\ud83e\udd80\u00e9"}]"#),
            Some(vec![vec![("s".to_owned(), Value::from("🦀é"))]])
        );
    }

    /// Text the metadata parser of old took (it matched no brackets, kept
    /// control characters, leading zeros and lone surrogates) is refused by
    /// the one reader.
    #[test]
    fn malformed_metadata_is_refused() {
        for bad in [
            r#"[{"a": [1}]"#,
            r#"[{"a": 1]]"#,
            r#"[{"a": "\ud800"}]"#,
            r#"[{"a": "\udc00"}]"#,
            r#"[{"a": "\ud800\uffff"}]"#,
            "[{\"a\": \"\u{1}\"}]",
            r#"[{"a": 01}]"#,
            r#"[{"a": +1}]"#,
            r#"[{"a": 1.}]"#,
            "[{\"a\": 1}]\u{c}",
            r#"[{"a": "x}]"#,
            r#"[{"a": 1}] x"#,
        ] {
            assert_eq!(parse_event_metadata(bad), None, "{bad:?}");
        }
        assert_eq!(parse_string_list(r#"["a", "\udc00"]"#), None);
        assert_eq!(parse_string_list(r#"["a"}"#), None);
        let deep = format!("[{{\"a\": {}{}}}]", "[".repeat(70), "]".repeat(70));
        assert_eq!(parse_event_metadata(&deep), None);
        let ok = format!("[{{\"a\": {}{}}}]", "[".repeat(60), "]".repeat(60));
        assert!(parse_event_metadata(&ok).is_some());
    }

    #[test]
    fn tags_parse() {
        assert_eq!(
            parse_string_list(r#"["io", "my\"lib"]"#),
            Some(vec!["io".to_owned(), "my\"lib".to_owned()])
        );
        assert_eq!(parse_string_list("[]"), Some(vec![]));
        assert_eq!(parse_string_list("x"), None);
    }

    #[test]
    fn floats_as_python_writes_them() {
        for (v, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(Value::Float(v).to_json(), s);
        }
    }
}
