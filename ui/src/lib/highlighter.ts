// The syntax highlighter, loaded on demand (import('./highlighter') in lib/highlight.ts): lowlight
// runs highlight.js's grammars and answers a tree (hast), never an HTML string. The tree is turned
// into DOM nodes here with createElement and text nodes only: a span with hljs-* classes is the
// only element it can make, whatever the code says.

import { createLowlight } from 'lowlight';
import type { Element, ElementContent, Root } from 'hast';
import bash from 'highlight.js/lib/languages/bash';
import shell from 'highlight.js/lib/languages/shell';
import javascript from 'highlight.js/lib/languages/javascript';
import typescript from 'highlight.js/lib/languages/typescript';
import rust from 'highlight.js/lib/languages/rust';
import python from 'highlight.js/lib/languages/python';
import json from 'highlight.js/lib/languages/json';
import diff from 'highlight.js/lib/languages/diff';
import xml from 'highlight.js/lib/languages/xml';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import sql from 'highlight.js/lib/languages/sql';
import yaml from 'highlight.js/lib/languages/yaml';
import ini from 'highlight.js/lib/languages/ini';

const lowlight = createLowlight({ bash, console: shell, javascript, typescript, rust, python, json, diff, xml, css, go, sql, yaml, ini });

/**
 * Longer code is shown plain: highlighting runs on the page's one thread, and 100 kB of
 * TypeScript already takes 0.3-0.6 s on a desktop (twice that at 200 kB, more on a phone; a diff
 * highlights both of its sides).
 */
export const MAX_HIGHLIGHT = 100_000;

/** A run of code and the highlight classes around it (outermost first). */
export interface Segment {
  text: string;
  classes: string[];
}

/** The highlighted tree of `code` in `language` (a registered id), or null when it has none. */
export function tree(code: string, language: string | null): Root | null {
  if (!language || !lowlight.registered(language) || code.length > MAX_HIGHLIGHT) return null;
  try {
    return lowlight.highlight(language, code);
  } catch {
    return null;
  }
}

/** Keep only the hljs-* class names a theme styles (a class is all a span may carry). */
function classesOf(el: Element): string[] {
  const c: unknown = el.properties?.className;
  const list: unknown[] = Array.isArray(c) ? c : typeof c === 'string' ? c.split(/\s+/) : [];
  return list.map(String).filter((x) => /^hljs-[\w-]+$/.test(x) || /^[\w-]+_$/.test(x));
}

/** The tree as flat segments of text with their classes, split into lines (for diffs). */
export function lines(root: Root | null, code: string): Segment[][] {
  const out: Segment[][] = [[]];
  if (!root) {
    for (const [i, line] of code.split('\n').entries()) {
      if (i) out.push([]);
      if (line) out[out.length - 1].push({ text: line, classes: [] });
    }
    return out;
  }
  const walk = (nodes: (ElementContent | Root['children'][number])[], classes: string[]) => {
    for (const node of nodes) {
      if (node.type === 'text') {
        node.value.split('\n').forEach((part, i) => {
          if (i) out.push([]);
          if (part) out[out.length - 1].push({ text: part, classes });
        });
      } else if (node.type === 'element') {
        walk(node.children, [...classes, ...classesOf(node)]);
      }
    }
  };
  walk(root.children, []);
  return out;
}

/** The tree as DOM nodes: spans with classes and text nodes, nothing else. */
export function render(root: Root, doc: Document): DocumentFragment {
  const frag = doc.createDocumentFragment();
  const walk = (nodes: (ElementContent | Root['children'][number])[], parent: Node) => {
    for (const node of nodes) {
      if (node.type === 'text') parent.appendChild(doc.createTextNode(node.value));
      else if (node.type === 'element') {
        const span = doc.createElement('span');
        const classes = classesOf(node);
        if (classes.length) span.className = classes.join(' ');
        walk(node.children, span);
        parent.appendChild(span);
      }
    }
  };
  walk(root.children, frag);
  return frag;
}
