use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn a_missing_file_is_the_defaults() {
    let loaded = load_with_env(Path::new("/nonexistent/vyre/config.json"), no_env).unwrap();
    assert!(loaded.file.is_none());
    assert_eq!(loaded.port(), DEFAULT_PORT);
    assert_eq!(loaded.role(), Role::platform_default());
    assert!(loaded.warnings.is_empty());
}

#[test]
fn unknown_keys_warn_and_known_keys_load() {
    let (config, warnings) = parse(
        Path::new("config.json"),
        r#"{"name":"sam","role":"local","port":0,"colour":"red","modules":{"disable":["x"],"extra":1}}"#,
    )
    .unwrap();
    assert_eq!(config.role, Some(Role::Local));
    assert_eq!(config.port, Some(0));
    assert_eq!(config.modules.disable, vec!["x"]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("\"colour\""));
    assert!(warnings[1].contains("\"modules.extra\""));
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let err = parse(Path::new("/h/config.json"), "{\n  \"port\": 1,\n  oops\n}").unwrap_err();
    match &err {
        ConfigError::Parse { line, column, .. } => assert_eq!((*line, *column), (3, 3)),
        other => panic!("unexpected {other:?}"),
    }
    let text = err.to_string();
    assert!(text.starts_with("/h/config.json:3:3: "), "{text}");
}

