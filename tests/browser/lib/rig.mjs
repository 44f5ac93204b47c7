// A real vyred for the browser tests: temp VYRE_HOME and HOME (never the real ones), the pinned
// Claude Code CLI against the fake Messages API, and helpers to call it over its unix socket.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(here, '../../..');
export const VYRE_BIN = process.env.VYRE_BIN || join(ROOT, 'target/debug/vyre');
export const FAKE_API_BIN = process.env.VYRE_FAKE_API_BIN || join(ROOT, 'target/debug/vyre-fake-api');
export const CLAUDE = process.env.VYRE_TEST_CLAUDE || '';
export const API_KEY = 'sk-ant-api03-fake-browser-key-33333333';

/** Is the pinned Claude Code CLI here? Tests that need it skip (loudly) when not. */
export function claudeMissing() {
  if (CLAUDE && existsSync(CLAUDE)) return false;
  const why = CLAUDE ? `VYRE_TEST_CLAUDE=${CLAUDE} does not exist` : 'VYRE_TEST_CLAUDE is not set';
  console.error(`\n*** SKIPPED: needs the pinned Claude Code CLI (${why}); tests/run installs it ***\n`);
  return `needs the Claude Code CLI: ${why}`;
}

export async function waitFor(what, f, timeoutMs = 20000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await f();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

/** `vyre-fake-api`: prints its base URL as the first line of stdout. The same binary is the
 * fake Messages API and the fake push service (push.test.mjs starts one of its own for that). */
export async function startFakeApi() {
  if (!existsSync(FAKE_API_BIN)) throw new Error(`no fake API binary at ${FAKE_API_BIN} (set VYRE_FAKE_API_BIN, or cargo build)`);
  const child = spawn(FAKE_API_BIN, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((ok, fail) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) ok(buf.slice(0, nl).trim());
    });
    child.on('exit', (code) => fail(new Error(`vyre-fake-api exited ${code}`)));
  });
  return { child, url };
}

export class Rig {
  /**
   * @param {string} name
   * @param {{claude?: boolean, env?: Record<string,string>, transcripts?: boolean, role?: 'box'|'local', config?: object, sessions?: object, auth?: 'api-key'|'setup-token'}} opts
   * `auth`: the sessions' credential (`sessions.auth`; the API key unless said): `setup-token`
   * signs Claude Code in as a subscription, whose windows it reports (usage.test.mjs).
   * `sessions`: more of the `sessions` config (e.g. `idle_minutes`), or a function of the rig
   * that gives it (for a setting that names the rig's fake API).
   */
  static async start(name, opts = {}) {
    const r = new Rig();
    r.dir = mkdtempSync(join(tmpdir(), `vyre-browser-${name}-`));
    r.home = join(r.dir, 'home');
    r.vyreHome = join(r.dir, 'vyre');
    r.work = join(r.dir, 'work');
    for (const d of [r.home, r.vyreHome, r.work]) mkdirSync(d, { recursive: true });
    if (opts.transcripts) {
      // A terminal session an older Claude Code wrote, for the history step to find.
      const p = join(r.home, '.claude/projects/-home-someone-old-project');
      mkdirSync(p, { recursive: true });
      copyFileSync(join(ROOT, 'tests/fixtures/transcripts/older-and-broken.jsonl'), join(p, '0b7e4c1e-0000-4000-8000-00000000a001.jsonl'));
    }
    const sessions = { home: r.home, auth: opts.auth ?? 'api-key' };
    if (opts.claude) {
      r.api = await startFakeApi();
      Object.assign(sessions, { claude: CLAUDE, base_url: r.api.url });
    }
    Object.assign(sessions, (typeof opts.sessions === 'function' ? opts.sessions(r) : opts.sessions) ?? {});
    writeFileSync(join(r.vyreHome, 'config.json'), JSON.stringify({ sessions, ...(opts.config ?? {}) }));
    r.output = '';
    r.opts = opts;
    await r.launch('0');
    return r;
  }

