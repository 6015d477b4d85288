/**
 * Rules both rooms enforce are written once, in lib/contract/, as pure functions returning the
 * problems they find (an empty array when the input is fine); the constructs turn a problem into a prop error,
 * the runtime into an options error. `field` is the name the caller passed in (or, for rules over
 * several values, a key of the input), so each room can prefix it with its own prop or flag name.
 *
 * Like lib/contract.ts these modules are free of I/O and import only each other: they are loaded
 * at synth time.
 */

/** One broken rule: what is wrong, with which value, and how to fix it. */
export interface Problem {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
  readonly fix: string;
}

/** The one wording of a problem: `field: message (got value). Fix: fix`. */
export function describeProblem(problem: Problem): string {
  return `${problem.field}: ${problem.message} (got ${renderValue(problem.value)}). Fix: ${problem.fix}`;
}

function renderValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A copy of `o` without its undefined values, so unset options render (or override) nothing. */
export function withoutUndefined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
