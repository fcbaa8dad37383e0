//! Per-call metadata values and the JSON they are stored as: the file's
//! `tags` and `event_metadata` columns are JSON text, as the Python package
//! writes them (`json.dumps`: `", "` and `": "` separators).
//!
//! The runtime writes and reads this JSON itself instead of depending on
//! `serde_json`, whose `Value` brings trait impls (`PartialEq<Value> for
//! u8`, ...) that change type inference in the user's crate (see
//! ARCHITECTURE.md, Dependencies). The reader accepts any JSON; values
//! other than scalars (lists, objects) are kept as their JSON text.

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

/// Calls `emit` with the pieces of `s` as a quoted, escaped JSON string
/// (non-ASCII characters as themselves, UTF-8).
pub(crate) fn json_escaped(s: &str, mut emit: impl FnMut(&str)) {
    emit("\"");
    let mut plain = 0;
    for (i, c) in s.char_indices() {
        let escaped = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        emit(&s[plain..i]);
        if escaped.is_empty() {
            let code = format!("\\u{:04x}", c as u32);
            emit(&code);
        } else {
            emit(escaped);
        }
        plain = i + c.len_utf8();
    }
    emit(&s[plain..]);
    emit("\"");
}

/// Appends `s` as a JSON string.
pub(crate) fn write_json_string(out: &mut String, s: &str) {
    json_escaped(s, |piece| out.push_str(piece));
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
    Parser::whole(text, |p| p.seq(b'[', b']', Parser::object))
}

/// Reads a JSON list of strings (a row's `tags`); `None` if it is not one.
pub fn parse_string_list(text: &str) -> Option<Vec<String>> {
    Parser::whole(text, |p| p.seq(b'[', b']', Parser::string))
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    /// `read` applied to all of `text` (surrounding whitespace allowed).
    fn whole<T>(text: &'a str, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let mut p = Parser {
            s: text.as_bytes(),
            text,
            i: 0,
        };
        p.ws();
        let value = read(&mut p)?;
        p.end().then_some(value)
    }

    /// `open`, items read by `item` separated by commas, `close`.
    fn seq<T>(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        self.eat(open)?;
        let mut items = Vec::new();
        self.ws();
        if self.eat(close).is_some() {
            return Some(items);
        }
        loop {
            self.ws();
            items.push(item(self)?);
            self.ws();
            if self.eat(b',').is_none() {
                self.eat(close)?;
                return Some(items);
            }
        }
    }

    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn end(&mut self) -> bool {
        self.ws();
        self.i == self.s.len()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.s.get(self.i) == Some(&b)).then(|| self.i += 1)
    }

    fn object(&mut self) -> Option<CallMetadata> {
        self.seq(b'{', b'}', |p| {
            let key = p.string()?;
            p.ws();
            p.eat(b':')?;
            p.ws();
            Some((key, p.value()?))
        })
    }

    fn value(&mut self) -> Option<Value> {
        let start = self.i;
        match *self.s.get(self.i)? {
            b'"' => self.string().map(Value::Str),
            b'{' | b'[' => {
                self.skip_nested()?;
                Some(Value::Json(self.text[start..self.i].to_owned()))
            }
            b't' => self.word("true").map(|_| Value::Bool(true)),
            b'f' => self.word("false").map(|_| Value::Bool(false)),
            b'n' => self.word("null").map(|_| Value::Null),
            b'N' => self.word("NaN").map(|_| Value::Float(f64::NAN)),
            b'I' => self.word("Infinity").map(|_| Value::Float(f64::INFINITY)),
            _ => {
                if self.text[self.i..].starts_with("-Infinity") {
                    self.i += "-Infinity".len();
                    return Some(Value::Float(f64::NEG_INFINITY));
                }
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                {
                    self.i += 1;
                }
                let number = &self.text[start..self.i];
                if let Ok(v) = number.parse::<i64>() {
                    Some(Value::Int(v))
                } else if let Ok(v) = number.parse::<u64>() {
                    Some(Value::UInt(v))
                } else {
                    number.parse::<f64>().ok().map(Value::Float)
                }
            }
        }
    }

    fn word(&mut self, w: &str) -> Option<()> {
        self.text[self.i..]
            .starts_with(w)
            .then(|| self.i += w.len())
    }

    /// Skips a list or an object, strings inside included.
    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match *self.s.get(self.i)? {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self.s.get(self.i).is_some_and(|&b| b != b'"' && b != b'\\') {
                self.i += 1;
            }
            out.push_str(self.text.get(start..self.i)?);
            match *self.s.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(out);
                }
                _ => {
                    self.i += 1;
                    let c = match *self.s.get(self.i)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.text[self.i + 1..].starts_with("\\u")
                            {
                                self.i += 2;
                                let lo = self.hex4()?;
                                let code = 0x10000
                                    + ((hi - 0xD800) << 10)
                                    + (lo.checked_sub(0xDC00)? & 0x3FF);
                                char::from_u32(code)?
                            } else {
                                char::from_u32(hi).unwrap_or('\u{FFFD}')
                            }
                        }
                        _ => return None,
                    };
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// The four hex digits after `\u`; leaves `i` on the last one.
    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.i + 1..self.i + 5)?;
        let v = u32::from_str_radix(digits, 16).ok()?;
        self.i += 4;
        Some(v)
    }
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
