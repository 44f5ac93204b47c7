// The chat's state, and the one function that turns a thread's events into it. Pure: no DOM, no
// fetch, so node --test covers it (ui/test/chat.test.mjs). The view keeps a ChatState in a
// Svelte $state and calls apply() for each event of its thread; mutations here are what it draws.

import type { Always, AskInfo, Conversation, ThreadDetail, VyreEvent, Question } from './types';

export interface UserItem {
  kind: 'user';
  key: string;
  uuid: string | null;
  text: string;
  /** sending: not confirmed by an event yet; steer: joined the running turn (taken: Claude took it in). */
  status?: 'sending' | 'steer' | 'taken' | 'failed';
  images?: number;
}
export interface TextItem {
  kind: 'assistant' | 'reasoning';
  key: string;
  message: string;
  text: string;
  done: boolean;
}
export interface ToolItem {
  kind: 'tool';
  key: string;
  call: string;
  name: string;
  summary: string;
  status: string;
}
export interface AskItem {
  kind: 'ask';
  key: string;
  ask: string;
  askKind: string;
  tool: string;
  summary: string;
  call: string | null;
  status: 'open' | string;
  questions: Question[];
  /** The tool's input (credential-looking strings masked by vyred). */
  input: Record<string, any> | null;
  /** What "always" would write, and why the call deserves a second look (`ask.raised`). */
  rule: Always | null;
  destructive: string | null;
  /** For a deny: what Claude was told; for a question: the answers (`ask.answered`). */
  message: string | null;
  answers: Record<string, string> | null;
}
export interface NoticeItem {
  kind: 'notice';
  key: string;
  level: 'info' | 'warn' | 'error';
  text: string;
}
export type Item = UserItem | TextItem | ToolItem | AskItem | NoticeItem;

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
  /** Keys the transcript's history holds (prompt uuids, reply message ids): events for them are old. */
  known: Record<string, true>;
  queued: Queued[];
  state: string;
  running: boolean;
  mode: string;
  provider: string;
  model: string | null;
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
    known: {},
    queued: [],
    state: 'unknown',
    running: false,
    mode: 'default',
    provider: 'claude',
    model: null,
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

/** The transcript's turns, as recall.thread gives them. */
export function loadHistory(s: ChatState, c: Conversation): void {
  s.title = c.title;
  if (c.cwd) s.cwd = c.cwd;
  for (const t of c.turns) {
    // Live turns are rebuilt from the thread's events, which also carry what streams next.
    if (t.live || s.known[t.key]) continue;
    s.known[t.key] = true;
    if (t.uuid) s.known[t.uuid] = true;
    if (t.role === 'user') {
      s.items.push({ kind: 'user', key: t.key, uuid: t.uuid ?? t.key, text: t.text });
    } else {
      s.items.push({ kind: 'assistant', key: t.key, message: t.key, text: t.text, done: true });
    }
  }
}

/** What threads.get says: the chip, the mode and the state (its open asks go in with addAsk, after
 * the events, so they sit at the end of the list). */
export function applyDetail(s: ChatState, d: ThreadDetail): void {
  s.provider = d.provider || s.provider;
  s.model = d.model;
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

export function addAsk(s: ChatState, a: Partial<AskInfo> & { ask: string; call?: string | null }): void {
  const key = 'ask:' + a.ask;
  if (find(s, key)) return;
  s.items.push({
    kind: 'ask',
    key,
    ask: a.ask,
    askKind: a.kind ?? 'permission',
    tool: a.tool ?? '',
    summary: a.summary ?? '',
    call: a.call ?? null,
    status: 'open',
    questions: questionsOf(a),
    input: inputOf(a.input),
    rule: a.rule ?? null,
    destructive: a.destructive ?? null,
    message: null,
    answers: null,
  });
}

function inputOf(v: unknown): Record<string, any> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : null;
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
  } else if (tool !== 'AskUserQuestion' && input && Object.keys(input).length) {
    code = str(input.command) ?? str(input.file_path) ?? str(input.pattern) ?? str(input.query) ?? str(input.url) ?? JSON.stringify(input);
  }
  const note = summary && summary !== tool && summary !== code ? summary : null;
  return { name, server, code, note };
}

export function openAsks(s: ChatState): AskItem[] {
  return s.items.filter((i): i is AskItem => i.kind === 'ask' && i.status === 'open');
}

/** A message this surface just sent, shown before its event comes back. */
export function addSending(s: ChatState, uuid: string, text: string, images = 0): void {
  if (find(s, uuid)) return;
  s.items.push({ kind: 'user', key: uuid, uuid, text, status: 'sending', images: images || undefined });
}

export function markFailed(s: ChatState, uuid: string): void {
  const it = find(s, uuid);
  if (it && it.kind === 'user') it.status = 'failed';
}

function notice(s: ChatState, e: VyreEvent, level: NoticeItem['level'], text: string): void {
  s.items.push({ kind: 'notice', key: 'n:' + e.id, level, text });
}

