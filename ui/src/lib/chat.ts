// The chat's state, and the one function that turns a thread's events into it. Pure: no DOM, no
// fetch, so node --test covers it (ui/test/chat.test.mjs). The view keeps a ChatState in a
// Svelte $state and calls apply() for each event of its thread; mutations here are what it draws.

import type { ToolOutput } from './api';
import { providerLabel } from './providers.js';
import type { Always, ThreadDetail, VyreEvent, Question } from './types';

// The items are the thread's timeline as vyred builds it (threads.timeline, docs/api.md "The
// timeline"): the same in every browser and after a reload. Only `status` on a user item is this
// surface's own (a message sent here, before vyred has it).

/** A timeline item as vyred sends it (`threads.timeline`, `thread.item`): generated from vyred's
 *  OpenAPI document (`npm run gen:api`), so a field vyred adds, drops or retypes fails the build. */
type Wire = ToolOutput<'threads.timeline'>['items'][number];
type Of<K extends Wire['kind']> = Extract<Wire, { kind: K }>;
/** Tool inputs and answers are JSON objects whatever their tool: the schema says `unknown`. */
type Json = Record<string, any>;

export type UserItem = Omit<Of<'user'>, 'at' | 'images'> & {
  /** Not yet stamped by vyred for a message sent here. */
  at?: number;
  images?: number;
  /** This surface's own: sending (not confirmed by vyred yet) or failed (not sent). */
  status?: 'sending' | 'failed';
};
export type TextItem = Of<'assistant'> | Of<'reasoning'>;
export type ToolItem = Omit<Of<'tool'>, 'input'> & { input?: Json | null };
export type AskItem = Omit<Of<'ask'>, 'input' | 'answers' | 'rule'> & {
  /** The tool's input (credential-looking strings masked by vyred). */
  input: Json | null;
  answers?: Json | null;
  /** What answering "always" would write, said before it is (`ask.raised`'s `rule`). */
  rule?: Always | null;
};
export type NoticeItem = Of<'notice'>;
export type Item = UserItem | TextItem | ToolItem | AskItem | NoticeItem;

/** A page of threads.timeline. */
export interface TimelinePage {
  items: Item[];
  /** The cursor for the older page, or null at the thread's start. */
  before: number | null;
  /** The newest event id the page is complete up to: apply the events after it. */
  last_event: number;
}

export interface Queued {
  queued: number;
  uuid: string;
  text: string;
  /** queued: runs at the turn's end; held: waits for a terminal writing the session to let go. */
  status: 'queued' | 'held';
}

export interface ChatState {
  thread: string;
  items: Item[];
  /** The cursor for the older page (null: the thread's start is loaded). */
  before: number | null;
  queued: Queued[];
  state: string;
  running: boolean;
  mode: string;
  provider: string;
  model: string | null;
  /** How hard the model thinks (one of the provider's efforts); null: its default. */
  effort: string | null;
  auth: string;
  cwd: string | null;
  title: string | null;
  cost: number;
  lastId: number;
}

export function newChat(thread: string): ChatState {
  return {
    thread,
    items: [],
    before: null,
    queued: [],
    state: 'unknown',
    running: false,
    mode: 'default',
    provider: 'claude',
    model: null,
    effort: null,
    auth: '',
    cwd: null,
    title: null,
    cost: 0,
    lastId: 0,
  };
}

function find(s: ChatState, key: string): Item | undefined {
  for (let i = s.items.length - 1; i >= 0; i--) if (s.items[i].key === key) return s.items[i];
  return undefined;
}

/** The newest page of the timeline: what the thread holds up to `last_event`. A message sent here
 * and not in the page yet stays at the end. */
export function loadPage(s: ChatState, page: TimelinePage): void {
  const keys = new Set(page.items.map((i) => i.key));
  const pending = s.items.filter((i) => i.kind === 'user' && i.status && !keys.has(i.key));
  s.items = [...page.items, ...pending];
  s.before = page.before;
  s.lastId = Math.max(s.lastId, page.last_event);
}

/** An older page (threads.timeline with `before`), put above what is shown. */
export function loadOlder(s: ChatState, page: TimelinePage): void {
  const have = new Set(s.items.map((i) => i.key));
  s.items = [...page.items.filter((i) => !have.has(i.key)), ...s.items];
  s.before = page.before;
}

/** What the reader sees: everything but Vyre's own instructions (unless asked for). */
export function visible(items: Item[], internal = false): Item[] {
  return internal ? items : items.filter((i) => !(i.kind === 'user' && i.via === 'internal'));
}

/** The words a Retry sends again: the last message a person (or a terminal) sent. */
export function lastMessage(items: Item[]): string | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it.kind === 'user' && it.via !== 'internal' && it.text.trim()) return it.text;
  }
  return null;
}

/** A thread's title when it has none of its own: its first message, never Vyre's instruction. */
export function firstWords(items: Item[]): string {
  for (const it of items) if (it.kind === 'user' && it.via !== 'internal') return it.text.slice(0, 80);
  return '';
}

/** What threads.get says: the chip, the mode and the state (its open asks go in with addAsk, after
 * the events, so they sit at the end of the list). */
