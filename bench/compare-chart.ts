/** The compare benchmark's chart: an SVG written by the benchmark itself, no plotting dependency. */

export type Series = {
  name: string;
  points: Array<{ label: string; p50: number; p99: number; answeredPerSecond: number }>;
};

/**
 * Latency (log scale) at each offered load, p50 dashed and p99 solid, one colour per subject; answered req/s printed at
 * each point.
 */
export function chart(series: Series[], title: string): string {
  const W = 760,
    H = 440,
    L = 70,
    R = 170,
    T = 40,
    B = 60;
  const labels = series[0].points.map((p) => p.label);
  const all = series.flatMap((s) => s.points);
  const yMin = Math.max(0.1, Math.min(...all.map((p) => p.p50)) / 1.5);
  const yMax = Math.max(...all.map((p) => p.p99)) * 1.5;
  const x = (i: number) => L + ((i + 0.5) / labels.length) * (W - L - R);
  const y = (v: number) =>
    T + (1 - (Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (H - T - B);
  const colors: Record<string, string> = {
    ours: '#1f77b4',
    upstream: '#d62728',
    'upstream-default': '#d62728',
    'upstream-tuned': '#ff7f0e',
    'upstream-equal-scope': '#9467bd',
  };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${title}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">offered load (open loop; saturation: 16 connections, closed loop); small print: answered req/s</text>`,
    `<text x="18" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 18 ${(T + H - B) / 2})">latency, ms (log scale)</text>`,
  ];
  for (let e = Math.floor(Math.log10(yMin)); e <= Math.ceil(Math.log10(yMax)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v < yMin || v > yMax) continue;
      out.push(
        `<line x1="${L}" y1="${y(v).toFixed(1)}" x2="${W - R}" y2="${y(v).toFixed(1)}" stroke="#ddd"/><text x="${L - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`,
      );
    }
  }
  labels.forEach((l, i) => out.push(`<text x="${x(i).toFixed(1)}" y="${H - B + 16}" text-anchor="middle">${l}</text>`));
  series.forEach((s, si) => {
    const c = colors[s.name] ?? '#555';
    for (const [key, dash] of [
      ['p99', ''],
      ['p50', ' stroke-dasharray="5,4"'],
    ] as const) {
      out.push(
        `<polyline fill="none" stroke="${c}" stroke-width="2"${dash} points="${s.points.map((p, i) => `${x(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(' ')}"/>`,
      );
      for (const [i, p] of s.points.entries())
        out.push(`<circle cx="${x(i).toFixed(1)}" cy="${y(p[key]).toFixed(1)}" r="3" fill="${c}"/>`);
    }
    for (const [i, p] of s.points.entries()) {
      out.push(
        `<text x="${(x(i) + 6).toFixed(1)}" y="${(y(p.p99) - 6).toFixed(1)}" font-size="10" fill="${c}">${p.p99} ms${Number.isFinite(p.answeredPerSecond) ? ` (${Math.round(p.answeredPerSecond)}/s)` : ''}</text>`,
      );
    }
    const ly = T + 10 + si * 40;
    out.push(
      `<line x1="${W - R + 15}" y1="${ly}" x2="${W - R + 40}" y2="${ly}" stroke="${c}" stroke-width="2"/><text x="${W - R + 45}" y="${ly + 4}">${s.name} p99</text>`,
    );
    out.push(
      `<line x1="${W - R + 15}" y1="${ly + 16}" x2="${W - R + 40}" y2="${ly + 16}" stroke="${c}" stroke-width="2" stroke-dasharray="5,4"/><text x="${W - R + 45}" y="${ly + 20}">${s.name} p50</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
