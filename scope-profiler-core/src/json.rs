//! JSON by hand, so that the runtime needs no JSON crate (see
//! ARCHITECTURE.md, "Dependencies"): integer and string formatting for the
//! writers (the JSON profile, the exports), and a strict pull parser for
//! the JSON profile reader.
//!
//! The parser reads a whole document held in memory (`&str`: UTF-8 checked
//! by the caller), never allocates from a size the document declares (JSON
//! declares none: arrays grow as their items are read, so what is held is
//! bounded by the input), nests at most [`MAX_DEPTH`] levels (no stack
//! overflow on `[[[[...`), and returns an error, never panics, on malformed
//! input: the byte offset and what was expected.

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
    crate::value::json_escaped(s, |piece| buf.extend_from_slice(piece.as_bytes()));
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

/// A JSON number: an integer that fits `i64`, or any other number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
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

    /// Only whitespace is left.
    pub fn end(&mut self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => self.error("unexpected data after the document"),
        }
    }

    fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return self.error(format!("nested more than {MAX_DEPTH} levels deep"));
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
        if integral && let Ok(v) = text.parse::<i64>() {
            return Ok(Number::Int(v));
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
            Err(e) => Err(e),
        }
    }

    /// A string, unescaped.
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
                            let c = self.unicode_escape()?;
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

    /// The rest of a `\u` escape (its four hex digits, and the low half of
    /// a surrogate pair); a lone surrogate is U+FFFD, as Python writes none.
    fn unicode_escape(&mut self) -> Result<char> {
        let hex4 = |p: &mut Self| -> Result<u32> {
            let digits =
                p.s.get(p.i..p.i + 4)
                    .and_then(|d| std::str::from_utf8(d).ok());
            match digits.and_then(|d| u32::from_str_radix(d, 16).ok()) {
                Some(v) => {
                    p.i += 4;
                    Ok(v)
                }
                None => p.error("expected four hex digits after \\u"),
            }
        };
        let high = hex4(self)?;
        if (0xD800..0xDC00).contains(&high) && self.s[self.i..].starts_with(b"\\u") {
            let save = self.i;
            self.i += 2;
            let low = hex4(self)?;
            if (0xDC00..0xE000).contains(&low) {
                let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{fffd}'));
            }
            self.i = save;
        }
        Ok(char::from_u32(high).unwrap_or('\u{fffd}'))
    }

    /// Skips one value of any kind (checked as strictly as if read).
    pub fn skip(&mut self) -> Result<()> {
        match self.peek() {
            Some(b'{') => self.object(|p, _| p.skip()),
            Some(b'[') => self.array(|p| p.skip()),
            Some(b'"') => self.string().map(drop),
            Some(b't' | b'f') => self.bool().map(drop),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9' | b'N' | b'I') => self.number().map(drop),
            Some(c) => self.error(format!("unexpected '{}'", c as char)),
            None => self.error("expected a value, found the end"),
        }
    }

    /// Skips one value and returns its text.
    pub fn raw(&mut self) -> Result<&'a str> {
        self.ws();
        let start = self.i;
        self.skip()?;
        Ok(&self.text[start..self.i])
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
}
