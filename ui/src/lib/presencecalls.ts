// Presence's calls: to vyred (`vault.presence.challenge`, `vault.passkey.*`, `vault.reveal`,
// docs/api.md) and to the browser's WebAuthn (`navigator.credentials`). A revealed value is
// handed to the caller and kept nowhere here: not in a store, the address, storage or a log.
// The decisions and the words are lib/presence.ts.

import { call } from './api';
import {
  addInput,
  assertionInput,
  createOptions,
  getOptions,
  type Asserted,
  type Challenge,
  type Created,
  type Field,
  type PasskeyInfo,
  type Place,
  type Revealed,
} from './presence';

/** Where this page runs, as passkeys care. */
export function here(): Place {
  return {
    hostname: location.hostname,
    port: location.port,
    webauthn: typeof window.PublicKeyCredential === 'function',
    secure: window.isSecureContext,
  };
}

export function listPasskeys(): Promise<{ passkeys: PasskeyInfo[]; passphrase: boolean }> {
  return call('vault.passkey.list', {});
}

export function removePasskey(id: string): Promise<{ removed: boolean }> {
  return call('vault.passkey.remove', { id });
}

/** Make a passkey on this device (the browser asks the person to verify) and have vyred keep it
 * under `name`. Throws vyred's refusal (an ApiError) or the browser's (a DOMException). */
export async function addPasskey(name: string, signal?: AbortSignal): Promise<PasskeyInfo> {
  const c = await call('vault.presence.challenge', { for: 'passkey' });
  const publicKey = createOptions(c, location.hostname, crypto.getRandomValues(new Uint8Array(16)));
  const cred = await navigator.credentials.create({ publicKey, signal });
  if (!cred) throw new DOMException('no credential', 'NotAllowedError');
  return call('vault.passkey.add', addInput(cred as unknown as Created, name));
}

/** A challenge to show `name`'s `field`, with the passkeys that may answer it and whether the
 * passphrase may be given instead. */
export function revealChallenge(name: string, field: Field): Promise<Challenge> {
  return call('vault.presence.challenge', { for: 'reveal', name, field });
}

/** Answer `c` (a reveal's challenge for `name` and `field`) with a passkey of this host, then
 * ask for the value. */
export async function revealWithPasskey(name: string, field: Field, c: Challenge, signal?: AbortSignal): Promise<Revealed> {
  const cred = await navigator.credentials.get({ publicKey: getOptions(c, location.hostname), signal });
  if (!cred) throw new DOMException('no credential', 'NotAllowedError');
  return call('vault.reveal', { name, field, passkey: assertionInput(cred as unknown as Asserted) });
}

/** The value of `name`'s `field`, with the vault passphrase as the proof. */
export function revealWithPassphrase(name: string, field: Field, passphrase: string): Promise<Revealed> {
  return call('vault.reveal', { name, field, passphrase });
}