export function applyDetail(s: ChatState, d: ThreadDetail): void {
  s.provider = d.provider || s.provider;
  s.model = d.model ?? null;
  s.effort = d.effort ?? null;
  s.auth = d.auth;
  s.mode = d.mode || 'default';
  s.state = d.state;
  s.running = d.state === 'running' || d.state === 'waiting';
  s.cwd = d.cwd || s.cwd;
  s.cost = d.total_cost_usd || 0;
}

export function questionsOf(p: { questions?: any; input?: any }): Question[] {
  const qs = p.questions ?? p.input?.questions;
  if (!Array.isArray(qs)) return [];
  return qs
    .filter((q: any) => q && typeof q.question === 'string' && Array.isArray(q.options))
    .map((q: any) => ({
      question: q.question,
      header: q.header,
      multiSelect: !!q.multiSelect,
      options: q.options.map((o: any) => (typeof o === 'string' ? { label: o } : { label: String(o.label), description: o.description })),
    }));
}

/** The queue as threads.get has it: what the events replayed said about it gives way. */
export function loadQueued(s: ChatState, d: Pick<ThreadDetail, 'queued'>): void {
  if (!Array.isArray(d.queued)) return;
  s.queued = d.queued.map((q) => ({ queued: q.queued, uuid: q.uuid, text: q.text, status: q.status === 'held' ? 'held' : 'queued' }));
}

const FILE_TOOLS = new Set(['Read', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'NotebookRead']);

/** What an ask card shows of the tool's input: a command, a path, the JSON an MCP tool is given. */
export interface AskView {
  /** The tool as a person reads it (an MCP tool's own name, its server after). */
  name: string;
  server: string | null;
  /** Monospace: the command, the file, the compact JSON; null when there is nothing to show. */
  code: string | null;
  /** The session's own words for it (Bash's description), when they add something. */
  note: string | null;
}

export function askView(tool: string, input: Record<string, any> | null, summary: string): AskView {
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v : null);
  let name = tool;
  let server: string | null = null;
  let code: string | null = null;
  const mcp = tool.match(/^mcp__(.+?)__(.+)$/);
  if (mcp) {
    name = mcp[2];
    server = mcp[1].replace(/^plugin_([^_]+)_\1$/, '$1').replace(/^plugin_/, '');
    code = input && Object.keys(input).length ? JSON.stringify(input) : null;
  } else if (tool === 'Bash') {
    code = str(input?.command);
  } else if (FILE_TOOLS.has(tool)) {
    code = str(input?.file_path) ?? str(input?.notebook_path) ?? str(input?.path);
  } else if (tool === 'WebFetch') {
    code = str(input?.url);
  } else if (tool === 'ExitPlanMode') {
    code = str(input?.plan);
  } else if (!Array.isArray(input?.questions) && input && Object.keys(input).length) {
    // Questions (Claude Code's AskUserQuestion, Codex's request_user_input) show as choices.
    code = str(input.command) ?? str(input.file_path) ?? str(input.pattern) ?? str(input.query) ?? str(input.url) ?? JSON.stringify(input);
  }
  const note = summary && summary !== tool && summary !== code ? summary : null;
  return { name, server, code, note };
}

/** An answered ask's choices, question by question, as the timeline keeps them. */
export function answersOf(a: Pick<AskItem, 'answers'>): [string, string][] {
  const x = a.answers;
  if (!x || typeof x !== 'object' || Array.isArray(x)) return [];
  return Object.entries(x)
    .map(([q, v]): [string, string] => [q, Array.isArray(v) ? v.map(String).join(', ') : typeof v === 'string' ? v : ''])
    .filter(([, v]) => v !== '');
}

export function openAsks(s: ChatState): AskItem[] {
  return s.items.filter((i): i is AskItem => i.kind === 'ask' && i.status === 'open');
}

/** A message this surface just sent, shown before its event comes back. */
export function addSending(s: ChatState, uuid: string, text: string, images = 0): void {
  if (find(s, uuid)) return;
  s.items.push({ kind: 'user', key: uuid, uuid, text, via: 'person', status: 'sending', images: images || undefined });
}

export function markFailed(s: ChatState, uuid: string): void {
  const it = find(s, uuid);
  if (it && it.kind === 'user') it.status = 'failed';
}

/** Apply one event of this thread. Events at or below the last id seen are ignored. The timeline's
 * items change by `thread.item` (the whole item, upserted by key) and `thread.text` (a delta
 * appended to its message's item); the rest is the thread's state. */
