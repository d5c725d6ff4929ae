//! A minimal HTTP/1.1 client over `std::net::TcpStream`, enough to wait for a server, seed its
//! database and check its answers without pulling an HTTP stack into the bench: one request per
//! connection (`Connection: close`, [`request`]), or requests one after the other on one
//! keep-alive connection ([`Connection`], for counting a request's instructions without its
//! connection's).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// An answer: the status and the body as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The `content-type` header, if any.
    pub content_type: Option<String>,
    /// The body (de-chunked when the server chunked it).
    pub body: String,
}

/// Sends one request (a JSON body when `body` is given) and reads the whole answer.
pub fn request(address: SocketAddr, method: &str, path: &str, body: Option<&str>) -> Result<Answer, String> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    write_request(&mut stream, address, method, path, body, true)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    parse_answer(&raw)
}

/// Writes a request's head (with `Connection: close` when `close`) and its JSON body, if any.
fn write_request(
    stream: &mut TcpStream,
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    close: bool,
) -> Result<(), String> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\n");
    if close {
        head.push_str("Connection: close\r\n");
    }
    if let Some(body) = body {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    if let Some(body) = body {
        stream.write_all(body.as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// One keep-alive connection: requests one after the other, each answer read to its end (its
/// `content-length`, or the last chunk) before the next request is written.
pub struct Connection {
    stream: TcpStream,
    address: SocketAddr,
}

impl Connection {
    /// Connects to `address`; slow servers (one under callgrind) get a minute per answer.
    pub fn open(address: SocketAddr) -> Result<Connection, String> {
        let stream = TcpStream::connect_timeout(&address, Duration::from_secs(10)).map_err(|e| e.to_string())?;
        stream.set_read_timeout(Some(Duration::from_secs(60))).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Connection { stream, address })
    }

    /// Sends one request on the connection and reads its whole answer.
    pub fn send(&mut self, method: &str, path: &str, body: Option<&str>) -> Result<Answer, String> {
        write_request(&mut self.stream, self.address, method, path, body, false)?;
        let mut raw = Vec::new();
        let mut buf = [0_u8; 16 * 1024];
        loop {
            if answer_complete(&raw)? {
                return parse_answer(&raw);
            }
            let n = self.stream.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the server closed a keep-alive connection".into());
            }
            raw.extend_from_slice(&buf[..n]);
        }
    }
}

/// Whether `raw` holds a whole answer: its head, then chunks up to the last one and the end of
/// its trailers, or else `content-length` bytes, read from the head as [`parse_answer`] reads
/// it. An answer with neither is an error here (it would end only when the connection closes);
/// the bench sends no `HEAD` and expects no 204 or 304, whose answers have no body.
fn answer_complete(raw: &[u8]) -> Result<bool, String> {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else { return Ok(false) };
    let (length, chunked) = framing(&String::from_utf8_lossy(&raw[..end]));
    let body = &raw[end + 4..];
    match (chunked, length) {
        (true, _) => Ok(chunks_complete(body)),
        (false, Some(length)) => Ok(body.len() >= length),
        (false, None) => Err("an answer with neither a content-length nor chunks cannot share a connection".into()),
    }
}

/// The `content-length` (if any) and whether the body is chunked, from an answer's head.
fn framing(head: &str) -> (Option<usize>, bool) {
    let (mut length, mut chunked) = (None, false);
    for line in head.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse::<usize>().ok(),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    (length, chunked)
}

/// Whether a chunked body is whole: every chunk by its size, the last (size 0), then the
/// trailers' end. A malformed size counts as whole, so that [`parse_answer`] reports it.
fn chunks_complete(mut rest: &[u8]) -> bool {
    loop {
        let Some(line) = rest.windows(2).position(|w| w == b"\r\n") else { return false };
        let size = String::from_utf8_lossy(&rest[..line]);
        let Ok(size) = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16) else { return true };
        let after = &rest[line + 2..];
        if size == 0 {
            return after.starts_with(b"\r\n") || after.windows(4).any(|w| w == b"\r\n\r\n");
        }
        match after.get(size + 2..) {
            Some(next) => rest = next,
            None => return false,
        }
    }
}

/// Parses a whole HTTP/1.1 answer (status line, headers, body by length, chunks or close).
pub fn parse_answer(raw: &[u8]) -> Result<Answer, String> {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text.split_once("\r\n\r\n").ok_or("the answer has no end of headers")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let content_type = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("content-type").then(|| value.trim().to_string())
    });
    let (length, chunked) = framing(head);
    let body = if chunked {
        dechunk(rest)?
    } else {
        match length {
            Some(n) => rest.get(..n).ok_or("the body is shorter than its content-length")?.to_string(),
            None => rest.to_string(),
        }
    };
    Ok(Answer { status, content_type, body })
}

fn dechunk(mut rest: &str) -> Result<String, String> {
    let mut body = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").ok_or("a chunk without a size line")?;
        let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size:?}"))?;
        if size == 0 {
            return Ok(body);
        }
        body.push_str(after.get(..size).ok_or("a chunk is cut short")?);
        rest = after.get(size + 2..).ok_or("a chunk is cut short")?;
    }
}

/// Waits until `GET /health` answers 200, at most `timeout`.
pub fn wait_ready(address: SocketAddr, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        match request(address, "GET", "/health", None) {
            Ok(answer) if answer.status == 200 => return Ok(()),
            outcome => {
                if Instant::now() > deadline {
                    return Err(format!("{address} did not answer GET /health within {timeout:?} (last: {outcome:?})"));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keep_alive_answer_ends_at_its_length_or_last_chunk() {
        let fixed = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n\"ok";
        assert_eq!(answer_complete(fixed), Ok(false));
        assert_eq!(answer_complete(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n\"ok\""), Ok(true));
        assert_eq!(answer_complete(b"HTTP/1.1 200 OK\r\ncontent-len"), Ok(false));
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n";
        assert_eq!(answer_complete(chunked), Ok(false));
        let done = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        assert_eq!(answer_complete(done), Ok(true));
        let trailers = b"HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n2;x=1\r\nok\r\n0\r\nx: y\r\n\r\n";
        assert_eq!(answer_complete(trailers), Ok(true));
        assert_eq!(answer_complete(&trailers[..trailers.len() - 2]), Ok(false));
        // A chunk holding what looks like the last chunk is not the end.
        let inside = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n7\r\n0\r\n\r\nx\r\n";
        assert_eq!(answer_complete(inside), Ok(false));
        assert_eq!(answer_complete(b"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok"), Ok(true));
        assert!(answer_complete(b"HTTP/1.1 200 OK\r\n\r\nok").is_err());
    }

    #[test]
    fn answers_parse_with_length_chunks_or_close() {
        let fixed = b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n\"ok\"";
        let answer = parse_answer(fixed).unwrap();
        assert_eq!((answer.status, answer.body.as_str()), (201, "\"ok\""));
        assert_eq!(answer.content_type.as_deref(), Some("application/json"));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[1,\r\n2\r\n2]\r\n0\r\n\r\n";
        assert_eq!(parse_answer(chunked).unwrap().body, "[1,2]");
        assert_eq!(parse_answer(b"HTTP/1.1 404 Not Found\r\n\r\nbye").unwrap().body, "bye");
        assert!(parse_answer(b"garbage").is_err());
    }
}
