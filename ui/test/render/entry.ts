// The real components rendered to HTML on the server side (svelte/server), for the node tests:
// built by `npm test` with Vite's SSR build into .test-build/ssr/, so the tests check what the
// templates really produce, not a copy of them.
import { render } from 'svelte/server';
import Markdown from '../../src/components/Markdown.svelte';

export function markdown(source: string, streaming = false): string {
  return render(Markdown, { props: { source, streaming } }).body;
}
