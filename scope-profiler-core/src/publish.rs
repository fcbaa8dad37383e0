//! Atomic publication: a file is built at a sibling temporary path, made
//! durable, and renamed over the target in one step.
//!
//! Readers of the target see either the previous file or the complete new
//! one, never a partial write. On any error the temporary file is removed and
//! the previous file is left as it was. This is what the Python writer does
//! (`tempfile.mkstemp` + `os.replace`) and what the C writer does
//! (`<path>.tmp<pid>` + `rename`).

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;

/// Distinguishes the temporary files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How many taken temporary names are skipped before giving up.
const TEMP_ATTEMPTS: u32 = 100;

/// Builds a file with `build` at a temporary sibling of `path`, then publishes
/// it at `path`: fsync the file, rename it over `path`, fsync the directory.
///
/// `build` receives the temporary path, an existing empty file it may
/// truncate, and must have closed the file when it returns. Every error names
/// `path`: I/O failures become [`Error::Io`], failures of `build` what
/// `build` returns, and a `path` that is a directory or has no file name
/// [`Error::InvalidPath`].
pub fn publish_atomically<F>(path: &Path, build: F) -> Result<(), Error>
where
    F: FnOnce(&Path) -> Result<(), Error>,
{
    let (dir, name) = split_target(path)?;
    let temp = TempFile::reserve(&dir, &name).map_err(|e| Error::io(path, e))?;
    build(temp.path())?;
    sync_file(temp.path()).map_err(|e| Error::io(path, e))?;
    temp.rename_to(path).map_err(|e| Error::io(path, e))?;
    sync_dir(&dir).map_err(|e| Error::io(path, e))
}

/// A temporary sibling of a target, built in several steps (by the ranks
/// of an MPI session), then published with [`Staged::publish`]; removed if
/// dropped unpublished.
#[cfg(feature = "mpi")]
pub struct Staged {
    temp: TempFile,
    dir: PathBuf,
    target: PathBuf,
}

#[cfg(feature = "mpi")]
impl Staged {
    /// Reserves a new empty temporary sibling of `path`.
    pub fn reserve(path: &Path) -> Result<Staged, Error> {
        let (dir, name) = split_target(path)?;
        let temp = TempFile::reserve(&dir, &name).map_err(|e| Error::io(path, e))?;
        Ok(Staged {
            temp,
            dir,
            target: path.to_path_buf(),
        })
    }

    /// Where the temporary file is.
    pub fn path(&self) -> &Path {
        self.temp.path()
    }

    /// Makes the (closed) file durable and renames it over the target, as
    /// [`publish_atomically`] does.
    pub fn publish(self) -> Result<(), Error> {
        let path = &self.target;
        sync_file(self.temp.path()).map_err(|e| Error::io(path, e))?;
        self.temp.rename_to(path).map_err(|e| Error::io(path, e))?;
        sync_dir(&self.dir).map_err(|e| Error::io(path, e))
    }
}

/// The directory a target lives in and its file name.
fn split_target(path: &Path) -> Result<(PathBuf, OsString), Error> {
    if path.is_dir() {
        return Err(Error::invalid_path(path, "it is a directory"));
    }
    let Some(name) = path.file_name() else {
        return Err(Error::invalid_path(path, "it does not name a file"));
    };
    let dir = crate::scratch::dir_of(path);
    Ok((dir, name.to_os_string()))
}

/// A temporary file that is removed when dropped, unless it was renamed.
struct TempFile {
    path: PathBuf,
    armed: bool,
}

impl TempFile {
    /// Creates a new empty file `.<name>.tmp<pid>-<n>` in `dir`, skipping
    /// names that are taken (left over by a crashed process, say).
    fn reserve(dir: &Path, name: &OsString) -> io::Result<TempFile> {
        let mut last_error = None;
        for _ in 0..TEMP_ATTEMPTS {
            let path = dir.join(temp_name(name));
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(TempFile { path, armed: true }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_error.unwrap_or_else(|| io::Error::other("no free temporary file name")))
    }

    /// Where the temporary file is.
    fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file to `target`, replacing any file there. On failure the
    /// temporary file is removed.
    fn rename_to(mut self, target: &Path) -> io::Result<()> {
        fs::rename(&self.path, target)?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            // Best effort: the error being reported matters more than this one.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// `.<name>.tmp<pid>-<n>`: hidden, next to the target, unique per process.
fn temp_name(name: &OsString) -> OsString {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".tmp{}-{}", std::process::id(), n));
    temp
}

/// Forces a closed file's contents and size to stable storage.
fn sync_file(path: &Path) -> io::Result<()> {
    fs::File::open(path)?.sync_all()
}

use crate::platform::sync_dir;
