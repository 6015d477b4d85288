import { Flags } from '../../contract.js';
import { propError } from '../core/errors.js';

/** The upstream manager's verbosity when none is chosen: the official chart's `manager.log.level`. */
export const UPSTREAM_DEFAULT_VERBOSITY = 4;

/**
 * How much the manager logs. The two binaries count differently: upstream kruise-manager (klog)
 * by a verbosity number, this project's runtime by a named floor; each image accepts its own.
 */
export class LogLevel {
  /**
   * klog verbosity of upstream kruise-manager (`--v=N`): 0 logs errors, warnings and the
   * essentials; higher numbers add detail (the chart's default is 4). Upstream image only.
   */
  public static verbosity(level: number): LogLevel {
    if (!Number.isInteger(level) || level < 0 || level > 10) {
      throw propError(
        'logLevel',
        level,
        'is not a klog verbosity (a whole number from 0 to 10)',
        'use LogLevel.verbosity(n) with 0 <= n <= 10 (the chart default is 4)',
      );
    }
    return new LogLevel(level, undefined);
  }

  /** Every message, for debugging (`--log-level=debug`). Runtime image only. */
  public static debug(): LogLevel {
    return new LogLevel(undefined, 'debug');
  }

  /** Informational messages and above (`--log-level=info`), the runtime's default. Runtime image only. */
  public static info(): LogLevel {
    return new LogLevel(undefined, 'info');
  }

  /** Warnings and errors (`--log-level=warn`). Runtime image only. */
  public static warn(): LogLevel {
    return new LogLevel(undefined, 'warn');
  }

  /** Errors only (`--log-level=error`). Runtime image only. */
  public static error(): LogLevel {
    return new LogLevel(undefined, 'error');
  }

  private constructor(
    private readonly klogVerbosity: number | undefined,
    private readonly named: string | undefined,
  ) {}

  /** Upstream's `--v`, or an error naming the prop when this is a runtime level. @internal */
  public _upstreamArgs(prop = 'logLevel'): string[] {
    if (this.klogVerbosity === undefined) {
      throw propError(
        prop,
        `LogLevel.${this.named}()`,
        'is a level of the runtime image; upstream kruise-manager (klog) counts verbosity',
        'use LogLevel.verbosity(n) (0 to 10; the chart default is 4), or ManagerImage.runtime(...)',
      );
    }
    return [`--${Flags.verbosity}=${this.klogVerbosity}`];
  }

  /** The runtime's `--log-level`, or an error naming the prop when this is a klog verbosity. @internal */
  public _runtimeArgs(): string[] {
    if (this.named === undefined) {
      throw propError(
        'logLevel',
        `LogLevel.verbosity(${this.klogVerbosity})`,
        "is a klog verbosity of upstream kruise-manager; this project's runtime logs by level",
        'use LogLevel.debug(), info(), warn() or error(), or ManagerImage.upstream()',
      );
    }
    return [`--${Flags.logLevel}=${this.named}`];
  }
}

/** Format of the manager's log lines. */
export enum LogFormat {
  /** klog's text lines (upstream's default). Upstream image only: the runtime writes JSON lines. */
  TEXT = 'text',
  /** One JSON object per line (`--logging-format=json` for upstream; the runtime's only format). */
  JSON = 'json',
}
