// Where a thread runs: this machine, or a paired box reached through the pairing (issue 20). The
// chat and what it draws (its header, tool rows, asks, file previews) ask and follow a thread
// through one of these, so a box's thread opens in the same view as this machine's: its tools
// are called where it runs (`callOn`: `pairing.call` for a box) and its events, the same events
// with the same shape, come from this machine's one stream or, for a box's, from a stream of
// that thread's own that this machine passes on word by word (`/v1/boxes/<box>/threads/<thread>/events`).

import { callOn, type ToolInput, type ToolName, type ToolOutput } from './api';
import { linkAllows } from './boxes';
import { EventHub, hub, type StreamStatus } from './stream';
import type { VyreEvent } from './types';

export interface ThreadSource {
  readonly thread: string;
  /** null: this machine; else the pairing id of the box the thread runs on. */
  readonly box: string | null;
  /** A tool, called where the thread runs. */
  call<N extends ToolName>(tool: N, input: ToolInput<N>): Promise<ToolOutput<N>>;
  /** The same, its answer typed by hand (`callAs` in lib/api.ts). */
  callAs<T>(tool: ToolName, input: Record<string, unknown>): Promise<T>;
  /** Whether the tool may be called there: any here; on a box, what its link allows. */
  can(tool: ToolName): boolean;
  /** The thread's events (only `types`, when given), as they come. */
  events(f: (e: VyreEvent) => void, types?: string[]): () => void;
  /**
   * Its events start after `since` (the newest event its first page is complete up to; null:
   * from now). This machine's come on the app's stream, which runs already; a box's stream is
   * opened here, and again after a drop from the last event seen (the box replays what was
   * missed). `onstatus`: whether that stream is live, retrying (the box out of reach) or off.
   */
  start(since: number | null, onstatus?: (s: StreamStatus) => void): void;
  /** The view is closed: a box's stream ends. */
  close(): void;
}

/** A thread on this machine. */
export function hereThread(thread: string): ThreadSource {
  return {
    thread,
    box: null,
    call: (tool, input) => callOn(null, tool, input as Record<string, unknown>),
    callAs: (tool, input) => callOn(null, tool, input),
    can: () => true,
    events: (f, types) => hub.subscribe({ thread, types }, f),
    start() {},
    close() {},
  };
}

/** A thread on the paired box `box` (its pairing id). */
export function boxThread(thread: string, box: string): ThreadSource {
  const stream = new EventHub(`/v1/boxes/${encodeURIComponent(box)}/threads/${encodeURIComponent(thread)}/events`, false);
  let started = false;
  // The box's link up again (this machine's follower of it says so): its stream tries at once.
  const offLink = hub.subscribe({ types: ['pairing.link'] }, (e) => {
    if (e.payload?.box === box && e.payload?.state === 'up') stream.retryNow();
  });
  return {
    thread,
    box,
    call: (tool, input) => callOn(box, tool, input as Record<string, unknown>),
    callAs: (tool, input) => callOn(box, tool, input),
    can: (tool) => linkAllows(tool),
    events: (f, types) => stream.subscribe({ thread, types }, f),
    start(since, onstatus) {
      if (onstatus) stream.onStatus = onstatus;
      if (started) return;
      started = true;
      if (since !== null) stream.lastId = since;
      stream.start();
    },
    close() {
      offLink();
      stream.close();
    },
  };
}

export function threadAt(thread: string, box: string | null | undefined): ThreadSource {
  return box ? boxThread(thread, box) : hereThread(thread);
}
