import type { HealthCheck } from './checks.js';

export * from './checks.js';
export * from './event-loop.js';
export * from './server.js';
export * from './webhook-check.js';

/** Readiness from anything that knows whether it is ready and why not (a certificate provider, a cache). */
export function readyCheck(
  source: { ready(): boolean; notReadyReason?(): string | undefined },
  what: string,
): HealthCheck {
  return () => {
    if (!source.ready()) throw new Error(source.notReadyReason?.() ?? `${what} not ready`);
  };
}
