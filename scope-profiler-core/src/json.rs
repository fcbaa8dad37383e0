//! The runtime's one JSON reader, and its JSON writing helpers.
//!
//! Written by hand: the runtime depends on no JSON crate (no `serde_json`),
//! because every trait impl of every crate linked into a user's crate joins
//! type inference there, and `serde_json::Value`'s `PartialEq<Value> for u8`
//! and the like would change what a user's code infers (ARCHITECTURE.md,
//! "Features and dependencies"; `tests/real/inference` guards it).
//!
//! Writing: integers and strings (quoted, escaped) for the writers (the JSON
//! profile, the exports, the metadata columns of `value`).
//!
//! Reading: [`Parser`], a strict pull parser, is the only JSON parser of the
//! runtime (`tests/layers.rs` checks that no other source file defines one).
//! Its callers read what they expect straight from it, so a text is parsed
//! once: `value` (metadata values and the `tags`/`event_metadata` columns, of
//! HDF5 files and of rows in memory) and `jsonfile/read.rs` (the JSON profile,
//! in one pass: its `tags` and `event_metadata` fields are read by `value`'s
//! functions from the same parser). The configuration (`config`) is TOML and
//! environment variables: it reads no JSON.
//!
//! The parser reads a whole document held in memory (`&str`: UTF-8 checked
//! by the caller), never allocates from a size the document declares (JSON
//! declares none: arrays grow as their items are read, so what is held is
//! bounded by the input), nests at most [`MAX_DEPTH`] levels (no stack
//! overflow on `[[[[...`), and returns an error, never panics, on malformed
//! input: the byte offset and what was expected.
//!
//! It is RFC 8259 with one extension: the numbers `NaN`, `Infinity` and
//! `-Infinity`, which Python's `json` module writes for floats (and our
//! metadata writer too). Everything else the RFC refuses is an error:
//!
//! | input | read as |
//! | --- | --- |
//! | `[1}`, `{"a":1]` (mismatched close) | error |
//! | `[1,]`, `{"a":1,}` (trailing comma) | error |
//! | `"\ud800"`, `"\udc00"`, `"\ud800\u0041"` (lone surrogate) | error |
//! | `"\u+041"`, `"\u12"` (not four hex digits) | error |
//! | `"abc` (unterminated string) | error |
//! | a byte below 0x20 inside a string (bare control character) | error |
//! | `01`, `-01`, `+1`, `.5`, `1.`, `1e` | error |
//! | `[1] x` (data after the document) | error |
//! | whitespace other than space, tab, CR, LF (form feed...) | error |
//! | more than [`MAX_DEPTH`] nested arrays/objects | error |
//! | duplicate keys | each given to the caller, in order |
//!
//! A lone surrogate is refused rather than replaced (U+FFFD): a replaced
//! name or tag would silently differ from the one written. Python writes one
//! only for a `str` that holds one (bytes decoded with `surrogateescape`),
//! which is no Unicode text and has no UTF-8 form a Rust `String` could hold.

use std::borrow::Cow;

/// Deepest nesting of arrays and objects the parser accepts.
pub const MAX_DEPTH: usize = 64;

/// Appends `v` in decimal.
pub fn push_int(buf: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `s` as a JSON string (quoted, escaped; non-ASCII as UTF-8).
pub fn push_string(buf: &mut Vec<u8>, s: &str) {
    escaped(s, |piece| buf.extend_from_slice(piece.as_bytes()));
}

/// Calls `emit` with the pieces of `s` as a quoted, escaped JSON string
/// (non-ASCII characters as themselves, UTF-8).
pub fn escaped(s: &str, mut emit: impl FnMut(&str)) {
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

/// A malformed document: where (byte offset) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub at: usize,
    pub message: String,
}

impl JsonError {
    /// The error with `what` (where in the document) before its message.
    pub fn within(mut self, what: impl std::fmt::Display) -> JsonError {
        self.message = format!("in {what}: {}", self.message);
        self
    }
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.message)
    }
}

pub type Result<T> = std::result::Result<T, JsonError>;

/// A JSON number: an integer that fits `i64`, an integer above `i64::MAX`
/// that fits `u64`, or any other number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

/// What kind of value comes next (told by its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

