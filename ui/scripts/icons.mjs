// The app's PNG icons, drawn from its logo (public/favicon.svg: a rounded square and a stroked
// "V") with Node alone: the logo is two shapes, so each pixel's coverage is read from their exact
// signed distances (a rounded rectangle; a polyline with round caps and joins), and the PNG is
// written with node:zlib. No rasteriser to install, and the same pixels on every machine.
//
//   npm run icons    # → public/icons/*.png, committed; run again when favicon.svg changes
//
// It reads only what the logo uses (one <rect> with rx and fill, one <path> of M/L/H/V moves
// with stroke, stroke-width, round caps and joins) and stops on anything else.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const ui = join(dirname(fileURLToPath(import.meta.url)), '..');
const svg = readFileSync(join(ui, 'public/favicon.svg'), 'utf8');

/** The attributes of the one `<tag …/>` in the logo. */
function element(tag) {
  const all = [...svg.matchAll(new RegExp(`<${tag}\\b([^>]*)/?>`, 'g'))];
  if (all.length !== 1) throw new Error(`favicon.svg: expected one <${tag}>, found ${all.length}`);
  return Object.fromEntries([...all[0][1].matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

function colour(hex) {
  const h = hex.replace(/^#/, '');
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  if (!/^[0-9a-f]{6}$/i.test(full)) throw new Error(`favicon.svg: a colour this script does not read: ${hex}`);
  return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16));
}

/** A path of straight moves (M m L l H h V v) as its points. */
function polyline(d) {
  const tokens = d.match(/[a-zA-Z]|-?\d*\.?\d+(?:e-?\d+)?/g) ?? [];
  const points = [];
  let x = 0;
  let y = 0;
  let cmd = '';
  for (let i = 0; i < tokens.length; ) {
    if (/[a-zA-Z]/.test(tokens[i])) cmd = tokens[i++];
    const n = () => Number(tokens[i++]);
    switch (cmd) {
      case 'M': case 'L': x = n(); y = n(); break;
      case 'm': case 'l': x += n(); y += n(); break;
      case 'H': x = n(); break;
      case 'h': x += n(); break;
      case 'V': y = n(); break;
      case 'v': y += n(); break;
      default: throw new Error(`favicon.svg: the path's "${cmd}" is not a straight move; draw the icons another way`);
    }
    if ((cmd === 'M' || cmd === 'm') && points.length) throw new Error('favicon.svg: one stroke only');
    points.push([x, y]);
  }
  return points;
}

const [, , viewW, viewH] = (element('svg').viewBox ?? '').split(/\s+/).map(Number);
const rect = element('rect');
const path = element('path');
if (path.fill !== 'none' || path['stroke-linecap'] !== 'round' || path['stroke-linejoin'] !== 'round') {
  throw new Error('favicon.svg: the mark must be an unfilled stroke with round caps and joins');
}
const logo = {
  size: viewW,
  radius: Number(rect.rx ?? 0),
  back: colour(rect.fill),
  ink: colour(path.stroke),
  width: Number(path['stroke-width']),
  points: polyline(path.d),
};
if (viewW !== viewH || Number(rect.width) !== viewW || Number(rect.height) !== viewH) throw new Error('favicon.svg: a square that the rect fills');

function roundedRect(px, py, half, r) {
  const qx = Math.abs(px) - half + r;
  const qy = Math.abs(py) - half + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

function toSegment(px, py, [ax, ay], [bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy || 1)));
  return Math.hypot(px - ax - t * dx, py - ay - t * dy);
}

/**
 * The logo at `size` pixels, RGBA. `bleed`: the square is filled to its edges (no rounded
 * corners: a maskable icon, or Apple's, which rounds it itself); `mark`: the V's scale about
 * the centre (a maskable icon keeps it inside the middle 80%).
 */
function draw(size, { bleed = false, mark = 1 } = {}) {
  const unit = size / logo.size; // pixels per logo unit
  const c = logo.size / 2;
  const out = Buffer.alloc(size * size * 4);
  const cover = (d) => Math.max(0, Math.min(1, 0.5 - d * unit)); // d in logo units, 1px ramp
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const u = (x + 0.5) / unit;
      const v = (y + 0.5) / unit;
      const back = bleed ? 1 : cover(roundedRect(u - c, v - c, c, logo.radius));
      // The point in the mark's own units, scaled about the centre.
      const mu = c + (u - c) / mark;
      const mv = c + (v - c) / mark;
      let d = Infinity;
      for (let i = 1; i < logo.points.length; i++) d = Math.min(d, toSegment(mu, mv, logo.points[i - 1], logo.points[i]));
      const ink = Math.min(back, cover((d - logo.width / 2) * mark));
      const alpha = ink + (1 - ink) * back;
      const o = (y * size + x) * 4;
      for (let k = 0; k < 3; k++) {
        const premul = ink * logo.ink[k] + (1 - ink) * back * logo.back[k];
        out[o + k] = alpha ? Math.round(premul / alpha) : 0;
      }
      out[o + 3] = Math.round(alpha * 255);
    }
  }
  return out;
}

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bits per channel
  ihdr[9] = 6; // RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) rgba.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const icons = [
  // The manifest's icons: the logo as it is, rounded corners and all.
  ['icon-192.png', 192, {}],
  ['icon-512.png', 512, {}],
  // Android crops a maskable icon to its own shape, keeping at least the middle 80% circle.
  ['icon-maskable-512.png', 512, { bleed: true, mark: 0.8 }],
  // iOS's home screen: a full square that iOS rounds (transparent corners would turn black).
  ['apple-touch-icon.png', 180, { bleed: true, mark: 0.9 }],
];

const dir = join(ui, 'public/icons');
mkdirSync(dir, { recursive: true });
for (const [name, size, opts] of icons) {
  writeFileSync(join(dir, name), png(size, draw(size, opts)));
  console.log(`public/icons/${name} (${size}×${size})`);
}
