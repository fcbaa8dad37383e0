//! The live server (`Options::live`): a session's totals so far over
//! HTTP/1.1, and pause, resume and checkpoint from outside.
//!
//! `setup` binds the address before the session is activated (`bind`: a
//! port in use, a non-loopback address without a token, a build without
//! the feature `live` are `Err`s then, and nothing has started), and starts
//! the serving thread once it is (`start`). The thread folds the session's
//! finished calls once a second (`LiveTotals`, on this thread only: the
//! recording threads do nothing more) and answers one request at a time
//! (`serve.rs`, `http.rs`). `finalize` stops it after its write, once the
//! lifecycle lock is released (a `POST /checkpoint` may be waiting for it).

#![forbid(unsafe_code)]

#[cfg(feature = "live")]
mod http;
#[cfg(feature = "live")]
mod serve;

use std::net::SocketAddr;

use crate::error::Error;
use crate::options::{Options, read};

/// A bound listener, not serving yet.
pub(super) struct Bound {
    #[cfg(feature = "live")]
    listener: std::net::TcpListener,
    #[cfg(feature = "live")]
    token: Option<String>,
}

/// Binds the address `options` names for the live server, if any.
///
/// # Errors
/// [`Error::Usage`] naming the address: it does not resolve, cannot be
/// bound (a port in use), or is not a loopback address and no token is set;
/// or the build has no feature `live`.
pub(super) fn bind(options: &Options) -> Result<Option<Bound>, Error> {
    let Some(addr) = read::live(options) else {
        return Ok(None);
    };
    bind_addr(addr, read::live_token(options))
}

#[cfg(not(feature = "live"))]
fn bind_addr(addr: &str, _token: Option<&str>) -> Result<Option<Bound>, Error> {
    Err(Error::Usage(format!(
        "live: serving {addr} needs the feature `live` of scope-profiler (a default feature), \
         which this build leaves out"
    )))
}

#[cfg(feature = "live")]
fn bind_addr(addr: &str, token: Option<&str>) -> Result<Option<Bound>, Error> {
    use std::net::ToSocketAddrs;
    let usage = |why: String| Error::Usage(format!("live: cannot serve on {addr}: {why}"));
    let token = token.filter(|t| !t.is_empty());
    let candidates: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| usage(format!("{e} (give host:port, e.g. 127.0.0.1:7878)")))?
        .collect();
    if candidates.is_empty() {
        return Err(usage("it resolves to no address".to_owned()));
    }
    if token.is_none()
        && let Some(open) = candidates.iter().find(|a| !a.ip().is_loopback())
    {
        return Err(usage(format!(
            "{} is not a loopback address; set Options::live_token (SCOPE_PROFILER_LIVE_TOKEN) \
             to serve beyond this machine",
            open.ip()
        )));
    }
    let mut last = None;
    for candidate in &candidates {
        match std::net::TcpListener::bind(candidate) {
            Ok(listener) => {
                return Ok(Some(Bound {
                    listener,
                    token: token.map(str::to_owned),
                }));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(usage(last.map_or_else(String::new, |e| match e.kind() {
        std::io::ErrorKind::AddrInUse => {
            format!("{e} (another program, or another session, listens there)")
        }
        _ => e.to_string(),
    })))
}

/// Starts serving `bound` for `session` (not active yet: it is activated
/// once its server runs); the address it listens on.
///
/// # Errors
/// [`Error::Usage`] if the serving thread cannot be started.
pub(super) fn start(
    bound: Bound,
    session: &std::sync::Arc<crate::active::Session>,
    verbose: bool,
) -> Result<SocketAddr, Error> {
    #[cfg(feature = "live")]
    {
        serve::start(bound, session, verbose)
    }
    #[cfg(not(feature = "live"))]
    {
        let _ = (bound, session, verbose);
        Err(Error::Usage(
            "live: this build has no feature `live`".to_owned(),
        ))
    }
}

/// Stops the server of every session that is not the active one (the
/// session it served has ended, or was never activated), and waits for its
/// thread (not in a `fork()` child, which has none).
pub(super) fn stop_ended() {
    #[cfg(feature = "live")]
    serve::stop_ended();
}

/// The address session `generation`'s live server listens on, if it
/// serves.
pub(super) fn addr(generation: u32) -> Option<SocketAddr> {
    #[cfg(feature = "live")]
    {
        serve::addr(generation)
    }
    #[cfg(not(feature = "live"))]
    {
        let _ = generation;
        None
    }
}
