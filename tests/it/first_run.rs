//! The first `vyre up` on a Mac (role local), in a real terminal under tmux: it asks where Vyre
//! should run, and pairing with a box by its code works from there; piped, it asks nothing.

use crate::home::Tmux;
use crate::support::*;

fn out(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_first_vyre_up_on_a_mac_asks_where_vyre_runs_and_pairs_with_a_box() {
    // The box, with a pairing code.
    let box_home = TempHome::new("first-run-box");
    let up = box_home.vyre(&["up", "--role", "box"]);
    assert!(up.status.success(), "{}", out(&up));
    let code = box_home.vyre(&["pairing", "code"]);
    let code_text = out(&code);
    assert!(code.status.success(), "{code_text}");
    let code_json: serde_json::Value = serde_json::from_slice(&code.stdout).unwrap();
    let code_value = code_json["code"].as_str().unwrap().to_string();
    let address = std::fs::read_to_string(box_home.home().addr_file()).unwrap();

    // Piped, the Mac's first `vyre up` asks nothing and prints the onboarding link.
    let piped = TempHome::new("first-run-piped");
    let up = piped.vyre(&["up", "--role", "local"]);
    let text = out(&up);
    assert!(up.status.success(), "{text}");
    assert!(!text.contains("Where should Vyre run"), "{text}");
    assert!(text.contains("/onboard?t="), "{text}");
    let _ = piped.vyre(&["down"]);

    // In a terminal it asks; the person picks the box and types its address and code.
    let mac = TempHome::new("first-run-mac");
    // No keychain in the test's session: the Mac's vault keeps its key in a file.
    std::fs::create_dir_all(mac.vyre_home()).unwrap();
    std::fs::write(
        mac.vyre_home().join("config.json"),
        r#"{"vault": {"keystore": "file"}}"#,
    )
    .unwrap();
    let run = format!(
        "env -i PATH={} HOME={} VYRE_HOME={} VYRE_PORT=0 VYRE_UI_DIR={} TERM=xterm {} up --role local; sleep 30",
        std::env::var("PATH").unwrap_or_default(),
        mac.dir.join("home").display(),
        mac.vyre_home().display(),
        mac.dir.join("no-ui").display(),
        BIN
    );
    let Some(tmux) = Tmux::start("first-run", &mac.dir, &run) else {
        let _ = box_home.vyre(&["down"]);
        return;
    };
    let screen = tmux.wait_for_all(&["Where should Vyre run?", "vyre box add"]);
    assert!(
        screen.contains("Where should Vyre run?")
            && screen.contains("Here, on this machine")
            && screen.contains("pairing code"),
        "{screen}"
    );
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("The box's address:");
    tmux.keys(&["-l", address.trim()]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Its pairing code:");
    tmux.keys(&["-l", &code_value]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Paired with the box");
    tmux.wait_for("/onboard?t=");
    drop(tmux);
    assert!(!screen.contains("did not pair"), "{screen}");
    let list = mac.vyre(&["pairing", "list"]);
    let listed = out(&list);
    assert!(
        list.status.success() && listed.contains(address.trim()),
        "{listed}"
    );

    // Asked again, it does not ask: a box is paired.
    let again = mac.vyre(&["up"]);
    assert!(!out(&again).contains("Where should Vyre run"));
    let _ = mac.vyre(&["down"]);
    let _ = box_home.vyre(&["down"]);
}
