// A paired box as this machine's app reaches it (issue 20): whether it is in reach, which tools
// its link lets this machine call there, and where a download from it is followed. Pure: no DOM,
// no fetch, so node --test covers it (ui/test/boxes.test.mjs, ui/test/lumen.test.mjs).

/** The codes of a call through the pairing that did not reach the box or that it refused to
 * take from this machine (not the box's answer about the thread). */
const UNREACHED = new Set(['box_unreachable', 'unknown_pairing', 'not_paired', 'no_credential', 'no_device_key', 'unauthenticated', 'invalid_credential']);

export function outOfReach(code: string | undefined): boolean {
  return !!code && UNREACHED.has(code);
}

/** Whether a box's link says its events do not reach this machine (`pairing.list`, `pairing.link`). */
export function linkDown(link: string | null | undefined): boolean {
  return link === 'down' || link === 'revoked';
}

/** The tools a box lets a paired Vyre call when its config does not say otherwise (`link.allow`,
 * docs/configuration.md); anything else is refused there (`not_federated`). A box's thread shows
 * only what these can do: no rename, model, mode, fork or End session from this machine. */
export const LINK_ALLOW: readonly string[] = [
  'threads.list',
  'threads.get',
  'threads.timeline',
  'threads.output',
  'threads.commands',
  'threads.files',
  'threads.start',
  'threads.send',
  'threads.warm',
  'threads.answer',
  'threads.interrupt',
  'threads.changes',
  'threads.revert',
  'agents.list',
  'agents.threads',
  'projects.list',
  'files.*',
  'system.status',
  'memory.why',
  'harness.remembered',
  'usage.summary',
  'usage.limits',
];

/** Whether the link lets this machine call `tool` on the box: a name, or its module's `module.*`. */
export function linkAllows(tool: string, allow: readonly string[] = LINK_ALLOW): boolean {
  return allow.some((a) => a === tool || (a.endsWith('.*') && tool.startsWith(a.slice(0, -1))));
}

/** Where this browser follows a download link a box made (`files.fetch`, `/v1/files/<token>`):
 * the box's own address, as this machine reaches it (`pairing.list`); '' when it is not known. */
export function downloadBase(address: string | null | undefined): string {
  const bare = (address ?? '').trim().replace(/^https?:\/\//, '').replace(/\/+$/, '');
  return bare ? `http://${bare}` : '';
}
