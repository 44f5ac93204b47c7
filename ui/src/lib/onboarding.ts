// The onboarding's steps, once for the whole app: their names (what vyred's onboarding tools
// take and what `onboarding.state` reports), their order and their titles. The onboarding
// screens, the step components and Settings read them from here, and types.ts's StepName is
// derived from them. vyred keeps its own list (daemon/src/modules/onboarding/mod.rs, STEPS and the
// steps' schema pattern): test/onboarding.test.mjs reads it from the Rust source and fails when
// the two disagree.

export const STEPS = [
  { name: 'you', title: 'You' },
  { name: 'claude', title: 'Claude Code' },
  { name: 'address', title: 'Your address' },
  { name: 'history', title: 'Your history' },
  { name: 'devices', title: 'Your devices' },
] as const;

export type StepName = (typeof STEPS)[number]['name'];

/** The names alone, in order. */
export const STEP_NAMES: readonly StepName[] = STEPS.map((s) => s.name);

/** A step's title, the same in the onboarding's list, on its screen and in Settings. */
export function stepTitle(name: StepName): string {
  return STEPS.find((s) => s.name === name)!.title;
}
