//! Pictures for previews: a large image scaled down to a thumbnail, and a PDF's first page drawn
//! (by poppler's `pdftoppm`, in the kernel's jail: a PDF from a session's folder is hostile
//! input until shown otherwise, and a PDF parser is a large C program).

use std::io::Cursor;
use std::path::PathBuf;

use crate::kernel::jail;

/// The longest side of a thumbnail, in pixels.
pub const MAX_SIDE: u32 = 800;
/// The largest file a thumbnail is made from.
pub const MAX_SOURCE_BYTES: u64 = 64 * 1024 * 1024;
/// The widest or tallest image decoded (a small file can claim a huge canvas).
const MAX_DIMENSION: u32 = 20_000;
/// The most memory decoding may take.
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;

/// A picture to show: PNG or JPEG bytes and their size in pixels.
#[derive(Debug)]
pub struct Thumb {
    pub media_type: &'static str,
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// An image (PNG, JPEG, GIF, WebP: its first frame) scaled to fit [`MAX_SIDE`]; PNG when it
/// has transparency, else JPEG.
pub fn image(bytes: &[u8]) -> Result<Thumb, String> {
    let mut reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DIMENSION);
    limits.max_image_height = Some(MAX_DIMENSION);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| e.to_string())?;
    let small = decoded.thumbnail(MAX_SIDE, MAX_SIDE);
    let mut data = Vec::new();
    let media_type = if small.color().has_alpha() {
        small
            .write_to(&mut Cursor::new(&mut data), image::ImageFormat::Png)
            .map_err(|e| e.to_string())?;
        "image/png"
    } else {
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut data, 82)
            .encode_image(&small.to_rgb8())
            .map_err(|e| e.to_string())?;
        "image/jpeg"
    };
    Ok(Thumb {
        media_type,
        width: small.width(),
        height: small.height(),
        data,
    })
}

/// What draws a PDF's first page here: bubblewrap and `pdftoppm` under `/usr`; or why not.
pub fn pdf_renderer() -> Result<(PathBuf, PathBuf), String> {
    let Some(bwrap) = jail::bwrap() else {
        return Err(
            "PDF previews need bubblewrap (bwrap), which runs the renderer in a sandbox".into(),
        );
    };
    match jail::find("pdftoppm") {
        Some(p) if p.starts_with("/usr") => Ok((bwrap, p)),
        Some(p) => Err(format!(
            "PDF previews use a pdftoppm under /usr; {} is elsewhere",
            p.display()
        )),
        None => Err("PDF previews need poppler's pdftoppm (apt install poppler-utils)".into()),
    }
}

/// A PDF's first page, drawn to fit [`MAX_SIDE`] as PNG, in the jail.
pub fn pdf_first_page(pdf: &[u8]) -> Result<Thumb, String> {
    let (bwrap, pdftoppm) = pdf_renderer()?;
    let sh = jail::find("sh").ok_or("no sh")?;
    // pdftoppm reads the PDF from stdin and writes a file, inside the jail's own /tmp; the
    // shell passes it out on stdout. Nothing of this machine's is in reach.
    let script = format!(
        "'{}' -png -singlefile -f 1 -l 1 -scale-to {MAX_SIDE} - /tmp/page && cat /tmp/page.png",
        pdftoppm.display()
    );
    let png = jail::run(&bwrap, &sh, &["-c", &script], pdf, jail::Limits::default())
        .map_err(|e| e.to_string())?;
    let size = image::ImageReader::with_format(Cursor::new(&png), image::ImageFormat::Png)
        .into_dimensions()
        .map_err(|e| format!("pdftoppm's page is not a PNG: {e}"))?;
    Ok(Thumb {
        media_type: "image/png",
        data: png,
        width: size.0,
        height: size.1,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A one-page PDF (200x100 points) with a blue rectangle, written by hand.
    pub(crate) fn tiny_pdf() -> Vec<u8> {
        let content = b"0 0 1 rg 20 20 160 60 re f";
        let objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>".to_vec(),
            [
                format!("<< /Length {} >>\nstream\n", content.len()).as_bytes(),
                content,
                b"\nendstream",
            ]
            .concat(),
        ];
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, o) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend(o);
            out.extend(b"\nendobj\n");
        }
        let xref = out.len();
        out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
        for o in offsets {
            out.extend(format!("{o:010} 00000 n \n").as_bytes());
        }
        out.extend(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        out
    }

    #[test]
    fn a_large_image_becomes_a_thumbnail_within_the_longest_side() {
        let big = image::RgbImage::from_fn(3000, 1500, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut png = Vec::new();
        image::DynamicImage::ImageRgb8(big)
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let t = image(&png).unwrap();
        assert_eq!((t.width, t.height), (800, 400));
        assert_eq!(t.media_type, "image/jpeg");
        assert!(t.data.starts_with(&[0xff, 0xd8, 0xff]));

        let clear = image::RgbaImage::from_pixel(1000, 1000, image::Rgba([0, 0, 0, 0]));
        let mut png = Vec::new();
        image::DynamicImage::ImageRgba8(clear)
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let t = image(&png).unwrap();
        assert_eq!((t.media_type, t.width, t.height), ("image/png", 800, 800));
    }

    /// A small file that claims a canvas of 100,000 x 100,000 pixels (a decompression bomb) is
    /// refused before anything that size is allocated.
    #[test]
    fn an_image_claiming_a_huge_canvas_is_refused_not_decoded() {
        let mut png = Vec::new();
        image::DynamicImage::ImageRgb8(image::RgbImage::new(1, 1))
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        // IHDR's width and height are the 4+4 bytes after "IHDR"; its CRC then no longer
        // matches, which the decoder may report first: either way it is refused.
        let at = png.windows(4).position(|w| w == b"IHDR").unwrap() + 4;
        png[at..at + 4].copy_from_slice(&100_000u32.to_be_bytes());
        png[at + 4..at + 8].copy_from_slice(&100_000u32.to_be_bytes());
        assert!(image(&png).is_err());
        assert!(image(b"not an image at all").is_err());
    }

    #[test]
    fn a_pdf_s_first_page_is_drawn_in_the_jail() {
        if let Err(why) = pdf_renderer() {
            eprintln!("skipped: {why}");
            return;
        }
        let t = pdf_first_page(&tiny_pdf()).unwrap();
        assert_eq!(t.media_type, "image/png");
        assert_eq!((t.width, t.height), (800, 400));
        let page = image::load_from_memory(&t.data).unwrap().to_rgb8();
        assert_eq!(
            page.get_pixel(400, 200).0,
            [0, 0, 255],
            "the rectangle is drawn"
        );
        assert_eq!(page.get_pixel(5, 5).0, [255, 255, 255]);
        let broken = pdf_first_page(b"%PDF-1.4\nthis is not a PDF").unwrap_err();
        assert!(broken.contains("failed"), "{broken}");
    }
}
