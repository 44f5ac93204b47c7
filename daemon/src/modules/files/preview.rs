//! `files.preview`: what a file or folder holds, for a person to look at: a text file's first
//! lines (numbered), an image's bytes (small ones) or a thumbnail (large ones, and a PDF's first
//! page, see `thumbnail`), a folder's entries, and for anything else its size and type. Read through `kernel::nofollow`: regular files only, never through a
//! link, at most [`MAX_BYTES`] read whatever the file's size.

use std::io::Read;

use base64::Engine;
use schemars::JsonSchema;
use serde::Serialize;

use super::roots::{FilesError, Target};
use super::thumbnail;
use crate::kernel::nofollow::{EntryKind, FsError};

/// The most bytes a preview reads of a file.
pub const MAX_BYTES: u64 = 1024 * 1024;
/// The most entries a folder's preview lists.
pub const MAX_ENTRIES: usize = 1000;

/// A line of a text file.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Line {
    /// From 1.
    pub n: usize,
    pub text: String,
}

/// An entry of a folder.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    /// `file`, `folder`, `link` (not followed) or `other` (a FIFO, a socket, a device).
    pub kind: String,
}

/// What a preview shows, by what the path is.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Preview {
    /// A text file's first lines.
    Text {
        path: String,
        size: u64,
        lines: Vec<Line>,
        /// More of the file than these lines.
        truncated: bool,
    },
    /// An image (PNG, JPEG, GIF, WebP) of at most 1 MiB, its bytes in base64; or a thumbnail
    /// (at most 800 pixels a side) of a larger image or of a PDF's first page.
    Image {
        path: String,
        size: u64,
        /// Of `data`.
        media_type: String,
        data: String,
        /// A picture made from the file rather than its bytes.
        thumbnail: bool,
        /// The file's own type, for a thumbnail (`application/pdf`, `image/png`, ...).
        of: Option<String>,
        /// Of a thumbnail, in pixels.
        width: Option<u32>,
        height: Option<u32>,
    },
    /// Anything else (or a file no picture could be made of): its size and, when known, its
    /// type, and why there is no picture when one was tried.
    Binary {
        path: String,
        size: u64,
        media_type: Option<String>,
        note: Option<String>,
    },
    /// A folder's entries, by name.
    Folder {
        path: String,
        entries: Vec<Entry>,
        truncated: bool,
    },
}

/// What makes a picture of a file's bytes.
type Draw = fn(&[u8]) -> Result<thumbnail::Thumb, String>;

/// The media type of an image, by its first bytes (never by its name).
fn image_type(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

fn other_type(head: &[u8]) -> Option<&'static str> {
    head.starts_with(b"%PDF-").then_some("application/pdf")
}

