// What the sessions cost and where the Claude subscription's windows stand (issue 25), as the
// app's meter, its popover, Lumen and a thread's budget say it: which window the meter shows,
// its percentage and colour, when it resets in the person's own clock, today's range, money.
// Pure: no DOM, no fetch, so node --test covers it (ui/test/usage.test.mjs); the calls and the
// refreshing are lib/usage.svelte.ts's.

import type { UsageLimits, UsageLine, UsageWindow } from './types';

/** How a window or a budget is coloured: as usual, nearing its limit, at it, or not known (a
 * window that reset since it was last reported). */
export type Tone = 'ok' | 'warn' | 'err' | 'muted';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** A window's colour by its status (`allowed`, `allowed_warning`, `rejected`, `reset`). */
export function toneOf(status: string): Tone {
  switch (status) {
    case 'allowed_warning':
      return 'warn';
    case 'rejected':
      return 'err';
    case 'reset':
      return 'muted';
    default:
      return 'ok';
  }
}

/** How much is used, as a person reads it: "82%"; "<1%" for a sliver, never "100%" before the
 * window is really full; "—" when not known. */
export function percent(used: number | null | undefined): string {
  if (used === null || used === undefined || !Number.isFinite(used)) return '—';
  const u = Math.min(1, Math.max(0, used));
  if (u > 0 && u < 0.005) return '<1%';
  if (u < 1 && u >= 0.995) return '99%';
  return `${Math.round(u * 100)}%`;
}

/** A window's name: `five_hour` is "5-hour", `seven_day` "Week", `seven_day_opus` "Week · Opus";
 * one the app does not know yet, its words. */
export function windowName(kind: string): string {
  if (kind === 'five_hour') return '5-hour';
  if (kind === 'seven_day') return 'Week';
  const week = /^seven_day_(.+)$/.exec(kind);
  if (week) return `Week · ${cap(week[1].replace(/_/g, ' '))}`;
  return cap(kind.replace(/_/g, ' '));
}

