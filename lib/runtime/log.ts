/**
 * Structured JSON logs, one object per line on stderr, so log pipelines parse them without
 * regexes. Levels follow the usual order; `--log-level` picks the floor.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogSink {
  write(line: string): void;
}

const stderrSink: LogSink = { write: (line) => process.stderr.write(line) };

export class Logger {
  private readonly floor: number;

  constructor(
    private readonly fields: Record<string, unknown> = {},
    private readonly level: LogLevel = 'info',
    private readonly sink: LogSink = stderrSink,
  ) {
    this.floor = ORDER[level];
  }

  /** A logger that adds `fields` to every line (for example `{ controller: 'sidecarset' }`). */
  child(fields: Record<string, unknown>): Logger {
    return new Logger({ ...this.fields, ...fields }, this.level, this.sink);
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.log('debug', msg, fields);
  }

  info(msg: string, fields?: Record<string, unknown>): void {
    this.log('info', msg, fields);
  }

  warn(msg: string, fields?: Record<string, unknown>): void {
    this.log('warn', msg, fields);
  }

  error(msg: string, fields?: Record<string, unknown>): void {
    this.log('error', msg, fields);
  }

  private log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (ORDER[level] < this.floor) return;
    const entry: Record<string, unknown> = { ts: new Date().toISOString(), level, msg, ...this.fields, ...fields };
    for (const [k, v] of Object.entries(entry)) {
      if (v instanceof Error) entry[k] = { message: v.message, name: v.name, stack: v.stack };
    }
    this.sink.write(JSON.stringify(entry) + '\n');
  }
}

export function isLogLevel(value: string): value is LogLevel {
  return value in ORDER;
}
