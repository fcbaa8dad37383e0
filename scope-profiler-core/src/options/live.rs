//! The live view: an HTTP server on the running session (`live`), its
//! token, and a session that starts paused.

#![forbid(unsafe_code)]

use super::Options;

impl Options {
    /// Serves the running session over HTTP/1.1 at `addr` (`host:port`; port 0
    /// picks a free one): `GET /snapshot` (every region's calls and times so
    /// far, as JSON), `POST /pause`, `/resume` and `/checkpoint`; `scope-prof
    /// live ADDR` shows it. A background thread serves while the session
    /// runs and stops when it ends; nothing is added to a call's cost. A
    /// loopback address only, unless [`Options::live_token`] is set (which
    /// every request must then carry): `setup` is an `Err` for any other
    /// address without a token, and for an address it cannot bind (a port
    /// in use), naming it. The bound address is printed once to stderr
    /// (when verbose) and given by
    /// [`Run::live_addr`](https://docs.rs/scope-profiler/latest/scope_profiler/struct.Run.html#method.live_addr).
    /// Needs the feature `live` (a default one). TOML key `live`, variable
    /// `SCOPE_PROFILER_LIVE=127.0.0.1:7878`.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().live("127.0.0.1:0");
    /// assert_eq!(scope_profiler_core::internal::options::read::live(&o), Some("127.0.0.1:0"));
    /// ```
    pub fn live(mut self, addr: impl Into<String>) -> Self {
        self.live = Some(addr.into());
        self
    }

    /// The token every request to the live server must carry, as
    /// `Authorization: Bearer TOKEN` (a request without it, or with another,
    /// is answered 401); with one, [`Options::live`] may name a non-loopback
    /// address. TOML key `live_token`, variable `SCOPE_PROFILER_LIVE_TOKEN`.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().live("0.0.0.0:7878").live_token("s3cret");
    /// assert_eq!(scope_profiler_core::internal::options::read::live_token(&o), Some("s3cret"));
    /// ```
    pub fn live_token(mut self, token: impl Into<String>) -> Self {
        self.live_token = Some(token.into());
        self
    }

    /// Starts the session with recording paused (as if
    /// [`pause`](https://docs.rs/scope-profiler/latest/scope_profiler/fn.pause.html)
    /// were called right after `setup`): calls record nothing until
    /// `resume`, from the program or from outside (`POST /resume` on the
    /// live server, `r` in `scope-prof live`). TOML key `start_paused`.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().start_paused(true);
    /// assert!(scope_profiler_core::internal::options::read::start_paused(&o));
    /// ```
    pub fn start_paused(mut self, on: bool) -> Self {
        self.start_paused = on;
        self
    }
}
