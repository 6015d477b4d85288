/**
 * `npm run drills:publish`: writes the figures of the drills run since (test/e2e/drills-*.test.ts record them in
 * .test-output/ha-drills-results.json) into docs/ha-drills-results.json, docs/ha-drills.md and the README's HA table.
 * A test run never writes tracked files; publishing a run's figures is this separate, deliberate step.
 *
 *   npm run drills:publish                           the figures of the drills run since
 *   npm run drills:publish -- --from FILE --root DIR  another results file, another checkout
 */
import { publishDrills, runResultsPath } from '../../test/e2e/support/drill-results.js';
import { ROOT } from '../../test/e2e/support/synth.js';

function main(argv: string[]): number {
  let from = runResultsPath();
  let root = ROOT;
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if ((argv[i] === '--from' || argv[i] === '--root') && value && !value.startsWith('--')) {
      if (argv[i] === '--from') from = value;
      else root = value;
      i++;
    } else {
      process.stderr.write(`drills:publish: unexpected argument '${argv[i]}' (use: [--from FILE] [--root DIR])\n`);
      return 2;
    }
  }
  try {
    const published = publishDrills(from, root);
    process.stdout.write(`drills:publish: ${published.length} drill result(s) from ${from}: ${published.join(', ')}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 1;
  }
}

process.exit(main(process.argv.slice(2)));
