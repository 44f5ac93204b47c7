// The real components rendered to HTML on the server side (svelte/server), for the node tests:
// built by `npm test` with Vite's SSR build into .test-build/ssr/, so the tests check what the
// templates really produce, not a copy of them.
import { render } from 'svelte/server';
import Markdown from '../../src/components/Markdown.svelte';
import Diff from '../../src/components/Diff.svelte';
import StatusDot from '../../src/components/StatusDot.svelte';
import Toast from '../../src/components/Toast.svelte';
import Notice from '../../src/components/Notice.svelte';
import WatchItems from '../../src/components/WatchItems.svelte';
import FiledHits from '../../src/components/FiledHits.svelte';
import SourceFiles from '../../src/components/SourceFiles.svelte';
import LessonNotice from '../../src/components/LessonNotice.svelte';
import LessonLevel from '../../src/components/LessonLevel.svelte';
import ChangeRow from '../../src/components/ChangeRow.svelte';
import UsageFace from '../../src/components/UsageFace.svelte';
import BudgetMeter from '../../src/components/BudgetMeter.svelte';
import WorktreePanel from '../../src/components/WorktreePanel.svelte';
import Composer from '../../src/components/Composer.svelte';
import type { ThreadSource } from '../../src/lib/source';
import type { Worktree } from '../../src/lib/worktree';
import type { Face } from '../../src/lib/usage';
import type { TurnMark } from '../../src/lib/changes';
import type { Line } from '../../src/lib/diff';
import type { Check, Level, LessonNotice as Notice } from '../../src/lib/lessons';
import type { OpenFile } from '../../src/lib/filelinks';
import type { FiledHit } from '../../src/lib/filed';
import type { MemoryWord } from '../../src/lib/memory';
import type { SourceFile, WatchItem } from '../../src/lib/watchers';

export function markdown(
  source: string | null | undefined,
  streaming = false,
  onfile: OpenFile | null = null,
  memory: { words: MemoryWord[]; open: (fact: number) => void } | null = null,
): string {
  return render(Markdown, { props: { source, streaming, onfile, memory } }).body;
}

export function diff(props: {
  path: string;
  old?: string;
  new?: string;
  edits?: { old_string: string; new_string: string }[];
  hunks?: { old: string; new: string; oldStart: number; newStart: number }[];
  created?: boolean | null;
  named?: boolean;
  onpick?: ((line: Line) => void) | null;
  picked?: ((line: Line) => boolean) | null;
}): string {
  return render(Diff, { props }).body;
}

export function statusDot(props: { status: string; label?: string | null; size?: number }): string {
  return render(StatusDot, { props }).body;
}

export function toast(props: { toast: { text: string; level: 'info' | 'error' } | null; overNav?: boolean }): string {
  return render(Toast, { props }).body;
}

export function notice(props: { kind: 'warning' | 'error'; text: string; detail?: string | null; id?: string; testid?: string }): string {
  return render(Notice, { props }).body;
}

export function watchItems(props: { items: WatchItem[]; now: number; onproject?: ((project: string) => void) | null; showProject?: boolean }): string {
  return render(WatchItems, { props }).body;
}

export function filedHits(props: { hits: FiledHit[]; now: number; onproject?: ((project: string) => void) | null; showProject?: boolean }): string {
  return render(FiledHits, { props }).body;
}

export function sourceFiles(props: { files: SourceFile[]; leftOut?: number }): string {
  return render(SourceFiles, { props }).body;
}

export function lessonNotice(props: { notice: Notice; check?: Check | null; onopen?: () => void }): string {
  return render(LessonNotice, { props: { onopen: () => {}, ...props } }).body;
}

export function lessonLevel(props: { level: Level; check: Check | null; busy?: boolean; disabled?: boolean }): string {
  return render(LessonLevel, { props: { onchange: () => {}, ...props } }).body;
}

export function changeRow(props: { mark: TurnMark; reverted?: number; onopen?: (() => void) | null }): string {
  return render(ChangeRow, { props }).body;
}

export function usageFace(props: { face: Face; form?: 'nav' | 'short' }): string {
  return render(UsageFace, { props }).body;
}

export function budgetMeter(props: { spent: number; budget: number }): string {
  return render(BudgetMeter, { props }).body;
}

export function worktreePanel(props: { worktree: Worktree; can?: boolean }): string {
  const source = { thread: 't1', box: null, can: () => props.can ?? true } as unknown as ThreadSource;
  return render(WorktreePanel, { props: { thread: 't1', source, worktree: props.worktree, onchange: () => {} } }).body;
}

export function composer(props: { running?: boolean; disabled?: boolean; closed?: boolean; placeholder?: string }): string {
  return render(Composer, { props: { ...props, onsend: async () => true, oninterrupt: () => {} } }).body;
}