#[test]
fn wrong_types_are_errors_with_a_position() {
    let err = parse(Path::new("c.json"), r#"{"port": "high"}"#).unwrap_err();
    assert!(err.to_string().starts_with("c.json:1:"), "{err}");
    let err = parse(Path::new("c.json"), r#"{"role": "desk"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown variant"), "{err}");
    let err = parse(Path::new("c.json"), r#"{} {}"#).unwrap_err();
    assert!(err.to_string().contains("trailing"), "{err}");
}

#[test]
fn session_limits_are_checked_as_the_file_loads() {
    let (config, warnings) = parse(
        Path::new("c.json"),
        r#"{"sessions": {"max_live": 3, "idle_minutes": 0.5, "slots": {"subagent": 2, "per_project": {"teammate": 1}}, "max_lvie": 2}}"#,
    )
    .unwrap();
    assert_eq!(config.sessions.max_live(), 3);
    assert_eq!(config.sessions.slots.subagent, Some(2));
    assert_eq!(config.sessions.slots.per_project.teammate, Some(1));
    assert_eq!(
        config.sessions.idle_after(),
        Some(std::time::Duration::from_secs(30))
    );
    assert!(warnings[0].contains("sessions.max_lvie"), "{warnings:?}");
    assert_eq!(Config::default().sessions.max_live(), 6);
    for bad in [
        r#"{"sessions": {"max_live": 0}}"#,
        r#"{"sessions": {"max_live": -2}}"#,
        r#"{"sessions": {"max_live": 1.5}}"#,
        r#"{"sessions": {"slots": {"subagent": 0}}}"#,
    ] {
        let err = parse(Path::new("c.json"), bad).unwrap_err().to_string();
        assert!(err.starts_with("c.json:1:"), "{err}");
        assert!(err.contains("at least 1"), "{err}");
    }
    let err = parse(Path::new("c.json"), r#"{"sessions": {"idle_minutes": -1}}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least 0"), "{err}");
}

#[test]
fn limits_have_defaults_and_are_checked_as_the_file_loads() {
    let limits = Config::default().limits;
    assert_eq!(limits.header_timeout(), std::time::Duration::from_secs(10));
    assert_eq!((limits.connections(), limits.streams()), (256, 16));
    let (config, _) = parse(
        Path::new("c.json"),
        r#"{"limits": {"header_timeout_s": 0.5, "connections": 8, "streams": 2}}"#,
    )
    .unwrap();
    assert_eq!(
        config.limits.header_timeout(),
        std::time::Duration::from_millis(500)
    );
    assert_eq!(
        (config.limits.connections(), config.limits.streams()),
        (8, 2)
    );
    for (bad, why) in [
        (r#"{"limits": {"connections": 0}}"#, "at least 1"),
        (r#"{"limits": {"streams": 2.5}}"#, "at least 1"),
        (r#"{"limits": {"header_timeout_s": 0}}"#, "above 0"),
        (
            r#"{"limits": {"header_timeout_s": 1e300}}"#,
            "at most 86400",
        ),
    ] {
        let err = parse(Path::new("c.json"), bad).unwrap_err().to_string();
        assert!(err.starts_with("c.json:1:") && err.contains(why), "{err}");
    }
}

/// Found by the `config_json` fuzz target: a huge `idle_minutes` loaded, then
/// `Duration::from_secs_f64` panicked in `idle_after` as the sessions module started.
#[test]
fn idle_minutes_too_large_for_a_time_are_refused_as_the_file_loads() {
    let err = parse(
        Path::new("c.json"),
        r#"{"sessions": {"idle_minutes": 1e300}}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("c.json:1:"), "{err}");
    assert!(err.contains("small enough to be a time"), "{err}");
    let (config, _) = parse(
        Path::new("c.json"),
        r#"{"sessions": {"idle_minutes": 1e15}}"#,
    )
    .unwrap();
    assert!(config.sessions.idle_after().is_some());
}

#[test]
fn env_overrides_the_file() {
    let dir = std::env::temp_dir().join(format!("vyre-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    std::fs::write(&path, r#"{"port": 5000, "role": "box"}"#).unwrap();
    let env = |k: &str| match k {
        "VYRE_PORT" => Some("0".to_string()),
        "VYRE_ROLE" => Some("local".to_string()),
        "VYRE_BIND" => Some("0.0.0.0".to_string()),
        _ => None,
    };
    let loaded = load_with_env(&path, env).unwrap();
    assert_eq!(loaded.port(), 0);
    assert_eq!(loaded.role(), Role::Local);
    assert!(loaded.bind().is_unspecified());
    let bad_bind = |k: &str| (k == "VYRE_BIND").then(|| "everywhere".to_string());
    let err = load_with_env(&path, bad_bind).unwrap_err();
    assert!(err.to_string().starts_with("VYRE_BIND: "), "{err}");
    let bad = |k: &str| (k == "VYRE_PORT").then(|| "eighty".to_string());
    let err = load_with_env(&path, bad).unwrap_err();
    assert!(err.to_string().starts_with("VYRE_PORT: "), "{err}");
    // Who sessions run as, as the box image says it.
    let image = |k: &str| match k {
        "VYRE_SESSIONS_UID" => Some("10002".to_string()),
        "VYRE_SESSIONS_GID" => Some("10002".to_string()),
        "VYRE_SESSIONS_HOME" => Some("/home/vyre-session".to_string()),
        "VYRE_SESSIONS_SOCKETS" => Some("/var/lib/vyre-sockets".to_string()),
        "VYRE_NETWORK_ENDPOINT" => Some("box.example.com:51820".to_string()),
        _ => None,
    };
    let config = load_with_env(&path, image).unwrap().config;
    // Where devices reach the box, as `vyre box add` starts it.
    assert_eq!(
        config.network.endpoint.as_deref(),
        Some("box.example.com:51820")
    );
    let sessions = config.sessions;
    assert_eq!((sessions.uid, sessions.gid), (Some(10002), Some(10002)));
    assert_eq!(sessions.home.as_deref(), Some("/home/vyre-session"));
    assert_eq!(
        sessions.socket_dir.as_deref(),
        Some("/var/lib/vyre-sockets")
    );
    let bad_uid = |k: &str| (k == "VYRE_SESSIONS_UID").then(|| "vyre-session".to_string());
    let err = load_with_env(&path, bad_uid).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("VYRE_SESSIONS_UID: must be a numeric id"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn acp_agents_are_named_and_have_a_command() {
    let (config, _) = parse(
        Path::new("c.json"),
        r#"{"sessions": {"acp": {"gemini": {"command": "gemini", "args": ["--experimental-acp"], "env": {"A": "b"}}}}}"#,
    )
    .unwrap();
    let gemini = &config.sessions.acp["gemini"];
    assert_eq!((gemini.command.as_str(), gemini.args.len()), ("gemini", 1));
    for (bad, says) in [
        (
            r#"{"sessions": {"acp": {"Gem Ini": {"command": "x"}}}}"#,
            "not a name",
        ),
        (
            r#"{"sessions": {"acp": {"g": {"command": " "}}}}"#,
            "missing",
        ),
        (
            r#"{"sessions": {"acp": {"g": {"command": "x", "cwd": "/"}}}}"#,
            "unknown field",
        ),
    ] {
        let err = parse(Path::new("c.json"), bad).unwrap_err().to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn prices_are_dollars_per_million_tokens_and_never_negative() {
    let (config, _) = parse(
        Path::new("c.json"),
        r#"{"sessions": {"prices": {"gpt-x": {"input": 1.25, "cached_input": 0.125, "output": 10}}}}"#,
    )
    .unwrap();
    let price = config.sessions.prices["gpt-x"];
    // 1,000 fresh input, 3,000 cached and 500 output tokens.
    let cost = price.cost(1_000, 3_000, 500);
    assert!(
        (cost - (0.00125 + 0.000375 + 0.005)).abs() < 1e-12,
        "{cost}"
    );
    let plain = crate::kernel::config::Price {
        input: 2.0,
        cached_input: None,
        output: 8.0,
    };
    assert!(
        (plain.cost(0, 1_000_000, 0) - 2.0).abs() < 1e-12,
        "cached at the input's price"
    );
    for (bad, says) in [
        (
            r#"{"sessions": {"prices": {"gpt-x": {"input": -1, "output": 1}}}}"#,
            "sessions.prices.gpt-x.input",
        ),
        (
            r#"{"sessions": {"prices": {"gpt-x": {"input": 1}}}}"#,
            "missing field `output`",
        ),
        (
            r#"{"sessions": {"prices": {"gpt-x": {"input": 1, "output": 1, "per": "k"}}}}"#,
            "unknown field",
        ),
    ] {
        let err = parse(Path::new("c.json"), bad).unwrap_err().to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}
