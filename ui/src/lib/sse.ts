// A Server-Sent Events parser (the WHATWG rules that matter here): feed it text as it arrives,
// get whole messages back. Comments (the once-a-minute keep-alive) are dropped.

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

export class SseParser {
  private buf = '';
  private data: string[] = [];
  private event = '';
  private id: string | null = null;
  private sawField = false;

  feed(text: string): SseMessage[] {
    this.buf += text;
    const out: SseMessage[] = [];
    for (;;) {
      const nl = this.buf.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      // A lone '\r' at the end may be half of '\r\n': wait for more.
      if (this.buf[nl] === '\r' && nl === this.buf.length - 1) break;
      const line = this.buf.slice(0, nl);
      const skip = this.buf.startsWith('\r\n', nl) ? 2 : 1;
      this.buf = this.buf.slice(nl + skip);
      const msg = this.line(line);
      if (msg) out.push(msg);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') {
      if (!this.sawField) return null;
      const msg: SseMessage = { id: this.id, event: this.event || 'message', data: this.data.join('\n') };
      this.data = [];
      this.event = '';
      this.id = null;
      this.sawField = false;
      return msg.data === '' && msg.id === null ? null : msg;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.sawField = true;
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
    return null;
  }
}
