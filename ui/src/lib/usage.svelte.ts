// The meter's numbers, shared by the app's nav and Lumen: where the subscription's windows stand
// (`usage.limits`) and what today cost (`usage.summary` from this morning's midnight). Asked
// when a meter first shows, then again 500 ms after the live events that change them (a turn's
// `thread.usage`, `thread.limit`, `thread.fallback`), and once at the next moment they change
// without a turn (a window's reset, a fallback's end, midnight): one timer to that moment, never
// a poll. An agent's budget (what a thread's header measures its session against) is asked once
// per place, again after an agent changes.

import { callOn, callOptional } from './api';
import { hub } from './stream';
import { agentBudget, nextChange, todayRange, USAGE_DEBOUNCE_MS, USAGE_EVENTS } from './usage';
import type { Agent, UsageLimits, UsageSummary } from './types';

export const usage = $state({
  limits: null as UsageLimits | null,
  /** What today cost so far, in dollars; null until known. */
  today: null as number | null,
  /** This vyred has no usage tools (an older one): no meter. */
  missing: false,
  /** When the numbers were last asked (ms): the popover asks its own again when it moves. */
  at: 0,
  /** Bumped when an agent changed: budgets are asked again. */
  agents: 0,
});

let followers = 0;
let off: (() => void) | null = null;
let soon: ReturnType<typeof setTimeout> | undefined;
let wake: ReturnType<typeof setTimeout> | undefined;
let asking: Promise<void> | null = null;
let again = false;
/** What the stream said turns cost since an answer last counted them. vyred's usage module keeps
 * a turn a moment after its event (longer on a busy machine): an answer that does not count it
 * yet is asked for again, a little later each time, a few times. */
let owed = 0;
let retries = 0;
const RETRIES = 4;

function askIn(ms: number): void {
  clearTimeout(soon);
  soon = setTimeout(() => void refreshUsage(), ms);
}

/** Keep `usage` current while a meter shows; the answer stops it (onMount's). */
export function followUsage(): () => void {
  if (followers++ === 0) {
    off = hub.subscribe({ types: USAGE_EVENTS }, (e) => {
      if (e.type === 'thread.usage') owed += Number(e.payload?.cost_usd) || 0;
      retries = 0;
      askIn(USAGE_DEBOUNCE_MS);
    });
    void refreshUsage();
  }
  return () => {
    if (--followers > 0) return;
    off?.();
    off = null;
    clearTimeout(soon);
    clearTimeout(wake);
  };
}

/** Ask both again now (one at a time: a change during a load asks once more after it). */
export function refreshUsage(): Promise<void> {
  if (asking) {
    again = true;
    return asking;
  }
  asking = load().finally(() => {
    asking = null;
    if (again) {
      again = false;
      void refreshUsage();
    }
  });
  return asking;
}

async function load(): Promise<void> {
  const now = Date.now();
  const counted = usage.today;
  const want = owed;
  try {
    const [limits, today] = await Promise.all([
      callOptional<UsageLimits>('usage.limits', {}),
      callOptional<UsageSummary>('usage.summary', { by: 'day', ...todayRange(now) }),
    ]);
    if (!limits || !today) {
      usage.missing = true;
      return;
    }
    usage.limits = limits;
    usage.today = today.total.cost_usd;
    usage.at = now;
    const short = counted !== null && want > 0 && today.total.cost_usd - counted + 1e-9 < want;
    if (short && retries < RETRIES && followers > 0) askIn(1000 * 2 ** retries++);
    else {
      owed = Math.max(0, owed - want);
      retries = 0;
    }
    clearTimeout(wake);
    if (followers > 0) wake = setTimeout(() => void refreshUsage(), Math.max(1000, nextChange(limits, now) - Date.now() + 1000));
  } catch {
    // Out of reach for now: the meter keeps what it said; the next event asks again.
  }
}

/** Each place's agents and their budgets (`''`: this machine; else a box's pairing id). */
const budgets = new Map<string, Promise<Record<string, number | null>>>();
let agentsWired = false;

/** The most one session of `agent` may spend (its `auth.budget_usd`), where it runs; null: none. */
export async function budgetOf(box: string | null, agent: string): Promise<number | null> {
  if (!agentsWired) {
    agentsWired = true;
    hub.subscribe({ types: ['agent.*'] }, () => {
      budgets.clear();
      usage.agents++;
    });
  }
  const key = box ?? '';
  let known = budgets.get(key);
  if (!known) {
    known = callOn<Agent[]>(box, 'agents.list').then((list) => Object.fromEntries(list.map((a) => [a.name, agentBudget(a)])));
    budgets.set(key, known);
    known.catch(() => budgets.delete(key));
  }
  return (await known)[agent] ?? null;
}
