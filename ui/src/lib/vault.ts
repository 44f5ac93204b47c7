// The Vault screen (issue 27): what it says of an item (its kind, sites, a card's last digits and
// expiry, an env set's variables' names, grants, last use), the
// search of the list, and what the generator and the import send. Pure, for node --test
// (ui/test/vault.test.mjs). Never a stored value: vyred gives none (`vault.list`), and nothing
// here asks for one. The calls to vyred are lib/vaultcalls.ts.

// `.js`: node runs this module as tsc writes it for the tests (.test-build/).
import { whenWords } from './planner.js';
import type { ToolInput, ToolOutput } from './api';
import type { components } from './openapi/generated';

/** An item as `vault.list` says it: never its value. */
export type VaultItem = components['schemas']['vault.list.ItemInfo'];
export type ItemKind = components['schemas']['vault.put.Kind'];
export type ImportFormat = components['schemas']['vault.import.Format'];
export type OnDuplicate = components['schemas']['vault.import.OnDuplicate'];
export type Generated = ToolOutput<'vault.generate'>;
export type Imported = ToolOutput<'vault.import'>;
export type CharSet = components['schemas']['vault.generate.CharSet'];

export const KINDS: { kind: ItemKind; label: string }[] = [
  { kind: 'login', label: 'Login' },
  { kind: 'secret', label: 'Secret' },
  { kind: 'note', label: 'Note' },
  { kind: 'card', label: 'Card' },
  { kind: 'env', label: 'Env set' },
];

export function kindLabel(kind: string): string {
  // A pass is not made here (it comes from another Vyre's code), so it is not among KINDS.
  if (kind === 'pass') return 'Pass (relayed)';
  return KINDS.find((k) => k.kind === kind)?.label ?? kind;
}

/** The import's formats, as the select offers them; Auto (vyred reads it from the file) first. */
export const FORMATS: { format: ImportFormat | ''; label: string }[] = [
  { format: '', label: 'Auto (read from the file)' },
  { format: 'bitwarden-json', label: 'Bitwarden (JSON)' },
  { format: 'bitwarden-csv', label: 'Bitwarden (CSV)' },
  { format: 'onepassword-1pux', label: '1Password (.1pux)' },
  { format: 'onepassword-csv', label: '1Password (CSV)' },
  { format: 'chrome-csv', label: 'Chrome (CSV)' },
  { format: 'safari-csv', label: 'Safari (CSV)' },
  { format: 'firefox-csv', label: 'Firefox (CSV)' },
  { format: 'csv', label: 'Other CSV' },
];

export const DUPLICATES: { value: OnDuplicate; label: string }[] = [
  { value: 'skip', label: 'Skip it' },
  { value: 'rename', label: 'Import it under a new name' },
  { value: 'replace', label: 'Replace the one in the vault' },
];

export const SETS: { set: CharSet; label: string }[] = [
  { set: 'lower', label: 'a–z' },
  { set: 'upper', label: 'A–Z' },
  { set: 'digits', label: '0–9' },
  { set: 'symbols', label: 'Symbols' },
];

/** A login's sites, as text: "example.com, mail.example.com"; "" when it has none. */
export function sitesText(item: Pick<VaultItem, 'urls'>): string {
  return (item.urls ?? []).join(', ');
}

/** A card's facts: "•••• 1234 · expires 08/29" ("expired 08/23" once its month is over, by
 * `now`); "" when it has neither. */
export function cardText(item: Pick<VaultItem, 'last4' | 'expiry'>, now = Date.now()): string {
  const parts: string[] = [];
  if (item.last4) parts.push(`•••• ${item.last4}`);
  if (item.expiry) parts.push(`${expired(item.expiry, now) ? 'expired' : 'expires'} ${item.expiry}`);
  return parts.join(' · ');
}

/** Whether a card's `MM/YY` or `MM/YYYY` is a month before `now`'s (false when it is not one). */
export function expired(expiry: string, now = Date.now()): boolean {
  const m = /^(\d{2})\/(\d{2}|\d{4})$/.exec(expiry);
  if (!m) return false;
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  const d = new Date(now);
  return year * 12 + Number(m[1]) < d.getFullYear() * 12 + d.getMonth() + 1;
}

/** An env set's variables' names: "API_KEY, API_URL"; past `max`, "and N more". */
export function varsText(item: Pick<VaultItem, 'vars'>, max = Infinity): string {
  const vars = item.vars ?? [];
  if (vars.length <= max) return vars.join(', ');
  return `${vars.slice(0, max).join(', ')} and ${vars.length - max} more`;
}

/** Who may use it, in words: "sessions, agent:mail"; a module's `module:` left off. */
export function grantsText(item: Pick<VaultItem, 'grants'>): string {
  if (!item.grants.length) return 'Not granted to anything';
  return item.grants.map((g) => g.replace(/^module:/, '')).join(', ');
}

