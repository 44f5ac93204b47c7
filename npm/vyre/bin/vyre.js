#!/usr/bin/env node
// The `vyre` command of the npm package: finds the prebuilt binary that npm installed for this
// platform (the optional dependency @vyre/cli-<platform>) and runs it with the same arguments,
// the same stdin, stdout and stderr, and the same environment. It forwards the signals it gets
// and exits as the binary did (the same code, or the same signal). Nothing is downloaded.
//
// The binary runs from its own package, so vyred finds the web app and the harness beside it
// (<package>/share/vyre/{ui,harness}), and the sessions' hooks run that binary, not this file.
"use strict";

const { spawn } = require("child_process");
const path = require("path");
const os = require("os");

// The platform packages (npm/pack builds them from the same list): each names its os and cpus.
const PLATFORMS = require("../platforms.json");

function fail(message) {
  process.stderr.write(`vyre: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const match = Object.values(PLATFORMS).find(
    (p) => p.os === process.platform && p.cpu.includes(process.arch),
  );
  if (!match) {
    const supported = Object.keys(PLATFORMS).join(", ");
    fail(
      `there is no prebuilt vyre for ${platform} (there is one for ${supported}). ` +
        "Build it from the source instead: see docs/install.md (cargo install).",
    );
  }
  const pkg = match.package;
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    fail(
      `the vyre binary for ${platform} is not installed (npm package ${pkg}, an optional ` +
        "dependency of vyre). npm skips optional dependencies with --omit=optional or " +
        "--no-optional, and when the package's os, cpu or libc does not match this machine. " +
        `Install vyre again without those options (npm install -g vyre), or add ${pkg} yourself.`,
    );
  }
  return path.join(path.dirname(manifest), "bin", "vyre");
}

function run() {
  const bin = binaryPath();
  const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });

  // A terminal sends Ctrl-C (SIGINT) and Ctrl-\ (SIGQUIT) to its whole foreground process
  // group, the binary included, so those are passed on only when no terminal is ours (then they
  // came from kill, meant for vyre). The others always are.
  const fromTerminal = new Set(["SIGINT", "SIGQUIT"]);
  const onTerminal = process.stdin.isTTY || process.stdout.isTTY || process.stderr.isTTY;
  // (Ctrl-Z's SIGTSTP is left alone: it stops this process and the binary together.)
  const signals = ["SIGINT", "SIGQUIT", "SIGTERM", "SIGHUP", "SIGUSR2"];
  for (const signal of signals) {
    process.on(signal, () => {
      if (onTerminal && fromTerminal.has(signal)) return;
      try {
        child.kill(signal);
      } catch {
        // It has already exited.
      }
    });
  }

  child.on("error", (error) => {
    fail(`cannot run ${bin}: ${error.message}`);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so whoever ran vyre sees what the binary did.
      for (const s of signals) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      // A signal that does not end a process (or one Node keeps) still must not exit 0.
      process.exit(128 + (os.constants.signals[signal] || 1));
    }
    process.exit(code === null ? 1 : code);
  });
}

run();
