import { describeProblem, dnsLabelProblems, dnsSubdomainProblems, Problem, selectorProblems } from '../contract.js';

/**
 * Every error names the prop, the bad value and the fix, so a user reading a failed synth
 * never has to open the source. Worded like the contract's problems (one format for both rooms).
 */
export function propError(prop: string, value: unknown, problem: string, fix: string): Error {
  return new Error(describeProblem({ field: prop, value, message: problem, fix }));
}

/**
 * Throws the first problem a contract rule found, as a prop error; `prop` maps the rule's field
 * to the prop the user set (the rules over single values already carry it).
 */
export function throwProblems(problems: readonly Problem[], prop: (field: string) => string = (f) => f): void {
  const [first] = problems;
  if (first) throw propError(prop(first.field), first.value, first.message, first.fix);
}

export function checkDnsLabel(prop: string, value: string): void {
  throwProblems(dnsLabelProblems(prop, value));
}

export function checkDnsSubdomain(prop: string, value: string): void {
  throwProblems(dnsSubdomainProblems(prop, value));
}

export function checkPositiveInt(prop: string, value: number, min = 1): void {
  if (!Number.isInteger(value) || value < min) {
    throw propError(prop, value, `must be an integer >= ${min}`, `set ${prop} to a whole number of at least ${min}`);
  }
}

/** A duration in whole seconds, or an error naming the prop (cdk8s' own error names none). */
export function wholeSeconds(prop: string, duration: { toMilliseconds(): number }): number {
  const ms = duration.toMilliseconds();
  if (!Number.isInteger(ms / 1000) || ms < 1000) {
    throw propError(
      prop,
      `${ms}ms`,
      'must be a whole number of seconds >= 1',
      'use Duration.seconds(n) with a whole n >= 1',
    );
  }
  return ms / 1000;
}

/** Kubernetes' label selector rules (the contract's), so a bad selector fails at synth rather than at apply. */
export function checkSelector(prop: string, selector: object): void {
  throwProblems(selectorProblems(prop, selector));
}
