// Vyre's private network (ADR 0018) as the app shows it: where a joining device reaches this
// machine, the configuration's QR code and file name, a join's refusal in words, and how each
// device's link reads. Pure: Settings and components/JoinDevice.svelte render what these say.

/** The UDP port WireGuard listens on unless the config says otherwise (a guess to prefill). */
export const WIREGUARD_PORT = 51820;

/** A host name that only this machine reaches: never an endpoint for a phone. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return (
    h === '' ||
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    h === '::1' ||
    h === '0.0.0.0' ||
    h === '::' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  );
}

/**
 * What the endpoint field starts with: the one vyred knows (`network.status.endpoint`), else this
 * page's host name with WireGuard's port when other machines can reach that name, else nothing.
 */
export function suggestEndpoint(known: string | null | undefined, hostname: string): string {
  if (known && known.trim()) return known.trim();
  if (isLoopback(hostname)) return '';
  // An IPv6 address is bracketed before its port; `location.hostname` already brackets it.
  const host = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
  return `${host}:${WIREGUARD_PORT}`;
}

/** The QR code vyred drew (an SVG), as an image's address: shown with <img>, never as markup. */
export function qrImageSrc(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

/**
 * The configuration's file name, `vyre-<name>.conf`. WireGuard names the tunnel after the file,
 * and a tunnel's name is at most 15 characters of letters, digits and `_=+.-` (an interface
 * name), so the device's name is cut to fit.
 */
export function configFileName(deviceName: string): string {
  const slug = deviceName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_=+.-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 10)
    .replace(/[-.]+$/, '');
  return `vyre-${slug || 'device'}.conf`;
}

/** A refused `network.join` in words, and whether the endpoint field is what is missing. */
export function joinError(code: string, message: string): { text: string; endpoint: boolean } {
  const endpoint =
    code === 'endpoint_unknown' || (code === 'invalid_input' && /endpoint|host:port/i.test(message));
  switch (code) {
    case 'network_down':
      return { text: `The private network could not come up: ${message}`, endpoint };
    case 'network_off':
      return { text: `The private network is turned off on this machine: ${message}`, endpoint };
    case 'network_full':
      return { text: `The private network has no address left: ${message}`, endpoint };
    default:
      // The schema's own refusal quotes its pattern: say what it means instead.
      if (code === 'invalid_input' && /^endpoint: must match/.test(message)) {
        return { text: ENDPOINT_SHAPE, endpoint };
      }
      return { text: endpoint ? `Say where devices reach this machine: ${message}` : `The device could not join: ${message}`, endpoint };
  }
}

/** What an endpoint looks like, in words. */
export const ENDPOINT_SHAPE =
  'Say where devices reach this machine as host:port, e.g. vyre.example.com:51820 or 203.0.113.7:51820.';

/** "just now", "40 s ago", "5 min ago", "3 h ago", "2 days ago". */
export function agoText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = Math.floor(s / 86400);
  return `${d} day${d === 1 ? '' : 's'} ago`;
}

/** How a device's link reads: connected, when it last spoke, or not since vyred started. */
export function linkText(peer: { connected: boolean; last_packet_s: number | null }): string {
  if (peer.connected) return 'connected';
  if (peer.last_packet_s !== null && peer.last_packet_s !== undefined) return `last seen ${agoText(peer.last_packet_s)}`;
  return 'not seen since Vyre started';
}

/** A device's kind as Settings lists it. */
export function kindText(kind: string): string {
  return kind === 'network' ? 'on the private network' : kind;
}
