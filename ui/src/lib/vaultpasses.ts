// Passes (ADR 0036) in the Vault screen: one item shared with another person's Vyre, relayed
// (the value stays here; their Gate's requests come through this one's) or sealed (a copy for a
// key their Vyre made). What is sent to `vault.pass.create` and `vault.pass.accept` (or what is
// wrong before anything is sent), and the passes, revokes, keys and offboardings in words.
// Pure, for node --test (ui/test/vaultpasses.test.mjs). The calls are lib/vaultcalls.ts. A
// code or a key is never kept here: the components hold it while it is on screen.

// `.js`: node runs this module as tsc writes it for the tests (.test-build/).
import { whenWords } from './planner.js';
import type { ToolInput, ToolOutput } from './api';
import type { components } from './openapi/generated';

export type PassInfo = components['schemas']['vault.pass.list.PassInfo'];
export type PassKind = components['schemas']['vault.pass.list.PassKind'];
export type PassCreated = ToolOutput<'vault.pass.create'>;
export type PassRevoked = ToolOutput<'vault.pass.revoke'>;
export type PassKey = ToolOutput<'vault.pass.key'>;
export type PassAccepted = ToolOutput<'vault.pass.accept'>;
export type Offboarded = ToolOutput<'vault.offboard'>;
export type PassUse = components['schemas']['vault.offboard.Use'];

/** How a code or a key begins (docs/api.md, `vault.pass.*`). */
export const RELAYED_PREFIX = 'vyre-pass-1.';
export const SEALED_PREFIX = 'vyre-sealed-1.';
export const KEY_PREFIX = 'vyre-key-1.';

export function passKindLabel(kind: PassKind): string {
  return kind === 'sealed' ? 'Sealed' : 'Relayed';
}

/** The share panel's fields: who it is for, how, the address (relayed), their key (sealed). */
export interface ShareForm {
  to: string;
  how: PassKind;
  url: string;
  key: string;
}

export const SHARE_DEFAULTS: ShareForm = { to: '', how: 'relayed', url: '', key: '' };

/** What `vault.pass.create` is sent for item `name`, or what is missing, in words, before
 * anything is sent. A relayed pass with no address is made for this vyred's own listener. */
export function shareInput(name: string, f: ShareForm): { input: ToolInput<'vault.pass.create'> } | { problem: string } {
  const to = f.to.trim();
  if (!to) return { problem: 'Say who it is for: the name you will know them by (offboarding them later uses it).' };
  if (f.how === 'sealed') {
    const key = f.key.trim();
    if (!key) return { problem: 'Paste the key their Vyre made (their Vault: Passes, Get a key for a sealed pass).' };
    if (key.startsWith(SEALED_PREFIX) || key.startsWith(RELAYED_PREFIX)) return { problem: 'That is a pass’s code, not a key: a key from their Vyre starts with vyre-key-1.' };
    if (!key.startsWith(KEY_PREFIX)) return { problem: 'That is not a key for a sealed pass: one starts with vyre-key-1.' };
    return { input: { name, to, sealed_for: key } };
  }
  const url = f.url.trim();
  return { input: url ? { name, to, url } : { name, to } };
}

/** What a code is by how it begins: a relayed pass's, a sealed pass's, or neither. */
export function codeKind(code: string): PassKind | null {
  const c = code.trim();
  if (c.startsWith(RELAYED_PREFIX)) return 'relayed';
  if (c.startsWith(SEALED_PREFIX)) return 'sealed';
  return null;
}

/** What is wrong with the accept form, in words; null when it can be sent. */
export function acceptProblem(code: string, name: string): string | null {
  const c = code.trim();
  if (!c) return 'Paste the code you were given.';
  if (c.startsWith(KEY_PREFIX)) return 'That is a key, not a pass: give it to the person who shares the item, and add the code they give you back.';
  if (!codeKind(c)) return 'That is not a pass’s code: one starts with vyre-pass-1. (relayed) or vyre-sealed-1. (sealed).';
  if (!name.trim()) return 'Give it a name in your vault.';
  return null;
}

/** What an accepted pass became, in a line. */
export function acceptedWords(a: Pick<PassAccepted, 'name' | 'pass' | 'kind' | 'from'>): string {
  if (a.pass === 'relayed') {
    return `Added “${a.name}”, a pass from ${a.from}. Its value stays with the giver: grant it to the Gate to send requests with it through their Vyre.`;
  }
  return `Added “${a.name}” (${a.kind}), a sealed copy: it is in your vault now, and the key it was made for is used up.`;
}

