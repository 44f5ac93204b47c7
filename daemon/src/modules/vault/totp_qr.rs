//! A login's TOTP from the QR code a site shows when two-factor sign-in is turned on: the image
//! (a screenshot, a photo; PNG, JPEG, GIF or WebP) decoded within limits, its QR codes read by
//! rqrr (a port of quirc), and the first `otpauth://totp/` URI among them given back for the
//! vault to take its seed from. The image and the URI hold the seed: neither is logged.

use std::io::Cursor;

/// The largest side read, and the most the decoder may allocate.
const MAX_SIDE: u32 = 4096;
const MAX_ALLOC: u64 = 96 << 20;

/// The `otpauth://totp/…` URI of the first QR code in `image` that holds one.
pub fn read(image: &[u8]) -> Result<String, String> {
    let mut reader = image::ImageReader::new(Cursor::new(image))
        .with_guessed_format()
        .map_err(|e| format!("the TOTP image: {e}"))?;
    if reader.format().is_none() {
        return Err("the TOTP image is not a PNG, JPEG, GIF or WebP".into());
    }
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let luma = reader
        .decode()
        .map_err(|e| format!("the TOTP image cannot be read: {e}"))?
        .into_luma8();
    let (w, h) = luma.dimensions();
    let mut prepared =
        rqrr::PreparedImage::prepare_from_greyscale(w as usize, h as usize, |x, y| {
            luma.get_pixel(x as u32, y as u32).0[0]
        });
    let grids = prepared.detect_grids();
    if grids.is_empty() {
        return Err("no QR code was found in the TOTP image".into());
    }
    grids
        .iter()
        .filter_map(|g| g.decode().ok().map(|(_, text)| text))
        .find(|text| text.starts_with("otpauth://totp/"))
        .ok_or_else(|| {
            "the QR code in the image is not a TOTP setup code (otpauth://totp/...)".into()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A QR code of `text` drawn as a PNG with a quiet zone, `scale` pixels a module.
    fn png_of(text: &str, scale: u32) -> Vec<u8> {
        let code = qrcode::QrCode::new(text.as_bytes()).unwrap();
        let width = code.width() as u32;
        let colors = code.to_colors();
        let side = (width + 8) * scale;
        let img = image::GrayImage::from_fn(side, side, |x, y| {
            let (mx, my) = (x / scale, y / scale);
            let dark = (4..width + 4).contains(&mx)
                && (4..width + 4).contains(&my)
                && colors[((my - 4) * width + (mx - 4)) as usize] == qrcode::Color::Dark;
            image::Luma([if dark { 0 } else { 255 }])
        });
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_setup_qr_code_gives_its_otpauth_uri() {
        let uri = "otpauth://totp/Forge:sam?secret=JBSWY3DPEHPK3PXP&issuer=Forge";
        assert_eq!(read(&png_of(uri, 6)).unwrap(), uri);
    }

    #[test]
    fn other_images_and_other_codes_are_refused_with_why() {
        let err = read(&png_of("https://example.com/", 6)).unwrap_err();
        assert!(err.contains("not a TOTP setup code"), "{err}");
        let blank = {
            let mut out = Vec::new();
            image::GrayImage::from_pixel(64, 64, image::Luma([255]))
                .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
                .unwrap();
            out
        };
        assert!(read(&blank).unwrap_err().contains("no QR code"));
        assert!(read(b"not an image").unwrap_err().contains("not a PNG"));
        let mut cut = png_of("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", 6);
        cut.truncate(cut.len() / 2);
        assert!(read(&cut).is_err());
    }
}
