//! A module's `module.json` through the daemon's parser and validation (`modules/manifest.rs`).
//!
//! Checked beyond "no panic":
//! - `Manifest::parse` accepts exactly what reads as a manifest and then validates;
//! - a manifest that parses, written out again, parses to the same manifest;
//! - what validation promised holds: each tool is a tool name under the module's own name, a
//!   tool offered on the command line is offered, a module may emit what it declares (and a
//!   wildcard `x.*` covers `x.anything`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vyre::kernel::module::Manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Manifest::parse(text);
    match (&parsed, serde_json::from_str::<Manifest>(text)) {
        (Ok(m), Ok(read)) => assert_eq!(m, &read),
        (Err(_), Ok(read)) => assert!(read.validate().is_err(), "refused but valid: {read:?}"),
        (Ok(m), Err(e)) => panic!("parsed {m:?} from JSON that does not read: {e}"),
        (Err(_), Err(_)) => {}
    }
    let Ok(m) = parsed else { return };
    assert_eq!(m.validate(), Ok(()));
    let written = serde_json::to_string(&m).expect("a manifest serializes");
    assert_eq!(
        Manifest::parse(&written).as_ref(),
        Ok(&m),
        "written out: {written}"
    );
    let prefix = format!("{}.", m.name);
    for tool in &m.does.tools {
        assert!(vyre::kernel::tools::valid_name(tool), "{tool}");
        assert!(tool.starts_with(&prefix), "{tool}");
        if m.shows.cli.contains(tool) || m.shows.cli.contains(&m.name) {
            assert!(m.shows_on_cli(tool), "{tool}");
        }
    }
    for kind in &m.watches.emits {
        match kind.strip_suffix(".*") {
            Some(bare) => assert!(m.may_emit(&format!("{bare}.fired")), "{kind}"),
            None => assert!(m.may_emit(kind), "{kind}"),
        }
    }
});
