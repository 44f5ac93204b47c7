//! Reading a process's cost from `/proc`: CPU ticks, on-CPU time, resident memory and context
//! switches, plus a description of the machine.
//!
//! Reading these files never wakes the process being measured: the kernel answers from its own
//! bookkeeping.

use std::collections::HashMap;
use std::fs;
use std::io;

/// Clock ticks per second for `/proc/<pid>/stat`, and whether sysconf said so (else 100 assumed).
pub fn clk_tck() -> (u64, bool) {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => (t as u64, true),
        _ => (100, false),
    }
}

/// utime + stime of the whole process (every thread, living or exited), in clock ticks.
pub fn cpu_ticks(pid: u32) -> io::Result<u64> {
    stat_sum(pid, 2)
}

/// utime + stime of a process and of its children it has reaped (cutime + cstime), in clock
/// ticks: what a program and the short-lived tools it ran have cost so far.
pub fn cpu_ticks_with_children(pid: u32) -> io::Result<u64> {
    stat_sum(pid, 4)
}

/// The sum of `n` fields of `/proc/<pid>/stat` from utime (field 14) on: utime, stime, cutime,
/// cstime.
fn stat_sum(pid: u32, n: usize) -> io::Result<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let bad = || io::Error::other("unexpected /proc/<pid>/stat format");
    // The command name may hold spaces and parentheses; the fields start after the last ')'.
    let (_, rest) = stat.rsplit_once(')').ok_or_else(bad)?;
    // rest starts at field 3 (state), so utime is its 12th.
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(n)
        .map(|f| f.parse().map_err(|_| bad()))
        .collect::<io::Result<_>>()?;
    if fields.len() < n {
        return Err(bad());
    }
    Ok(fields.iter().sum())
}

/// utime + stime of each living thread, in clock ticks, added up by thread name (`comm`, at most
/// 15 bytes: a runtime's workers share one), most first. Threads that exited are not listed.
pub fn thread_cpu_by_name(pid: u32) -> io::Result<Vec<(String, u64)>> {
    let mut by_name: HashMap<String, u64> = HashMap::new();
    for tid in tids(pid)? {
        // A thread may exit between listing and reading; skip it.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        if let (Some(u), Some(s)) = (ticks(11), ticks(12)) {
            *by_name
                .entry(stat[open + 1..close].to_string())
                .or_default() += u + s;
        }
    }
    let mut out: Vec<(String, u64)> = by_name.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(out)
}

/// A `kB` line of `/proc/<pid>/status`, such as `VmRSS`.
pub fn status_kb(pid: u32, key: &str) -> io::Result<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))?;
    status_value(&status, key)
        .ok_or_else(|| io::Error::other(format!("no {key} in /proc/{pid}/status")))
}

fn status_value(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k == key).then(|| v.split_whitespace().next()?.parse().ok())?
    })
}

/// The resident part of the process's own program's code (`/proc/<pid>/exe`'s executable
/// mappings in `/proc/<pid>/smaps`), in kB: what a start that runs code all over the binary
/// leaves mapped (ADR 0039).
pub fn exe_code_kb(pid: u32) -> io::Result<u64> {
    let exe = fs::read_link(format!("/proc/{pid}/exe"))?;
    let smaps = fs::read_to_string(format!("/proc/{pid}/smaps"))?;
    Ok(code_rss_kb(&smaps, &exe.to_string_lossy()))
}

fn code_rss_kb(smaps: &str, exe: &str) -> u64 {
    let mut ours = false;
    let mut kb = 0;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("Rss:") if ours => {
                kb += fields
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            }
            Some(range) if range.contains('-') && !range.ends_with(':') => {
                let perms = fields.next().unwrap_or("");
                let path = fields.nth(3).unwrap_or("");
                ours = perms.contains('x') && path == exe;
            }
            _ => {}
        }
    }
    kb
}

/// A `kB` line of `/proc/<pid>/smaps_rollup` (`Rss`, `Pss`, `Private_Clean`, ...): memory
/// counted with shared pages split among their sharers (`Pss`) or left out (`Private_*`).
pub fn rollup_kb(pid: u32, key: &str) -> io::Result<u64> {
    let rollup = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))?;
    status_value(&rollup, key)
        .ok_or_else(|| io::Error::other(format!("no {key} in /proc/{pid}/smaps_rollup")))
}

/// A process's command line, its arguments joined by spaces.
pub fn cmdline(pid: u32) -> io::Result<String> {
    let raw = fs::read(format!("/proc/{pid}/cmdline"))?;
    Ok(raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" "))
}

/// Every process descended from `pid` now (children, their children, ...), found through the
/// parent pid in each `/proc/<pid>/stat`.
pub fn descendants(pid: u32) -> io::Result<Vec<u32>> {
    let mut parent_of = HashMap::new();
    for entry in fs::read_dir("/proc")? {
        let Some(p) = entry?
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may exit between listing and reading; skip it.
        let Ok(stat) = fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // The fields after the command name: state, then the parent pid.
        if let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
        {
            parent_of.insert(p, ppid);
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|&(_, &pp)| pp == parent)
                .map(|(&p, _)| p),
        );
        i += 1;
    }
    found.remove(0);
    Ok(found)
}

