//! The error of an HDF5 operation, which either layer (`pure.rs`, `h5/`)
//! returns: what was being done, and the reason.

use std::fmt::{self, Display};

/// A failed HDF5 operation: what was being done, and the reason.
#[derive(Debug)]
pub(crate) struct H5Error(pub(crate) String);

impl Display for H5Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for H5Error {
    fn from(message: String) -> Self {
        H5Error(message)
    }
}

/// The result of an HDF5 operation.
pub(crate) type Result<T> = std::result::Result<T, H5Error>;
