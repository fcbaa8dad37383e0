//! The source text of an instrumented function, captured at compile time
//! for the file's `source_texts` (written when the session asks for it).
//!
//! The lines the function spans (its attribute's line included) are read
//! from its source file, as Python's `inspect.getsource` gives them; when
//! the tokens carry no usable location (made by another macro, or a file
//! that cannot be read), the tokens themselves are the text.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use proc_macro2::{Span, TokenStream};

/// Longer texts are not kept (the Python package's limit: an HDF5
/// attribute holds 64 KiB).
const MAX_SOURCE_CHARS: usize = 60_000;

thread_local! {
    /// Files read so far by this compiler process, by path.
    static FILES: RefCell<HashMap<PathBuf, Option<String>>> = RefCell::new(HashMap::new());
}

/// The text of `item`; with `from_attribute`, from the line of the
/// attribute being expanded if it comes first.
pub(crate) fn text_of(item: &TokenStream, from_attribute: bool) -> String {
    let text = lines_of(item, from_attribute).unwrap_or_else(|| item.to_string());
    if text.chars().count() > MAX_SOURCE_CHARS {
        return String::new();
    }
    text
}

fn lines_of(item: &TokenStream, from_attribute: bool) -> Option<String> {
    let first = item.clone().into_iter().next()?.span();
    let last = item.clone().into_iter().last()?.span();
    let path = first.local_file()?;
    if last.local_file().as_ref() != Some(&path) {
        return None;
    }
    let mut start = first.start().line;
    let end = last.end().line;
    if from_attribute {
        let attribute = Span::call_site();
        if attribute.local_file().as_ref() == Some(&path) {
            start = start.min(attribute.start().line);
        }
    }
    if start == 0 || end < start {
        return None;
    }
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        let text = files
            .entry(path.clone())
            .or_insert_with(|| std::fs::read_to_string(&path).ok())
            .as_ref()?;
        let mut out = String::new();
        for line in text.lines().skip(start - 1).take(end - start + 1) {
            out.push_str(line);
            out.push('\n');
        }
        (!out.is_empty()).then_some(out)
    })
}
