//! A minimal HTTP/1.1 client over `std::net::TcpStream` (one request per connection,
//! `Connection: close`), enough to wait for a server, seed its database and check its answers
//! without pulling an HTTP stack into the bench.

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
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    if let Some(body) = body {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    if let Some(body) = body {
        stream.write_all(body.as_bytes()).map_err(|e| e.to_string())?;
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    parse_answer(&raw)
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
    let mut content_type = None;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = Some(value.to_string()),
            "content-length" => length = value.parse::<usize>().ok(),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
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
