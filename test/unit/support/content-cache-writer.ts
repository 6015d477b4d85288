/**
 * A second process for content-cache.test.ts: one cachedInto call whose build takes a while and records that it ran.
 * Usage: tsx content-cache-writer.ts <cache root> <checkout> <target> <builds log> <build ms>
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cachedInto } from '../../support/content-cache.js';

const [root, checkout, target, builds, buildMs] = process.argv.slice(2);
const outcome = cachedInto(target, {
  name: 'race',
  root,
  inputs: { root: checkout, paths: ['src'] },
  log: () => undefined,
  build: (dir) => {
    appendFileSync(builds, `${process.pid}\n`);
    // Written in pieces with a pause between: a reader of half an entry would see the first piece alone.
    writeFileSync(join(dir, 'first'), `built by ${process.pid}\n`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(buildMs));
    writeFileSync(join(dir, 'second'), `built by ${process.pid}\n`);
  },
});
process.stdout.write(`${JSON.stringify(outcome)}\n`);
