//! The live server's client: one HTTP/1.1 request per connection (as the
//! server answers, `Connection: close`), the response's status parsed by
//! `httparse`, every step bounded in time.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use scope_profiler_reader::live::Snapshot;

/// How long a request may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(3);
/// The largest response read (a snapshot of 100k regions is ~10 MB).
const MAX_RESPONSE: u64 = 64 << 20;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failed {
    /// Nothing listens there (the program ended, or has not started).
    Refused(String),
    /// The server answered with an error status.
    Status(u16, String),
    /// Anything else: a timeout, a malformed answer.
    Other(String),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Refused(m) | Failed::Other(m) => f.write_str(m),
            Failed::Status(s, m) => write!(f, "HTTP {s}: {m}"),
        }
    }
}

/// A live server's address and token.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    pub addr: String,
    pub token: Option<String>,
}

impl Client {
    /// `GET /snapshot`, parsed.
    pub(crate) fn snapshot(&self) -> Result<Snapshot, Failed> {
        let body = self.request("GET", "/snapshot")?;
        Snapshot::parse(&body).map_err(|e| Failed::Other(e.to_string()))
    }

    /// `GET /snapshot`, the body as received.
    pub(crate) fn snapshot_text(&self) -> Result<String, Failed> {
        self.request("GET", "/snapshot")
    }

    /// `POST path` (`/pause`, `/resume`, `/checkpoint`): the body.
    pub(crate) fn post(&self, path: &str) -> Result<String, Failed> {
        self.request("POST", path)
    }

    fn connect(&self) -> Result<TcpStream, Failed> {
        let addrs: Vec<SocketAddr> = self
            .addr
            .to_socket_addrs()
            .map_err(|e| Failed::Other(format!("{}: {e} (give host:port)", self.addr)))?
            .collect();
        let mut last = format!("{}: resolves to no address", self.addr);
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, TIMEOUT) {
                Ok(s) => return Ok(s),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    last = format!(
                        "nothing listens on {addr} (the program ended, or has not started)"
                    );
                }
                Err(e) => return Err(Failed::Other(format!("{addr}: {e}"))),
            }
        }
        Err(Failed::Refused(last))
    }

    fn request(&self, method: &str, path: &str) -> Result<String, Failed> {
        let mut stream = self.connect()?;
        let other = |e: std::io::Error| Failed::Other(format!("{}: {e}", self.addr));
        stream.set_read_timeout(Some(TIMEOUT)).map_err(other)?;
        stream.set_write_timeout(Some(TIMEOUT)).map_err(other)?;
        let auth = match &self.token {
            Some(t) => format!("Authorization: Bearer {t}\r\n"),
            None => String::new(),
        };
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n",
            self.addr
        );
        stream.write_all(head.as_bytes()).map_err(other)?;
        let mut response = Vec::new();
        (&mut stream)
            .take(MAX_RESPONSE)
            .read_to_end(&mut response)
            .map_err(other)?;
        parse_response(&response)
    }
}

/// A whole response: its body if the status is 2xx.
fn parse_response(bytes: &[u8]) -> Result<String, Failed> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(Failed::Other("the answer ended early".to_owned()));
        }
        Err(e) => return Err(Failed::Other(format!("not an HTTP answer: {e}"))),
    };
    let status = response.code.unwrap_or(0);
    let body = String::from_utf8_lossy(&bytes[head..]).into_owned();
    if (200..300).contains(&status) {
        Ok(body)
    } else {
        // The server's errors are `{"message": ...}`.
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("message")?.as_str().map(str::to_owned))
            .unwrap_or(body);
        Err(Failed::Status(status, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse_response(ok), Ok("{}".to_owned()));
        let denied = b"HTTP/1.1 401 Unauthorized\r\n\r\n{\"message\":\"token\"}";
        assert_eq!(
            parse_response(denied),
            Err(Failed::Status(401, "token".to_owned()))
        );
        assert!(matches!(
            parse_response(b"HTTP/1.1 20"),
            Err(Failed::Other(_))
        ));
        assert!(matches!(
            parse_response(b"\x00garbage\r\n\r\n"),
            Err(Failed::Other(_))
        ));
    }

    #[test]
    fn nothing_listening_is_refused() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The listener is dropped: nothing listens there now.
        let client = Client {
            addr: format!("127.0.0.1:{port}"),
            token: None,
        };
        assert!(matches!(client.snapshot(), Err(Failed::Refused(_))));
    }
}