/// Preview the confined `target`, at most `max_lines` lines of a text file.
pub fn preview(target: &Target, shown: String, max_lines: usize) -> Result<Preview, FilesError> {
    let fs = |e: FsError| FilesError::of(e, &shown);
    let is_folder = match &target.name {
        None => true,
        Some(name) => match target.parent.stat(name).map_err(fs)? {
            None => return Err(FilesError::Missing(shown)),
            Some(s) => {
                let kind = nix::sys::stat::SFlag::from_bits_truncate(s.st_mode as _)
                    & nix::sys::stat::SFlag::S_IFMT;
                kind == nix::sys::stat::SFlag::S_IFDIR
            }
        },
    };
    if is_folder {
        let dir = target.folder().map_err(fs)?;
        let mut entries: Vec<Entry> = dir
            .entries()
            .map_err(fs)?
            .into_iter()
            .map(|e| Entry {
                name: e.name.to_string_lossy().into_owned(),
                kind: match e.kind {
                    EntryKind::File => "file",
                    EntryKind::Folder => "folder",
                    EntryKind::Link => "link",
                    EntryKind::Other => "other",
                }
                .into(),
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let truncated = entries.len() > MAX_ENTRIES;
        entries.truncate(MAX_ENTRIES);
        return Ok(Preview::Folder {
            path: shown,
            entries,
            truncated,
        });
    }
    let name = target.name.as_ref().expect("a file has a name");
    let mut file = target.parent.file(name).map_err(fs)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let io = |e: std::io::Error| FilesError::Io(shown.clone(), e.to_string());
    let mut head = Vec::new();
    (&mut file)
        .take(MAX_BYTES)
        .read_to_end(&mut head)
        .map_err(io)?;
    let picture = match (image_type(&head), other_type(&head)) {
        (Some(media_type), _) if size <= MAX_BYTES => {
            return Ok(Preview::Image {
                path: shown,
                size,
                media_type: media_type.into(),
                data: base64::engine::general_purpose::STANDARD.encode(&head),
                thumbnail: false,
                of: None,
                width: None,
                height: None,
            });
        }
        (Some(media_type), _) => Some((media_type, thumbnail::image as Draw)),
        (None, Some(pdf)) => Some((pdf, thumbnail::pdf_first_page as Draw)),
        (None, None) => None,
    };
    if let Some((media_type, draw)) = picture {
        let drawn = if size > thumbnail::MAX_SOURCE_BYTES {
            Err(format!(
                "no picture of a file over {} MiB",
                thumbnail::MAX_SOURCE_BYTES >> 20
            ))
        } else {
            let mut whole = head;
            file.take(thumbnail::MAX_SOURCE_BYTES)
                .read_to_end(&mut whole)
                .map_err(io)?;
            draw(&whole)
        };
        return Ok(match drawn {
            Ok(t) => Preview::Image {
                path: shown,
                size,
                media_type: t.media_type.into(),
                data: base64::engine::general_purpose::STANDARD.encode(&t.data),
                thumbnail: true,
                of: Some(media_type.into()),
                width: Some(t.width),
                height: Some(t.height),
            },
            Err(why) => Preview::Binary {
                path: shown,
                size,
                media_type: Some(media_type.into()),
                note: Some(why),
            },
        });
    }
    // Text: no NUL in its first 8 KiB, and UTF-8 (a character cut at the read's end aside).
    let sample = &head[..head.len().min(8192)];
    let text = match std::str::from_utf8(&head) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    let Some(text) = text.filter(|_| !sample.contains(&0)) else {
        return Ok(Preview::Binary {
            path: shown,
            size,
            media_type: None,
            note: None,
        });
    };
    let mut lines: Vec<Line> = text
        .lines()
        .take(max_lines + 1)
        .enumerate()
        .map(|(i, l)| Line {
            n: i + 1,
            text: l.to_string(),
        })
        .collect();
    let truncated = lines.len() > max_lines || size > head.len() as u64;
    lines.truncate(max_lines);
    Ok(Preview::Text {
        path: shown,
        size,
        lines,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::super::roots::Roots;
    use super::super::roots::tests::scratch;
    use super::*;

    fn look(roots: &Roots, path: &str) -> Result<Preview, FilesError> {
        let t = roots.confine(path)?;
        preview(&t, roots.shown(&t.path), 3)
    }

    #[test]
    fn text_images_folders_and_the_rest_are_shown_as_what_they_are() {
        let tmp = scratch("preview");
        let work = tmp.join("work");
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::fs::write(work.join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
        std::fs::write(work.join("b.png"), b"\x89PNG\r\n\x1a\n0000").unwrap();
        std::fs::write(work.join("c.bin"), b"\x00\x01\x02").unwrap();
        std::fs::write(work.join("d.pdf"), b"%PDF-1.7\n\x00").unwrap();
        let roots = Roots::new(["~/work".to_string()], tmp.clone());
        match look(&roots, "~/work/a.txt").unwrap() {
            Preview::Text {
                lines,
                truncated,
                size,
                ..
            } => {
                assert_eq!(
                    lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
                    ["one", "two", "three"]
                );
                assert_eq!(lines[2].n, 3);
                assert!(truncated);
                assert_eq!(size, 19);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(look(&roots, "~/work/b.png").unwrap(), Preview::Image { media_type, .. } if media_type == "image/png")
        );
        assert!(matches!(
            look(&roots, "~/work/c.bin").unwrap(),
            Preview::Binary {
                media_type: None,
                size: 3,
                ..
            }
        ));
        assert!(
            matches!(look(&roots, "~/work/d.pdf").unwrap(), Preview::Binary { media_type: Some(m), note: Some(_), .. } if m == "application/pdf"),
            "a broken PDF: its type, and why there is no picture"
        );
        match look(&roots, "~/work").unwrap() {
            Preview::Folder { entries, .. } => assert_eq!(
                entries
                    .iter()
                    .map(|e| (e.name.as_str(), e.kind.as_str()))
                    .collect::<Vec<_>>(),
                [
                    ("a.txt", "file"),
                    ("b.png", "file"),
                    ("c.bin", "file"),
                    ("d.pdf", "file"),
                    ("sub", "folder")
                ]
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            look(&roots, "~/work/nothing"),
            Err(FilesError::Missing(_))
        ));
    }

    #[test]
    fn a_link_or_a_fifo_is_refused_and_never_read() {
        let tmp = scratch("preview-attack");
        let work = tmp.join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(tmp.join("secret"), "sk-ant-not-for-you").unwrap();
        std::os::unix::fs::symlink(tmp.join("secret"), work.join("innocent.txt")).unwrap();
        nix::unistd::mkfifo(&work.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let roots = Roots::new(["~/work".to_string()], tmp.clone());
        assert!(matches!(
            look(&roots, "~/work/innocent.txt"),
            Err(FilesError::Link(_))
        ));
        // A FIFO would block a reader forever; it is refused at once.
        assert!(matches!(
            look(&roots, "~/work/pipe"),
            Err(FilesError::NotRegular(_))
        ));
        match look(&roots, "~/work").unwrap() {
            Preview::Folder { entries, .. } => assert_eq!(
                entries
                    .iter()
                    .map(|e| (e.name.as_str(), e.kind.as_str()))
                    .collect::<Vec<_>>(),
                [("innocent.txt", "link"), ("pipe", "other")]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_large_image_and_a_pdf_are_previewed_as_thumbnails_of_what_they_are() {
        let tmp = scratch("thumbs");
        let work = tmp.join("work");
        std::fs::create_dir_all(&work).unwrap();
        // Noise does not compress: well over 1 MiB as a PNG.
        let mut seed = 7u32;
        let noisy = image::RgbImage::from_fn(1200, 900, |_, _| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            image::Rgb([(seed >> 16) as u8, (seed >> 8) as u8, seed as u8])
        });
        let mut png = Vec::new();
        image::DynamicImage::ImageRgb8(noisy)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        assert!(png.len() as u64 > MAX_BYTES);
        std::fs::write(work.join("photo.png"), &png).unwrap();
        std::fs::write(work.join("paper.pdf"), thumbnail::tests::tiny_pdf()).unwrap();
        let roots = Roots::new(["~/work".to_string()], tmp.clone());
        match look(&roots, "~/work/photo.png").unwrap() {
            Preview::Image {
                media_type,
                thumbnail,
                of,
                width,
                height,
                size,
                ..
            } => {
                assert!(thumbnail);
                assert_eq!(media_type, "image/jpeg");
                assert_eq!(of.as_deref(), Some("image/png"));
                assert_eq!((width, height), (Some(800), Some(600)));
                assert_eq!(size, png.len() as u64);
            }
            other => panic!("{other:?}"),
        }
        match (
            thumbnail::pdf_renderer(),
            look(&roots, "~/work/paper.pdf").unwrap(),
        ) {
            (
                Ok(_),
                Preview::Image {
                    of,
                    thumbnail,
                    media_type,
                    ..
                },
            ) => {
                assert!(thumbnail);
                assert_eq!(
                    (of.as_deref(), media_type.as_str()),
                    (Some("application/pdf"), "image/png")
                );
            }
            (Err(why), Preview::Binary { note, .. }) => assert_eq!(note, Some(why)),
            (_, other) => panic!("{other:?}"),
        }
    }
}
