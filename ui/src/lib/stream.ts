// The app's ONE event stream: `GET /v1/events`, read with fetch so that a 401 is seen (the device
// was revoked) and `Last-Event-ID` is ours to send. Views subscribe by type and thread; nothing
// opens a second stream of this machine's. After a drop it reconnects with the last id it saw,
// so nothing is lost; no timer runs while it is connected (vyred's keep-alive comes once a minute).
// A box's thread open in the chat has a stream of its own, the same way read (lib/source.ts:
// `/v1/boxes/<box>/threads/<thread>/events`, the box's events with the box's ids).

import { ApiError, SIGNED_OUT, signedOut } from './api';
import { keyHeaders } from './key';
import { SseParser } from './sse';
import type { VyreEvent } from './types';

type Handler = (e: VyreEvent) => void;
interface Sub {
  types: string[] | null;
  thread: string | null;
  f: Handler;
}

export type StreamStatus = 'off' | 'connecting' | 'live' | 'retrying';

function matches(sub: Sub, e: VyreEvent): boolean {
  if (sub.thread && e.thread !== sub.thread) return false;
  if (!sub.types) return true;
  return sub.types.some((t) => (t.endsWith('*') ? e.type.startsWith(t.slice(0, -1)) : e.type === t));
}

const BACKOFF_MS = [500, 2000, 5000, 15000, 30000, 60000];

export class EventHub {
  private subs = new Set<Sub>();
  private ctrl: AbortController | null = null;
  private types = '';
  private failures = 0;
  private wake: (() => void) | null = null;
  lastId: number | null = null;
  status: StreamStatus = 'off';
  onStatus: (s: StreamStatus) => void = () => {};
  /** Try again at once rather than at the next turn (back on a network, back on the screen, a
   * box's link up again). */
  readonly retryNow = () => this.wake?.();
  private readonly shown = () => {
    if (document.visibilityState === 'visible') this.retryNow();
  };

  /**
   * `path`: the stream's address (this machine's events, or a box thread's). `signsOut`: a 401
   * that says this browser is not signed in signs the app out; a box's stream passes on the box's
   * answers, which say nothing of this browser, so it only tries again.
   */
  constructor(
    private readonly path = '/v1/events',
    private readonly signsOut = true,
  ) {
    if (typeof window !== 'undefined') {
      window.addEventListener('online', this.retryNow);
      document.addEventListener('visibilitychange', this.shown);
    }
  }

  /** Stop for good: the stream, its subscribers and what it watched (a view's own stream). */
  close(): void {
    this.stop();
    this.subs.clear();
    if (typeof window !== 'undefined') {
      window.removeEventListener('online', this.retryNow);
      document.removeEventListener('visibilitychange', this.shown);
    }
  }

  /** Open the stream with this `types=` filter (or none: every event); replaces one that runs. */
  start(types = ''): void {
    if (this.ctrl && this.types === types) return;
    this.stop();
    this.types = types;
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    void this.run(ctrl.signal);
  }

  stop(): void {
    this.ctrl?.abort();
    this.ctrl = null;
    this.wake?.();
    this.setStatus('off');
  }

  subscribe(filter: { types?: string[]; thread?: string | null }, f: Handler): () => void {
    const sub: Sub = { types: filter.types ?? null, thread: filter.thread ?? null, f };
    this.subs.add(sub);
    return () => this.subs.delete(sub);
  }

  /** Hand an event to the subscribers (also used for events fetched with system.events). */
  dispatch(e: VyreEvent): void {
    for (const sub of [...this.subs]) {
      if (matches(sub, e)) {
        try {
          sub.f(e);
        } catch (err) {
          console.error('event handler failed', e.type, err);
        }
      }
    }
  }

  private setStatus(s: StreamStatus): void {
    if (this.status === s) return;
    this.status = s;
    this.onStatus(s);
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.setStatus(this.failures ? 'retrying' : 'connecting');
      let ended = false;
      try {
        const q = new URLSearchParams();
        if (this.types) q.set('types', this.types);
        // The key goes with the stream too: fetch, unlike EventSource, can send it.
        const headers: Record<string, string> = { ...keyHeaders(), Accept: 'text/event-stream' };
        if (this.lastId !== null) headers['Last-Event-ID'] = String(this.lastId);
        const res = await fetch(this.path + (q.size ? '?' + q.toString() : ''), {
          headers,
          credentials: 'same-origin',
          signal,
          cache: 'no-store',
        });
        if (!res.ok || !res.body) {
          let err: any = null;
          try {
            err = (await res.json())?.error;
          } catch {
            /* not JSON */
          }
          if (res.status === 401 && SIGNED_OUT.has(err?.code) && this.signsOut) {
            signedOut(new ApiError(401, err.code, err.message ?? 'not signed in'));
            this.setStatus('off');
            return;
          }
          throw new Error(`events: ${res.status}`);
        }
        this.setStatus('live');
        this.failures = 0;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        const parser = new SseParser();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const m of parser.feed(value)) {
            if (!m.data) continue;
            let e: VyreEvent;
            try {
              e = JSON.parse(m.data);
            } catch {
              continue;
            }
            if (typeof e.id === 'number') this.lastId = Math.max(this.lastId ?? 0, e.id);
            this.dispatch(e);
          }
        }
        ended = true;
      } catch (err) {
        if (signal.aborted) return;
      }
      if (signal.aborted) return;
      // A clean end (vyred stopping, the device revoked) reconnects at once: the answer says which.
      const wait = ended && this.failures === 0 ? 200 : BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)];
      this.failures++;
      this.setStatus('retrying');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }
}

export const hub = new EventHub();
