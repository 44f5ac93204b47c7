//! Reading a transcript incrementally: from a kept offset to the last complete line, so a grown
//! file costs only what was appended, and a line still being written waits for its newline.

use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use super::line::{self, Line};

/// What one read of a file gave.
#[derive(Debug, Default)]
pub struct Chunk {
    /// The lines that say something, in order.
    pub lines: Vec<Line>,
    /// Where the next read starts: just after the last complete line.
    pub offset: u64,
    /// Complete lines read, and of those the broken ones (skipped).
    pub read: u64,
    pub broken: u64,
    /// The file was shorter than the kept offset (rewritten): read again from the start.
    pub restarted: bool,
    /// When the file last changed (ms), from the same look at it.
    pub modified_ms: Option<i64>,
}

/// Read `path` from `offset`, a path the caller trusts (a fixture, a benchmark's corpus); what a
/// session can write is opened with [`super::open`] and read with [`read`].
pub fn read_from(path: &Path, offset: u64) -> std::io::Result<Chunk> {
    read(std::fs::File::open(path)?, offset)
}

/// Read an open transcript from `offset`. An unreadable file is an error for the indexer to
/// count; callers that show history treat it as "no history".
pub fn read(file: std::fs::File, offset: u64) -> std::io::Result<Chunk> {
    read_as(file, offset, line::parse)
}

/// [`read`] with the reader of another program's lines (a Codex rollout's,
/// [`super::rollout::parse`]).
pub fn read_as(
    file: std::fs::File,
    offset: u64,
    parse: fn(&[u8]) -> Result<Line, line::Broken>,
) -> std::io::Result<Chunk> {
    let meta = file.metadata()?;
    let len = meta.len();
    let mut chunk = Chunk {
        offset,
        modified_ms: meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64),
        ..Chunk::default()
    };
    if len < offset {
        chunk.restarted = true;
        chunk.offset = 0;
    }
    if len == chunk.offset {
        return Ok(chunk);
    }
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    reader.seek(SeekFrom::Start(chunk.offset))?;
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 || buf.last() != Some(&b'\n') {
            // The end, or a line still being written: it is read once its newline lands.
            break;
        }
        chunk.offset += n as u64;
        chunk.read += 1;
        match parse(&buf[..n - 1]) {
            Ok(Line::Passed) => {}
            Ok(l) => chunk.lines.push(l),
            Err(_) => chunk.broken += 1,
        }
        // A huge line (a request blob) must not keep its buffer alive for the rest.
        if buf.capacity() > 1 << 20 {
            buf = Vec::with_capacity(4096);
        }
    }
    Ok(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_only_what_was_appended_and_waits_for_a_torn_line() {
        let dir = std::env::temp_dir().join(format!("vyre-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let user = |uuid: &str, text: &str| {
            format!(
                "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"uuid\":\"{uuid}\"}}\n"
            )
        };
        std::fs::write(
            &path,
            format!("{}garbage\n{}", user("u1", "one"), user("u2", "two")),
        )
        .unwrap();
        let first = read_from(&path, 0).unwrap();
        assert_eq!((first.lines.len(), first.read, first.broken), (2, 3, 1));

        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let third = user("u3", "three");
        f.write_all(&third.as_bytes()[..20]).unwrap();
        let torn = read_from(&path, first.offset).unwrap();
        assert!(torn.lines.is_empty(), "a torn line waits");
        assert_eq!(torn.offset, first.offset);
        f.write_all(&third.as_bytes()[20..]).unwrap();
        let grown = read_from(&path, torn.offset).unwrap();
        assert_eq!(grown.lines.len(), 1);
        assert!(matches!(&grown.lines[0], Line::Said(s) if s.text == "three"));

        std::fs::write(&path, user("u9", "rewritten")).unwrap();
        let again = read_from(&path, grown.offset).unwrap();
        assert!(again.restarted);
        assert_eq!(again.lines.len(), 1);
        assert!(read_from(&dir.join("missing.jsonl"), 0).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
