//! `VYRE_HOME/config.json` through the daemon's parser (`config.rs`), and what vyred reads of
//! it as it starts (the role, port and address, the session limits, the listeners' limits).
//!
//! Checked beyond "no panic":
//! - a file that does not load is refused with its path, line and column, the position said
//!   once (not again at the end of the message);
//! - each warning names the file and the unknown key;
//! - a config that loads, written out again (an unset key left out), loads to the same config
//!   (to the last bit of a float) with no warning: every key vyred writes is one it reads.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use vyre::kernel::config::{self, ConfigError, LoadedConfig};
use vyre_fuzz::same_value;

/// The sections whose unset keys are written as `null` (a free-form section such as `me` is
/// kept as it is).
const TYPED: &[&[&str]] = &[
    &[],
    &["modules"],
    &["sessions"],
    &["sessions", "slots"],
    &["sessions", "slots", "per_project"],
    &["limits"],
    &["link"],
    &["network"],
    &["names"],
    &["push"],
    &["recall"],
];

/// Leave out the unset keys of the typed sections.
fn without_unset(v: &mut Value) {
    for section in TYPED {
        let mut at = Some(&mut *v);
        for key in *section {
            at = at.and_then(|x| x.get_mut(*key));
        }
        if let Some(Value::Object(object)) = at {
            object.retain(|_, value| !value.is_null());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/home/someone/.vyre/config.json");
    let (config, warnings) = match config::parse(path, text) {
        Ok(parsed) => parsed,
        Err(ConfigError::Parse {
            path: p,
            line,
            column,
            message,
        }) => {
            assert_eq!(p, path);
            let position = format!(" at line {line} column {column}");
            assert!(!message.ends_with(&position), "{message}");
            return;
        }
        Err(other) => panic!("parse failed without a position: {other}"),
    };
    for w in &warnings {
        assert!(
            w.starts_with("/home/someone/.vyre/config.json: unknown key "),
            "{w}"
        );
    }
    // What vyred reads as it starts.
    let _ = config.sessions.idle_after();
    let _ = config.sessions.max_live();
    let _ = (
        config.limits.header_timeout(),
        config.limits.connections(),
        config.limits.streams(),
        config.link.allow(vyre::kernel::config::Role::Box),
        config.link.allow(vyre::kernel::config::Role::Local),
        config.link.silence(),
    );
    let loaded = LoadedConfig {
        config: config.clone(),
        file: Some(path.to_path_buf()),
        warnings,
    };
    let _ = (loaded.role(), loaded.port(), loaded.bind());

    let mut written = serde_json::to_value(&config).expect("a config serializes");
    without_unset(&mut written);
    let text = written.to_string();
    let (again, warnings) = config::parse(path, &text)
        .unwrap_or_else(|e| panic!("a loaded config written out does not load: {e}\n{text}"));
    assert!(warnings.is_empty(), "{warnings:?} for {text}");
    let (again, before) = (
        serde_json::to_value(&again).expect("a config serializes"),
        serde_json::to_value(&config).expect("a config serializes"),
    );
    assert!(same_value(&again, &before), "{again} is not {before}");
});