export function apply(s: ChatState, e: VyreEvent): void {
  if (e.id <= s.lastId) return;
  s.lastId = e.id;
  const p = e.payload ?? {};
  switch (e.type) {
    case 'thread.item': {
      const item = p.item as Item | undefined;
      if (!item || typeof item.key !== 'string') break;
      const at = s.items.findIndex((i) => i.key === item.key);
      if (at < 0) {
        s.items.push(item);
        break;
      }
      const had = s.items[at];
      // An event carries the start of a very long text: keep the whole one already here.
      if ((item.kind === 'assistant' || item.kind === 'reasoning') && item.truncated && had.kind === item.kind && had.text.startsWith(item.text)) {
        item.text = had.text;
        item.truncated = false;
      }
      s.items[at] = item;
      break;
    }
    case 'thread.text': {
      const it = find(s, `m:${p.message ?? ''}:${p.block ?? 0}`);
      if (it && (it.kind === 'assistant' || it.kind === 'reasoning') && typeof p.delta === 'string') it.text += p.delta;
      break;
    }
    case 'thread.rewound': {
      const at = s.items.findIndex((i) => i.key === p.uuid);
      if (at >= 0) s.items.splice(at + 1);
      break;
    }
    case 'thread.started':
      if (p.provider) s.provider = p.provider;
      s.model = p.model ?? null;
      s.effort = p.effort ?? null;
      if (p.auth) s.auth = p.auth;
      if (p.cwd) s.cwd = p.cwd;
      break;
    case 'thread.state':
      s.state = p.state;
      s.running = p.state === 'running' || p.state === 'waiting';
      break;
    case 'thread.turn':
      s.running = true;
      break;
    case 'thread.queued': {
      const q = s.queued.find((x) => x.queued === p.queued);
      if (q) q.text = p.text ?? q.text;
      // A row held for a terminal says why (the event has no status of its own).
      else s.queued.push({ queued: p.queued, uuid: p.uuid, text: p.text ?? '', status: p.status === 'held' || p.reason ? 'held' : 'queued' });
      break;
    }
    case 'thread.unqueued':
      s.queued = s.queued.filter((x) => x.queued !== p.queued);
      break;
    case 'thread.model':
      if ('model' in p) s.model = p.model ?? null;
      break;
    case 'thread.effort':
      if ('effort' in p) s.effort = p.effort ?? null;
      break;
    case 'mode.changed':
      if (p.mode) s.mode = p.mode;
      break;
    case 'thread.usage':
      if (typeof p.total_cost_usd === 'number') s.cost = p.total_cost_usd;
      break;
    case 'thread.finished':
      s.running = false;
      if (typeof p.total_cost_usd === 'number') s.cost = p.total_cost_usd;
      break;
    case 'thread.stopped':
      s.running = false;
      s.state = 'stopped';
      break;
    default:
      break;
  }
}

/** The chip's words: "Claude · <model> · <effort> effort · <auth>" ("gemini (ACP) · …" for an ACP
 * agent; the effort only when one was chosen). */
export function chip(s: Pick<ChatState, 'provider' | 'model' | 'auth'> & { effort?: string | null }): string {
  const parts = [providerLabel(s.provider), s.model || 'default model'];
  if (s.effort) parts.push(`${s.effort} effort`);
  // `own`: the provider's program signs in its own way (an ACP agent); nothing to say of it.
  if (s.auth && s.auth !== 'own') parts.push(s.auth);
  return parts.join(' · ');
}

/** What a tool row shows: the command (not Bash's description of it), a path, a pattern. */
export interface ToolView {
  name: string;
  what: string;
  /** Read's lines, Grep's and Glob's matches: counted from the output. */
  count: string | null;
  duration: string;
  /** The session's own words for it (Bash's description), shown when the row opens. */
  description: string | null;
  /** The input as a person reads it: the whole command, or the JSON. */
  input: string | null;
  size: string;
}

export function toolView(t: ToolItem): ToolView {
  const input = t.input && typeof t.input === 'object' ? t.input : {};
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v : null);
  const mcp = t.name.match(/^mcp__(.+?)__(.+)$/);
  const name = mcp ? mcp[2] : t.name;
  const what =
    (t.name === 'Bash' ? str(input.command) : null) ??
    str(input.file_path) ??
    str(input.notebook_path) ??
    (str(input.pattern) && str(input.path) ? `${input.pattern} in ${input.path}` : str(input.pattern)) ??
    str(input.url) ??
    str(input.query) ??
    str(input.description) ??
    (Array.isArray(input.questions) ? str(input.questions[0]?.question) : null) ??
    t.summary;
  const lines = t.output ? t.output.split('\n').filter((l) => l.trim()).length : 0;
  let count: string | null = null;
  if (t.status === 'completed' && t.output != null && !t.output_truncated) {
    if (t.name === 'Read') count = `${lines} line${lines === 1 ? '' : 's'}`;
    else if (t.name === 'Glob' || (t.name === 'Grep' && (input.output_mode ?? 'files_with_matches') === 'files_with_matches')) count = `${lines} file${lines === 1 ? '' : 's'}`;
    else if (t.name === 'Grep') count = `${lines} line${lines === 1 ? '' : 's'}`;
  }
  const ms = t.duration_ms ?? 0;
  const duration = ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  let shown: string | null;
  if (t.name === 'Bash') shown = str(input.command);
  else shown = Object.keys(input).length ? JSON.stringify(input, null, 2) : null;
  if (shown === what && t.name !== 'Bash') shown = null;
  const bytes = t.output_bytes ?? 0;
  const size = bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const description = t.name === 'Bash' ? str(input.description) : null;
  return { name, what, count, duration, description, input: t.name === 'Bash' && shown === what && shown.length < 120 ? null : shown, size };
}

