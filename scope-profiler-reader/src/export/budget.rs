//! The output budget of an export: a hostile file must not make an export
//! write without end (a region name of megabytes repeated by every event
//! of a Chrome trace, a recursion thousands deep in folded stacks, whose
//! lines grow with their depth). Every export writes through `Budgeted`,
//! which fails the write that would pass [`ProfileReader::output_budget`]
//! bytes; [`ProfileReader::limit_output`] hands one to a writer of other output (the CLI's
//! flamegraph, statistics and report).

use std::io::{self, Write};
use std::path::PathBuf;

use crate::error::Error;

use crate::profile_reader::ProfileReader;

/// The bytes an export may write per byte of the profile as read
/// ([`ProfileReader::input_bytes`]): 64. A Chrome trace event takes about
/// 130 bytes plus its name for the 48 bytes its call decodes to, so names
/// of up to 2.9 KB never reach the budget.
pub(crate) const OUTPUT_PER_INPUT_BYTE: u64 = 64;
/// The bytes an export may write whatever the profile's size: 256 MiB.
pub(crate) const OUTPUT_ALLOWANCE: u64 = 256 << 20;

impl ProfileReader {
    /// The most bytes an export of this profile writes: 64 times
    /// [`ProfileReader::input_bytes`] plus 256 MiB. An export that would write more stops with an
    /// [`Error::Usage`](crate::Error::Usage) saying so (what it wrote before
    /// stays written: the output is incomplete).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// println!("at most {} bytes", reader.output_budget());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn output_budget(&self) -> u64 {
        self.input_bytes()
            .saturating_mul(OUTPUT_PER_INPUT_BYTE)
            .saturating_add(OUTPUT_ALLOWANCE)
    }

    /// `out`, written at most `budget` bytes, as every export writes its
    /// output (its budget is [`ProfileReader::output_budget`]): the write
    /// that would pass it fails, and every write after it, with an error of
    /// kind `Other` saying so. For output made from a profile other than
    /// the exports (a flame graph, statistics, a report page).
    ///
    /// ```
    /// use std::io::Write;
    /// use scope_profiler_reader::ProfileReader;
    /// let mut sink = Vec::new();
    /// let mut out = ProfileReader::limit_output(&mut sink, 4);
    /// out.write_all(b"abcd").unwrap();
    /// assert!(out.write_all(b"e").unwrap_err().to_string().contains("output budget of 4 bytes"));
    /// drop(out);
    /// assert_eq!(sink, b"abcd");
    /// ```
    pub fn limit_output<W: Write>(out: W, budget: u64) -> impl Write {
        Budgeted::new(out, budget)
    }
}

/// The writer of [`ProfileReader::limit_output`].
#[derive(Debug)]
pub(crate) struct Budgeted<W> {
    out: W,
    budget: u64,
    written: u64,
}

impl<W: Write> Budgeted<W> {
    /// `out`, written at most `budget` bytes.
    pub(crate) fn new(out: W, budget: u64) -> Self {
        Budgeted {
            out,
            budget,
            written: 0,
        }
    }

    /// `out`, written at most [`Self::output_budget`]`(reader)` bytes.
    pub fn for_export(reader: &ProfileReader, out: W) -> Self {
        Budgeted::new(out, reader.output_budget())
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
pub(crate) struct OverBudget {
    /// The budget, in bytes.
    pub(crate) budget: u64,
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
