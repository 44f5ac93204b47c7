// The Vault screen's calls to vyred (`vault.*`, docs/api.md). None of them answers a stored
// value: `vault.list` and `vault.import` say names and facts only; `vault.generate` answers a
// new value, made for the person and stored nowhere. The words are lib/vault.ts.

import { call, type ToolInput } from './api';
import { genInput, importInput, type GenOptions, type Generated, type Imported, type ImportFormat, type OnDuplicate, type VaultItem } from './vault';

export function listItems(): Promise<VaultItem[]> {
  return call('vault.list', {});
}

/** Where the vault's keys stand (`unlocked`, `locked`, ...). */
export async function vaultState(): Promise<string> {
  return (await call('vault.status', {})).state;
}

/** Store an item; the input's values go to vyred and nowhere else. */
export function putItem(input: ToolInput<'vault.put'>): Promise<{ name: string; kind: string; replaced: boolean }> {
  return call('vault.put', input);
}

/** Let `to` (a module, `agent:<name>`, `watcher:<name>`) use the item without seeing it. */
export function grantItem(item: string, to: string): Promise<{ changed: boolean }> {
  return call('vault.grant', { item, to });
}

export function revokeItem(item: string, to: string): Promise<{ changed: boolean }> {
  return call('vault.revoke', { item, to });
}

/** Who an item may be granted to beside sessions: the agents and the watchers, each none when
 * its call fails (an older vyred, a list it cannot read). */
export async function grantees(): Promise<{ agents: { name: string }[]; watchers: { name: string }[] }> {
  const [agents, watchers] = await Promise.all([call('agents.list', {}).catch(() => []), call('watchers.list', {}).catch(() => [])]);
  return { agents, watchers };
}

export function deleteItem(name: string): Promise<{ ok: boolean }> {
  return call('vault.delete', { name });
}

export function generate(o: GenOptions): Promise<Generated> {
  return call('vault.generate', genInput(o));
}

/** Check (`dryRun`) or import the export `data`; the caller drops its text once this answers. */
export function importExport(data: string, o: { format: ImportFormat | ''; onDuplicate: OnDuplicate; prefix: string; dryRun: boolean }): Promise<Imported> {
  return call('vault.import', importInput(data, o));
}
