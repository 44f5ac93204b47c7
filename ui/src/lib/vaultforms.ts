// What the Vault's Add forms for a card and an env set check and send (lib/vault.ts has the
// rest of the screen's words). Pure, for node --test (ui/test/vaultforms.test.mjs). The rules are
// vyred's own (`vault.put`: daemon/src/kernel/tools/shape.rs and modules/vault/tools.rs), checked
// here first so the person hears of a mistake before anything is sent; vyred checks again. A
// problem names the field and the rule, never the value typed.

import type { ToolInput } from './api';

// ---- A card.

/** The card form's fields, as typed. */
export interface CardFields {
  number: string;
  holder: string;
  expiry: string;
  code: string;
  notes: string;
}

export const NO_CARD: CardFields = { number: '', holder: '', expiry: '', code: '', notes: '' };

const CARD_NUMBER = /^[0-9][0-9 -]{10,30}[0-9]$/;
const CARD_EXPIRY = /^(0[1-9]|1[0-2])\/([0-9]{2}|[0-9]{4})$/;
const CARD_CODE = /^[0-9]{3,4}$/;

/** An expiry as the person may type it ("8/29", "08 / 2029") in vyred's form: "08/29",
 * "08/2029". Anything else is left as typed (and refused by `cardProblems`). */
export function normExpiry(s: string): string {
  const t = s.replace(/\s+/g, '');
  const m = /^(\d{1,2})\/(\d{2}|\d{4})$/.exec(t);
  return m ? `${m[1].padStart(2, '0')}/${m[2]}` : t;
}

/** What is wrong with a card's fields, one sentence each (empty: nothing). */
export function cardProblems(c: CardFields): string[] {
  const out: string[] = [];
  const number = c.number.trim();
  const digits = number.replace(/\D/g, '').length;
  if (!number) out.push('Number: a card needs its number.');
  else if (!CARD_NUMBER.test(number) || digits < 12 || digits > 19) out.push('Number: must be the card’s 12 to 19 digits (spaces or dashes between are fine).');
  const expiry = normExpiry(c.expiry);
  if (expiry && !CARD_EXPIRY.test(expiry)) out.push('Expiry: must be the month and year as MM/YY or MM/YYYY, like 08/29.');
  const code = c.code.trim();
  if (code && !CARD_CODE.test(code)) out.push('Security code: must be the 3 or 4 digits on the card.');
  return out;
}

/** What `vault.put` is sent for a card: the optional fields only when given. */
export function cardInput(name: string, c: CardFields): ToolInput<'vault.put'> {
  const expiry = normExpiry(c.expiry);
  return {
    name,
    kind: 'card',
    number: c.number.trim(),
    ...(c.holder.trim() ? { holder: c.holder.trim() } : {}),
    ...(expiry ? { expiry } : {}),
    ...(c.code.trim() ? { code: c.code.trim() } : {}),
    ...(c.notes ? { notes: c.notes } : {}),
  };
}

// ---- An env set.

/** One variable of the form: its name and value, as typed. */
export interface EnvRow {
  name: string;
  value: string;
}

/** The most variables an env set holds. */
export const MAX_VARS = 100;

