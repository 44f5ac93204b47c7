// The shapes of what vyred answers, as docs/api.md describes them. Only the fields the app reads.

import type { StepName } from './onboarding';

export interface VyreEvent {
  id: number;
  at: number;
  type: string;
  source: string;
  project: string | null;
  thread: string | null;
  payload: Record<string, any>;
}

export interface Session {
  kind: 'device' | 'onboard' | null;
  device: { id: string; name: string } | null;
  owner: { name: string } | null;
  onboarded: boolean;
  /** Why the credential this browser sent is refused (e.g. `key_missing`: sign in again). */
  problem?: { code: string; message: string } | null;
}

// The steps' names come from their one list, lib/onboarding.ts.
export type { StepName };
export type StepState = 'open' | 'done' | 'skipped';

export interface OnboardingState {
  finished: boolean;
  owner: { name: string } | null;
  assistant: { name: string; thread: string | null } | null;
  names: { owner: string; assistant: string };
  steps: Record<StepName, StepState>;
  claude: {
    found: boolean;
    path: string | null;
    version: string | null;
    problem?: string | null;
    /** vault.status's `claude`: the mode in force, where it came from, and its item's readiness. */
    auth: {
      mode: 'login' | 'setup-token' | 'api-key' | null;
      source: string | null;
      item: ItemReadiness | null;
      fallback?: ItemReadiness | null;
      advice?: string | null;
    } | null;
  };
  history: {
    sessions: number;
    turns: number;
    progress: { scanning: boolean; done: number; total: number } | null;
  } | null;
}

export interface ItemReadiness {
  item: string;
  present: boolean;
  granted_to_sessions: boolean;
}

export interface CatalogEntry {
  thread: string;
  title: string | null;
  first_message: string | null;
  cwd: string | null;
  last_activity: number | null;
  live: boolean;
  source: string;
  projects: string[];
  state: string | null;
  /** The thread it was forked from, when Vyre forked it. */
  forked_from?: string | null;
}

export interface Project {
  name: string;
  home: string;
  threads?: number;
  last_activity?: number | null;
}

export interface ThreadInfo {
  thread: string;
  provider: string;
  purpose: string;
  model: string | null;
  cwd: string;
  project: string | null;
  agent: string | null;
  auth: string;
  mode: string;
  state: string;
  live: boolean;
  turns: number;
  total_cost_usd: number;
  stopped_reason: string | null;
  created_at: number;
  updated_at: number;
  /** A name given to it, else its first message's words (a fork: its parent's); null before one. */
  title?: string | null;
  renamed?: boolean;
  forked_from?: string | null;
  forked_at?: string | null;
}

/** What answering an ask "always" would write (`ask.raised`'s `rule`). */
export interface Always {
  rules: string[];
  file: string | null;
  directories: string[];
  mode: string | null;
  text: string;
}

/** A folder to start a session in (`threads.folders`). */
export interface Folder {
  path: string;
  /** As a person reads it: `~/src/app`. */
  shown: string;
  project: string | null;
  last_used: number | null;
  sessions: number;
}

export interface AskInfo {
  ask: string;
  thread: string;
  turn: string | null;
  kind: string;
  tool: string;
  summary: string;
  status: string;
  decision: string | null;
  /** The tool's input: a command, a file, AskUserQuestion's `questions` (credentials masked). */
  input?: Record<string, any> | null;
  /** What "always" would write; null when it would write nothing. */
  rule?: Always | null;
  /** Why the call deserves a second look (it deletes or discards something). */
  destructive?: string | null;
}

export interface QueuedInfo {
  queued: number;
  uuid: string;
  text: string;
  status: 'queued' | 'held';
  created_at: number;
}

export interface ThreadDetail extends ThreadInfo {
  asks: AskInfo[];
  /** Older vyreds do not say. */
  queued?: QueuedInfo[];
}

export interface Turn {
  key: string;
  uuid: string | null;
  role: string;
  text: string;
  at: number | null;
  live: boolean;
}

export interface Conversation {
  thread: string;
  title: string | null;
  cwd: string | null;
  turns: Turn[];
}

export interface Agent {
  name: string;
  kind: string;
  model: string | null;
  thread: string | null;
  cwd: string | null;
}

export interface Device {
  id: string;
  name: string;
  kind: string;
  created_at: number;
  last_seen_at: number | null;
  revoked_at: number | null;
}

export interface Question {
  question: string;
  header?: string;
  multiSelect?: boolean;
  options: { label: string; description?: string }[];
}

export interface Command {
  name: string;
  description?: string;
  argument_hint?: string;
}

export interface Image {
  media_type: string;
  data: string;
}

/** `GET /v1/health`: no credential needed, so the onboarding can read the role too. */
export interface Health {
  version: string;
  role: 'box' | 'local';
  uptime_s: number;
}

/** `pairing.code` on a box: what the Mac types. */
export interface PairingCode {
  code: string;
  expires_at: number;
  /** The box's HTTP address as the Mac must reach it (through `ssh -L`), when it listens on one. */
  address: string | null;
}

/** `pairing.list` on a Mac: a box it is paired with. `name` is what the box calls this machine. */
export interface Pairing {
  id: string;
  name: string;
  address: string;
  device: string;
  created_at: number;
  status?: 'paired' | 'revoked' | 'unreachable' | string;
}