function cap(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** The weekday, date, month and 24-hour clock of `ms` in `zone` (the browser's when none). */
function local(ms: number, zone?: string): { weekday: string; date: number; month: string; time: string } {
  const key = zone ?? '';
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formats.set(key, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return { weekday: p.weekday, date: Number(p.day), month: p.month.slice(0, 3), time: `${p.hour}:${p.minute}` };
}

/** The clock of `ms` in the person's day: "14:05". */
export function clockWords(ms: number, zone?: string): string {
  return local(ms, zone).time;
}

/** When a window resets, in the person's clock: "14:20" within a day, "Thu 09:00" within the
 * week, "Thu 11 Dec" beyond (the same weekday a week on would read as today's). */
export function resetWords(at: number, now = Date.now(), zone?: string): string {
  const l = local(at, zone);
  const left = at - now;
  if (left < DAY) return l.time;
  if (left < 6 * DAY) return `${l.weekday} ${l.time}`;
  return `${l.weekday} ${l.date} ${l.month}`;
}

/** A window as it stands at `now`: once its reset time has passed, what was used is no longer
 * known (vyred says so too, at its next answer). */
export function current(w: UsageWindow, now = Date.now()): UsageWindow {
  if (w.resets_at !== null && w.resets_at <= now && w.status !== 'reset') return { ...w, status: 'reset', utilization: null };
  return w;
}

const SEVERITY: Record<string, number> = { reset: 0, allowed: 1, allowed_warning: 2, rejected: 3 };

/** The window the meter shows: the five-hour one, unless another stands worse (the week
 * refused, or nearing its limit while the five hours are not): the one that stops sessions
 * first. Without a five-hour window, the worst, else the first. */
export function mainWindow(windows: UsageWindow[], now = Date.now()): UsageWindow | null {
  const ws = windows.map((w) => current(w, now));
  if (!ws.length) return null;
  const sev = (w: UsageWindow) => SEVERITY[w.status] ?? 1;
  const five = ws.find((w) => w.kind === 'five_hour') ?? ws[0];
  return ws.reduce((best, w) => (sev(w) > sev(best) ? w : best), five);
}

/** Dollars as a person reads them: "$0.42", "$12.30", "$1,234" when large; under a cent to four
 * places as Claude Code says it ("$0.0064"), so a turn's cost still shows. */
export function money(usd: number | null | undefined): string {
  const v = usd && Number.isFinite(usd) ? Math.max(0, usd) : 0;
  if (v > 0 && v < 0.00005) return '<$0.0001';
  if (v > 0 && v < 0.00995) return `$${Number(v.toFixed(4))}`;
  if (v >= 1000) return `$${Math.round(v).toLocaleString('en-US')}`;
  return `$${v.toFixed(2)}`;
}

/** What a sum of money leaves out: turns their provider gave no price for (an ACP agent's, a
 * Codex model's with no `sessions.prices` entry), said beside the sum so it never reads as
 * everything; null when there were none. */
export function unpricedWords(turns: number | null | undefined): string | null {
  const n = turns && Number.isFinite(turns) ? Math.max(0, Math.floor(turns)) : 0;
  if (n === 0) return null;
  return `and ${n} turn${n === 1 ? '' : 's'} with no price (a model with no price set)`;
}

/** Today so far, in the person's clock: from this morning's midnight to `now` (what
 * `usage.summary` takes as `from` and `to`). */
export function todayRange(now = Date.now()): { from: number; to: number } {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return { from: d.getTime(), to: now };
}

/** When what the meter says changes without a turn: the next window's reset, a fallback's end,
 * or the next midnight (today's cost starts again). */
export function nextChange(limits: UsageLimits | null, now = Date.now()): number {
  const midnight = new Date(now);
  midnight.setHours(24, 0, 0, 0);
  const times = [midnight.getTime()];
  for (const w of limits?.windows ?? []) if (w.resets_at !== null && w.resets_at > now) times.push(w.resets_at);
  if (limits?.fallback && limits.fallback.until > now) times.push(limits.fallback.until);
  return Math.min(...times);
}

/** One window, as the meter and the popover draw it. */
export interface WindowView {
  kind: string;
  name: string;
  /** 0..1, for the bar (0 when not known). */
  ratio: number;
  percent: string;
  tone: Tone;
  /** "resets 14:20", or null when the CLI did not say. */
  resets: string | null;
  /** What the window's title says in full. */
  title: string;
}

export function windowView(w: UsageWindow, now = Date.now(), zone?: string): WindowView {
  const c = current(w, now);
  const name = windowName(c.kind);
  const resets = c.resets_at !== null && c.resets_at > now ? `resets ${resetWords(c.resets_at, now, zone)}` : null;
  const pct = c.status === 'reset' ? 'reset' : percent(c.utilization);
  const state = c.status === 'rejected' ? 'limit reached' : c.status === 'reset' ? 'reset since last reported' : `${pct} used`;
  return {
    kind: c.kind,
    name,
    ratio: c.utilization === null ? 0 : Math.min(1, Math.max(0, c.utilization)),
    percent: pct,
    tone: toneOf(c.status),
    resets,
    title: `The ${name.toLowerCase()} window: ${state}${resets ? `, ${resets}` : ''}`,
  };
}

/** What the meter shows: the main window (and the others beside it), or, with no windows (an API
 * key), what today cost. */
export type Face =
  | { kind: 'window'; main: WindowView; others: WindowView[]; tone: Tone }
  | { kind: 'cost'; cost: string; words: string; tone: Tone };

export function faceOf(limits: UsageLimits | null, today: number | null, now = Date.now(), zone?: string): Face {
  const main = mainWindow(limits?.windows ?? [], now);
  if (main && limits) {
    const others = limits.windows.filter((w) => w.kind !== main.kind).map((w) => windowView(w, now, zone));
    const view = windowView(main, now, zone);
    return { kind: 'window', main: view, others, tone: view.tone };
  }
  const cost = money(today ?? 0);
  // An API key's own limit refused a turn lately: the cost says so in its colour.
  const limited = limits?.api_limited_at != null && now - limits.api_limited_at < HOUR;
  return { kind: 'cost', cost, words: `${cost} today`, tone: limited ? 'warn' : 'ok' };
}

/** "On the API key until 16:00 — the subscription's limit was reached". */
export function fallbackWords(until: number, now = Date.now(), zone?: string): string {
  return `On the API key until ${resetWords(until, now, zone)} — the subscription's limit was reached`;
}

/** A session's spend against its agent's budget: "$1.20 of $5.00", how full, and its colour
 * (warning past 80%, red once spent). */
export function budgetView(spent: number, budget: number): { words: string; ratio: number; tone: Tone; title: string } {
  const ratio = budget > 0 ? Math.min(1, Math.max(0, spent / budget)) : 1;
  const tone: Tone = spent >= budget ? 'err' : ratio > 0.8 ? 'warn' : 'ok';
  const words = `${money(spent)} of ${money(budget)}`;
  return { words, ratio, tone, title: `This session spent ${money(spent)} of its agent's ${money(budget)} budget${tone === 'err' ? ': the budget is spent' : ''}` };
}

/** The most one session of an agent may spend (`agents.list`'s `auth.budget_usd`); null: no
 * budget. (The schema's `auth` is a union of its allowed shapes; the field is on the whole one.) */
export function agentBudget(agent: { auth?: unknown }): number | null {
  const b = (agent.auth as { budget_usd?: unknown } | null | undefined)?.budget_usd;
  return typeof b === 'number' && Number.isFinite(b) && b > 0 ? b : null;
}

/** The costliest lines, those that cost anything, at most `n`. */
export function topLines(lines: UsageLine[], n = 5): UsageLine[] {
  return lines
    .filter((l) => l.cost_usd > 0)
    .sort((a, b) => b.cost_usd - a.cost_usd)
    .slice(0, n);
}

/** Each agent's spend (`usage.summary` by agent), by name. */
export function spendByKey(lines: UsageLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) if (l.key !== null) out[l.key] = (out[l.key] ?? 0) + l.cost_usd;
  return out;
}

/** The live events after which the meter asks again. */
export const USAGE_EVENTS = ['thread.usage', 'thread.limit', 'thread.fallback'];
/** How long the meter waits after such an event before it asks (a turn brings several). */
export const USAGE_DEBOUNCE_MS = 500;
