#!/usr/bin/env node
/**
 * `kruise-ha doctor`: inspects a live cluster read-only and prints one line per check, with the
 * fix for every failure. Exit codes: 0 nothing failed, 1 a check failed, 2 bad usage or the
 * cluster could not be read.
 *
 * `kruise-ha upgrade-diff <from> <to>`: what changes between two upstream releases this library
 * renders (CRDs, webhooks, controllers, RBAC, gates, flags, defaults), before a user moves
 * `ManagerImage.upstream({ version })`. Exit codes: 0 nothing blocks, 1 the change breaks an
 * install (a downgrade over newer stored versions), 2 bad usage.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Names } from '../contract.js';
import { DEFAULT_UPSTREAM_RELEASE, UPSTREAM_RELEASES } from '../upstream/releases.js';
import { releaseDiff, renderReleaseDiff } from '../upstream/upgrade.js';
import { runDoctor } from './doctor.js';
import { renderJson, renderTable } from './report.js';

const HELP = `Usage: kruise-ha doctor [options]
       kruise-ha upgrade-diff <from> <to> [--json]

Inspects the kruise-manager install in a live cluster, read-only (gets, lists and
SubjectAccessReviews), and prints one line per check with the fix for every failure.

Options:
  --kubeconfig <path>   kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)
  --context <name>      kubeconfig context (default: the current context)
  -n, --namespace <ns>  install namespace (default: ${Names.namespace})
  --json                machine-readable report on stdout
  --no-color            never colour the table (colour is used only on a terminal, and never with NO_COLOR set)
  -h, --help            this text

Exit codes: 0 nothing failed (warnings allowed), 1 a check failed, 2 bad usage or the cluster could not be read.

upgrade-diff prints what changes between two upstream releases (${UPSTREAM_RELEASES.join(', ')}; default
${DEFAULT_UPSTREAM_RELEASE}): CRDs, webhooks, controllers, RBAC, feature gates, flags and their defaults,
blockers and what to do. Exit codes: 0 nothing blocks the change, 1 it breaks an install (e.g. a downgrade
over objects stored in a version the older release does not serve), 2 bad usage.`;

export interface Io {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
}

/** Runs the command line; resolves to the exit code. */
export async function main(argv: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        json: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.stderr.write(`error: ${(e as Error).message}. Fix: see kruise-ha doctor --help\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    (values.help ? io.stdout : io.stderr).write(`${HELP}\n`);
    return values.help ? 0 : 2;
  }
  if (positionals[0] === 'upgrade-diff') return upgradeDiff(positionals.slice(1), values.json === true, io);
  if (positionals[0] !== 'doctor' || positionals.length > 1) {
    io.stderr.write(
      `error: unknown command "${positionals.join(' ')}". Fix: run "kruise-ha doctor" or "kruise-ha upgrade-diff <from> <to>"\n`,
    );
    return 2;
  }
  const kc = new KubeConfig();
  try {
    if (values.kubeconfig) kc.loadFromFile(values.kubeconfig);
    else kc.loadFromDefault();
    if (values.context) kc.setCurrentContext(values.context);
    if (!kc.getCurrentCluster()) throw new Error('the kubeconfig names no cluster');
  } catch (e) {
    io.stderr.write(
      `error: --kubeconfig ${values.kubeconfig ?? '(default)'}: ${(e as Error).message}. Fix: pass --kubeconfig with a working kubeconfig, or set KUBECONFIG\n`,
    );
    return 2;
  }
  const namespace = values.namespace ?? Names.namespace;
  let report;
  try {
    report = await runDoctor({ kubeConfig: kc, namespace });
  } catch (e) {
    io.stderr.write(
      `error: cannot read the cluster at ${kc.getCurrentCluster()?.server}: ${(e as Error).message}. Fix: check the kubeconfig, the network and that your user may read namespace ${namespace}\n`,
    );
    return 2;
  }
  if (values.json) io.stdout.write(renderJson(report));
  else {
    const colour = !values['no-color'] && Boolean(io.stdout.isTTY) && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
    io.stdout.write(renderTable(report, { colour, width: io.stdout.isTTY ? (io.stdout.columns ?? 100) : 0 }));
  }
  return report.ok ? 0 : 1;
}

function upgradeDiff(versions: string[], json: boolean, io: Io): number {
  const known = UPSTREAM_RELEASES.join(', ');
  if (versions.length !== 2) {
    io.stderr.write(
      `error: upgrade-diff needs two releases (got ${versions.length}). Fix: kruise-ha upgrade-diff <from> <to>, e.g. kruise-ha upgrade-diff v1.8.3 ${DEFAULT_UPSTREAM_RELEASE} (releases: ${known})\n`,
    );
    return 2;
  }
  const unknown = versions.filter((v) => !UPSTREAM_RELEASES.includes(v));
  if (unknown.length) {
    io.stderr.write(
      `error: ${unknown.join(', ')} is not a release this library renders (got "${unknown[0]}"). Fix: use one of ${known}\n`,
    );
    return 2;
  }
  const diff = releaseDiff(versions[0], versions[1]);
  io.stdout.write(json ? `${JSON.stringify(diff, null, 2)}\n` : renderReleaseDiff(diff));
  return diff.blockers.length ? 1 : 0;
}

/** True when this file is the process' main module, also through a node_modules/.bin symlink. */
function isEntrypoint(): boolean {
  try {
    return Boolean(process.argv[1]) && realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}

if (isEntrypoint())
  process.exitCode = await main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
