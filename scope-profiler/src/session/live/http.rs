//! One HTTP/1.1 exchange of the live server: a request read (bounded in
//! size and time, parsed by `httparse`) and a response written, then the
//! connection closed.

#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 16 << 10;
/// How long a client may take to send its request, or to read the answer.
pub(super) const TIMEOUT: Duration = Duration::from_secs(2);

/// What the server needs of a request.
pub(super) struct Request {
    pub method: String,
    /// The path without its query.
    pub path: String,
    /// The `Authorization` header's value, if any.
    pub authorization: Option<Vec<u8>>,
}

/// Why a request could not be read: the status to answer, if any.
pub(super) enum Failed {
    /// The client sent nothing complete in time, or went away.
    Gone,
    /// A malformed (400) or too large (431) request.
    Status(u16, &'static str),
}

/// Reads one request's head from `stream` (the body, if any, is ignored:
/// no route takes one).
pub(super) fn read_request(stream: &mut TcpStream) -> Result<Request, Failed> {
    let _ = stream.set_read_timeout(Some(TIMEOUT));
    let _ = stream.set_write_timeout(Some(TIMEOUT));
    let deadline = Instant::now() + TIMEOUT;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if Instant::now() > deadline {
            return Err(Failed::Gone);
        }
        let n = match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(Failed::Gone),
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf) {
            Ok(httparse::Status::Complete(_)) => {
                let path = request.path.unwrap_or("/");
                return Ok(Request {
                    method: request.method.unwrap_or("").to_owned(),
                    path: path.split('?').next().unwrap_or("/").to_owned(),
                    authorization: request
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                        .map(|h| h.value.to_vec()),
                });
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
            Ok(httparse::Status::Partial) => {
                return Err(Failed::Status(431, "request header fields too large"));
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Err(Failed::Status(431, "too many header fields"));
            }
            Err(_) => return Err(Failed::Status(400, "malformed request")),
        }
    }
}

/// Writes a response of `status` with a JSON `body` and closes.
pub(super) fn respond(stream: &mut TcpStream, status: u16, body: &str) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "Service Unavailable",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n",
        body.len()
    );
    if status == 401 {
        head.push_str("WWW-Authenticate: Bearer realm=\"scope-profiler\"\r\n");
    }
    head.push_str("\r\n");
    // A client that reads slowly gets what it read by the deadline: the
    // server answers the next one.
    let deadline = Instant::now() + 2 * TIMEOUT;
    let all = [head.as_bytes(), body.as_bytes()].concat();
    let mut sent = 0;
    while sent < all.len() && Instant::now() < deadline {
        let end = (sent + (64 << 10)).min(all.len());
        match stream.write(&all[sent..end]) {
            Ok(0) | Err(_) => break,
            Ok(n) => sent += n,
        }
    }
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// Whether `authorization` is `Bearer TOKEN` (compared in constant time).
pub(super) fn authorized(authorization: Option<&[u8]>, token: &str) -> bool {
    let Some(value) = authorization else {
        return false;
    };
    let Some(given) = value.strip_prefix(b"Bearer ") else {
        return false;
    };
    let given = given.trim_ascii();
    let expected = token.as_bytes();
    if given.len() != expected.len() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens() {
        assert!(authorized(Some(b"Bearer s3cret"), "s3cret"));
        assert!(authorized(Some(b"Bearer s3cret "), "s3cret"));
        assert!(!authorized(Some(b"Bearer s3cre"), "s3cret"));
        assert!(!authorized(Some(b"Basic s3cret"), "s3cret"));
        assert!(!authorized(None, "s3cret"));
    }
}
