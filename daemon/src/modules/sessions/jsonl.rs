//! JSON lines over a child's stdio, shared by the drivers' peers (`wire` for Claude Code's
//! stream-json and control protocol, `rpc` for ACP's and Codex's JSON-RPC): one writer task, so lines
//! never interleave, and a reader that hands out each line as JSON or says it was not.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest line accepted from the child; longer ones are skipped (a transcript-sized blob).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One line the child wrote.
#[derive(Debug)]
pub enum Line {
    Json(Value),
    /// Not JSON (its first 200 characters), or too long: logged and skipped by the peers.
    Garbage(String),
}

/// Write each line it is given, with its newline; when every sender is gone, close the writer
/// (the child's stdin: its sign to finish).
pub async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if writer.write_all(line.as_bytes()).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

/// The lines of a child's stdout, blank ones skipped.
pub struct Lines<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub fn new(reader: R) -> Self {
        Lines {
            reader: BufReader::new(reader),
            buf: Vec::new(),
        }
    }

    /// The next line; `None` once the stream ends (or fails).
    pub async fn next(&mut self) -> Option<Line> {
        loop {
            self.buf.clear();
            match (&mut self.reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.buf)
                .await
            {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if self.buf.len() > MAX_LINE && !self.buf.ends_with(b"\n") {
                // Skip the rest of an overlong line.
                let mut rest = Vec::new();
                let _ = self.reader.read_until(b'\n', &mut rest).await;
                return Some(Line::Garbage(format!(
                    "a line longer than {MAX_LINE} bytes"
                )));
            }
            let text = String::from_utf8_lossy(&self.buf);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            return Some(match serde_json::from_str::<Value>(text) {
                Ok(value) => Line::Json(value),
                Err(_) => Line::Garbage(text.chars().take(200).collect()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_json_or_said_to_be_garbage_and_an_overlong_one_is_skipped_whole() {
        let (mut child, ours) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            let mut text = b"\n  \n{\"a\":1}\nnot json\n".to_vec();
            text.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
            text.extend(b"\n{\"b\":2}\n");
            child.write_all(&text).await.unwrap();
        });
        let mut lines = Lines::new(ours);
        let mut said = Vec::new();
        while let Some(line) = lines.next().await {
            said.push(match line {
                Line::Json(v) => v.to_string(),
                Line::Garbage(g) => format!("garbage: {g}"),
            });
        }
        writer.await.unwrap();
        assert_eq!(
            said,
            [
                "{\"a\":1}".to_string(),
                "garbage: not json".into(),
                format!("garbage: a line longer than {MAX_LINE} bytes"),
                "{\"b\":2}".into(),
            ]
        );
    }
}