/** Whether `name` may be a variable's: a shell variable's name (vyred's `valid_var_name`). */
export function validVarName(name: string): boolean {
  return name.length <= 128 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

const blank = (r: EnvRow): boolean => !r.name.trim() && !r.value;

/** What is wrong with one row, given every row (a name twice): words, or null. A blank row is
 * fine (it is left out). */
export function rowProblem(rows: EnvRow[], i: number): string | null {
  const r = rows[i];
  if (blank(r)) return null;
  const name = r.name.trim();
  if (!name) return 'A value needs a name.';
  if (!validVarName(name)) return `“${name.slice(0, 40)}” is not a variable’s name: letters, digits and _, not starting with a digit.`;
  if (rows.findIndex((o) => o.name.trim() === name) !== i) return `${name} is here twice.`;
  return null;
}

/** What is wrong with the whole set, one sentence each: its rows' problems, then its size. */
export function envProblems(rows: EnvRow[]): string[] {
  const out = rows.map((_, i) => rowProblem(rows, i)).filter((p): p is string => !!p);
  const n = rows.filter((r) => !blank(r)).length;
  if (!n) out.push('Add a variable: an env set holds 1 to 100.');
  if (n > MAX_VARS) out.push(`An env set holds at most ${MAX_VARS} variables; this one has ${n}.`);
  return out;
}

/** What `vault.put` is sent for an env set: its rows by name, blank ones left out. */
export function envInput(name: string, rows: EnvRow[]): ToolInput<'vault.put'> {
  const vars: Record<string, string> = {};
  for (const r of rows) if (!blank(r)) vars[r.name.trim()] = r.value;
  // The generated type has the env shape's `vars` as an empty record; any names are taken.
  return { name, kind: 'env', vars } as ToolInput<'vault.put'>;
}

/** A line of a pasted .env file that was left out, and why (never its value). */
export interface Skipped {
  line: number;
  why: string;
}

/** The value of a `NAME=value` line: quotes around it taken off (in double quotes `\n`, `\"`
 * and `\\` are read as a newline, a quote and a backslash; single quotes keep it as it is);
 * unquoted, a ` #` comment after it left out. */
function unquote(raw: string): string | null {
  const v = raw.trim();
  const q = v[0];
  if (q === '"' || q === "'") {
    // The closing quote: in double quotes, one not escaped.
    let close = v.indexOf(q, 1);
    if (q === '"') {
      close = -1;
      for (let i = 1; i < v.length; i++) {
        if (v[i] === '\\') i++;
        else if (v[i] === '"') {
          close = i;
          break;
        }
      }
    }
    if (close < 0) return null;
    const rest = v.slice(close + 1).trim();
    if (rest && !rest.startsWith('#')) return null;
    const inner = v.slice(1, close);
    return q === "'" ? inner : inner.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
  }
  return v.replace(/\s+#.*$/, '');
}

/** A .env file's text as rows: `NAME=value` lines, an `export ` before the name and quotes
 * around the value allowed; blank lines and `#` comments skipped quietly; anything else
 * skipped with its line number and why. Names are kept as written (`rowProblem` says what is
 * wrong with one). */
export function parseEnv(text: string): { rows: EnvRow[]; skipped: Skipped[] } {
  const rows: EnvRow[] = [];
  const skipped: Skipped[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const body = line.replace(/^export\s+/, '');
    const eq = body.indexOf('=');
    if (eq <= 0) {
      skipped.push({ line: i + 1, why: eq === 0 ? 'no name before the =' : 'not NAME=value' });
      return;
    }
    const value = unquote(body.slice(eq + 1));
    if (value === null) {
      skipped.push({ line: i + 1, why: 'its quotes do not close' });
      return;
    }
    rows.push({ name: body.slice(0, eq).trim(), value });
  });
  return { rows, skipped };
}

/** `pasted` put into `rows`: a name already there takes the new value in its place, the others
 * come after; blank rows go. */
export function mergeRows(rows: EnvRow[], pasted: EnvRow[]): EnvRow[] {
  const out = rows.filter((r) => !blank(r)).map((r) => ({ ...r }));
  for (const p of pasted) {
    const at = out.findIndex((r) => r.name.trim() === p.name);
    if (at >= 0) out[at] = { ...p };
    else out.push({ ...p });
  }
  return out;
}

/** What a paste did, in words: "Filled in 3 variables; left out line 4 (not NAME=value)". */
export function pastedWords(n: number, skipped: Skipped[]): string {
  const filled = n ? `Filled in ${n} variable${n === 1 ? '' : 's'}` : 'Found no NAME=value line';
  if (!skipped.length) return `${filled}.`;
  const lines = skipped
    .slice(0, 5)
    .map((s) => `line ${s.line} (${s.why})`)
    .join(', ');
  const more = skipped.length > 5 ? ` and ${skipped.length - 5} more` : '';
  return `${filled}; left out ${lines}${more}.`;
}
