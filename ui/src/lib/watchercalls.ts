// The Watchers screen's calls to vyred (`watchers.*`, docs/api.md), and the search of what they
// filed (`recall.filed`). The words and the order are lib/watchers.ts (lib/filed.ts for the
// search's).

import { call, toolMissing } from './api';
import type { FiledHit } from './filed';
import type { LogLine, Ran, Source, Tested, WatchItem, Watcher } from './watchers';

/** Every watcher, in every project, or in `project` only. */
export function listWatchers(project?: string): Promise<Watcher[]> {
  return call('watchers.list', project ? { project } : {});
}

/** The newest items the watchers filed (into `project` only, when given), newest first. */
export async function listFiled(limit = 50, project?: string): Promise<WatchItem[]> {
  return (await call('watchers.items', project ? { limit, project } : { limit })).items;
}

/** What the watchers filed whose title or body hold every word of `query`, best first (into
 * `project` only, when given); null when this vyred cannot search them (an older one). */
export async function searchFiled(query: string, limit: number, project?: string): Promise<FiledHit[] | null> {
  try {
    return await call('recall.filed', project ? { query, limit, project } : { query, limit });
  } catch (e) {
    if (toolMissing(e)) return null;
    throw e;
  }
}

/** Turn it on: the person grants it the vault items it needs, and it runs on its schedule.
 * Clears a turning off after failures too. With `digest` (its `source` the person read), vyred
 * turns it on only if its files are still those: else 409 `changed` (lib/watchers.ts
 * rewrittenSinceRead). Without (its files could not be shown), as it is now. */
export function turnOn(name: string, digest: string | null = null): Promise<Watcher> {
  return call('watchers.resume', digest ? { name, digest } : { name });
}

export function pause(name: string): Promise<Watcher> {
  return call('watchers.pause', { name });
}

/** Run it now, for real: what it finds is filed. vyred refuses while it is paused or turned off. */
export function runNow(name: string): Promise<Ran> {
  return call('watchers.run', { name });
}

/** A dry run: what it would find, and its log; nothing filed, its place kept. */
export function testRun(name: string): Promise<Tested> {
  return call('watchers.test', { name });
}

/** Its files as they are on disk now, watcher.json first (those in its subfolders too, as
 * `lib/x.js`): what it will run, with their digest. */
export function source(name: string): Promise<Source> {
  return call('watchers.source', { name });
}

/** Its last log lines, oldest first. */
export async function logs(name: string, limit = 200): Promise<LogLine[]> {
  return (await call('watchers.logs', { name, limit })).lines;
}

/** Remove it: its folder and state go; the items it filed stay. */
export function remove(name: string): Promise<Watcher> {
  return call('watchers.remove', { name });
}
