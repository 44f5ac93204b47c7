//! The harness plugin on the real CLI: its PreToolUse hook runs `vyre hook`, vyred's floor
//! denies with the reason; with vyred down the hooks print nothing and the session runs as it
//! would without Vyre.

use std::path::Path;

use crate::fake_api::FakeApi;
use crate::support::*;
use crate::threads_e2e::KEY;

/// `claude -p <prompt> --plugin-dir harness` in a terminal: its final text.
fn claude_p(home: &TempHome, api: &FakeApi, cli: &Path, prompt: &str) -> String {
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let vyre_dir = Path::new(BIN).parent().unwrap();
    let out = std::process::Command::new(cli)
        .args(["-p", prompt, "--plugin-dir"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../harness"))
        .current_dir(&work)
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                vyre_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home.dir.join("home"))
        .env("VYRE_HOME", home.vyre_home())
        .env("ANTHROPIC_BASE_URL", api.url())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_denies_through_the_plugins_hook_and_without_vyred_nothing_changes() {
    let Some(cli) = crate::claude_e2e::claude_bin() else {
        return;
    };
    let api = FakeApi::start().await;
    let home = TempHome::new("harness");
    let vyred = InProcess::start(&home, vec![]).await;
    let cli2 = cli.clone();
    let said = {
        let (h, a) = (&home, &api);
        tokio::task::block_in_place(|| claude_p(h, a, &cli2, "RUNBASH mkfs.ext4 /dev/vyre-none"))
    };
    assert!(
        said.contains("hook") && said.contains("the floor refuses it"),
        "the hook's deny and its reason reached the model: {said}"
    );
    vyred.stop().await;

    // vyred down: the hooks stay out of the way.
    let said = tokio::task::block_in_place(|| claude_p(&home, &api, &cli, "hello without vyre"));
    assert!(said.contains("reply to [hello without vyre]"), "{said}");
    let said = tokio::task::block_in_place(|| {
        claude_p(&home, &api, &cli, "RUNBASH mkfs.ext4 /dev/vyre-none")
    });
    assert!(!said.contains("the floor refuses it"), "{said}");
}
