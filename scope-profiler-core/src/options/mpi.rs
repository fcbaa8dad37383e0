//! MPI sessions (feature `mpi`): the communicator, and how the ranks write
//! their one file.

#![forbid(unsafe_code)]

use super::Options;

impl Options {
    /// An MPI session over `communicator` (feature `mpi`): every rank calls
    /// `setup`, `checkpoint` and `finalize` (each is collective), and one
    /// file comes out, with every rank's calls (the `ranks` column), each
    /// rank's thread and task tables, `mpi_size` and `num_nodes`.
    ///
    /// Collective itself: it duplicates the communicator (`MPI_Comm_dup`),
    /// so that the profiler's messages never meet the application's. MPI
    /// must stay initialized until the session is finalized. An MPI session
    /// writes a file: an in-memory or aggregation-mode one is an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    ///
    /// ```no_run
    /// # #[cfg(feature = "mpi")] {
    /// use mpi::traits::Communicator;
    /// use scope_profiler::{self as sp, Options};
    /// let universe = mpi::initialize().unwrap();
    /// let world = universe.world();
    /// sp::setup(Options::new().file_path("run.h5").mpi(&world))?;
    /// sp::region("solve").run(|| ());
    /// sp::finalize()?; // on every rank: one run.h5
    /// # }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    #[cfg(feature = "mpi")]
    pub fn mpi<C: mpi::traits::Communicator>(mut self, communicator: &C) -> Self {
        self.mpi = Some(crate::comm::Comm::duplicate(communicator));
        self
    }

    /// How an MPI session writes its file (default [`MpiOutput::Auto`]; the
    /// Python package's `output_mode`). The same on every rank.
    ///
    /// ```
    /// # #[cfg(feature = "mpi")] {
    /// use scope_profiler::{MpiOutput, Options};
    /// let o = Options::new().mpi_output(MpiOutput::Direct);
    /// assert_eq!(scope_profiler_core::internal::options::read::mpi_output(&o), MpiOutput::Direct);
    /// # }
    /// ```
    #[cfg(feature = "mpi")]
    pub fn mpi_output(mut self, output: MpiOutput) -> Self {
        self.mpi_output = output;
        self
    }
}

/// How the ranks of an MPI session write their one file (feature `mpi`;
/// the Python package's `output_mode`).
///
/// ```
/// # #[cfg(feature = "mpi")] {
/// use scope_profiler::MpiOutput;
/// assert_eq!(MpiOutput::default(), MpiOutput::Auto);
/// assert_eq!(MpiOutput::Parallel.as_str(), "parallel");
/// # }
/// ```
#[cfg(feature = "mpi")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MpiOutput {
    /// [`MpiOutput::Parallel`] when this build has it (feature `mpio`: the
    /// linked HDF5 has MPI-IO), else [`MpiOutput::Direct`]: decided by the
    /// build, the same on every rank.
    #[default]
    Auto,
    /// Serial HDF5: the ranks write their parts of one temporary file in
    /// rank order, each handing the next the region-name table (never
    /// events); rank 0 publishes the file with a rename.
    Direct,
    /// Parallel HDF5 (MPI-IO, feature `mpio`): every rank learns its
    /// offsets from one exclusive scan, and all write their slices of every
    /// column collectively (compressed or not); thread and task columns and
    /// tables included. Without the `mpio` feature, an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    Parallel,
}

#[cfg(feature = "mpi")]
impl MpiOutput {
    /// The Python package's name: `"auto"`, `"direct"` or `"parallel"`.
    ///
    /// ```
    /// # #[cfg(feature = "mpi")]
    /// assert_eq!(scope_profiler::MpiOutput::Direct.as_str(), "direct");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MpiOutput::Auto => "auto",
            MpiOutput::Direct => "direct",
            MpiOutput::Parallel => "parallel",
        }
    }
}
