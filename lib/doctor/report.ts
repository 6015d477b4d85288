/** The doctor's output: a table for people (colour only on a terminal), JSON for machines. */
import { styleText } from 'node:util';
import type { DoctorReport } from './doctor.js';
import type { Status } from './model.js';

const LABEL: Record<Status, string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' };
const COLOUR: Record<Status, 'green' | 'yellow' | 'red' | 'gray'> = {
  pass: 'green',
  warn: 'yellow',
  fail: 'red',
  skip: 'gray',
};

export function renderJson(report: DoctorReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** Wraps `text` to `width` columns, every line after the first indented by `indent`. */
function wrap(text: string, width: number, indent: string): string {
  if (width <= indent.length + 20) return text;
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width - (out.length ? indent.length : 0)) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out.map((l, i) => (i === 0 ? l : indent + l)).join('\n');
}

export interface TableOptions {
  readonly colour: boolean;
  /** Terminal width to wrap at; 0 for no wrapping. */
  readonly width: number;
}

export function renderTable(report: DoctorReport, o: TableOptions): string {
  const paint = (s: Status, text: string) => (o.colour ? styleText(COLOUR[s], text, { validateStream: false }) : text);
  const bold = (text: string) => (o.colour ? styleText('bold', text, { validateStream: false }) : text);
  const idWidth = Math.max(...report.checks.map((c) => c.id.length));
  const indent = ' '.repeat(6 + idWidth + 2);
  const lines = [
    bold(
      `kruise-ha doctor: namespace ${report.namespace}${report.flavour ? `, ${report.flavour} manager ${report.image}` : ''}`,
    ),
    '',
  ];
  for (const c of report.checks) {
    lines.push(
      `${paint(c.status, LABEL[c.status].padEnd(4))}  ${c.id.padEnd(idWidth)}  ${wrap(c.message, o.width, indent)}`,
    );
    if (c.fix && c.status !== 'pass') lines.push(`${indent}${wrap(`${bold('fix:')} ${c.fix}`, o.width, indent)}`);
  }
  for (const e of report.readErrors) lines.push(`${paint('warn', 'note')}  could not read ${e}`);
  const count = (s: Status) => report.checks.filter((c) => c.status === s).length;
  lines.push(
    '',
    `${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warnings${count('skip') ? `, ${count('skip')} skipped` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
