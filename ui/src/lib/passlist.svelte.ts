// The passes this Vyre gave, for a view that shows them (the Passes panel, an item's detail):
// `vault.pass.list`, loaded when the view opens, after its own changes, and again a moment
// after the vault's pass events (a pass made, revoked, taken, used; an offboarding), from this
// page or the terminal. Nothing here is secret: a pass's row never holds its code or token.

import type { ApiError } from './api';
import { coalesced } from './coalesce';
import { hub } from './stream';
import { listPasses } from './vaultcalls';
import type { PassInfo } from './vaultpasses';

const QUIET_MS = 250;

export class PassList {
  passes = $state<PassInfo[]>([]);
  loaded = $state(false);
  error = $state<string | null>(null);

  load = async (): Promise<void> => {
    try {
      this.passes = await listPasses();
      this.error = null;
    } catch (e) {
      this.error = (e as ApiError).message ?? String(e);
    } finally {
      this.loaded = true;
    }
  };

  /** Loads that changes ask for: one at a time, the last of a burst after a quiet moment. */
  reload = coalesced(this.load, () => {});

  /** Load now and on the vault's pass events until the returned stop. */
  follow(): () => void {
    void this.reload();
    let soon: ReturnType<typeof setTimeout> | undefined;
    const unsub = hub.subscribe({ types: ['vault.pass_*', 'vault.offboarded', 'vault.used'] }, () => {
      clearTimeout(soon);
      soon = setTimeout(() => void this.reload(), QUIET_MS);
    });
    return () => {
      unsub();
      clearTimeout(soon);
    };
  }
}
