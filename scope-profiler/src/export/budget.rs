//! The output budget of an export: a hostile file must not make an export
//! write without end (a region name of megabytes repeated by every event
//! of a Chrome trace, a recursion thousands deep in folded stacks, whose
//! lines grow with their depth). Every export writes through [`Budgeted`],
//! which fails the write that would pass [`output_budget`] bytes.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::error::Error;

use crate::reader::ProfileReader;

/// The bytes an export may write per byte of the profile as read
/// ([`ProfileReader::input_bytes`]): 64. A Chrome trace event takes about
/// 130 bytes plus its name for the 48 bytes its call decodes to, so names
/// of up to 2.9 KB never reach the budget.
pub const OUTPUT_PER_INPUT_BYTE: u64 = 64;
/// The bytes an export may write whatever the profile's size: 256 MiB.
pub const OUTPUT_ALLOWANCE: u64 = 256 << 20;

/// The most bytes an export of `reader` writes:
/// [`OUTPUT_PER_INPUT_BYTE`] times [`ProfileReader::input_bytes`] plus
/// [`OUTPUT_ALLOWANCE`]. An export that would write more stops with an
/// [`Error::Usage`](crate::Error::Usage) saying so (what it wrote before
/// stays written: the output is incomplete).
///
/// ```no_run
/// let reader = scope_profiler::ProfileReader::open("a.h5")?;
/// println!("at most {} bytes", scope_profiler::export::output_budget(&reader));
/// # Ok::<(), scope_profiler::Error>(())
/// ```
pub fn output_budget(reader: &ProfileReader) -> u64 {
    reader
        .input_bytes()
        .saturating_mul(OUTPUT_PER_INPUT_BYTE)
        .saturating_add(OUTPUT_ALLOWANCE)
}

/// A writer that writes at most a budget of bytes to `out`: the write
/// that would pass it fails (an error of kind `Other` holding
/// [`OverBudget`]), and every write after it.
///
/// ```
/// use std::io::Write;
/// use scope_profiler::export::Budgeted;
/// let mut out = Budgeted::new(Vec::new(), 4);
/// out.write_all(b"abcd").unwrap();
/// assert!(out.write_all(b"e").is_err());
/// ```
#[derive(Debug)]
pub struct Budgeted<W> {
    out: W,
    budget: u64,
    written: u64,
}

impl<W: Write> Budgeted<W> {
    /// `out`, written at most `budget` bytes.
    pub fn new(out: W, budget: u64) -> Self {
        Budgeted {
            out,
            budget,
            written: 0,
        }
    }

    /// `out`, written at most [`output_budget`]`(reader)` bytes.
    pub fn for_export(reader: &ProfileReader, out: W) -> Self {
        Budgeted::new(out, output_budget(reader))
    }

    /// The bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

impl<W: Write> Write for Budgeted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if (buf.len() as u64) > self.budget - self.written {
            return Err(io::Error::other(OverBudget {
                budget: self.budget,
            }));
        }
        let n = self.out.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The error of a write past an export's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// The budget, in bytes.
    pub budget: u64,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the export stopped at its output budget of {} bytes ({} times the profile's \
             bytes as read, plus {} MiB): the profile makes it repeat more than a profile \
             can (names of kilobytes on every call, or calls nested thousands deep); the \
             output is incomplete",
            self.budget,
            OUTPUT_PER_INPUT_BYTE,
            OUTPUT_ALLOWANCE >> 20
        )
    }
}

impl std::error::Error for OverBudget {}

/// An I/O error on the export's output; past its budget, a usage error
/// saying so.
pub(super) fn out_err(e: io::Error) -> Error {
    match e.get_ref().and_then(|r| r.downcast_ref::<OverBudget>()) {
        Some(over) => Error::Usage(over.to_string()),
        None => Error::io(PathBuf::from("<export output>"), e),
    }
}
