// The providers a session can run on (`sessions.providers`), said as a person reads them: Claude
// Code as "Claude", an ACP agent (`acp-<name>`) as "<name> (ACP)". Pure: the thread's chip
// (lib/chat.ts) and the New session dialog both name a provider with it (ui/test/providers.test.mjs).

/** The provider `threads.start` uses when it is not told one. */
export const DEFAULT_PROVIDER = 'claude';

/** A provider's name as a person reads it: `claude` → "Claude", `acp-gemini` → "gemini (ACP)". */
export function providerLabel(name: string | null | undefined): string {
  if (!name) return 'Claude';
  if (name.startsWith('acp-') && name.length > 4) return `${name.slice(4)} (ACP)`;
  return name[0].toUpperCase() + name.slice(1);
}

/** The models a thread's model menu offers by name: Claude Code's aliases for its threads; none
 *  for another provider, whose own model ids change with it (the menu's "other model id" and
 *  "Default model" still apply). */
export function modelChoices(provider: string | null | undefined): string[] {
  return !provider || provider === DEFAULT_PROVIDER ? ['opus', 'sonnet', 'haiku'] : [];
}

export interface ProviderChoice {
  name: string;
  label: string;
}

/** The "Runs on" choices: Claude Code first (the default), the others in vyred's order, each once. */
export function providerChoices(providers: readonly { name: string }[]): ProviderChoice[] {
  const names = [...new Set(providers.map((p) => p.name).filter((n) => !!n))];
  names.sort((a, b) => Number(b === DEFAULT_PROVIDER) - Number(a === DEFAULT_PROVIDER));
  return names.map((name) => ({ name, label: name === DEFAULT_PROVIDER ? 'Claude Code' : providerLabel(name) }));
}
