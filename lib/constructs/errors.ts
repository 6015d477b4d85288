/**
 * Every error names the prop, the bad value and the fix, so a user reading a failed synth
 * never has to open the source.
 */
export function propError(prop: string, value: unknown, problem: string, fix: string): Error {
  return new Error(`${prop}: ${problem} (got ${render(value)}). Fix: ${fix}`);
}

function render(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** RFC 1123 DNS label: what Kubernetes requires of namespace and Service names. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain: what Kubernetes requires of most object names. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function checkDnsLabel(prop: string, value: string): void {
  if (value.length > 63 || !DNS_LABEL.test(value)) {
    throw propError(prop, value, 'is not a valid DNS label (RFC 1123)',
      'use at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit');
  }
}

export function checkDnsSubdomain(prop: string, value: string): void {
  if (value.length > 253 || !DNS_SUBDOMAIN.test(value)) {
    throw propError(prop, value, 'is not a valid DNS subdomain (RFC 1123)',
      'use at most 253 lower-case letters, digits, "-" and ".", each label starting and ending with a letter or digit');
  }
}

export function checkPositiveInt(prop: string, value: number, min = 1): void {
  if (!Number.isInteger(value) || value < min) {
    throw propError(prop, value, `must be an integer >= ${min}`, `set ${prop} to a whole number of at least ${min}`);
  }
}

export function checkPort(prop: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw propError(prop, value, 'is not a TCP port', 'use a whole number from 1 to 65535');
  }
}

/** A duration in whole seconds, or an error naming the prop (cdk8s' own error names none). */
export function wholeSeconds(prop: string, duration: { toMilliseconds(): number }): number {
  const ms = duration.toMilliseconds();
  if (!Number.isInteger(ms / 1000) || ms < 1000) {
    throw propError(prop, `${ms}ms`, 'must be a whole number of seconds >= 1', 'use Duration.seconds(n) with a whole n >= 1');
  }
  return ms / 1000;
}
