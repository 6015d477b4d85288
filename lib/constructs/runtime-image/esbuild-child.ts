import { spawnSync } from 'node:child_process';
import type * as Esbuild from 'esbuild';

/** An import to send elsewhere: `path` as written in a file whose path ends with `importerSuffix`. */
export interface Redirect {
  readonly importerSuffix: string;
  readonly path: string;
  readonly to: string;
}

/** One file esbuild produced (not written: the options must say `write: false`). */
export interface OutputFile {
  readonly path: string;
  readonly contents: Uint8Array;
}

/** What the child reports: the output files, or esbuild's errors (or the message of whatever else failed). */
type ChildResult =
  | { readonly files: { readonly path: string; readonly contents: string }[] }
  | { readonly errors: Esbuild.Message[]; readonly message: string };

/** esbuild's build failure as buildSync throws it: an Error with esbuild's messages in `errors`. */
export class EsbuildFailure extends Error {
  constructor(
    message: string,
    readonly errors: Esbuild.Message[],
  ) {
    super(message);
  }
}

// The child: plain CommonJS JavaScript run with `node -e`, so nothing has to ship beside the
// compiled constructs. It reads {esbuild, options, redirects} as JSON on stdin and writes the
// result as JSON on stdout. The plugin only redirects; every other option comes from the parent.
const CHILD = String.raw`
const input = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const esbuild = require(input.esbuild);
const redirect = {
  name: 'kruise-ha-redirect',
  setup(build) {
    build.onResolve({ filter: new RegExp(input.filter) }, (args) => {
      const importer = args.importer.split('\\').join('/');
      const r = input.redirects.find((r) => r.path === args.path && importer.endsWith(r.importerSuffix));
      return r ? { path: r.to } : undefined;
    });
  },
};
esbuild.build({ ...input.options, plugins: [redirect] }).then(
  (result) => ({ files: result.outputFiles.map((f) => ({ path: f.path, contents: Buffer.from(f.contents).toString('base64') })) }),
  (e) => ({ errors: (e && e.errors) || [], message: String(e && e.message) }),
).then((out) => process.stdout.write(JSON.stringify(out)));
`;

/**
 * esbuild's async `build` with `redirects` applied, run synchronously: `buildSync` runs no plugins,
 * and an import written relative (`./gen/index.js`) can be replaced only by a plugin (`alias`
 * matches package paths). Constructs bundle at synth, which is synchronous, so the build runs in a
 * child Node process that the parent waits for. Throws like buildSync: EsbuildFailure with
 * esbuild's messages.
 */
export function buildWithRedirects(
  esbuildPath: string,
  options: Esbuild.BuildOptions & { write: false },
  redirects: readonly Redirect[],
): OutputFile[] {
  if (redirects.length === 0) throw new Error('buildWithRedirects needs at least one redirect');
  // esbuild calls the plugin only for import paths matching the filter (its Go regexp syntax).
  const filter = `^(${redirects.map((r) => r.path.replace(/[.*+?^$|()[\]{}\\]/g, '\\$&')).join('|')})$`;
  // Without NODE_OPTIONS: the app's loaders (ts-node, tsx, Jest's flags) are no business of the child.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS'));
  const child = spawnSync(process.execPath, ['-e', CHILD], {
    input: JSON.stringify({ esbuild: esbuildPath, options, redirects, filter }),
    encoding: 'utf8',
    env,
    maxBuffer: 1 << 30,
  });
  let result: ChildResult | undefined;
  try {
    result = JSON.parse(child.stdout) as ChildResult;
  } catch {
    result = undefined;
  }
  if (!result || child.status !== 0) {
    const why = child.error?.message ?? (child.stderr.trim() || `exit status ${child.status}`);
    throw new Error(`esbuild's child process (${process.execPath}) failed: ${why}`);
  }
  if ('errors' in result) throw new EsbuildFailure(result.message, result.errors);
  return result.files.map(({ path, contents }) => ({
    path,
    contents: new Uint8Array(Buffer.from(contents, 'base64')),
  }));
}
