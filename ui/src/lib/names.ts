// This Vyre's own name, `<you>.vyre.run` (the `names` module): what the claim form accepts, a
// refused claim or renewal in words, and how the certificate's dates read. Pure: Settings'
// "Your address" (components/YourName.svelte) and the onboarding's address step render them.

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

/** A refused `names.claim` or `names.renew` in words: the lead sentence, then vyred's message. */
export function namesError(code: string, message: string, renewing = false): { text: string; detail: string } {
  const detail = message.trim();
  switch (code) {
    case 'name_taken':
      return { text: 'That name is taken: choose another one.', detail };
    case 'name_held':
      return { text: 'This Vyre already holds another name; it keeps one name.', detail };
    case 'network_down':
      return { text: 'The private network is not up yet: add a phone or laptop first (Devices, above), then claim the name.', detail };
    case 'directory_unreachable':
      return { text: 'The name directory could not be reached. Check this machine’s internet connection and try again.', detail };
    case 'directory_refused':
      return { text: 'The name directory refused.', detail };
    case 'certificate_failed':
      return {
        text: renewing
          ? 'The certificate could not be renewed; Vyre tries again by itself later.'
          : 'The name is yours, but its certificate could not be issued. Try again with Renew now.',
        detail,
      };
    case 'no_name':
      return { text: 'This Vyre holds no name yet.', detail };
    case 'invalid_input':
      return { text: 'That name cannot be claimed.', detail };
    default:
      return { text: renewing ? 'The certificate could not be renewed.' : 'The name could not be claimed.', detail };
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
