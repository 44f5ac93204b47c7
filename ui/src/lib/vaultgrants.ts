// Who may use a vault item, in the item's detail (VaultGrants.svelte): its grantees in words,
// what "Grant to…" offers (sessions, the agents, the watchers; not those granted already) and
// what the question before a grant says. Pure, for node --test (ui/test/vaultgrants.test.mjs).
// The calls (`vault.grant`, `vault.revoke`, `agents.list`, `watchers.list`) are lib/vaultcalls.ts.

/** Someone an item may be granted to: `to` as `vault.grant` takes it, and its words. */
export interface Grantee {
  to: string;
  label: string;
}

/** The same grantee however it is written (`sessions` and `module:sessions`). */
export function sameGrantee(a: string, b: string): boolean {
  const norm = (s: string): string => (s.includes(':') ? s : `module:${s}`);
  return norm(a) === norm(b);
}

/** One grantee in words: "Sessions", "Agent mail", "Watcher news", another module by its name. */
export function granteeLabel(to: string): string {
  const [what, name] = to.includes(':') ? [to.slice(0, to.indexOf(':')), to.slice(to.indexOf(':') + 1)] : ['module', to];
  if (what === 'module') return name === 'sessions' ? 'Sessions' : name;
  if (what === 'agent') return `Agent ${name}`;
  if (what === 'watcher') return `Watcher ${name}`;
  return to;
}

/** What "Grant to…" offers: sessions, then the agents, then the watchers, by name; those the
 * item is granted to already left out. A pass another Vyre gave (`kind` `pass`) only to the
 * Gate: vyred opens one for nothing else (ADR 0036). */
export function grantChoices(agents: { name: string }[], watchers: { name: string }[], granted: string[], kind = ''): Grantee[] {
  if (kind === 'pass') return granted.some((g) => sameGrantee(g, 'gate')) ? [] : [{ to: 'gate', label: 'The Gate' }];
  const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);
  const all: string[] = ['sessions', ...[...agents].sort(byName).map((a) => `agent:${a.name}`), ...[...watchers].sort(byName).map((w) => `watcher:${w.name}`)];
  return all.filter((to) => !granted.some((g) => sameGrantee(g, to))).map((to) => ({ to, label: granteeLabel(to) }));
}

/** The question before a grant: its title and what the grantee will be able to do, in words. */
export function grantQuestion(item: { name: string; kind: string }, to: string): { title: string; body: string } {
  if (item.kind === 'pass' && sameGrantee(to, 'gate')) {
    return {
      title: `Grant “${item.name}” to the Gate?`,
      body: `Requests you approve that name {{vault:${item.name}}} will go through the giver’s Vyre, which puts the value in: neither the Gate nor a session here sees it. You can revoke it here at any time.`,
    };
  }
  const whom = to.startsWith('agent:')
    ? `the agent “${to.slice(6)}”`
    : to.startsWith('watcher:')
      ? `the watcher “${to.slice(8)}”`
      : sameGrantee(to, 'sessions')
        ? 'sessions'
        : `the ${granteeLabel(to)} module`;
  const who = whom === 'sessions' ? 'Claude Code sessions on this machine' : whom[0].toUpperCase() + whom.slice(1);
  const how = to.startsWith('watcher:')
    ? item.kind === 'env'
      ? ' Its program gets the variables as its environment variables when it runs.'
      : ' Its program is handed it when it runs.'
    : to.startsWith('agent:')
      ? ` Its sessions, and no others, can name ${item.kind === 'env' ? `a variable as {{vault:${item.name}/VAR}}` : `it as {{vault:${item.name}}}`} in a request the Gate sends once you approve it.`
      : '';
  return {
    title: `Grant “${item.name}” to ${whom}?`,
    body: `${who} will be able to use it without seeing it: Vyre puts the value in where it is used and never shows it to them.${how} You can revoke it here at any time.`,
  };
}
