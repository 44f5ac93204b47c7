// This Vyre's own name (the `names` module): `<you>.vyre.run` from the name directory, or the
// person's own domain through Cloudflare. What the claim and domain forms accept, a refused
// claim, domain or renewal in words, how the certificate's dates read, and where the app
// continues once the name is served. Pure: Settings' "Your address" (components/YourName.svelte),
// the own-domain form (components/OwnDomain.svelte) and the onboarding's address step render them.

/** What the directory adds to the label typed: `alex` is `alex.vyre.run`. */
export const NAME_SUFFIX = '.vyre.run';

/** A DNS label, as `names.claim` takes it: lowercase letters, digits, inner hyphens, 1-63. */
const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
export const LABEL_MAX = 63;

/** What the field holds, as it is sent: no spaces around it, and no `.vyre.run` typed after it. */
export function labelOf(typed: string): string {
  const t = typed.trim();
  return t.toLowerCase().endsWith(NAME_SUFFIX) ? t.slice(0, -NAME_SUFFIX.length) : t;
}

/** A label the typed text could have meant: lowercase, accents dropped, the rest hyphens. */
export function suggestLabel(typed: string): string {
  return labelOf(typed)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, LABEL_MAX)
    .replace(/-+$/, '');
}

/** Why the typed name cannot be claimed, in words; null when it can. */
export function labelProblem(typed: string): string | null {
  const label = labelOf(typed);
  if (!label) return 'Type the name you want.';
  if (LABEL.test(label) && label.length <= LABEL_MAX) return null;
  const rule = `A name is lowercase letters, digits and hyphens (not first or last), at most ${LABEL_MAX} characters`;
  const maybe = suggestLabel(typed);
  return maybe && maybe !== label ? `${rule}: “${maybe}” would do.` : `${rule}.`;
}

/** What was asked of vyred: a claim (`names.claim`), a renewal, or the person's own domain. */
export type NamesAction = 'claim' | 'renew' | 'domain';

/** A refused `names.claim`, `names.renew` or `names.use_domain` in words: the lead sentence, then
 * vyred's message. */
export function namesError(code: string, message: string, action: NamesAction = 'claim'): { text: string; detail: string } {
  const detail = message.trim();
  const say = (text: string) => ({ text, detail });
  switch (code) {
    case 'name_taken':
      return say('That name is taken: choose another one.');
    case 'name_held':
      return say('This Vyre already holds another name; it keeps one name.');
    case 'network_down':
      return say(
        action === 'domain'
          ? 'The private network is not up yet: add a phone or laptop first, then use your domain.'
          : 'The private network is not up yet: add a phone or laptop first (Devices, above), then claim the name.',
      );
    case 'directory_unreachable':
      return say('The name directory could not be reached. Check this machine’s internet connection and try again.');
    case 'directory_refused':
      return say('The name directory refused.');
    case 'invalid_domain':
      return say(`That is not a domain Vyre can use: ${DOMAIN_SHAPE}`);
    case 'token_needed':
      return say('Paste a Cloudflare API token for the domain.');
    case 'no_zone':
      return say('Cloudflare has no zone for that domain that this token can see: check the domain, and that the token covers its zone.');
    case 'dns_refused':
      return say('Cloudflare refused: check that the token is right and has Zone:Read and DNS:Edit on the zone.');
    case 'dns_unreachable':
      return say('Cloudflare could not be reached. Check this machine’s internet connection and try again.');
    case 'vault_locked':
      return say('Vyre’s vault is locked, so the token cannot be kept: unlock it (vyre vault unlock on this machine), then try again.');
    case 'certificate_failed':
      return say(
        action === 'renew'
          ? 'The certificate could not be renewed; Vyre tries again by itself later.'
          : action === 'domain'
            ? 'Your domain points here, but its certificate could not be issued. Try again with Renew now.'
            : 'The name is yours, but its certificate could not be issued. Try again with Renew now.',
      );
    case 'no_name':
      return say('This Vyre holds no name yet.');
    case 'invalid_input':
      return say(action === 'domain' ? 'That domain cannot be used.' : 'That name cannot be claimed.');
    default:
      return say(
        action === 'renew'
          ? 'The certificate could not be renewed.'
          : action === 'domain'
            ? 'Your domain could not be set up.'
            : 'The name could not be claimed.',
      );
  }
}

