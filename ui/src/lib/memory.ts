// What came from memory (issue 22, "Gold"): the `harness.remembered` events a session's hooks
// left in its thread, read into cards, placed in the timeline by time, and the words of Claude's
// answers that quote them. Pure: no DOM, no fetch, so node --test covers it (ui/test/memory.test.mjs).

/** A fact the brief gave (`harness.remembered`'s `facts`). */
export interface MemoryFact {
  fact: number;
  kind: string;
  subject: string;
  /** `is`, `means` or `names` for a term; anything else for a thing named (a URL, a path…). */
  relation: string;
  object: string;
  pinned: boolean;
}

/** A turn recall found for the prompt (`harness.remembered`'s `quotes`). */
export interface MemoryQuote {
  thread: string;
  turn: string;
  role: string;
  title: string | null;
  /** Its words, the matched ones in `[` `]`. */
  snippet: string;
  at: number | null;
}

/** One `harness.remembered` event: what one hook gave the session. */
export interface MemoryCard {
  /** The event's id: one card per event, whether it came in the first load or live. */
  id: number;
  at: number;
  hook: 'SessionStart' | 'UserPromptSubmit';
  facts: MemoryFact[];
  quotes: MemoryQuote[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The card an event makes, or null (not one, or it gave nothing). Read field by field: the
 * payload is data, whatever it holds. */
export function cardOf(e: { id: number; at: number; type: string; payload?: any }): MemoryCard | null {
  if (e.type !== 'harness.remembered' || !e.payload || typeof e.payload !== 'object') return null;
  const p = e.payload;
  const hook = p.hook === 'SessionStart' ? 'SessionStart' : p.hook === 'UserPromptSubmit' ? 'UserPromptSubmit' : null;
  if (!hook) return null;
  const facts: MemoryFact[] = (Array.isArray(p.facts) ? p.facts : [])
    .filter((f: any) => f && typeof f.fact === 'number' && str(f.subject))
    .map((f: any) => ({ fact: f.fact, kind: str(f.kind), subject: str(f.subject), relation: str(f.relation), object: str(f.object), pinned: f.pinned === true }));
  const quotes: MemoryQuote[] = (Array.isArray(p.quotes) ? p.quotes : [])
    .filter((q: any) => q && str(q.thread) && str(q.snippet))
    .map((q: any) => ({ thread: str(q.thread), turn: str(q.turn), role: str(q.role), title: str(q.title) || null, snippet: str(q.snippet), at: typeof q.at === 'number' ? q.at : null }));
  if (!facts.length && !quotes.length) return null;
  return { id: e.id, at: e.at, hook, facts, quotes };
}

/** A fact as a line a person reads: "Krill is our inventory robot". */
export function factLine(f: Pick<MemoryFact, 'kind' | 'subject' | 'relation' | 'object'>): string {
  if (f.relation === 'names' && f.object) return `"${f.subject}" is what you call ${f.object}`;
  if ((f.relation === 'is' || f.relation === 'means') && f.object) return `${f.subject} ${f.relation} ${f.object}`;
  return f.kind && f.kind !== 'term' ? `${f.subject} (${f.kind})` : f.subject;
}

/** A snippet's pieces: the words recall matched (`[word]`) marked, the rest plain. A bracket
 * that closes nothing is kept as the character it is. */
export function snippetParts(snippet: string): { text: string; hit: boolean }[] {
  const out: { text: string; hit: boolean }[] = [];
  const push = (text: string, hit: boolean) => {
    if (!text) return;
    const last = out[out.length - 1];
    if (last && last.hit === hit) last.text += text;
    else out.push({ text, hit });
  };
  const re = /\[([^[\]]+)\]/g;
  let from = 0;
  for (let m = re.exec(snippet); m; m = re.exec(snippet)) {
    push(snippet.slice(from, m.index), false);
    push(m[1], true);
    from = m.index + m[0].length;
  }
  push(snippet.slice(from), false);
  return out;
}

/** A word (or phrase) from memory that an answer may quote, and the fact it comes from. */
export interface MemoryWord {
  word: string;
  fact: number;
}

/** The shortest word worth marking: "is", "it" and "a" are not quotes. */
export const MIN_WORD = 3;

/** The words the cards' facts gave: each fact's subject and object, once each (the first fact
 * that gave it), longest first so a phrase wins over a word inside it. */
export function memoryWords(cards: MemoryCard[]): MemoryWord[] {
  const seen = new Map<string, MemoryWord>();
  for (const c of cards)
    for (const f of c.facts)
      for (const w of [f.subject, f.object]) {
        const word = w.trim().replace(/\s+/g, ' ');
        const k = word.toLowerCase();
        if (word.length >= MIN_WORD && !seen.has(k)) seen.set(k, { word, fact: f.fact });
      }
  return [...seen.values()].sort((a, b) => b.word.length - a.word.length);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const patterns = new WeakMap<MemoryWord[], RegExp>();

/** One pattern for a list of words: whole words (no letter, digit or _ on either side), any
 * case, any run of spaces where a phrase has one. Kept per list (a list is made once per change). */
function patternOf(words: MemoryWord[]): RegExp {
  let re = patterns.get(words);
  if (!re) {
    const alts = words.map((w) => w.word.split(' ').map(escape).join('\\s+'));
    re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alts.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
    patterns.set(words, re);
  }
  return re;
}

/** `text` cut where it quotes memory: the quoting pieces carry their fact. Null when nothing
 * does (the text stays one piece). */
export function quotedWords(text: string, words: MemoryWord[]): { text: string; fact: number | null }[] | null {
  if (!words.length || !text) return null;
  const re = patternOf(words);
  re.lastIndex = 0;
  const byWord = new Map(words.map((w) => [w.word.toLowerCase(), w.fact]));
  const out: { text: string; fact: number | null }[] = [];
  let from = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const fact = byWord.get(m[0].replace(/\s+/g, ' ').toLowerCase());
    if (fact === undefined) continue;
    if (m.index > from) out.push({ text: text.slice(from, m.index), fact: null });
    out.push({ text: m[0], fact });
    from = m.index + m[0].length;
  }
  if (!out.length) return null;
  if (from < text.length) out.push({ text: text.slice(from), fact: null });
  return out;
}

/** What placing needs of a timeline item. */
export interface Placed {
  key: string;
  kind: string;
  /** Missing for a message sent here and not confirmed yet: it is the newest. */
  at?: number;
}

/**
 * Where each card goes among `items` (oldest first): the cards to draw before an item, by its
 * key, and those after the last. By time, with two rules for what the clocks do not say:
 * - SessionStart goes before the message that started the session (vyred stamps a message when
 *   it is sent, and the session starts, with its hook, only after);
 * - UserPromptSubmit goes right after the person's message it came with (the hook runs between
 *   the message and the answer, but a message read from the transcript is stamped when Claude
 *   Code wrote it, which may be after the hook).
 * `older`: the timeline has older pages not loaded; a card from before what is loaded is left out
 * (it belongs up there).
 */
export function placeCards<T extends Placed>(items: T[], cards: MemoryCard[], older = false): { before: Map<string, MemoryCard[]>; end: MemoryCard[] } {
  const before = new Map<string, MemoryCard[]>();
  const end: MemoryCard[] = [];
  const at = (i: Placed) => i.at ?? Infinity;
  const sorted = [...cards].sort((a, b) => a.at - b.at || a.id - b.id);
  for (const c of sorted) {
    let i = items.findIndex((it) => at(it) > c.at);
    if (i < 0) i = items.length;
    if (older && i === 0) continue;
    if (c.hook === 'SessionStart') {
      while (i > 0 && items[i - 1].kind === 'user') i--;
    } else if (!(i > 0 && items[i - 1].kind === 'user')) {
      // Its message is not before it: it is the one stamped after the hook.
      if (i < items.length && items[i].kind === 'user' && items[i].at !== undefined) i++;
    }
    if (i >= items.length) end.push(c);
    else before.set(items[i].key, [...(before.get(items[i].key) ?? []), c]);
  }
  return { before, end };
}