/// `read` applied to all of `text`: whitespace only around the value it
/// reads.
pub fn whole<'a, T>(text: &'a str, read: impl FnOnce(&mut Parser<'a>) -> Result<T>) -> Result<T> {
    let mut p = Parser::new(text);
    let value = read(&mut p)?;
    p.end()?;
    Ok(value)
}

/// A pull parser over one document.
pub struct Parser<'a> {
    text: &'a str,
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub fn new(text: &'a str) -> Parser<'a> {
        Parser {
            text,
            s: text.as_bytes(),
            i: 0,
            depth: 0,
        }
    }

    /// An error at the current position.
    pub fn error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(JsonError {
            at: self.i,
            message: message.into(),
        })
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, b: u8) -> Result<()> {
        match self.peek() {
            Some(c) if c == b => {
                self.i += 1;
                Ok(())
            }
            Some(c) => self.error(format!("expected '{}', found '{}'", b as char, c as char)),
            None => self.error(format!("expected '{}', found the end", b as char)),
        }
    }

    /// The kind of the next value (after whitespace), not consumed; an
    /// error at the end or on a byte no value starts with.
    pub fn kind(&mut self) -> Result<Kind> {
        match self.peek() {
            Some(b'{') => Ok(Kind::Object),
            Some(b'[') => Ok(Kind::Array),
            Some(b'"') => Ok(Kind::String),
            Some(b't' | b'f') => Ok(Kind::Bool),
            Some(b'n') => Ok(Kind::Null),
            Some(b'-' | b'0'..=b'9' | b'N' | b'I') => Ok(Kind::Number),
            Some(c) => self.error(format!("unexpected '{}'", c as char)),
            None => self.error("expected a value, found the end"),
        }
    }

    /// Only whitespace is left.
    pub fn end(&mut self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => self.error("unexpected data after the document"),
        }
    }

    /// One level deeper, just past an opening bracket (the error is at it).
    fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(JsonError {
                at: self.i.saturating_sub(1),
                message: format!("nested more than {MAX_DEPTH} levels deep"),
            });
        }
        self.depth += 1;
        Ok(())
    }

    /// An object: `field` is called with each key, and must read its value.
    pub fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, Cow<'a, str>) -> Result<()>,
    ) -> Result<()> {
        self.expect(b'{')?;
        self.enter()?;
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return self.error("expected a key (a string)");
            }
            let key = self.string()?;
            self.expect(b':')?;
            field(self, key)?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.error("expected ',' or '}' in an object"),
            }
        }
    }

    /// An array: `item` is called for each item, and must read it.
    pub fn array(&mut self, mut item: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.expect(b'[')?;
        self.enter()?;
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.error("expected ',' or ']' in an array"),
            }
        }
    }

    /// An array of integers, appended to `out`.
    pub fn ints(&mut self, out: &mut Vec<i64>) -> Result<()> {
        self.array(|p| {
            let v = p.int()?;
            out.push(v);
            Ok(())
        })
    }

    /// `null` if it comes next (consumed), else false.
    pub fn null(&mut self) -> Result<bool> {
        if self.peek() == Some(b'n') {
            self.literal("null")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn literal(&mut self, word: &str) -> Result<()> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(())
        } else {
            self.error(format!("expected {word}"))
        }
    }

    /// `true` or `false`.
    pub fn bool(&mut self) -> Result<bool> {
        match self.peek() {
            Some(b't') => self.literal("true").map(|()| true),
            Some(b'f') => self.literal("false").map(|()| false),
            _ => self.error("expected true or false"),
        }
    }

    /// A number (also `NaN`, `Infinity` and `-Infinity`, which Python's
    /// `json` module writes and reads, and our metadata values too).
    pub fn number(&mut self) -> Result<Number> {
        self.ws();
        let start = self.i;
        for (word, v) in [
            ("NaN", f64::NAN),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            if self.s[self.i..].starts_with(word.as_bytes()) {
                self.i += word.len();
                return Ok(Number::Float(v));
            }
        }
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.s.get(p.i).is_some_and(u8::is_ascii_digit) {
                p.i += 1;
            }
            p.i > from
        };
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        if !digits(self) {
            self.i = start;
            return self.error("expected a number");
        }
        if self.s[int_start] == b'0' && self.i - int_start > 1 {
            self.i = start;
            return self.error("a number with a leading zero");
        }
        let mut integral = true;
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            integral = false;
            if !digits(self) {
                return self.error("expected digits after '.'");
            }
        }
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            self.i += 1;
            integral = false;
            if let Some(b'+' | b'-') = self.s.get(self.i) {
                self.i += 1;
            }
            if !digits(self) {
                return self.error("expected digits in an exponent");
            }
        }
        let text = &self.text[start..self.i];
        if integral {
            if let Ok(v) = text.parse::<i64>() {
                return Ok(Number::Int(v));
            }
            if let Ok(v) = text.parse::<u64>() {
                return Ok(Number::UInt(v));
            }
        }
        match text.parse::<f64>() {
            Ok(v) => Ok(Number::Float(v)),
            Err(_) => {
                self.i = start;
                self.error(format!("cannot read the number {text}"))
            }
        }
    }

    /// An integer that fits `i64` (a float with an integral value in range
    /// is taken too: `1.0`, `2e3`).
    pub fn int(&mut self) -> Result<i64> {
        let at = {
            self.ws();
            self.i
        };
        match self.number() {
            Ok(Number::Int(v)) => Ok(v),
            Ok(Number::Float(v)) if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.2e18 => {
                Ok(v as i64)
            }
            Ok(Number::Float(v)) => Err(JsonError {
                at,
                message: format!("expected an integer of 64 bits, found {v}"),
            }),
            Ok(Number::UInt(v)) => Err(JsonError {
                at,
                message: format!("expected an integer of 64 bits, found {v}"),
            }),
            Err(e) => Err(e),
        }
    }

    /// A string, unescaped (control characters must be escaped, and a
    /// `\u` escape of a surrogate must be one half of a pair).
    pub fn string(&mut self) -> Result<Cow<'a, str>> {
        self.expect(b'"')?;
        let start = self.i;
        // The plain case: no escape, borrowed.
        loop {
            match self.s.get(self.i) {
                None => return self.error("unterminated string"),
                Some(b'"') => {
                    let s = &self.text[start..self.i];
                    self.i += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(&c) if c < 0x20 => return self.error("a control character in a string"),
                Some(_) => self.i += 1,
            }
        }
        let mut out = String::from(&self.text[start..self.i]);
        loop {
            let plain = self.i;
            while let Some(&c) = self.s.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(&self.text[plain..self.i]);
            match self.s.get(self.i) {
                None => return self.error("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = match self.s.get(self.i) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let c = self.unicode_escape(self.i - 2)?;
                            out.push(c);
                            continue;
                        }
                        _ => return self.error("an invalid escape in a string"),
                    };
                    self.i += 1;
                    out.push(c);
                }
                Some(_) => return self.error("a control character in a string"),
            }
        }
    }

    /// The rest of a `\u` escape, `at` its backslash: its four hex digits,
    /// and for a high surrogate the `\u` escape of its low half. A lone
    /// surrogate (high without low, or low alone) is an error: see the
    /// module's doc.
    fn unicode_escape(&mut self, at: usize) -> Result<char> {
        let hex4 = |p: &mut Self| -> Result<u32> {
            let mut v = 0;
            for k in 0..4 {
                match p.s.get(p.i + k).and_then(|&d| (d as char).to_digit(16)) {
                    Some(d) => v = v * 16 + d,
                    None => {
                        p.i += k;
                        return p.error("expected four hex digits after \\u");
                    }
                }
            }
            p.i += 4;
            Ok(v)
        };
        let lone = |p: &mut Self, code: u32| -> Result<char> {
            p.i = at;
            p.error(format!("a lone surrogate (\\u{code:04x}) in a string"))
        };
        let high = hex4(self)?;
        if (0xDC00..0xE000).contains(&high) {
            return lone(self, high);
        }
        if !(0xD800..0xDC00).contains(&high) {
            // Not a surrogate: every other code point below 0x10000 is a char.
            return match char::from_u32(high) {
                Some(c) => Ok(c),
                None => lone(self, high),
            };
        }
        if !self.s[self.i..].starts_with(b"\\u") {
            return lone(self, high);
        }
        self.i += 2;
        let low = hex4(self)?;
        if !(0xDC00..0xE000).contains(&low) {
            return lone(self, high);
        }
        let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        match char::from_u32(c) {
            Some(c) => Ok(c),
            None => lone(self, high),
        }
    }

    /// Skips one value of any kind (checked as strictly as if read).
    pub fn skip(&mut self) -> Result<()> {
        match self.kind()? {
            Kind::Object => self.object(|p, _| p.skip()),
            Kind::Array => self.array(|p| p.skip()),
            Kind::String => self.string().map(drop),
            Kind::Bool => self.bool().map(drop),
            Kind::Null => self.literal("null"),
            Kind::Number => self.number().map(drop),
        }
    }

    /// What `read` returns, and the text of the value it read (from its
    /// first byte after whitespace to its last): a value read once, and
    /// kept as it was written too.
    pub fn spanned<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<(T, &'a str)> {
        self.ws();
        let start = self.i;
        let value = read(self)?;
        Ok((value, &self.text[start..self.i]))
    }

    /// Skips one value and returns its text.
    pub fn raw(&mut self) -> Result<&'a str> {
        self.spanned(Self::skip).map(|((), text)| text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_format_as_python_writes_them() {
        let mut buf = Vec::new();
        for v in [0, -1, 42, i64::MIN, i64::MAX] {
            buf.clear();
            push_int(&mut buf, v);
            assert_eq!(String::from_utf8(buf.clone()).unwrap(), v.to_string());
        }
    }

    #[test]
    fn the_parser_reads_values_and_refuses_malformed_ones() {
        let mut p = Parser::new(
            r#" {"a": [1, -2, 3.0, 4e2], "s": "x\u00e9\ud83d\ude00\n", "n": null, "t": true} "#,
        );
        let (mut ints, mut s, mut t) = (Vec::new(), String::new(), false);
        p.object(|p, key| match &*key {
            "a" => p.ints(&mut ints),
            "s" => p.string().map(|v| s = v.into_owned()),
            "n" => p.null().map(drop),
            "t" => p.bool().map(|v| t = v),
            _ => p.skip(),
        })
        .unwrap();
        p.end().unwrap();
        assert_eq!(ints, [1, -2, 3, 400]);
        assert_eq!(s, "xé😀\n");
        assert!(t);
        for bad in [
            "",
            "{",
            "[1,]",
            "[1 2]",
            "01",
            "1.",
            "-",
            "\"abc",
            "\"\\x\"",
            "\"\\u12\"",
            "{\"a\" 1}",
            "{1: 2}",
            "tru",
            "[1] 2",
            "\"\u{1}\"",
            "nul",
            "+1",
        ] {
            let mut p = Parser::new(bad);
            let whole = p.skip().and_then(|()| p.end());
            assert!(whole.is_err(), "{bad:?} was accepted");
        }
        // Valid numbers that are no 64-bit integer.
        for bad in [
            "99999999999999999999999",
            "1.5",
            "1e300",
            "NaN",
            "-Infinity",
        ] {
            assert!(Parser::new(bad).skip().is_ok(), "{bad:?}");
            assert!(
                Parser::new(bad).int().is_err(),
                "{bad:?} read as an integer"
            );
        }
        // Deep nesting is an error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert!(Parser::new(&deep).skip().is_err());
    }

    /// The error (offset, message) of reading `text` as one whole value.
    fn refused(text: &str) -> JsonError {
        match whole(text, Parser::skip) {
            Ok(()) => panic!("{text:?} was accepted"),
            Err(e) => e,
        }
    }

    /// The malformed cases where the runtime's two parsers once disagreed
    /// (the metadata one accepted them): each is an error at its byte.
    #[test]
    fn malformed_cases_are_errors_at_their_byte() {
        for (bad, at, says) in [
            // A close that does not match its open.
            ("[1}", 2, "expected ',' or ']'"),
            (r#"{"a":1]"#, 6, "expected ',' or '}'"),
            (r#"[{"a": [1, 2}]"#, 12, "expected ',' or ']'"),
            // Lone surrogates: high alone, high before a non-low escape,
            // high at the end, low alone.
            (r#""\ud800""#, 1, "lone surrogate"),
            (r#""x\ud800\u0041""#, 2, "lone surrogate (\\ud800)"),
            (r#""\udbff"#, 1, "lone surrogate"),
            (r#""\udc00""#, 1, "lone surrogate (\\udc00)"),
            (r#""\ud800\udbff""#, 1, "lone surrogate"),
            // Not four hex digits (from_str_radix would take "+041").
            (r#""\u+041""#, 3, "four hex digits"),
            (r#""\u00g0""#, 5, "four hex digits"),
            // Unterminated strings.
            (r#""abc"#, 4, "unterminated string"),
            (r#"["a", "b"#, 8, "unterminated string"),
            (r#""a\"#, 3, "invalid escape"),
            // Data after the document.
            ("[1] x", 4, "after the document"),
            ("{} {}", 3, "after the document"),
            ("1 2", 2, "after the document"),
            // Leading zeros, and other numbers JSON has not.
            ("01", 0, "leading zero"),
            ("[-007]", 1, "leading zero"),
            ("+1", 0, "unexpected '+'"),
            (".5", 0, "unexpected '.'"),
            ("1.", 2, "digits after '.'"),
            ("1e", 2, "exponent"),
            // Bare control characters in strings (escaped they are fine).
            ("\"a\u{1}b\"", 2, "control character"),
            ("\"a\nb\"", 2, "control character"),
            ("\"\\n\t\"", 3, "control character"),
            // Whitespace JSON has not (form feed, vertical tab).
            ("[1,\u{c}2]", 3, "unexpected"),
            ("\u{b}1", 0, "unexpected"),
        ] {
            let e = refused(bad);
            assert_eq!(e.at, at, "{bad:?}: {e}");
            assert!(e.message.contains(says), "{bad:?}: {says:?} not in {e}");
        }
        // Surrogate pairs and escaped control characters are fine.
        assert_eq!(
            whole(r#""\ud800\udc00\u0001\u00e9""#, Parser::string).unwrap(),
            "\u{10000}\u{1}é"
        );
    }

    /// The depth limit: MAX_DEPTH levels are read, one more is an error at
    /// the opening bracket that passes it, for arrays, objects and a mix.
    #[test]
    fn nesting_stops_at_max_depth() {
        let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(whole(&arrays(MAX_DEPTH), Parser::skip).is_ok());
        let e = refused(&arrays(MAX_DEPTH + 1));
        assert_eq!(e.at, MAX_DEPTH);
        assert!(e.message.contains("nested more than 64"), "{e}");
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert!(whole(&objects(MAX_DEPTH), Parser::skip).is_ok());
        assert!(refused(&objects(MAX_DEPTH + 1)).message.contains("nested"));
        let mixed = format!("{}{}", r#"[{"a":"#.repeat(40), "}]".repeat(40));
        assert!(refused(&mixed).message.contains("nested"));
        // Depth is given back at each close: many deep values in a row.
        let siblings = format!("[{}]", vec![arrays(MAX_DEPTH - 1); 100].join(","));
        assert!(whole(&siblings, Parser::skip).is_ok());
    }

    #[test]
    fn numbers_keep_their_kind_and_spans_their_text() {
        for (text, n) in [
            ("0", Number::Int(0)),
            ("-0", Number::Int(0)),
            ("9223372036854775807", Number::Int(i64::MAX)),
            ("9223372036854775808", Number::UInt(1 << 63)),
            ("18446744073709551615", Number::UInt(u64::MAX)),
            (
                "18446744073709551616",
                Number::Float(18446744073709551616.0),
            ),
            (
                "-9223372036854775809",
                Number::Float(-9223372036854775809.0),
            ),
            ("1.5e2", Number::Float(150.0)),
            ("-Infinity", Number::Float(f64::NEG_INFINITY)),
        ] {
            assert_eq!(whole(text, Parser::number).unwrap(), n, "{text}");
        }
        assert!(Parser::new("9223372036854775808").int().is_err());
        let mut p = Parser::new(r#" {"a": [1, {"b": "c"}] , "d": 2}"#);
        let mut spans = Vec::new();
        p.object(|p, _| p.spanned(Parser::skip).map(|((), t)| spans.push(t)))
            .unwrap();
        assert_eq!(spans, [r#"[1, {"b": "c"}]"#, "2"]);
    }
}
