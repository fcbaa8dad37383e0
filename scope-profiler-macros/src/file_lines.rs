//! Source lines for the nightly inner attribute on a module file.
//!
//! For `#![profile_all]` at the top of a module *file*, rustc does not hand
//! the macro the file's tokens: it re-parses the module, and every span
//! points at the parent's `mod x;` line (so do `file!()` and `line!()`).
//! Only the attribute's own span (`Span::call_site()`) is still in the file.
//! So the attribute reads the file itself, finds the line of each function
//! by a light scan of its tokens, and writes the call sites' file and line
//! as literals. (Compiler errors and warnings in such a file still point at
//! `mod x;`: no macro can give the tokens their spans back.)

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use proc_macro2::Span;

use crate::args::Location;

/// The lines of one module file's functions, by their place.
pub(crate) struct FileLines {
    /// The file as `file!()` names it.
    file: String,
    /// Lines by place, in source order (names can repeat: two impl blocks
    /// of one type, `#[cfg]` alternatives).
    lines: RefCell<HashMap<String, VecDeque<usize>>>,
}

impl FileLines {
    /// The lines of the file the attribute is in, when the module it is on
    /// (`mod_span`) was re-parsed from another file; `None` for inline
    /// modules and outer attributes, whose tokens have their real spans.
    pub(crate) fn for_file_module(mod_span: Span) -> Option<FileLines> {
        let attribute = Span::call_site();
        let file = attribute.file();
        if file == mod_span.file() {
            return None;
        }
        let text = std::fs::read_to_string(attribute.local_file()?).ok()?;
        let tokens = lex(&text);
        let mut lines = HashMap::new();
        outline(&tokens, "", &mut lines);
        Some(FileLines {
            file,
            lines: RefCell::new(lines),
        })
    }

    /// The location of the next function called `name` at `place`.
    pub(crate) fn take(&self, place: &str, name: &str) -> Option<Location> {
        let mut lines = self.lines.borrow_mut();
        let line = lines.get_mut(&key(place, name))?.pop_front()?;
        Some(Location::new(&self.file, line))
    }
}

/// A function's key: the ordinals of its containers (inline modules, impl
/// blocks and traits, counted per item list), then its name.
fn key(place: &str, name: &str) -> String {
    format!("{place}{}", name.trim_start_matches("r#"))
}

/// The place of the `ordinal`-th container of the item list at `place`.
pub(crate) fn inner_place(place: &str, ordinal: usize) -> String {
    format!("{place}{ordinal}/")
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Punct(char),
    /// `(`, `[` or `{`.
    Open(char),
    Close,
}

/// Words, punctuation and brackets with their lines; comments, literals and
/// lifetimes left out.
fn lex(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1, 0, &mut line);
        } else if c == '\'' {
            if at(i + 1) == '\\' || at(i + 2) == '\'' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            } else {
                i += 1; // a lifetime: its name follows as a word
            }
        } else if c.is_alphanumeric() || c == '_' {
            let begin = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[begin..i].iter().collect();
            let prefix = matches!(word.as_str(), "r" | "br" | "cr");
            let hashes = chars[i..].iter().take_while(|&&h| h == '#').count();
            if prefix && at(i + hashes) == '"' {
                i = skip_string(&chars, i + hashes + 1, hashes, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = skip_string(&chars, i + 1, 0, &mut line);
            } else if word == "b" && at(i) == '\'' {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            } else if word == "r" && hashes == 1 {
                let begin = i + 1;
                i = begin;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let raw: String = chars[begin..i].iter().collect();
                tokens.push((Tok::Word(format!("r#{raw}")), start_line));
            } else {
                tokens.push((Tok::Word(word), start_line));
            }
        } else {
            let tok = match c {
                '(' | '[' | '{' => Tok::Open(c),
                ')' | ']' | '}' => Tok::Close,
                other => Tok::Punct(other),
            };
            tokens.push((tok, start_line));
            i += 1;
        }
    }
    tokens
}

