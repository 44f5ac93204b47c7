// The shapes of what vyred answers, as docs/api.md describes them. Only the fields the app reads.

import type { StepName } from './onboarding';
import type { ToolOutput } from './api';
import type { components } from './openapi/generated';

// Tools' outputs: the generated types (openapi/generated.ts, from vyred's published schemas).
type Schema<N extends keyof components['schemas']> = components['schemas'][N];
/** A session in the catalog (`projects.catalog`). */
export type CatalogEntry = Schema<'projects.catalog.Entry'>;
/** A thread as `threads.list` shows it. */
export type ThreadInfo = Schema<'threads.list.Listed'>;
/** A thread with its open asks and queue (`threads.get`). */
export type ThreadDetail = ToolOutput<'threads.get'>;
export type AskInfo = Schema<'threads.get.Ask'>;
/** What answering an ask "always" would write (`ask.raised`'s `rule`). */
export type Always = Schema<'threads.get.Always'>;
export type QueuedInfo = Schema<'threads.get.QueuedInfo'>;
/** A folder to start a session in (`threads.folders`). */
export type Folder = Schema<'threads.folders.Folder'>;
/** An agent (`agents.list`). */
export type Agent = Schema<'agents.list.AgentProfile'>;
/** A project (`projects.list`, `projects.create`). */
export type Project = Schema<'projects.list.ProjectInfo'>;
/** `pairing.code` on a box: what the Mac types, and the box's address when it listens on one. */
export type PairingCode = ToolOutput<'pairing.code'>;
export type Device = Schema<'devices.list.DeviceRecord'>;
/** `pairing.list` on a Mac: a box it is paired with. `name` is what the box calls this machine. */
export type Pairing = Schema<'pairing.list.Paired'>;
/** `network.status`: whether the private network is up (or why not), and each device's link. */
export type NetworkStatus = ToolOutput<'network.status'>;
/** A device on the private network, as `network.status` says. */
export type NetworkPeer = Schema<'network.status.PeerStatus'>;
/** `network.join`: the device, and its configuration (text and QR code), shown once. */
export type Joined = ToolOutput<'network.join'>;
/** `names.status` (and what `names.claim`, `names.renew` answer): this Vyre's name and its
 * certificate; every field null before a claim. */
export type NameStatus = ToolOutput<'names.status'>;
/** What `files.preview` shows of a path, by its kind: a text's lines, an image, a binary, a folder. */
export type Preview = ToolOutput<'files.preview'>;

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

/**
 * `onboarding.state` (and the other onboarding tools' answer), as its schema says, with `steps`
 * narrowed to the steps' names.
 */
export type OnboardingState = Omit<ToolOutput<'onboarding.state'>, 'steps'> & {
  steps: Record<StepName, StepState>;
};

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

/** An image sent with words (`threads.send`): its media type is one the tool takes. */
export type Image = Schema<'threads.send.Image'>;

/** The media types `threads.send` takes for an image, as its schema lists them. */
export const IMAGE_TYPES: readonly Image['media_type'][] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export function isImageType(type: string): type is Image['media_type'] {
  return (IMAGE_TYPES as readonly string[]).includes(type);
}

/** `GET /v1/health`: no credential needed, so the onboarding can read the role too. */
export interface Health {
  version: string;
  role: 'box' | 'local';
  uptime_s: number;
}

/** One turn's changes in its thread's folder, with a diff per file (`threads.changes`). */
export type TurnChanges = Schema<'threads.changes.TurnChanges'>;
/** A file a turn changed: its status, whether a tool call said so, its unified diff. */
export type ChangedFile = Schema<'threads.changes.FileChange'>;

/** `usage.limits`: the subscription's windows as Claude Code last reported them (none for an API
 * key), a fallback to the API key in force, and when an API key's own limit last refused a turn. */
export type UsageLimits = ToolOutput<'usage.limits'>;
/** One of the subscription's windows (`five_hour`, `seven_day`, ...). */
export type UsageWindow = Schema<'usage.limits.Window'>;
/** `usage.summary`: what the sessions cost, added up by day, thread, project or agent. */
export type UsageSummary = ToolOutput<'usage.summary'>;
/** One line of it: a day, thread, project or agent (`key` null: no project or agent). */
export type UsageLine = Schema<'usage.summary.Line'>;