/** A day as people write it: "3 March 2027" (en-GB), "March 3, 2027" (en-US). */
export function dayText(ms: number, locale?: string): string {
  return new Date(ms).toLocaleDateString(locale, { day: 'numeric', month: 'long', year: 'numeric' });
}

/**
 * The certificate's line: "certificate valid until 3 March 2027, renews 1 February 2027"; once
 * the renewal is due, "renewal due"; once it expired, "expired on …"; before one was issued,
 * "no certificate yet".
 */
export function certificateText(
  s: { not_after: number | null | undefined; renews_at: number | null | undefined },
  now: number,
  locale?: string,
): string {
  if (s.not_after === null || s.not_after === undefined) return 'no certificate yet';
  if (s.not_after <= now) return `certificate expired on ${dayText(s.not_after, locale)}`;
  const valid = `certificate valid until ${dayText(s.not_after, locale)}`;
  if (s.renews_at === null || s.renews_at === undefined) return valid;
  if (s.renews_at <= now) return `${valid}, renewal due`;
  return `${valid}, renews ${dayText(s.renews_at, locale)}`;
}

// ---- The person's own domain (names.use_domain) ----

/** The one DNS provider Vyre drives so far: it sets the domain's record and answers ACME's
 * DNS-01 challenge through its API. */
export const DOMAIN_PROVIDER = 'cloudflare';
/** The vault item vyred keeps the Cloudflare token in: a later try may name it instead of pasting
 * the token again. */
export const CLOUDFLARE_ITEM = 'dns-cloudflare';
/** What a domain looks like, in words. */
export const DOMAIN_SHAPE = 'a domain is names joined by dots, like vyre.example.com.';
/** At most 253 characters in all (DNS), each name between the dots at most 63. */
export const DOMAIN_MAX = 253;

/**
 * The domain typed, as it is sent: no spaces around it, lowercase, and without what a pasted
 * address adds (`https://`, a path, a port, the final dot). Not checked: see domainProblem.
 */
export function domainOf(typed: string): string {
  return typed
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/[/?#].*$/s, '')
    .replace(/:\d*$/, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** Why the typed domain cannot be used, in words; null when it can. */
export function domainProblem(typed: string): string | null {
  const domain = domainOf(typed);
  if (!domain) return 'Type your domain, like vyre.example.com.';
  const labels = domain.split('.');
  const rule = 'A domain is names joined by dots, like vyre.example.com: letters, digits and hyphens (not first or last) in each.';
  if (!labels.every((l) => LABEL.test(l))) return rule;
  if (labels.some((l) => l.length > LABEL_MAX)) return `Each name between the dots is at most ${LABEL_MAX} characters.`;
  if (domain.length > DOMAIN_MAX) return `A domain is at most ${DOMAIN_MAX} characters.`;
  if (labels.length < 2) return 'Type the whole domain, like vyre.example.com.';
  // An IP address has digits for its last part; no top-level domain does.
  if (/^\d+$/.test(labels[labels.length - 1])) return 'That is an address; type a domain, like vyre.example.com.';
  if (domain === NAME_SUFFIX.slice(1) || domain.endsWith(NAME_SUFFIX)) {
    return 'A name under vyre.run comes from Vyre’s name directory: claim it instead of using your own domain.';
  }
  return null;
}

/** How the name is kept up, in words, when it is worth saying: the person's own domain. */
export function viaText(via: string | null | undefined): string | null {
  return via === DOMAIN_PROVIDER ? 'Your own domain, through Cloudflare' : null;
}

// ---- The page moves to the name ----

/**
 * The name this page could continue at: the name, once a certificate is served for it
 * (`url` and `not_after` set), unless this page is at that name already. Null otherwise.
 */
export function moveTarget(
  s: { fqdn?: string | null; url?: string | null; not_after?: number | null } | null | undefined,
  hostname: string,
): { fqdn: string; url: string } | null {
  if (!s?.fqdn || !s.url || s.not_after === null || s.not_after === undefined) return null;
  const here = hostname.trim().toLowerCase().replace(/\.$/, '');
  return here === s.fqdn.toLowerCase() ? null : { fqdn: s.fqdn, url: s.url };
}

/** The page to continue at: the same page of the app (`path`) at the name's address, or the
 * app's start there for a page outside the app (the onboarding's `/onboard`). */
export function continueUrl(url: string, path: string): string {
  const at = new URL(url);
  return path.startsWith('/app/') ? new URL(path, at.origin).href : at.href;
}
