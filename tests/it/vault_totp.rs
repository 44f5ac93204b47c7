//! A login's TOTP as sites give it (issue 27): the setup QR code's image, or its
//! `otpauth://totp/` URI typed or pasted, from the terminal; the codes shown after presence are
//! the seed's (RFC 6238), and an image that is not a TOTP setup code is refused with why.

use std::io::Cursor;

use serde_json::json;

use crate::support::*;

const SEED: &str = "JBSWY3DPEHPK3PXP";
const SEED2: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

/// A QR code of `text` as a PNG, as a site's setup page shows it.
fn qr_png(text: &str) -> Vec<u8> {
    let code = qrcode::QrCode::new(text.as_bytes()).unwrap();
    let width = code.width() as u32;
    let colors = code.to_colors();
    let scale = 5;
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

fn codes_near(seed: &str) -> Vec<String> {
    let now = vyre::now_ms() as u64 / 1000;
    [now - 30, now, now + 30]
        .iter()
        .map(|t| {
            let seed = vyre::kernel::contracts::secret::Secret::new(seed.into());
            vyre::kernel::contracts::secret::totp_code(&seed, *t)
                .unwrap()
                .expose()
                .to_string()
        })
        .collect()
}

#[test]
fn a_totp_comes_from_its_setup_qr_code_or_uri_and_makes_the_sites_codes() {
    let home = TempHome::new("vault-totp");
    let run = |args: &[&str], stdin: &str| -> std::process::Output {
        use std::io::Write;
        let mut cmd = home.command();
        cmd.args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    assert!(run(&["up"], "").status.success());
    let images = home.dir.join("images");
    std::fs::create_dir_all(&images).unwrap();
    let qr = images.join("forge-2fa.png");
    std::fs::write(
        &qr,
        qr_png(&format!(
            "otpauth://totp/Forge:sam?secret={SEED}&issuer=Forge"
        )),
    )
    .unwrap();
    let put = run(
        &[
            "vault",
            "put",
            "forge",
            "--kind",
            "login",
            "--totp-qr",
            qr.to_str().unwrap(),
        ],
        "sam\npw-forge-1\n",
    );
    assert!(put.status.success(), "{put:?}");
    let put = run(
        &["vault", "put", "mail", "--kind", "login"],
        &format!("me\npw-mail-1\notpauth://totp/Mail:me?secret={SEED2}&issuer=Mail\n"),
    );
    assert!(put.status.success(), "{put:?}");

    // An image whose code is not a TOTP's, and one with no code: refused in words, nothing kept.
    let other = images.join("link.png");
    std::fs::write(&other, qr_png("https://example.com/")).unwrap();
    let blank = images.join("blank.png");
    let mut bytes = Vec::new();
    image::GrayImage::from_pixel(80, 80, image::Luma([255]))
        .write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    std::fs::write(&blank, bytes).unwrap();
    for (file, why) in [(&other, "not a TOTP setup code"), (&blank, "no QR code")] {
        let out = run(
            &[
                "vault",
                "put",
                "bad",
                "--kind",
                "login",
                "--totp-qr",
                file.to_str().unwrap(),
            ],
            "u\npw-bad-1\n",
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{out:?}"
        );
    }
    let out = run(
        &["vault", "put", "bad", "--totp-qr", qr.to_str().unwrap()],
        "x",
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--totp-qr is for a login"),
        "{out:?}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let sock = home.socket_client();
    let names: Vec<String> = rt
        .block_on(sock.call("vault.list", &json!({})))
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["forge", "mail"]);

    // The codes shown after presence are the seeds' own.
    rt.block_on(sock.call(
        "vault.passphrase",
        &json!({ "passphrase": "correct horse battery" }),
    ))
    .unwrap();
    for (item, seed) in [("forge", SEED), ("mail", SEED2)] {
        let out = run(
            &["vault", "reveal", item, "--field", "totp"],
            "correct horse battery\n",
        );
        assert!(out.status.success(), "{out:?}");
        let code = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let near = codes_near(seed);
        assert!(near.contains(&code), "{item}: {code} not in {near:?}");
    }
    // Neither the image's path nor the seeds are in vyred's store or logs.
    let _ = run(&["down"], "");
    let mut files = vec![];
    let mut dirs = vec![home.vyre_home()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
            } else {
                files.push(e.path());
            }
        }
    }
    for needle in [SEED, SEED2, "forge-2fa.png"] {
        let found: Vec<_> = files
            .iter()
            .filter(|p| {
                std::fs::read(p)
                    .map(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
                    .unwrap_or(false)
            })
            .collect();
        assert!(found.is_empty(), "{needle} in {found:?}");
    }
}