/// Past the end of a string whose contents start at `i`; raw strings end at
/// `"` followed by `hashes` `#`, others at an unescaped `"`.
fn skip_string(chars: &[char], mut i: usize, hashes: usize, line: &mut usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' if hashes == 0 => {
                *line += usize::from(chars.get(i + 1) == Some(&'\n'));
                i += 2;
            }
            '"' if chars[i + 1..].iter().take(hashes).all(|&h| h == '#')
                && i + hashes < chars.len() =>
            {
                return i + 1 + hashes;
            }
            c => {
                *line += usize::from(c == '\n');
                i += 1;
            }
        }
    }
    i
}

/// The index of the bracket closing the one opened at `open`.
fn group_end(tokens: &[(Tok, usize)], open: usize) -> usize {
    let mut depth = 0;
    for (i, (tok, _)) in tokens.iter().enumerate().skip(open) {
        match tok {
            Tok::Open(_) => depth += 1,
            Tok::Close => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// From `from`, the end of an item head: `Ok` at the `{` opening its body,
/// `Err` at the `;` ending a body-less item. Parenthesized and bracketed
/// groups are skipped.
fn body_start(tokens: &[(Tok, usize)], from: usize) -> Result<usize, usize> {
    let mut i = from;
    while i < tokens.len() {
        match tokens[i].0 {
            Tok::Open('{') => return Ok(i),
            Tok::Punct(';') => return Err(i),
            Tok::Open(_) => i = group_end(tokens, i) + 1,
            _ => i += 1,
        }
    }
    Err(i)
}

/// Records the line of every function of an item list (a file, an inline
/// module, an impl block or a trait), walking into nested containers the
/// way `profile_all` does.
fn outline(tokens: &[(Tok, usize)], place: &str, lines: &mut HashMap<String, VecDeque<usize>>) {
    let mut containers = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].0 {
            Tok::Word(word) if word == "fn" => {
                if let Some((Tok::Word(name), line)) = tokens.get(i + 1) {
                    lines.entry(key(place, name)).or_default().push_back(*line);
                }
                i = match body_start(tokens, i + 1) {
                    Ok(open) => group_end(tokens, open) + 1,
                    Err(semi) => semi + 1,
                };
            }
            Tok::Word(word) if matches!(word.as_str(), "mod" | "impl" | "trait") => {
                i = match body_start(tokens, i + 1) {
                    Ok(open) => {
                        let close = group_end(tokens, open);
                        let inner = inner_place(place, containers);
                        outline(&tokens[open + 1..close], &inner, lines);
                        containers += 1;
                        close + 1
                    }
                    Err(semi) => semi + 1,
                };
            }
            Tok::Open(_) => i = group_end(tokens, i) + 1,
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str) -> Vec<(String, Vec<usize>)> {
        let mut lines = HashMap::new();
        outline(&lex(text), "", &mut lines);
        let mut lines: Vec<(String, Vec<usize>)> = lines
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().collect()))
            .collect();
        lines.sort();
        lines
    }

    #[test]
    fn finds_each_function_at_its_place() {
        let text = r##"#![scope_profiler::profile_all]
//! Docs with fn fake() {
/* block /* nested */ fn fake() */
use std::fmt;
pub struct S { f: fn() -> u8 }
const C: &str = "fn fake() { \" ";
const R: &str = r#"fn fake() "# ;
impl S {
    pub fn new() -> S { let c = '{'; let l: &'static str = "}"; S { f: || 1 } }
}
impl<T> fmt::Debug for W<T> where T: Copy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { fn nested() {} Ok(()) }
}
macro_rules! m { () => { fn fake() {} } }
trait Shape { fn area(&self) -> f64; fn r#type(&self) {} }
mod inner {
    impl X { fn new() {} }
}
mod file;
#[cfg(unix)] fn twice() {}
#[cfg(not(unix))]
fn twice() {}
"##;
        let expected: Vec<(String, Vec<usize>)> = [
            ("0/new", vec![9]),
            ("1/fmt", vec![12]),
            ("2/area", vec![15]),
            ("2/type", vec![15]),
            ("3/0/new", vec![17]),
            ("twice", vec![20, 22]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(lines_of(text), expected);
    }
}
