/**
 * The field's manifest linters as judges: every example is synthesized to YAML and scored by
 * kube-score and checkov (pinned; installed on the first run by test/setup/ensure-linters.sh).
 * An example passes with zero findings beyond the documented trade-offs in ./allow-list.ts, and
 * an allow-list entry that no longer matches anything fails too, so the list stays as short as
 * the manifests allow.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { exampleCharts } from '../support/example-charts.js';
import { ALLOW_LIST, allowanceFor } from './allow-list.js';
import {
  checkov,
  describeFinding,
  ensureLinters,
  Finding,
  kubeScore,
  Linters,
  Manifest,
  Placed,
  writeExample,
} from './linters.js';

const dir = mkdtempSync(join(tmpdir(), 'kruise-lint-'));
let linters: Linters;
/** Findings per example, e.g. `default-ha.ts:DefaultHaChart`. */
const findings = new Map<string, Finding[]>();

beforeAll(async () => {
  // A cold machine installs both linters here (about a minute); later runs take milliseconds.
  linters = await ensureLinters();
  const files = new Map<string, Placed[]>();
  const names = new Map<string, string>();
  for (const [name, chart] of await exampleCharts()) {
    const objects = Testing.synth(new chart(Testing.app() as unknown as Chart, 'kruise')) as Manifest[];
    const [file, placed] = writeExample(dir, name.replace(/[^A-Za-z0-9-]+/g, '_'), objects);
    files.set(file, placed);
    names.set(file, name);
    findings.set(name, await kubeScore(linters, join(dir, file)));
  }
  for (const [file, found] of await checkov(linters, dir, files)) findings.get(names.get(file)!)!.push(...found);
}, 600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kube-score and checkov on every example', () => {
  it('finds every example', () => {
    expect(findings.size).toBeGreaterThanOrEqual(9);
  });

  it('reports nothing outside the allow-list', () => {
    const unexpected = [...findings].flatMap(([example, found]) =>
      found.filter((f) => !allowanceFor(f)).map((f) => `${example} ${describeFinding(f)}`),
    );
    expect(unexpected).toEqual([]);
  });

  it('uses every allow-list entry (a fixed finding leaves the list)', () => {
    const all = [...findings.values()].flat();
    const unused = ALLOW_LIST.flatMap((a) =>
      a.checks.filter((c) => !all.some((f) => `${f.linter}:${f.check}` === c && allowanceFor(f) === a)),
    );
    expect(unused).toEqual([]);
  });

  it('gives every allow-list entry objects and a reason', () => {
    for (const a of ALLOW_LIST) {
      expect(a.checks.every((c) => /^(kube-score|checkov):\S+$/.test(c))).toBe(true);
      expect(a.objects.every((o) => /^[A-Z][A-Za-z]+\/[a-z0-9.-]+$/.test(o))).toBe(true);
      expect(a.reason.length).toBeGreaterThan(80);
    }
  });
});

describe('the judges themselves (negative control)', () => {
  it('flag a careless Deployment through both linters, mapped to its object', async () => {
    const careless = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'careless', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'careless' } },
        template: {
          metadata: { labels: { app: 'careless' } },
          spec: { containers: [{ name: 'app', image: 'nginx:latest', securityContext: { privileged: true } }] },
        },
      },
    };
    const controlDir = mkdtempSync(join(tmpdir(), 'kruise-lint-control-'));
    try {
      const [file, placed] = writeExample(controlDir, 'careless', [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } },
        careless,
      ]);
      const found = [
        ...(await kubeScore(linters, join(controlDir, file))),
        ...(await checkov(linters, controlDir, new Map([[file, placed]]))).get(file)!,
      ];
      const ids = found.map((f) => `${f.linter}:${f.check} ${f.kind}/${f.name}`);
      expect(ids).toEqual(
        expect.arrayContaining([
          'kube-score:container-resources Deployment/careless',
          'kube-score:container-security-context-privileged Deployment/careless',
          'checkov:CKV_K8S_16 Deployment/careless',
          'checkov:CKV_K8S_14 Deployment/careless',
        ]),
      );
      expect(found.some((f) => allowanceFor(f))).toBe(false);
    } finally {
      rmSync(controlDir, { recursive: true, force: true });
    }
  }, 60_000);
});
