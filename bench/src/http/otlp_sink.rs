//! A fast OTLP/HTTP receiver for the trace contenders (`nagi-rust-traces`, `nagi-llvm-traces`):
//! it reads each export request and answers 200 with an empty body, keeping nothing, so that
//! the figures measure what exporting costs the service, not what a collector costs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::OnceLock;

/// The sink's endpoint (`http://127.0.0.1:PORT`), started on first use; it serves until the
/// bench exits.
pub fn endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the OTLP sink binds a port");
        let port = listener.local_addr().expect("the sink's address").port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve(stream));
            }
        });
        format!("http://127.0.0.1:{port}")
    })
}

/// Answers the requests of one keep-alive connection until the exporter closes it.
fn serve(stream: TcpStream) {
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::with_capacity(256 * 1024, stream);
    let mut line = String::new();
    let mut body = Vec::new();
    loop {
        let mut length = 0usize;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        body.resize(length, 0);
        if reader.read_exact(&mut body).is_err()
            || writer
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n")
                .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sink_answers_each_request_of_a_keep_alive_connection() {
        let address = endpoint().trim_start_matches("http://").to_owned();
        let mut stream = TcpStream::connect(&address).unwrap();
        let mut answers = BufReader::new(stream.try_clone().unwrap());
        for body in [&b"abc"[..], &[0u8; 70_000][..]] {
            let head = format!("POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n", body.len());
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body).unwrap();
            let mut status = String::new();
            answers.read_line(&mut status).unwrap();
            assert_eq!(status, "HTTP/1.1 200 OK\r\n");
            let mut rest = String::new();
            while rest != "\r\n" {
                rest.clear();
                answers.read_line(&mut rest).unwrap();
            }
        }
    }
}
