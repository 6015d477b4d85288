import { describe, expect, it } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  checkDnsLabel,
  checkDnsSubdomain,
  propAsWritten,
  propError,
  wholeSeconds,
} from '../../../lib/constructs/core/errors.js';

describe('errors', () => {
  it('names the prop, the value and the fix', () => {
    expect(propError('a.b', { x: 1 }, 'is wrong', 'do this').message).toBe('a.b: is wrong (got {"x":1}). Fix: do this');
  });

  it('checks DNS names like Kubernetes does', () => {
    expect(() => checkDnsLabel('n', 'ok-name')).not.toThrow();
    expect(() => checkDnsLabel('n', 'x'.repeat(64))).toThrow(/n: is not a valid DNS label/);
    expect(() => checkDnsLabel('n', '-bad')).toThrow();
    expect(() => checkDnsSubdomain('n', 'a.b-c.d')).not.toThrow();
    expect(() => checkDnsSubdomain('n', 'a..b')).toThrow(/n: is not a valid DNS subdomain/);
  });

  it('converts whole-second durations only', () => {
    expect(wholeSeconds('d', Duration.minutes(2))).toBe(120);
    expect(() => wholeSeconds('d', Duration.millis(200))).toThrow(
      /d: must be a whole number of seconds >= 1 \(got "200ms"\)/,
    );
  });

  it("spells the prop as the app's language does (JSII_AGENT names a jsii host)", () => {
    const path = 'webhooks.pods.failurePolicy';
    expect(propAsWritten(path, '')).toBe(path);
    expect(propAsWritten(path, 'Java/17.0.15')).toBe(path);
    expect(propAsWritten(path, 'Python/3.11.7')).toBe('webhooks.pods.failure_policy');
    expect(propAsWritten(path, 'go1.26.8/linux/amd64')).toBe('Webhooks.Pods.FailurePolicy');
    // Quoted keys are the user's values, never renamed.
    expect(propAsWritten('podLabels["app.kubernetes.io/partOf"]', 'Python/3.11.7')).toBe(
      'pod_labels["app.kubernetes.io/partOf"]',
    );
  });
});
