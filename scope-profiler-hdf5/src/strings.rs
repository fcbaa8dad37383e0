//! Strings as HDF5 stores them: HDF5 strings end at NUL, so a NUL inside a
//! string is stored as U+2400 (␀) and a literal ␀ doubled ([`encode`]);
//! [`decode`] gives the original back exactly. Both HDF5 layers (pure Rust
//! and C) store and read strings through these two functions.

use std::borrow::Cow;

/// The symbol for NUL, U+2400 (␀), that stands for NUL in stored strings.
const NUL_SYMBOL: char = '\u{2400}';

/// U+2060 WORD JOINER (invisible), stored after the ␀ of a NUL that is
/// followed by NUL, ␀ or itself: without it "\0␀" and "␀\0" would both be
/// stored as ␀␀␀.
const SEPARATOR: char = '\u{2060}';

/// `s` as stored: HDF5 strings end at NUL, so NUL becomes ␀ (plus
/// [`SEPARATOR`] where the next character needs it) and a literal ␀ is
/// doubled; [`decode`] reverses it exactly. One odd name must never make a
/// whole session unwritable, nor two names collide.
pub(crate) fn encode(s: &str) -> Cow<'_, str> {
    if !s.contains(['\0', NUL_SYMBOL]) {
        return Cow::Borrowed(s);
    }
    let mut stored = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\0' => {
                stored.push(NUL_SYMBOL);
                if matches!(chars.peek(), Some('\0' | &NUL_SYMBOL | &SEPARATOR)) {
                    stored.push(SEPARATOR);
                }
            }
            NUL_SYMBOL => stored.extend([NUL_SYMBOL, NUL_SYMBOL]),
            c => stored.push(c),
        }
    }
    Cow::Owned(stored)
}

/// The string [`encode`] stored as `s`: ␀␀ is ␀; any other ␀ is NUL, and
/// a [`SEPARATOR`] right after it is dropped.
pub(crate) fn decode(s: &str) -> String {
    if !s.contains(NUL_SYMBOL) {
        return s.to_owned();
    }
    let mut decoded = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            NUL_SYMBOL if chars.next_if_eq(&NUL_SYMBOL).is_some() => decoded.push(NUL_SYMBOL),
            NUL_SYMBOL => {
                decoded.push('\0');
                chars.next_if_eq(&SEPARATOR);
            }
            c => decoded.push(c),
        }
    }
    decoded
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn stored_strings_hold_no_nul_and_decode_to_the_original() {
        // Every string of up to 5 characters from the ones that matter.
        let alphabet = ['\0', '\u{2400}', '\u{2060}', 'a'];
        let mut strings = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = strings
                .iter()
                .flat_map(|s| alphabet.iter().map(move |&c| format!("{s}{c}")))
                .collect();
            strings.extend(longer);
        }
        strings.sort();
        strings.dedup();
        for s in &strings {
            let stored = encode(s);
            assert!(!stored.contains('\0'), "{s:?} stored as {stored:?}");
            assert_eq!(&decode(&stored), s, "stored as {stored:?}");
        }
        assert_eq!(encode("a\0b"), "a\u{2400}b");
        assert_eq!(encode("a\u{2400}b"), "a\u{2400}\u{2400}b");
        assert_eq!(encode("plain"), "plain");
    }
}