/// The ids of the process's threads now.
fn tids(pid: u32) -> io::Result<Vec<u32>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(format!("/proc/{pid}/task"))? {
        if let Some(tid) = entry?.file_name().to_str().and_then(|s| s.parse().ok()) {
            out.push(tid);
        }
    }
    Ok(out)
}

/// voluntary + nonvoluntary context switches of each thread.
pub fn thread_switches(pid: u32) -> io::Result<HashMap<u32, u64>> {
    let mut out = HashMap::new();
    for tid in tids(pid)? {
        // A thread may exit between listing and reading; skip it.
        let Ok(status) = fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")) else {
            continue;
        };
        let v = status_value(&status, "voluntary_ctxt_switches").unwrap_or(0);
        let n = status_value(&status, "nonvoluntary_ctxt_switches").unwrap_or(0);
        out.insert(tid, v + n);
    }
    Ok(out)
}

/// On-CPU time of each thread in nanoseconds, from `se.sum_exec_runtime` in
/// `/proc/<pid>/task/<tid>/sched` (kernels built with scheduler debug info). `None` when the
/// kernel does not expose it.
pub fn thread_oncpu_ns(pid: u32) -> Option<HashMap<u32, u64>> {
    let mut out = HashMap::new();
    for tid in tids(pid).ok()? {
        let Ok(sched) = fs::read_to_string(format!("/proc/{pid}/task/{tid}/sched")) else {
            continue;
        };
        let ms: f64 = sched.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == "se.sum_exec_runtime").then(|| v.trim().parse().ok())?
        })?;
        out.insert(tid, (ms * 1_000_000.0) as u64);
    }
    Some(out)
}

/// Sums a per-thread counter over a window, thread by thread, so threads that start or exit
/// during the window neither vanish nor count twice. Call [`ThreadCounter::observe`] often
/// enough that a thread rarely lives and dies between two calls.
///
/// A thread that exits takes its counters with it: whatever it did after the last observation
/// (at least the wake-up in which it exited) is lost, so [`ThreadCounter::exited`] says how many
/// did.
#[derive(Default)]
pub struct ThreadCounter {
    /// tid -> (value at the start of the window or 0 if born in it, latest value seen, gone)
    seen: HashMap<u32, (u64, u64, bool)>,
    started: bool,
    born: usize,
}

impl ThreadCounter {
    pub fn observe(&mut self, values: &HashMap<u32, u64>) {
        for (&tid, &v) in values {
            let base = if self.started { 0 } else { v };
            if self.started && !self.seen.contains_key(&tid) {
                self.born += 1;
            }
            let e = self.seen.entry(tid).or_insert((base, v, false));
            e.1 = e.1.max(v);
        }
        for (tid, e) in self.seen.iter_mut() {
            if !values.contains_key(tid) {
                e.2 = true;
            }
        }
        self.started = true;
    }

    /// Threads started during the window.
    pub fn started(&self) -> usize {
        self.born
    }

    /// Threads seen during the window that have exited since.
    pub fn exited(&self) -> usize {
        self.seen.values().filter(|e| e.2).count()
    }

    pub fn total(&self) -> u64 {
        self.seen.values().map(|(base, last, _)| last - base).sum()
    }
}

/// The machine the figures were taken on.
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub kernel: String,
}

pub fn machine() -> Machine {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or_else(|_| {
            cpuinfo
                .lines()
                .filter(|l| l.starts_with("processor"))
                .count()
        });
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    Machine { cpu, cores, kernel }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        assert!(cpu_ticks(pid).is_ok());
        assert!(status_kb(pid, "VmRSS").unwrap() > 0);
        assert!(exe_code_kb(pid).unwrap() > 0);
        assert!(!thread_switches(pid).unwrap().is_empty());
        assert!(!thread_cpu_by_name(pid).unwrap().is_empty());
    }

    #[test]
    fn counts_only_the_programs_executable_mappings() {
        let smaps = "\
55a0-55b0 r--p 00000000 fe:00 12 /x/vyre
Rss:                 100 kB
55b0-55c0 r-xp 00001000 fe:00 12 /x/vyre
Size:               9000 kB
Rss:                5000 kB
7f00-7f10 r-xp 00000000 fe:00 13 /usr/lib/libc.so.6
Rss:                1000 kB
7f20-7f30 rw-p 00000000 00:00 0
Rss:                 700 kB
";
        assert_eq!(code_rss_kb(smaps, "/x/vyre"), 5000);
        assert_eq!(code_rss_kb(smaps, "/y/other"), 0);
    }

    #[test]
    fn finds_a_child() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let found = descendants(std::process::id()).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.contains(&child.id()), "{found:?}");
    }

    #[test]
    fn counts_threads_born_and_gone() {
        let mut c = ThreadCounter::default();
        c.observe(&HashMap::from([(1, 10), (2, 5)]));
        c.observe(&HashMap::from([(1, 12), (3, 4)]));
        c.observe(&HashMap::from([(1, 13), (3, 6)]));
        // thread 1: +3, thread 2: +0 (gone), thread 3 born in the window: 6.
        assert_eq!(c.total(), 9);
        assert_eq!((c.started(), c.exited()), (1, 1));
    }
}