  /** vyred on this rig's homes, listening on `port` ('0': any free one), once it answers. */
  async launch(port) {
    this.daemon = spawn(VYRE_BIN, ['daemon', ...(this.opts.role ? ['--role', this.opts.role] : [])], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: this.home,
        VYRE_HOME: this.vyreHome,
        VYRE_PORT: port,
        RUST_LOG: process.env.VYRE_TEST_LOG || 'info',
        // The app to serve (tests/browser/run sets this checkout's ui/dist): without it, vyred
        // serves the ui/dist of the checkout its binary was built in.
        ...(process.env.VYRE_UI_DIR ? { VYRE_UI_DIR: process.env.VYRE_UI_DIR } : {}),
        ...(this.opts.env ?? {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: false,
    });
    const keep = (d) => {
      this.output += d;
      if (process.env.VYRE_TEST_VERBOSE) process.stderr.write(d);
    };
    this.daemon.stdout.on('data', keep);
    this.daemon.stderr.on('data', keep);
    const daemon = this.daemon;
    this.exited = new Promise((ok) => daemon.on('exit', ok));
    await waitFor('vyred to listen', () => existsSync(join(this.vyreHome, 'vyred.addr')) && existsSync(join(this.vyreHome, 'vyred.sock')));
    this.addr = readFileSync(join(this.vyreHome, 'vyred.addr'), 'utf8').trim();
    this.base = `http://${this.addr}`;
    await waitFor('vyred to answer', async () => (await fetch(`${this.base}/v1/health`)).ok);
  }

  /** Stop vyred and start it again on the same homes and port, its store, vault and pairings
   * kept: a box that went away and came back. */
  async restart() {
    const port = new URL(this.base).port;
    await this.halt();
    // Where the stopped one listened: the new one says where it listens once it does.
    rmSync(join(this.vyreHome, 'vyred.addr'), { force: true });
    await this.launch(port);
  }

  /** The onboarding link vyred printed (`onboard: http://.../onboard?t=...`). */
  async onboardLink() {
    const m = await waitFor('the onboarding link in vyred\'s output', () => /(http:\/\/\S+\/onboard\?t=[A-Za-z0-9_-]+)/.exec(this.output), 15000);
    return m[1];
  }

  /** A tool called over the unix socket, as the owner (for setup and checks, never the app). */
  sock(tool, input = {}) {
    const body = JSON.stringify(input);
    return new Promise((ok, fail) => {
      const req = http.request(
        { socketPath: join(this.vyreHome, 'vyred.sock'), path: `/v1/tools/${tool}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let s = '';
          res.on('data', (d) => (s += d));
          res.on('end', () => {
            const j = JSON.parse(s || '{}');
            if (j.error) fail(Object.assign(new Error(`${tool}: ${j.error.code}: ${j.error.message}`), { code: j.error.code }));
            else ok(j.data);
          });
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  }

  /** The `vyre` CLI with this vyred's VYRE_HOME and HOME: its stdout. */
  cli(...args) {
    return new Promise((ok, fail) => {
      const child = spawn(VYRE_BIN, args, {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.home, VYRE_HOME: this.vyreHome },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`vyre ${args.join(' ')} exited ${code}: ${err}`))));
    });
  }

  /** vyred stopped (SIGTERM, then SIGKILL after 10 s); the rig's homes stay. */
  async halt() {
    if (this.daemon && this.daemon.exitCode === null) {
      const daemon = this.daemon;
      daemon.kill('SIGTERM');
      const t = setTimeout(() => daemon.kill('SIGKILL'), 10000);
      await this.exited;
      clearTimeout(t);
    }
  }

  async stop() {
    await this.halt();
    this.api?.child.kill('SIGKILL');
    // Retried: a process the rig started (a session's Claude Code ending) may still write a last file.
    if (!process.env.VYRE_TEST_KEEP) rmSync(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    else console.error(`kept ${this.dir}`);
  }
}
