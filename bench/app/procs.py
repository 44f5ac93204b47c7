#!/usr/bin/env python3
"""Samples a process tree for bench/app/run: `procs.py PID` prints one JSON line with, for the
process and each of its descendants, its name, each thread's run time in ns (schedstat) and
context switches (wake-ups), the process's CPU time in clock ticks (utime + stime of
/proc/PID/stat, which also keeps the time of threads that have ended; WebKit's thread pools
come and go), RSS and PSS in KiB. The window's CPU is the threads' run time (exact, for the
threads alive at both ends) and, beside it, the ticks (coarse: 10 ms each, sampled). `procs.py --diff BEFORE AFTER SECONDS` prints the table for a window between two
samples."""
import glob
import json
import os
import sys


def children(pid):
    out = []
    for f in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            out += [int(c) for c in open(f).read().split()]
        except OSError:
            pass
    return out


def tree(pid):
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo += children(p)
    return pids


def field(path, name):
    try:
        for line in open(path):
            if line.startswith(name):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample(pid):
    procs = {}
    for p in tree(pid):
        wakes, run = {}, {}
        for t in glob.glob(f"/proc/{p}/task/*"):
            tid = t.rsplit("/", 1)[1]
            wakes[tid] = field(f"{t}/status", "voluntary_ctxt_switches:") + field(
                f"{t}/status", "nonvoluntary_ctxt_switches:"
            )
            try:
                run[tid] = int(open(f"{t}/schedstat").read().split()[0])
            except (OSError, IndexError, ValueError):
                pass
        try:
            comm = open(f"/proc/{p}/comm").read().strip()
            stat = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        procs[str(p)] = {
            "comm": comm,
            "ticks": int(stat[11]) + int(stat[12]),
            "wakeups": wakes,
            "run_ns": run,
            "rss_kib": field(f"/proc/{p}/status", "VmRSS:"),
            "pss_kib": field(f"/proc/{p}/smaps_rollup", "Pss:"),
        }
    return procs


def diff(before, after, seconds, label):
    hz = os.sysconf("SC_CLK_TCK")
    total = {"cpu": 0.0, "ticks": 0.0, "wakes": 0, "rss": 0, "pss": 0}

    def delta(a, b):  # over the threads alive at both ends of the window
        return sum(n - b[t] for t, n in a.items() if t in b)

    for pid, a in after.items():
        b = before.get(pid, {"ticks": a["ticks"], "wakeups": {}, "run_ns": {}})
        cpu = 100.0 * delta(a["run_ns"], b["run_ns"]) / 1e9 / seconds
        ticks = 100.0 * (a["ticks"] - b["ticks"]) / hz / seconds
        wakes = delta(a["wakeups"], b["wakeups"]) / seconds
        total["cpu"] += cpu
        total["ticks"] += ticks
        total["wakes"] += wakes
        total["rss"] += a["rss_kib"]
        total["pss"] += a["pss_kib"]
        print(f"    {a['comm']:<16} {cpu:6.3f}% of a core (ticks {ticks:5.2f}%)  {wakes:6.1f} wake-ups/s"
              f"  RSS {a['rss_kib'] / 1024:6.1f} MiB  PSS {a['pss_kib'] / 1024:6.1f} MiB")
    print(f"{label:<44} {total['cpu']:6.3f}% of a core (ticks {total['ticks']:5.2f}%)  {total['wakes']:6.1f} wake-ups/s"
          f"  RSS {total['rss'] / 1024:6.1f} MiB, PSS {total['pss'] / 1024:6.1f} MiB (all processes)")
    return {
        "cpu_pct": round(total["cpu"], 4),
        "cpu_ticks_pct": round(total["ticks"], 4),
        "wakeups_per_s": round(total["wakes"], 2),
        "rss_mib": round(total["rss"] / 1024, 1),
        "pss_mib": round(total["pss"] / 1024, 1),
        "processes": sorted(a["comm"] for a in after.values()),
    }


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        # --diff BEFORE AFTER SECONDS LABEL [--json FILE KEY]: the table, and the totals appended
        # to FILE as {KEY: {...}}.
        before, after = (json.load(open(f)) for f in sys.argv[2:4])
        totals = diff(before, after, float(sys.argv[4]), sys.argv[5])
        if len(sys.argv) > 8 and sys.argv[6] == "--json":
            with open(sys.argv[7], "a") as f:
                f.write(json.dumps({sys.argv[8]: totals}) + "\n")
    else:
        print(json.dumps(sample(int(sys.argv[1]))))