/** Its last use: "Never used", "Used today 15:20", or with who used it ("through a pass" for
 * another Vyre's request through one this Vyre gave, `pass:<id>`). */
export function lastUsedWords(item: Pick<VaultItem, 'last_used_at' | 'last_used_by'>, now = Date.now(), zone?: string): string {
  if (item.last_used_at === null) return 'Never used';
  const when = whenWords(item.last_used_at, now, zone);
  if (item.last_used_by?.startsWith('pass:')) return `Used ${when} through a pass`;
  return item.last_used_by ? `Used ${when} by ${item.last_used_by}` : `Used ${when}`;
}

/** The items whose name, sites, kind, card facts or variables' names hold every word of `query` (case ignored), by name. */
export function filterItems<I extends Pick<VaultItem, 'name' | 'kind' | 'urls' | 'last4' | 'expiry' | 'vars'>>(items: I[], query: string): I[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const sorted = [...items].sort((a, b) => a.name.localeCompare(b.name));
  if (!words.length) return sorted;
  return sorted.filter((i) => {
    const hay = [i.name, i.kind, kindLabel(i.kind), ...(i.urls ?? []), i.last4 ?? '', i.expiry ?? '', ...(i.vars ?? [])].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** The generator's settings, both kinds' kept while the person switches between them. */
export interface GenOptions {
  kind: 'password' | 'passphrase';
  length: number;
  sets: CharSet[];
  avoidAmbiguous: boolean;
  words: number;
  separator: string;
  capitalize: boolean;
}

export const GEN_DEFAULTS: GenOptions = {
  kind: 'password',
  length: 20,
  sets: ['lower', 'upper', 'digits', 'symbols'],
  avoidAmbiguous: false,
  words: 6,
  separator: '-',
  capitalize: false,
};

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.round(Number.isFinite(n) ? n : lo)));

/** What `vault.generate` is sent: a password's fields or a passphrase's, never both (vyred
 * refuses a mix); numbers held to what it takes. */
export function genInput(o: GenOptions): ToolInput<'vault.generate'> {
  if (o.kind === 'passphrase') {
    return { kind: 'passphrase', words: clamp(o.words, 4, 20), separator: o.separator.slice(0, 3), capitalize: o.capitalize };
  }
  return { kind: 'password', length: clamp(o.length, 8, 128), sets: SETS.map((s) => s.set).filter((s) => o.sets.includes(s)), avoid_ambiguous: o.avoidAmbiguous };
}

/** Its strength in words: "128 bits". */
export function bitsWords(bits: number): string {
  return `${Math.floor(bits)} bits`;
}

/** An export file's bytes as `vault.import` takes them: a zip (1Password's .1pux, which starts
 * with `PK\x03\x04`) in base64, any other export as its text. */
export function exportData(bytes: Uint8Array): string {
  const zip = bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 3 && bytes[3] === 4;
  if (!zip) return new TextDecoder().decode(bytes);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** What `vault.import` is sent, the file's text aside: Auto is no format; no empty prefix. */
export function importInput(
  data: string,
  o: { format: ImportFormat | ''; onDuplicate: OnDuplicate; prefix: string; dryRun: boolean },
): ToolInput<'vault.import'> {
  const prefix = o.prefix.trim();
  return { data, dry_run: o.dryRun, on_duplicate: o.onDuplicate, ...(o.format ? { format: o.format } : {}), ...(prefix ? { prefix } : {}) };
}

/** What a check or an import did, in a line: "Would import 4, skip 1", "Imported 4". */
export function importWords(r: Pick<Imported, 'dry_run' | 'imported' | 'skipped'>): string {
  const n = r.imported.length;
  const skipped = r.skipped.length ? `, skip${r.dry_run ? '' : 'ped'} ${r.skipped.length}` : '';
  return `${r.dry_run ? 'Would import' : 'Imported'} ${n}${skipped}`;
}

/** One skipped item: "Line 4 (My card): why" (`at` is a CSV line or a JSON item's place). */
export function skippedWords(s: { at: number; title?: string | null; why: string }): string {
  return `#${s.at}${s.title ? ` ${s.title}` : ''}: ${s.why}`;
}

/** One imported item: its vault name, and its name in the export when that differs. */
export function importedWords(i: { name: string; kind: string; title?: string | null; replaced: boolean; note?: string | null }): string {
  const title = i.title && i.title !== i.name ? ` (was ${i.title})` : '';
  const replaced = i.replaced ? ', replacing the one in the vault' : '';
  const note = i.note ? `; ${i.note}` : '';
  return `${i.name}${title}: ${kindLabel(i.kind).toLowerCase()}${replaced}${note}`;
}
