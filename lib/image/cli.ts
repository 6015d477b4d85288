#!/usr/bin/env node
/**
 * `kruise-ha-image publish <synth-output-dir>`: pushes every RuntimeImage build context found there.
 * Prints `<repository>:<tag>@<digest>` per image on stdout (for scripts), progress on stderr.
 */
import { parseArgs } from 'node:util';
import { isEntrypoint } from '../runtime/entrypoint.js';
import { findBuildContexts } from './context-files.js';
import { publishImage } from './publish.js';

const PROGRAM = 'kruise-ha-image';
const USAGE = `usage: ${PROGRAM} publish <synth-output-dir | context-dir> [options]

Pushes the runtime image(s) RuntimeImage synthesized, without Docker. Credentials come
from $DOCKER_CONFIG/config.json or ~/.docker/config.json (docker login).

options:
  --platform <os/arch>   platform(s) to build, repeat or comma-separate (default linux/amd64);
                         several push an index and need a multi-platform base
  --index                push an index even for one platform
  --force                move the tag if it holds another image (the base tag moved)
  --plain-http <host>    reach this registry over HTTP (loopback registries always are)
  --chunk-size <bytes>   upload chunk size (default 8388608)
  --json                 print the full result as JSON instead of the reference
  -h, --help             this text
`;

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const processIo: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

export async function main(argv: readonly string[], io: CliIo = processIo, fetchImpl?: typeof fetch): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        platform: { type: 'string', multiple: true },
        index: { type: 'boolean' },
        force: { type: 'boolean' },
        'plain-http': { type: 'string', multiple: true },
        'chunk-size': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.err(`${PROGRAM}: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if (positionals[0] !== 'publish' || positionals.length !== 2) {
    io.err(`${PROGRAM}: expected "publish <dir>", got "${positionals.join(' ')}"\n\n${USAGE}`);
    return 2;
  }
  const chunkSize = values['chunk-size'] === undefined ? undefined : Number(values['chunk-size']);
  if (chunkSize !== undefined && (!Number.isInteger(chunkSize) || chunkSize < 1024)) {
    io.err(`${PROGRAM}: --chunk-size must be a whole number of bytes >= 1024 (got ${values['chunk-size']})\n`);
    return 2;
  }
  try {
    for (const context of findBuildContexts(positionals[1])) {
      io.err(`publishing ${context}\n`);
      const result = await publishImage({
        context,
        chunkSize,
        index: values.index,
        force: values.force,
        plainHttp: values['plain-http'],
        platforms: values.platform?.flatMap((p) => p.split(',')).filter(Boolean),
        log: (line) => io.err(`  ${line}\n`),
        fetch: fetchImpl,
      });
      io.out(values.json ? `${JSON.stringify(result, null, 2)}\n` : `${result.reference}@${result.digest}\n`);
    }
    return 0;
  } catch (e) {
    io.err(`${PROGRAM} publish: ${(e as Error).message}\n`);
    return 1;
  }
}

if (isEntrypoint(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
