/**
 * Go `time.ParseDuration` syntax (`720h`, `1h30m`, `1.5h`, `500ms`), because upstream's
 * `CERTS_RENEW_BEFORE` and every kruise-manager duration flag use it.
 */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Milliseconds in `text`; throws naming `field` when it is not a Go duration or is negative. */
export function parseDuration(text: string, field: string): number {
  const fail = (why: string): never => {
    throw new Error(
      `${field}: ${JSON.stringify(text)} is not a duration (${why}); use Go syntax such as 720h or 1h30m`,
    );
  };
  const s = text.trim();
  if (s === '0') return 0;
  if (s === '') fail('empty');
  if (s.startsWith('-')) fail('negative');
  let pos = s.startsWith('+') ? 1 : 0;
  if (pos === s.length) fail('no value');
  let total = 0;
  while (pos < s.length) {
    TERM.lastIndex = pos;
    const m = TERM.exec(s);
    if (!m) fail(`unexpected ${JSON.stringify(s.slice(pos, pos + 8))}`);
    total += Number(m![1]) * UNIT_MS[m![2]];
    pos = TERM.lastIndex;
  }
  if (!Number.isFinite(total)) fail('too large');
  return total;
}

/** `720h0m0s` style, for logs that echo configuration back. */
export function formatDuration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h}h${m}m${s}s`;
}
