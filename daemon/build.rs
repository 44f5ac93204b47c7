//! Lays out a release build's start-up code together (issue 26, goal 5; ADR 0039).
//!
//! `startup.ld` names the functions vyred runs to start and sit idle (made by
//! `vyre-bench --startup-order`); given to the linker with `-T`, its `INSERT BEFORE .text`
//! places them in one section ahead of the rest, so an idle vyred keeps a few MB of its binary
//! resident instead of most of it. Only for the `vyre` binary, only in release builds for
//! Linux (GNU ld and lld read such a script; zig 0.17's own linker, which links the npm
//! packages, ignores it; a Mac links with ld64, which does not), and `VYRE_LINK_ORDER=0` leaves
//! it out (for a linker that cannot, such as mold).

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=startup.ld");
    println!("cargo:rerun-if-env-changed=VYRE_LINK_ORDER");
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let off = std::env::var("VYRE_LINK_ORDER").as_deref() == Ok("0");
    let script =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("startup.ld");
    if release && linux && !off && script.is_file() {
        println!("cargo:rustc-link-arg-bin=vyre=-Wl,-T,{}", script.display());
    }
}
