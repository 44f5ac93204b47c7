//! What a warm spare (ADR 0032) is checked against before it is handed out, and what decides
//! whether one is kept: a file's stamp, a launch's digest, a folder's identity, the machine on
//! battery, a process's memory.

use std::path::Path;

use sha2::{Digest, Sha256};

#[cfg(test)]
use std::os::unix::process::CommandExt;

use crate::kernel::contracts::provider::{Credential, Launch};

/// A file's size and modification time, or that it is not there.
pub fn file(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => format!(
            "{} {} {}.{} {}",
            path.display(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ino()
        ),
        Err(_) => format!("{} absent", path.display()),
    }
}

/// A folder's device and inode: a folder removed and made again under the same name is
/// another folder (a process started in the old one still works in it).
pub fn folder(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Everything of a launch a session's process is made from, but the thread's own id and
/// socket, hashed with the provider's `stamp`: two launches with the same digest start the
/// same process. The credential is hashed, never kept.
pub fn digest(launch: &Launch, provider_stamp: &str) -> String {
    let mut h = Sha256::new();
    let mut put = |part: &[u8]| {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    };
    put(provider_stamp.as_bytes());
    put(launch.cwd.as_os_str().as_encoded_bytes());
    put(format!("{:?}", launch.model).as_bytes());
    put(launch.mode.as_bytes());
    put(format!("{:?}", launch.append_system_prompt).as_bytes());
    put(format!("{:?}", launch.system_prompt_snapshot).as_bytes());
    put(format!("{:?}", launch.budget_usd).as_bytes());
    match &launch.credential {
        Credential::Login => put(b"login"),
        Credential::ApiKey(s) => {
            put(b"api-key");
            put(s.expose().as_bytes());
        }
        Credential::SetupToken(s) => {
            put(b"setup-token");
            put(s.expose().as_bytes());
        }
    }
    for dir in &launch.plugin_dirs {
        put(dir.as_os_str().as_encoded_bytes());
    }
    for (name, value) in &launch.env {
        if matches!(name.as_str(), "VYRE_THREAD" | "VYRE_SOCKET") {
            continue;
        }
        put(name.as_bytes());
        put(value.as_encoded_bytes());
    }
    format!("{:x}", h.finalize())
}

/// Whether this machine runs on its battery now (a Mac's, or a Linux laptop's): no spare is
/// kept then.
pub fn on_battery() -> bool {
    #[cfg(target_os = "macos")]
    {
        std::process::Command::new("pmset")
            .args(["-g", "ps"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("'Battery Power'"))
    }
    #[cfg(not(target_os = "macos"))]
    {
        linux_on_battery(Path::new("/sys/class/power_supply"))
    }
}

/// On battery when there is a battery that discharges and no mains supply that is online.
#[cfg(not(target_os = "macos"))]
fn linux_on_battery(root: &Path) -> bool {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mut discharging = false;
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let dir = entry.path();
        match read(&dir.join("type")).as_str() {
            "Mains" if read(&dir.join("online")) == "1" => return false,
            "Battery" if read(&dir.join("status")) == "Discharging" => discharging = true,
            _ => {}
        }
    }
    discharging
}

/// The resident memory of every process of session `sid` (Linux; the process group `sid`
/// elsewhere), in bytes, when this system says: a session's first process is its sandbox,
/// tini or its user switch, and Claude Code runs beneath it.
pub fn session_rss(sid: i32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf with a constant name reads a value; it has no other effect.
        let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        let total = super::spawn::session_members(sid)
            .into_iter()
            .filter_map(|pid| {
                let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
                statm.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map(|pages| pages * page)
            .sum();
        Some(total)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let out = std::process::Command::new("ps")
            .args(["-o", "rss=", "-g", &sid.to_string()])
            .output()
            .ok()?;
        let kib: u64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse::<u64>().ok())
            .sum();
        Some(kib * 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::contracts::secret::Secret;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-spare-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn launch(thread: &str) -> Launch {
        Launch {
            id: thread.into(),
            resume: false,
            fork_from: None,
            resume_at: None,
            cwd: "/work".into(),
            model: None,
            effort: None,
            mode: "default".into(),
            append_system_prompt: None,
            system_prompt_snapshot: None,
            credential: Credential::ApiKey(Secret::new("sk-one".into())),
            budget_usd: None,
            plugin_dirs: vec!["/usr/share/vyre/harness".into()],
            env: vec![
                ("VYRE_THREAD".into(), thread.into()),
                ("VYRE_SOCKET".into(), format!("/s/{thread}").into()),
                ("PATH".into(), "/usr/bin".into()),
            ],
            processes: None,
            host_tools: None,
        }
    }

    #[test]
    fn a_digest_ignores_the_thread_and_follows_everything_else() {
        let a = digest(&launch("a"), "cli 1");
        assert_eq!(
            a,
            digest(&launch("b"), "cli 1"),
            "the thread's own id and socket"
        );
        assert_ne!(a, digest(&launch("a"), "cli 2"), "the provider's stamp");
        type Change = Box<dyn Fn(&mut Launch)>;
        let changes: Vec<Change> = vec![
            Box::new(|l| l.cwd = "/other".into()),
            Box::new(|l| l.model = Some("opus".into())),
            Box::new(|l| l.mode = "plan".into()),
            Box::new(|l| l.append_system_prompt = Some("be brief".into())),
            Box::new(|l| l.budget_usd = Some(1.0)),
            Box::new(|l| l.credential = Credential::ApiKey(Secret::new("sk-two".into()))),
            Box::new(|l| l.credential = Credential::SetupToken(Secret::new("sk-one".into()))),
            Box::new(|l| l.credential = Credential::Login),
            Box::new(|l| l.plugin_dirs.clear()),
            Box::new(|l| l.env.push(("VYRE_AGENT".into(), "scout".into()))),
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut l = launch("a");
            change(&mut l);
            assert_ne!(a, digest(&l, "cli 1"), "change {i}");
        }
        assert!(!a.contains("sk-one"));
    }

    #[test]
    fn a_file_stamp_moves_with_its_content_and_a_folder_made_again_is_another() {
        let dir = scratch("stamp");
        let f = dir.join("settings.json");
        let absent = file(&f);
        std::fs::write(&f, "{}").unwrap();
        let one = file(&f);
        assert_ne!(absent, one);
        std::fs::write(&f, "{\"x\":1}").unwrap();
        assert_ne!(one, file(&f));

        let work = dir.join("work");
        std::fs::create_dir(&work).unwrap();
        let before = folder(&work).unwrap();
        // Held open, as a spare's process holds its working folder: its inode cannot be reused
        // while it is held, so a folder made again under the name is another inode.
        let held = std::fs::File::open(&work).unwrap();
        std::fs::remove_dir(&work).unwrap();
        std::fs::create_dir(&work).unwrap();
        assert_ne!(before, folder(&work).unwrap());
        drop(held);
    }

    #[cfg(not(target_os = "macos"))]
    #[test]
    fn on_battery_only_when_discharging_without_mains() {
        let dir = scratch("power");
        let supply = |name: &str, kind: &str, file: &str, value: &str| {
            let d = dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(d.join(file), format!("{value}\n")).unwrap();
        };
        assert!(!linux_on_battery(&dir), "a server: no supply at all");
        supply("BAT0", "Battery", "status", "Discharging");
        assert!(linux_on_battery(&dir));
        supply("AC", "Mains", "online", "1");
        assert!(!linux_on_battery(&dir));
    }

    #[test]
    fn a_session_has_the_resident_size_of_its_processes() {
        let mut command = std::process::Command::new("sleep");
        command.arg("5");
        // SAFETY: setsid in the child before exec, with nothing else shared.
        let mut child = unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            })
        }
        .spawn()
        .unwrap();
        let sid = child.id() as i32;
        std::thread::sleep(std::time::Duration::from_millis(50));
        let size = session_rss(sid).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(size > 100 * 1024, "{size}");
        assert_eq!(session_rss(sid), Some(0), "an ended session holds nothing");
    }
}
