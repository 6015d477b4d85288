/**
 * Named health checks, run concurrently with a deadline each, aggregated the way Kubernetes
 * components report them (`[+]name ok` / `[-]name failed: reason`).
 */
import { DNS_LABEL } from '../../contract.js';
import { realClock, type Clock } from '../clock.js';

/** Resolves (or returns) when healthy; throws with the reason when not. Should honour `signal`. */
export type HealthCheck = (signal: AbortSignal) => void | Promise<void>;

export interface CheckResult {
  name: string;
  ok: boolean;
  /** Why it failed; undefined when ok. */
  reason?: string;
}

export class CheckSet {
  private readonly checks = new Map<string, HealthCheck>();

  constructor(private readonly clock: Clock = realClock) {}

  /** Names are URL path segments (`/readyz/<name>`): lower-case DNS-label style. */
  add(name: string, check: HealthCheck): void {
    if (!DNS_LABEL.test(name))
      throw new Error(`health check name ${JSON.stringify(name)} must be lower-case letters, digits and dashes`);
    if (this.checks.has(name)) throw new Error(`a health check named ${name} already exists`);
    this.checks.set(name, check);
  }

  has(name: string): boolean {
    return this.checks.has(name);
  }

  names(): string[] {
    return [...this.checks.keys()];
  }

  /** Runs the selected checks; one that neither settles nor fails within `timeoutMs` fails. */
  async run(timeoutMs: number, select: (name: string) => boolean = () => true): Promise<CheckResult[]> {
    const selected = [...this.checks].filter(([name]) => select(name));
    return Promise.all(selected.map(([name, check]) => this.runOne(name, check, timeoutMs)));
  }

  private async runOne(name: string, check: HealthCheck, timeoutMs: number): Promise<CheckResult> {
    const abort = new AbortController();
    let cancel = () => {};
    const deadline = new Promise<never>((_, reject) => {
      cancel = this.clock.after(timeoutMs, () => {
        const err = new Error(`did not answer within ${timeoutMs}ms`);
        abort.abort(err);
        reject(err);
      });
    });
    try {
      await Promise.race([Promise.resolve().then(() => check(abort.signal)), deadline]);
      return { name, ok: true };
    } catch (e) {
      return { name, ok: false, reason: e instanceof Error ? e.message : String(e) };
    } finally {
      cancel();
    }
  }
}

/** The plain-text report: `ok` when all pass (unless verbose), else every check with its state. */
export function formatReport(
  kind: 'readyz' | 'healthz',
  results: CheckResult[],
  verbose: boolean,
): { ok: boolean; text: string } {
  const ok = results.every((r) => r.ok);
  if (ok && !verbose) return { ok, text: 'ok\n' };
  const lines = results.map((r) =>
    r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${oneLine(r.reason ?? 'unknown')}`,
  );
  lines.push(ok ? `${kind} check passed` : `${kind} check failed`);
  return { ok, text: lines.join('\n') + '\n' };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
