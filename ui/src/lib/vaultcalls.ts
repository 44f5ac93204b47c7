// The Vault screen's calls to vyred (`vault.*`, docs/api.md). None of them answers a stored
// value: `vault.list` and `vault.import` say names and facts only; `vault.generate` answers a
// new value, made for the person and stored nowhere; `vault.pass.create` answers a code for the
// other person (a relayed pass's token, or the item sealed to their key), never the value
// itself. The words are lib/vault.ts and lib/vaultpasses.ts.

import { call, type ToolInput } from './api';
import { genInput, importInput, type GenOptions, type Generated, type Imported, type ImportFormat, type OnDuplicate, type VaultItem } from './vault';
import type { Offboarded, PassAccepted, PassCreated, PassInfo, PassKey, PassRevoked } from './vaultpasses';

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

// Passes (ADR 0036); their words are lib/vaultpasses.ts. A code or a key is answered to the
// caller and kept nowhere here.

/** Share item `input.name` with another person's Vyre: its code, shown once. */
export function createPass(input: ToolInput<'vault.pass.create'>): Promise<PassCreated> {
  return call('vault.pass.create', input);
}

/** The passes this Vyre gave, newest first. */
export function listPasses(): Promise<PassInfo[]> {
  return call('vault.pass.list', {});
}

export function revokePass(id: string): Promise<PassRevoked> {
  return call('vault.pass.revoke', { id });
}

/** A one-use key for receiving a sealed pass. */
export function passKey(): Promise<PassKey> {
  return call('vault.pass.key', {});
}

/** Take a pass someone gave (`code`) into this vault as `name`. */
export function acceptPass(code: string, name: string): Promise<PassAccepted> {
  return call('vault.pass.accept', { code: code.trim(), name: name.trim() });
}

/** Revoke every pass `person` holds (`dryRun`: say what it would do, change nothing). */
export function offboard(person: string, dryRun: boolean): Promise<Offboarded> {
  return call('vault.offboard', { person: person.trim(), dry_run: dryRun });
}
