import { describeProblem, dnsLabelProblems, dnsSubdomainProblems, Problem, selectorProblems } from '../../contract.js';

/**
 * Every error names the prop, the bad value and the fix, so a user reading a failed synth
 * never has to open the source. Worded like the contract's problems (one format for both rooms).
 */
export function propError(prop: string, value: unknown, problem: string, fix: string): Error {
  return new Error(describeProblem({ field: propAsWritten(prop), value, message: problem, fix }));
}

/**
 * A prop path (`webhooks.pods.failurePolicy`, `labels["app.kubernetes.io/name"]`) as the user's language spells it.
 * Python, Java and Go apps run these constructs in a jsii kernel, whose host names itself in JSII_AGENT
 * (`Python/3.11.7`, `Java/17.0.15`, Go's `go1.26.8/linux/amd64`): Python writes props in snake_case
 * (`expected_nodes`), Go in PascalCase (`ExpectedNodes`), Java and TypeScript as declared. Quoted keys are values,
 * never renamed.
 */
export function propAsWritten(prop: string, agent: string = process.env.JSII_AGENT ?? ''): string {
  const language = /^go\d/.test(agent) ? 'Go' : agent.split('/')[0];
  const rename =
    language === 'Python'
      ? (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
      : language === 'Go'
        ? (name: string) => name[0].toUpperCase() + name.slice(1)
        : undefined;
  if (!rename) return prop;
  return prop
    .split('"')
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[A-Za-z_][A-Za-z0-9_]*/g, rename)))
    .join('"');
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
