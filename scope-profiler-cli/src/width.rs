//! How wide the text tables are, and names cut to a column.

use std::io::IsTerminal;

/// `text` with its control characters (a hostile file's escape sequences,
/// which would drive the terminal) shown as `\u{..}` escapes: every name
/// or note from a file goes through it before it reaches a terminal.
pub(crate) fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Width of the tables when stdout is not a terminal and `COLUMNS` is unset.
pub(crate) const DEFAULT: usize = 100;

/// Narrowest table the options accept.
pub(crate) const MIN: usize = 40;

/// The width of the tables: `--width` if given; else `COLUMNS` when it is a
/// number; else the terminal's width when stdout is a terminal; else
/// [`DEFAULT`]. Never under [`MIN`].
pub(crate) fn table(option: Option<usize>) -> usize {
    let columns = || {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    };
    let terminal = || {
        let out = std::io::stdout();
        out.is_terminal()
            .then(|| console::Term::stdout().size_checked())
            .flatten()
            .map(|(_, cols)| cols as usize)
    };
    option
        .or_else(columns)
        .or_else(terminal)
        .unwrap_or(DEFAULT)
        .max(MIN)
}

/// `text` in at most `width` characters: whole if it fits, else its head
/// and its tail around an ellipsis, the tail twice as long as the head, so
/// the distinguishing end of a qualified name (`crate::module::fn`) stays.
pub(crate) fn cut(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let keep = width - 1;
    let head = keep / 3;
    let tail = keep - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(n - tail));
    out
}

/// `text` cut to `width` (see [`cut`]) and padded with spaces to it.
pub(crate) fn fit(text: &str, width: usize) -> String {
    format!("{:<width$}", cut(text, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_name_keeps_its_head_and_its_longer_tail() {
        let name = "my_crate::codec::framed::FramedWrite::poll_flush";
        let c = cut(name, 31);
        assert_eq!(c.chars().count(), 31);
        assert_eq!(c, "my_crate::…medWrite::poll_flush");
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("abc", 0), "");
        assert_eq!(cut("abcdef", 1), "…");
        assert_eq!(fit("ab", 4), "ab  ");
    }

    #[test]
    fn the_option_wins_and_the_width_has_a_floor() {
        assert_eq!(table(Some(150)), 150);
        assert_eq!(table(Some(3)), MIN);
    }
}