function userSeen(s: ChatState, uuid: string, text: string, status?: UserItem['status']): void {
  if (s.known[uuid]) return;
  const it = find(s, uuid);
  if (it && it.kind === 'user') {
    it.status = status;
    if (text) it.text = text;
    return;
  }
  s.items.push({ kind: 'user', key: uuid, uuid, text, status });
}

/** Apply one event of this thread. Events at or below the last id seen are ignored. */
export function apply(s: ChatState, e: VyreEvent): void {
  if (e.id <= s.lastId) return;
  s.lastId = e.id;
  const p = e.payload ?? {};
  switch (e.type) {
    case 'thread.started':
      if (p.provider) s.provider = p.provider;
      s.model = p.model ?? null;
      if (p.auth) s.auth = p.auth;
      if (p.cwd) s.cwd = p.cwd;
      break;
    case 'thread.state':
      s.state = p.state;
      s.running = p.state === 'running' || p.state === 'waiting';
      if (p.state === 'failed' && p.error) notice(s, e, 'error', String(p.error));
      break;
    case 'thread.turn':
      s.running = true;
      if (p.uuid) userSeen(s, p.uuid, p.text ?? '');
      break;
    case 'thread.sent':
      if (!p.uuid) break;
      userSeen(s, p.uuid, p.text ?? '', p.via === 'steer' ? 'steer' : undefined);
      break;
    case 'thread.steered': {
      const it = p.uuid ? find(s, p.uuid) : undefined;
      if (it && it.kind === 'user') it.status = 'taken';
      break;
    }
    case 'thread.text': {
      const message = String(p.message ?? '');
      if (s.known[message]) break;
      const kind = p.kind === 'reasoning' ? 'reasoning' : 'assistant';
      const key = `${kind === 'reasoning' ? 'r' : 't'}:${message}:${p.block ?? 0}`;
      let it = find(s, key) as TextItem | undefined;
      if (!it) {
        if (p.delta == null && p.done) break;
        s.items.push({ kind, key, message, text: '', done: false });
        it = s.items[s.items.length - 1] as TextItem;
      }
      if (typeof p.delta === 'string') it.text += p.delta;
      if (p.done) it.done = true;
      break;
    }
    case 'thread.tool': {
      const call = String(p.call ?? p.id ?? '');
      const key = 'tool:' + call;
      const it = find(s, key) as ToolItem | undefined;
      if (it) {
        if (p.status) it.status = p.status;
        if (p.summary) it.summary = p.summary;
        if (p.name) it.name = p.name;
      } else if (p.phase === 'started' || p.status === 'running') {
        s.items.push({ kind: 'tool', key, call, name: p.name ?? 'tool', summary: p.summary ?? '', status: p.status ?? 'running' });
      }
      break;
    }
    case 'thread.denied':
      notice(s, e, 'warn', `${p.tool ?? 'A tool'} was refused: ${p.reason ?? ''}`.trim());
      break;
    case 'ask.raised':
      addAsk(s, p as any);
      break;
    case 'ask.answered': {
      const it = find(s, 'ask:' + p.ask);
      if (it && it.kind === 'ask') {
        it.status = p.decision ?? 'answered';
        if (typeof p.message === 'string') it.message = p.message;
        if (p.answers && typeof p.answers === 'object') it.answers = p.answers;
      }
      break;
    }
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
    case 'mode.changed':
      if (p.mode) s.mode = p.mode;
      break;
    case 'thread.usage':
      if (typeof p.total_cost_usd === 'number') s.cost = p.total_cost_usd;
      break;
    case 'thread.finished':
      s.running = false;
      for (const it of s.items) {
        if ((it.kind === 'assistant' || it.kind === 'reasoning') && !it.done) it.done = true;
        if (it.kind === 'user' && it.status === 'sending') it.status = undefined;
      }
      if (p.canceled) notice(s, e, 'info', 'Interrupted.');
      else if (p.error) notice(s, e, 'error', String(p.error));
      if (typeof p.total_cost_usd === 'number') s.cost = p.total_cost_usd;
      break;
    case 'thread.stopped':
      s.running = false;
      s.state = 'stopped';
      if (p.reason && !['idle', 'stopped', 'restart', 'rewind', 'agent updated'].includes(p.reason)) {
        notice(s, e, 'info', `The session stopped (${p.reason}).`);
      }
      break;
    case 'thread.rewound': {
      const at = s.items.findIndex((i) => i.kind === 'user' && i.uuid === p.uuid);
      if (at >= 0) s.items.splice(at + 1);
      notice(s, e, 'info', 'Rewound to here: what came after was dropped.');
      break;
    }
    case 'thread.notice':
      notice(s, e, p.level === 'error' ? 'error' : p.level === 'warn' || p.level === 'warning' ? 'warn' : 'info', String(p.text ?? ''));
      break;
    default:
      break;
  }
}

/** The chip's words: "Claude · <model> · <auth>". */
export function chip(s: Pick<ChatState, 'provider' | 'model' | 'auth'>): string {
  const provider = s.provider ? s.provider[0].toUpperCase() + s.provider.slice(1) : 'Claude';
  const parts = [provider, s.model || 'default model'];
  if (s.auth) parts.push(s.auth);
  return parts.join(' · ');
}
