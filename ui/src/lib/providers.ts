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

/** The purposes a session is started for (`threads.start`'s `purpose`), as Settings names them. */
export const PURPOSES: readonly { purpose: string; label: string }[] = [
  { purpose: 'chat', label: 'Chats' },
  { purpose: 'project', label: 'Projects' },
  { purpose: 'agent', label: 'Agents' },
  { purpose: 'capsule', label: 'Lumen' },
  { purpose: 'job', label: 'Jobs' },
  { purpose: 'memory', label: 'Memory' },
  { purpose: 'planner', label: 'Planner' },
  { purpose: 'learn', label: 'Lessons' },
];

/** What `sessions.models.set` is asked for a purpose's provider and model as typed: Claude Code
 *  with no model clears the choice (back to the config's or the default), another provider with
 *  none is its own default model. */
export function purposeChoice(purpose: string, provider: string, model: string): { purpose: string; provider?: string; model?: string } {
  const m = model.trim();
  const input: { purpose: string; provider?: string; model?: string } = { purpose };
  if (provider && provider !== DEFAULT_PROVIDER) input.provider = provider;
  if (m) input.model = m;
  return input;
}
