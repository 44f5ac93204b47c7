// Presence (ADR 0035) in the app: a vault value reaches the screen only after the person proved,
// for that one value, that they are at their device: a passkey (WebAuthn: Touch ID, Windows
// Hello, a phone, a security key) or the vault passphrase. What is decided is here, pure, for
// node --test (ui/test/presence.test.mjs): base64url, the WebAuthn options built from vyred's
// challenge, the browser's answers turned into the tools' inputs, which fields an item offers,
// whether passkeys can work on this page, how long a value stays, and refusals in words. The
// calls (to vyred and to navigator.credentials) are lib/presencecalls.ts. No value is kept here.

import { whenWords } from './planner.js';
import type { ToolInput, ToolOutput } from './api';
import type { components } from './openapi/generated';

export type Challenge = ToolOutput<'vault.presence.challenge'>;
export type PasskeyInfo = components['schemas']['vault.passkey.list.PasskeyInfo'];
export type Field = components['schemas']['vault.reveal.Field'];
export type Assertion = components['schemas']['vault.reveal.Assertion'];
export type NewPasskey = ToolInput<'vault.passkey.add'>;
export type Revealed = ToolOutput<'vault.reveal'>;

// ---- base64url (RFC 4648 §5, no padding), what vyred takes and gives for every binary field.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Bytes as base64url without padding. */
export function toB64url(data: ArrayBuffer | ArrayBufferView): string {
  const b = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  let out = '';
  for (let i = 0; i < b.length; i += 3) {
    const n = (b[i] << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    // 1 byte left: 2 characters, 2 bytes: 3, 3 bytes: 4.
    const chars = Math.min(4, Math.ceil(((b.length - i) * 8) / 6));
    for (let j = 0; j < chars; j++) out += ALPHABET[(n >> (18 - 6 * j)) & 63];
  }
  return out;
}

/** base64url (padding, and `+` `/` of plain base64, tolerated) as bytes; throws on anything else. */
export function fromB64url(s: string): Uint8Array<ArrayBuffer> {
  const clean = s.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  if (!/^[A-Za-z0-9_-]*$/.test(clean) || clean.length % 4 === 1) throw new Error('not base64url');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (const c of clean) {
    acc = (acc << 6) | ALPHABET.indexOf(c);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  return out;
}

// ---- Where the page is: passkeys need a name (not an IP address) in a secure context.

/** What the page knows of where it runs (`here()` in lib/presencecalls.ts). */
export interface Place {
  /** `location.hostname` (an IPv6 address in brackets). */
  hostname: string;
  /** `location.port` ("" for the scheme's own). */
  port: string;
  /** `window.PublicKeyCredential` exists. */
  webauthn: boolean;
  /** `window.isSecureContext`. */
  secure: boolean;
}

/** Whether `host` is an IP address (v4, or v6 with or without brackets), which WebAuthn refuses
 * as a relying party. */
export function isIpAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(h) || h.includes(':');
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return /^127\./.test(h) || h === '::1';
}

/** Why passkeys cannot work on this page, in words; null when they can. */
export function passkeyProblem(p: Place): string | null {
  if (isIpAddress(p.hostname)) {
    if (isLoopback(p.hostname)) {
      const at = `http://localhost${p.port ? `:${p.port}` : ''}/app/`;
      return `Passkeys need a name in the address, not a number like ${p.hostname}. On this machine, open Vyre at ${at} instead (run \`vyre open\` and put localhost in place of ${p.hostname} in its link).`;
    }
    return `Passkeys need a name in the address, not a number like ${p.hostname}: open Vyre at its name (your .vyre.run address, or your own domain).`;
  }
  if (!p.secure) return 'Passkeys need a secure page: open Vyre over https, or at localhost on this machine.';
  if (!p.webauthn) return 'This browser cannot use passkeys.';
  return null;
}

/** The passkeys made for this page's host (a passkey answers only on its own site). */
export function passkeysFor<P extends Pick<PasskeyInfo, 'rp_id'>>(passkeys: P[], hostname: string): P[] {
  const h = hostname.toLowerCase();
  return passkeys.filter((p) => p.rp_id.toLowerCase() === h);
}

/** Why no proof can be given on this page, in words, when a reveal's challenge offers neither
 * the passphrase nor a passkey for this host. */
export function noWayWords(c: Pick<Challenge, 'passkeys' | 'passphrase'>, p: Place): string {
  const problem = passkeyProblem(p);
  if (problem) return `${problem} Or set a vault passphrase with \`vyre vault passphrase\` in a terminal, and give it here.`;
  const sites = [...new Set(c.passkeys.map((k) => k.rp_id))];
  if (sites.length) {
    return `This vault’s passkeys are for ${sites.join(', ')}, not for ${p.hostname}: add one here under Passkeys, or set a vault passphrase with \`vyre vault passphrase\` in a terminal.`;
  }
  return presenceWords('presence_unavailable') ?? '';
}

// ---- The WebAuthn options and answers.

/** How long the browser waits for the authenticator; vyred's challenge lives 120 s too. */
export const WEBAUTHN_TIMEOUT_MS = 120_000;

/** The only keys vyred takes: ES256 (-7) and EdDSA (-8). */
export const ALGS = [-7, -8];

const credential = (p: Pick<PasskeyInfo, 'id'>): PublicKeyCredentialDescriptor => ({ type: 'public-key', id: fromB64url(p.id) });

/** `navigator.credentials.create`'s options for a new passkey: vyred's challenge (`for:
 * passkey`), this host as the relying party, a new random `userId` (16 bytes), user verification
 * required, and this host's passkeys left out (the same authenticator twice is refused). */
export function createOptions(c: Pick<Challenge, 'challenge' | 'passkeys'>, hostname: string, userId: Uint8Array<ArrayBuffer>): PublicKeyCredentialCreationOptions {
  return {
    challenge: fromB64url(c.challenge),
    rp: { name: 'Vyre', id: hostname },
    user: { id: userId, name: 'Vyre', displayName: 'Vyre' },
    pubKeyCredParams: ALGS.map((alg) => ({ type: 'public-key', alg })),
    authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
    attestation: 'none',
    timeout: WEBAUTHN_TIMEOUT_MS,
    excludeCredentials: passkeysFor(c.passkeys, hostname).map(credential),
  };
}

/** `navigator.credentials.get`'s options to answer a reveal's challenge with this host's
 * passkeys, user verification required. */
export function getOptions(c: Pick<Challenge, 'challenge' | 'passkeys'>, hostname: string): PublicKeyCredentialRequestOptions {
  return {
    challenge: fromB64url(c.challenge),
    rpId: hostname,
    allowCredentials: passkeysFor(c.passkeys, hostname).map(credential),
    userVerification: 'required',
    timeout: WEBAUTHN_TIMEOUT_MS,
  };
}

/** What a new passkey's credential gives (a `PublicKeyCredential` with an attestation). */
export interface Created {
  rawId: ArrayBuffer;
  response: {
    clientDataJSON: ArrayBuffer;
    getAuthenticatorData(): ArrayBuffer;
    getPublicKey(): ArrayBuffer | null;
    getPublicKeyAlgorithm(): number;
  };
}

/** What an answer to a challenge gives (a `PublicKeyCredential` with an assertion). */
export interface Asserted {
  rawId: ArrayBuffer;
  response: { clientDataJSON: ArrayBuffer; authenticatorData: ArrayBuffer; signature: ArrayBuffer };
}

/** `vault.passkey.add`'s input from a new credential; throws (in words) what vyred would refuse. */
export function addInput(cred: Created, name: string): NewPasskey {
  const alg = cred.response.getPublicKeyAlgorithm();
  const key = cred.response.getPublicKey();
  if (!ALGS.includes(alg) || !key) throw new Error('This device made a kind of passkey Vyre does not take (it takes ES256 and Ed25519).');
  return {
    name: name.trim(),
    credential_id: toB64url(cred.rawId),
    client_data_json: toB64url(cred.response.clientDataJSON),
    authenticator_data: toB64url(cred.response.getAuthenticatorData()),
    public_key: toB64url(key),
    alg,
  };
}

/** `vault.reveal`'s `passkey` from an answer to a challenge. */
export function assertionInput(cred: Asserted): Assertion {
  return {
    credential_id: toB64url(cred.rawId),
    client_data_json: toB64url(cred.response.clientDataJSON),
    authenticator_data: toB64url(cred.response.authenticatorData),
    signature: toB64url(cred.response.signature),
  };
}

// ---- Items' fields and how long a value stays.

/** The fields each kind offers, in order. A login's TOTP code (and a login's or a card's notes)
 * is offered even when it has none (`vault.list` does not say); vyred then answers
 * `no_such_field`. */
export interface FieldInfo {
  field: Field;
  label: string;
  /** Shown as whole lines (an env set's `NAME=value` lines), each scrolled sideways rather than
   * wrapped. */
  lines?: boolean;
}

const FIELDS: Record<string, FieldInfo[]> = {
  login: [
    { field: 'username', label: 'Username' },
    { field: 'password', label: 'Password' },
    { field: 'totp', label: 'TOTP code' },
    { field: 'notes', label: 'Notes' },
  ],
  secret: [{ field: 'value', label: 'Value' }],
  note: [{ field: 'value', label: 'Text' }],
  card: [
    { field: 'number', label: 'Number' },
    { field: 'holder', label: 'Name on card' },
    { field: 'expiry', label: 'Expiry' },
    { field: 'code', label: 'Security code' },
    { field: 'notes', label: 'Notes' },
  ],
  // Its variables, shown whole as `NAME=value` lines (a .env file's text).
  env: [{ field: 'value', label: 'Variables', lines: true }],
};

export function fieldsOf(kind: string): FieldInfo[] {
  return FIELDS[kind] ?? [{ field: 'value', label: 'Value' }];
}

/** How long a value stays on screen. */
export const SHOW_MS = 30_000;

/** How long this value stays: 30 s, or until a TOTP code changes when that is sooner. */
export function shownFor(out: Pick<Revealed, 'expires_in_s'>): number {
  return out.expires_in_s != null ? Math.min(SHOW_MS, out.expires_in_s * 1000) : SHOW_MS;
}

/** The whole seconds left until `until` (never below 0). */
export function secondsLeft(until: number, now: number): number {
  return Math.max(0, Math.ceil((until - now) / 1000));
}

/** The countdown beside a shown value: "Hides in 27 s", or a TOTP code's "Changes in 12 s". */
export function countdownWords(field: string, seconds: number): string {
  return field === 'totp' ? `Changes in ${seconds} s` : `Hides in ${seconds} s`;
}

// ---- Passkeys in words.

/** "Added today 10:00 by browser:Chrome · Used today 10:05", without who added it when unknown. */
export function passkeyWhen(p: Pick<PasskeyInfo, 'created_at' | 'last_used_at'>, now = Date.now(), zone?: string): string {
  const used = p.last_used_at === null ? 'Never used' : `Used ${whenWords(p.last_used_at, now, zone)}`;
  return `Added ${whenWords(p.created_at, now, zone)} · ${used}`;
}

// ---- Refusals in words.

/** vyred's refusal codes (presence, reveal, passkeys) in words; null for one it did not say. */
export function presenceWords(code: string, field?: string): string | null {
  switch (code) {
    case 'presence_required':
      return 'Prove it is you first: use your passkey or give the vault passphrase.';
    case 'presence_unavailable':
      return 'There is no way to prove it is you yet: add a passkey here (Passkeys, above), or set a vault passphrase with `vyre vault passphrase` in a terminal.';
    case 'wrong_passphrase':
      return 'That is not the vault passphrase.';
    case 'too_many_attempts':
      return 'Too many wrong passphrases: wait a minute, then try again.';
    case 'presence_challenge_unknown':
      return 'That took too long and the request expired: ask again.';
    case 'presence_mismatch':
      return 'The passkey answered a different request: ask again.';
    case 'presence_invalid':
      return 'Vyre could not use what the passkey answered.';
    case 'presence_forged':
      return 'The passkey’s signature did not check out, so nothing is shown.';
    case 'presence_not_verified':
      return 'Your device did not verify you (a fingerprint, face or PIN), so nothing is shown.';
    case 'passkey_unknown':
      return 'That passkey is not one of this vault’s: add it under Passkeys first.';
    case 'passkey_cloned':
      return 'That passkey may have been copied (its counter went back): remove it under Passkeys and add it again.';
    case 'no_such_field':
      return field === 'totp' ? 'This login has no TOTP seed, so there is no code to show.' : field === 'notes' ? 'This item has no notes.' : 'This item has no such field.';
    case 'unknown_item':
      return 'This item is no longer in the vault.';
    case 'vault_locked':
      return 'The vault is locked: unlock it first.';
    case 'totp_invalid':
      return 'This login’s TOTP seed is not valid, so no code can be made from it.';
    case 'exists':
      return 'That passkey is kept already.';
    case 'offline':
      return 'Vyre did not answer.';
    default:
      return null;
  }
}

/** What the browser's WebAuthn refusal (a DOMException's name) means, in words. */
export function webauthnWords(name: string, creating: boolean): string {
  switch (name) {
    case 'NotAllowedError':
      return creating
        ? 'No passkey was made: it was cancelled, took too long, or your device did not verify you.'
        : 'No passkey answered: it was cancelled, took too long, or your device did not verify you.';
    case 'InvalidStateError':
      return 'This device has a passkey for Vyre here already.';
    case 'SecurityError':
      return 'The browser refused passkeys at this address.';
    case 'NotSupportedError':
      return 'This device cannot make a kind of passkey Vyre takes (ES256 or Ed25519).';
    case 'AbortError':
      return 'Cancelled.';
    default:
      return 'The passkey did not work.';
  }
}

/** The refusals whose message from vyred says more than their words (how long to wait, what
 * was wrong with an answer): shown under them. */
const SAYS_MORE = new Set(['too_many_attempts', 'presence_invalid', 'totp_invalid']);

/** Any failure of a reveal or a passkey in words (`text`), with what vyred said when it adds
 * something (`detail`, shown dimmed): vyred's refusals (a string `code`; one it did not say
 * before in its own words), the browser's (a DOMException's `name`: its message is generic and
 * left out), or anything else. */
export function problemWords(e: unknown, o: { field?: string; creating?: boolean } = {}): { text: string; detail: string | null } {
  const err = (e ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  const message = typeof err.message === 'string' && err.message ? err.message : null;
  if (typeof err.code === 'string') {
    const words = presenceWords(err.code, o.field);
    if (!words) return { text: message ?? err.code, detail: null };
    return { text: words, detail: SAYS_MORE.has(err.code) ? message : null };
  }
  if (typeof err.name === 'string' && err.name.endsWith('Error') && err.name !== 'Error' && err.name !== 'TypeError') {
    return { text: webauthnWords(err.name, !!o.creating), detail: null };
  }
  return { text: message ?? String(e), detail: null };
}