/** How long something is good for: "1 hour", "45 min", "30 s". */
export function durationWords(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s - h * 3600) / 60);
  const hours = h === 1 ? '1 hour' : `${h} hours`;
  return m ? `${hours} ${m} min` : hours;
}

/** Under a key: how long it is good for and what to do with it. */
export function keyWords(k: Pick<PassKey, 'expires_in_s'>): string {
  return `Good for ${durationWords(k.expires_in_s)}, once, and only until your Vyre restarts. Give it to the person sharing the item, then add the code they give you back as a pass you were given.`;
}

/** A pass's uses: "Never used", "Used once, last today 10:05", "Used 3 times, last ..."; a
 * sealed copy's uses are not seen here. */
export function passUseWords(p: Pick<PassInfo, 'kind' | 'uses' | 'last_used_at'>, now = Date.now(), zone?: string): string {
  if (p.kind === 'sealed') return 'A copy: its uses are not seen here';
  if (!p.uses || p.last_used_at === null) return 'Never used';
  const times = p.uses === 1 ? 'once' : `${p.uses} times`;
  return `Used ${times}, last ${whenWords(p.last_used_at, now, zone)}`;
}

/** When it was given, taken (a relayed pass is bound to the Vyre that took it) or revoked:
 * "Given today 10:00, not taken yet", "Taken today 10:05", "Revoked yesterday 09:30". */
export function passStateWords(
  p: Pick<PassInfo, 'kind' | 'created_at' | 'revoked_at' | 'taken_at'>,
  now = Date.now(),
  zone?: string,
): string {
  if (p.revoked_at !== null) return `Revoked ${whenWords(p.revoked_at, now, zone)}`;
  if (p.kind !== 'relayed') return `Given ${whenWords(p.created_at, now, zone)}`;
  return p.taken_at != null ? `Taken ${whenWords(p.taken_at, now, zone)}` : `Given ${whenWords(p.created_at, now, zone)}, not taken yet`;
}

/** An item's passes (`item` is its name now, or when it was made if the item is gone). */
export function passesOf<P extends Pick<PassInfo, 'item'>>(passes: P[], item: string): P[] {
  return passes.filter((p) => p.item === item);
}

/** The people holding a standing pass, by name: what offboarding offers. */
export function holders(passes: Pick<PassInfo, 'to' | 'revoked_at'>[]): string[] {
  return [...new Set(passes.filter((p) => p.revoked_at === null).map((p) => p.to))].sort((a, b) => a.localeCompare(b));
}

/** The question before a revoke: what ends, and for a sealed pass that the copy stays. */
export function revokeQuestion(p: Pick<PassInfo, 'item' | 'to' | 'kind'>): { title: string; body: string } {
  const title = `Revoke ${p.to}’s pass to “${p.item}”?`;
  if (p.kind === 'sealed') {
    return { title, body: `${p.to} keeps the copy they were given: revoking records it, but cannot take it back. Change the value where it is used afterwards.` };
  }
  return { title, body: `Requests from ${p.to}’s Vyre with it end at once. The value never left this Vyre.` };
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** An offboarding's first line: what it would do (the dry run) or did. */
export function offboardWords(r: Pick<Offboarded, 'person' | 'dry_run' | 'revoked' | 'rotate'>): string {
  const n = r.revoked.length;
  if (!n) return `${r.person} holds no pass that stands: there is nothing to revoke.`;
  const rotate = r.rotate.length ? `; ${plural(r.rotate.length, 'item')} to rotate` : '';
  return `${r.dry_run ? 'Would revoke' : 'Revoked'} ${plural(n, 'pass', 'passes')} of ${r.person}${rotate}.`;
}

/** Where a relayed item was sent: "GET https://api.example.com/v1: 3 times, last today 10:05". */
export function useWords(u: PassUse, now = Date.now(), zone?: string): string {
  const times = u.count === 1 ? 'once' : `${u.count} times`;
  return `${u.destination}: ${times}, last ${whenWords(u.last_at, now, zone)}`;
}

/** Where an item that came as a pass came from, and what that means, in words; null for an
 * item of this vault's own. */
export function fromWords(item: { kind: string; from?: string | null }): string | null {
  if (item.kind === 'pass') {
    return 'The value stays with the giver: there is nothing to show here. Requests the Gate sends with it go through their Vyre, which puts the value in.';
  }
  return item.from ? `From ${item.from}: a copy kept in this vault, yours to use and change.` : null;
}
