// Calls to vyred: tools and the session routes. Same origin: the browser sends the device's
// cookie itself (HttpOnly, so the page never reads it), and every call adds this browser's key,
// which only this origin's storage holds (ADR 0009). The cookie reaches every port of the host;
// the key does not, and vyred needs both.

import { keepKey, keyHeaders } from './key';
import { shareKey } from './workerkey';
import type { operations } from './openapi/generated';
import type { Health, Session } from './types';

/** Every tool vyred publishes (its OpenAPI snapshot, src/lib/openapi/openapi.json). */
export type ToolName = keyof operations;
/** A tool's input, as its schema says. */
export type ToolInput<N extends ToolName> = operations[N] extends { requestBody: { content: { 'application/json': infer I } } } ? I : never;
/** A tool's output (the answer's `data`), as its schema says. */
export type ToolOutput<N extends ToolName> = operations[N] extends { responses: { 200: { content: { 'application/json': { data: infer O } } } } }
  ? O
  : never;

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Codes that mean this browser is not (or no longer) signed in. */
export const SIGNED_OUT = new Set(['unauthenticated', 'invalid_credential', 'key_missing', 'onboarding_over']);

let onSignedOut: (why: ApiError) => void = () => {};
export function whenSignedOut(f: (why: ApiError) => void): void {
  onSignedOut = f;
}
export function signedOut(e: ApiError): void {
  onSignedOut(e);
}

async function request<T>(method: string, path: string, body?: unknown, quiet401 = false): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? keyHeaders() : { ...keyHeaders(), 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'offline', 'Vyre did not answer. Is vyred running?');
  }
  let json: any = null;
  try {
    json = await res.json();
  } catch {
    // Not JSON: a proxy's page, or an empty answer.
  }
  if (!res.ok || !json || json.error) {
    const err = json?.error ?? {};
    const e = new ApiError(res.status, err.code ?? 'http_' + res.status, err.message ?? `Vyre answered ${res.status}.`);
    if (res.status === 401 && SIGNED_OUT.has(e.code) && !quiet401) signedOut(e);
    throw e;
  }
  return json.data as T;
}

/** Call a tool: `POST /v1/tools/<name>`, its input and output typed by the tool's name. */
export function call<N extends ToolName>(tool: N, ...[input]: InputArg<N>): Promise<ToolOutput<N>> {
  return request<ToolOutput<N>>('POST', `/v1/tools/${tool}`, input ?? {});
}

/**
 * A call whose answer the app still types by hand (`callAs<Shape>('tool', input)`): the tool's
 * name is checked against the schema, its output is not. For the tools whose published output
 * says nothing (a bare JSON value) or that the app has not moved to `call` yet.
 */
export function callAs<T>(tool: ToolName, input: Record<string, unknown> = {}): Promise<T> {
  return request<T>('POST', `/v1/tools/${tool}`, input);
}

/** A tool on this machine (`box` null), or on the paired box `box` through the pairing. */
export function callOn<T>(box: string | null, tool: ToolName, input: Record<string, unknown> = {}): Promise<T> {
  return box ? callAs<T>('pairing.call', { box, tool, input }) : callAs<T>(tool, input);
}

/** `callAs`, but a 401 does not sign the app out when `quiet` (a call made before the app knows
 * who this browser is: lib/early.ts). */
export function callQuiet<T>(tool: ToolName, input: Record<string, unknown>, quiet: boolean): Promise<T> {
  return request<T>('POST', `/v1/tools/${tool}`, input, quiet);
}

/** The input may be left out when the tool needs none of its fields. */
type InputArg<N extends ToolName> = {} extends ToolInput<N> ? [input?: ToolInput<N>] : [input: ToolInput<N>];

/** Whether `e` says this vyred has no such tool (an older one: the tool was added later). */
export function toolMissing(e: unknown): boolean {
  return e instanceof ApiError && (e.code === 'unknown_tool' || e.code === 'not_found' || e.status === 404);
}

/** A tool that may not exist on this vyred (added later): null when it is unknown. */
export async function callOptional<T>(tool: ToolName, input: Record<string, unknown>): Promise<T | null> {
  try {
    return await callAs<T>(tool, input);
  } catch (e) {
    if (toolMissing(e)) return null;
    throw e;
  }
}

/** Whether this browser may call `tool` here: `GET /v1/tools` lists only what the caller may
 * call (the onboarding's browser: the tools marked for it). For a form that only some browsers
 * can use, shown only where it works. */
export async function offered(tool: ToolName): Promise<boolean> {
  const tools = await request<{ name: string }[]>('GET', '/v1/tools', undefined, true);
  return tools.some((t) => t.name === tool);
}

let healthOnce: Promise<Health> | null = null;
/** `GET /v1/health` (no credential), once a page: the version and the role, `box` or `local`. */
export function health(): Promise<Health> {
  healthOnce ??= request<Health>('GET', '/v1/health', undefined, true).catch((e) => {
    healthOnce = null;
    throw e;
  });
  return healthOnce;
}

/** Whether vyred answers at all (any HTTP answer to `GET /v1/health`) within `ms`: the app,
 * opened without the network, asks this before it tries its session again. */
export async function answers(ms = 8000): Promise<boolean> {
  try {
    await fetch('/v1/health', { cache: 'no-store', signal: AbortSignal.timeout(ms) });
    return true;
  } catch {
    return false;
  }
}

export function getSession(): Promise<Session> {
  return request<Session>('GET', '/v1/session', undefined, true);
}

/** Spend a one-time link: the cookie comes back by itself, the key is kept in this origin. */
export async function redeem(token: string): Promise<{ kind: string; device: unknown }> {
  const r = await request<{ kind: string; device: unknown; key: string }>('POST', '/v1/session/redeem', { token }, true);
  keepKey(r.key);
  return r;
}

export function finish(deviceName?: string): Promise<{ device: any; owner: any; assistant: string; thread: string | null; greeting_error?: string | null }> {
  return request('POST', '/v1/session/finish', deviceName ? { device_name: deviceName } : {});
}

export async function logout(): Promise<unknown> {
  try {
    return await request('POST', '/v1/session/logout', {}, true);
  } finally {
    keepKey(null);
    // The service worker's copy, kept for notifications (lib/workerkey.ts), goes too.
    await shareKey(null);
  }
}

/** A name for this browser: "Firefox on Linux". */
export function browserName(): string {
  const ua = navigator.userAgent;
  const b = /Edg\//.test(ua) ? 'Edge' : /Firefox\//.test(ua) ? 'Firefox' : /Chrom(e|ium)\//.test(ua) ? 'Chrome' : /Safari\//.test(ua) ? 'Safari' : 'Browser';
  const os = /iPhone|iPad/.test(ua) ? 'iOS' : /Android/.test(ua) ? 'Android' : /Mac OS X/.test(ua) ? 'macOS' : /Windows/.test(ua) ? 'Windows' : /Linux/.test(ua) ? 'Linux' : '';
  return os ? `${b} on ${os}` : b;
}

export function uuid(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
