// Markdown source → the blocks the chat renders (pure: no DOM, unit-tested in node).
//
// The source is parsed by micromark (CommonMark, exactly) with GFM (tables, strikethrough, task
// lists, autolinks, footnotes) into an mdast tree, and the tree is rendered by Svelte templates
// (components/md/): no HTML string is ever built, so no raw HTML can reach the DOM. Raw HTML in
// the source stays in the tree as `html` nodes, which the templates show as text.
//
// Streaming: the component receives the whole text again on each delta. `blocks()` re-parses only
// from the start of the last top-level block and hands back the earlier blocks as the very same
// objects, so Svelte's keyed `each` leaves their DOM alone (no flicker, no re-highlight).

import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfm } from 'micromark-extension-gfm';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import type { Definition, FootnoteDefinition, Root, RootContent } from 'mdast';

/** One top-level block of a message: keyed by where it starts in the source. */
export interface Block {
  /** Stable while the block starts at the same offset: the `each` key. */
  key: string;
  node: RootContent;
  /** Offsets of the block in the source (end exclusive). */
  start: number;
  end: number;
  /** Still growing: the last block of a streaming message. */
  open: boolean;
  /** The definitions this block was resolved against (see `Doc.defs`). */
  defs: string;
  /** What its references point at, as of its parse (a finished block keeps its own). */
  refs: Refs;
}

/** Where a block's reference links and footnote calls point. */
export interface Refs {
  /** Link reference definitions by identifier (`[x]: https://…`). */
  links: Map<string, Definition>;
  /** Footnote numbers by identifier, in the order they are defined. */
  notes: Map<string, number>;
}

/** A parsed message: its blocks, and what its reference links and footnotes point at. */
export interface Doc {
  source: string;
  streaming: boolean;
  blocks: Block[];
  refs: Refs;
  /** A fingerprint of `links` and `notes`: a block is reused only if it was resolved against it. */
  defs: string;
}

const syntax = [gfm({ singleTilde: false })];
const trees = [gfmFromMarkdown()];

/** Parse markdown into an mdast tree (CommonMark + GFM; `~x~` is not a strikethrough). */
export function parse(source: string): Root {
  return fromMarkdown(source, { extensions: syntax, mdastExtensions: trees });
}

/**
 * The blocks of `source`, reusing what `prev` (the render before this delta) already had.
 *
 * While streaming and `source` extends `prev.source`, only the text from the start of the last
 * block on is parsed again: every block before it is final (CommonMark closes a top-level block
 * for good once another one starts) and is returned as the same object. When the message is
 * complete the whole source is parsed once more, so a reference defined late resolves; blocks
 * that come out the same are still the same objects.
 */
export function blocks(prev: Doc | null, source: string, streaming: boolean): Doc {
  if (prev && prev.source === source && prev.streaming === streaming) return prev;
  let kept: Block[] = [];
  let from = 0;
  if (streaming && prev && prev.blocks.length && source.startsWith(prev.source)) {
    kept = prev.blocks.slice(0, -1);
    from = lineStart(prev.source, prev.blocks[prev.blocks.length - 1].start);
  }
  const tree = parse(source.slice(from));
  const links = new Map(prev && from > 0 ? prev.refs.links : []);
  const notes = new Map(prev && from > 0 ? prev.refs.notes : []);
  collectDefs(tree, links, notes);
  const defs = fingerprint(links, notes);
  const refs: Refs = { links, notes };

  const old = new Map<number, Block>();
  for (const b of prev?.blocks ?? []) old.set(b.start, b);
  const fresh: Block[] = [];
  const n = tree.children.length;
  tree.children.forEach((node, i) => {
    const start = from + (node.position?.start.offset ?? 0);
    const end = from + (node.position?.end.offset ?? source.length - from);
    const open = streaming && i === n - 1;
    const same = old.get(start);
    // The same text, resolved against the same definitions, finished both times: the same block.
    if (same && !same.open && !open && same.end === end && same.defs === defs && prev!.source.slice(start, end) === source.slice(start, end)) {
      fresh.push(same);
    } else {
      fresh.push({ key: String(start), node, start, end, open, defs, refs });
    }
  });
  return { source, streaming, blocks: [...kept, ...fresh], refs, defs };
}

function lineStart(s: string, at: number): number {
  return s.lastIndexOf('\n', at - 1) + 1;
}

function collectDefs(tree: Root, links: Map<string, Definition>, notes: Map<string, number>): void {
  const walk = (nodes: RootContent[]) => {
    for (const node of nodes) {
      if (node.type === 'definition' && !links.has(node.identifier)) links.set(node.identifier, node);
      else if (node.type === 'footnoteDefinition') {
        if (!notes.has(node.identifier)) notes.set(node.identifier, notes.size + 1);
        walk((node as FootnoteDefinition).children);
      } else if ('children' in node && node.type !== 'paragraph' && node.type !== 'heading' && node.type !== 'table') {
        walk(node.children as RootContent[]);
      }
    }
  };
  walk(tree.children);
}

function fingerprint(links: Map<string, Definition>, notes: Map<string, number>): string {
  if (!links.size && !notes.size) return '';
  const l = [...links.values()].map((d) => `${d.identifier}\u0000${d.url}\u0000${d.title ?? ''}`);
  return `${l.join('\u0001')}\u0002${[...notes.keys()].join('\u0001')}`;
}

/** Schemes a link may use; anything else (javascript:, data:, file:, vbscript:, relative) is text. */
const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

/**
 * The address a link may open, or null. The URL is read the way the browser will read it (the
 * WHATWG parser: tabs and newlines dropped, scheme case-folded) and only http(s) and mailto pass;
 * a relative address would resolve against the app itself, so it does not pass either.
 */
export function safeHref(url: string | null | undefined): string | null {
  if (!url) return null;
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return null;
  }
  if (!SAFE_SCHEMES.has(u.protocol)) return null;
  if (u.protocol !== 'mailto:' && !u.hostname) return null;
  return u.href;
}
