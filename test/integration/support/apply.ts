/**
 * Applying a synthesized stream the ways operators do, reporting (not throwing) what the API
 * server says: server-side apply with a chosen field manager and force setting, and `kubectl
 * apply` (client-side: a three-way merge against the last-applied annotation, as Argo CD does by default).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { apiRequest } from '../../envtest/http.js';
import { envtest } from '../../envtest/state.js';
import { until } from './ha.js';

export interface ApplyResult {
  /** `Kind/name` or `Kind/namespace/name`. */
  object: string;
  status: number;
  /** The API server's Status message on failure. */
  message: string;
}

export const objectId = (o: KubernetesObject): string =>
  `${o.kind}/${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;

const discovery = new Map<string, Array<{ name: string; kind: string }>>();

/**
 * The resources `apiVersion` serves (`name` is the plural, or `plural/subresource`); empty if it serves none. Cached.
 */
export async function discover(apiVersion: string): Promise<Array<{ name: string; kind: string }>> {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  let resources = discovery.get(base);
  if (!resources) {
    const res = await apiRequest(envtest(), 'GET', base);
    if (res.status === 404) return [];
    if (res.status !== 200) throw new Error(`discovery of ${base}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    resources = (JSON.parse(res.body) as { resources: Array<{ name: string; kind: string }> }).resources;
    discovery.set(base, resources);
  }
  return resources;
}

/** The REST path of `o`, from the API server's discovery (so any kind, built-in or CRD, resolves). */
export async function objectPath(o: KubernetesObject): Promise<string> {
  const base = o.apiVersion!.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  const find = async () =>
    (await discover(o.apiVersion!)).find((r) => r.kind === o.kind && !r.name.includes('/'))?.name;
  let plural = await find();
  if (!plural) {
    // a CRD of this group may have been established since the lookup was cached
    discovery.delete(base);
    plural = await find();
  }
  if (!plural) throw new Error(`${base} serves no kind ${o.kind}`);
  return `${base}${o.metadata?.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${plural}/${o.metadata!.name}`;
}

export interface ServerSideApplyOptions {
  fieldManager: string;
  force: boolean;
  dryRun?: boolean;
}

/** Server-side apply of raw JSON as the envtest admin; resolves with the outcome, never throws for an HTTP error. */
export async function applyServerSide(o: KubernetesObject, opts: ServerSideApplyOptions): Promise<ApplyResult> {
  const state = envtest();
  const query = `?fieldManager=${encodeURIComponent(opts.fieldManager)}&force=${opts.force}${opts.dryRun ? '&dryRun=All' : ''}`;
  const url = new URL(`${await objectPath(o)}${query}`, state.server);
  const body = JSON.stringify(o);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'PATCH',
        agent: false,
        ca: readFileSync(state.caCertPath),
        cert: readFileSync(state.adminCertPath),
        key: readFileSync(state.adminKeyPath),
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      },
      (res) => {
        let data = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => {
            data += d;
          })
          .on('end', () => resolve({ status: res.statusCode ?? 0, text: data }));
      },
    );
    req
      .on('error', reject)
      .setTimeout(30_000, () => req.destroy(new Error(`apply ${objectId(o)} timed out`)))
      .end(body);
  });
  let message = '';
  if (status >= 300) {
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      message = text;
    }
  }
  return { object: objectId(o), status, message };
}

/** `kubectl` on PATH, or undefined. */
export async function kubectlVersion(): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)('kubectl', ['version', '--client', '-o', 'json'], { timeout: 20_000 });
    return (JSON.parse(stdout) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion ?? 'unknown';
  } catch {
    return undefined;
  }
}

/**
 * `kubectl apply -f` of `objects` as the envtest admin: client-side (three-way merge, the
 * default) or `--server-side` with a field manager. kubectl goes on after a failed object, so
 * `output` names every object's outcome; `ok` is its exit status.
 */
export async function kubectlApply(
  objects: KubernetesObject[],
  file: string,
  opts: { serverSide?: boolean; fieldManager?: string; forceConflicts?: boolean } = {},
): Promise<{ ok: boolean; output: string }> {
  writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
  const mode = opts.serverSide
    ? [
        '--server-side',
        `--field-manager=${opts.fieldManager ?? 'kubectl'}`,
        ...(opts.forceConflicts ? ['--force-conflicts'] : []),
      ]
    : [];
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'kubectl',
      ['--kubeconfig', envtest().kubeconfigPath, 'apply', ...mode, '-f', file],
      { timeout: 180_000, maxBuffer: 16 << 20 },
    );
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${x.stdout ?? ''}${x.stderr ?? x.message}` };
  }
}

/**
 * Deletes `crds` and waits until they are gone. Their objects' finalizers are stripped first:
 * no manager runs to remove them (e.g. on ImagePullJobs), and they would hold the CRDs in
 * Terminating, where re-creating one fails.
 */

export async function removeCrds(crds: KubernetesObject[]): Promise<void> {
  const state = envtest();
  const paths = crds.map((c) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.metadata!.name}`);
  for (const crd of crds as Array<
    KubernetesObject & {
      spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> };
    }
  >) {
    const base = `/apis/${crd.spec.group}/${crd.spec.versions.find((v) => v.served)?.name}`;
    const list = await apiRequest(state, 'GET', `${base}/${crd.spec.names.plural}`).catch(() => undefined);
    if (list?.status !== 200) continue;
    for (const item of (JSON.parse(list.body) as { items: KubernetesObject[] }).items.filter(
      (i) => i.metadata?.finalizers?.length,
    )) {
      const path = `${base}${item.metadata!.namespace ? `/namespaces/${item.metadata!.namespace}` : ''}/${crd.spec.names.plural}/${item.metadata!.name}`;
      await apiRequest(state, 'PUT', path, { ...item, metadata: { ...item.metadata, finalizers: [] } }).catch(
        () => undefined,
      );
    }
  }
  for (const path of paths) await apiRequest(state, 'DELETE', path).catch(() => undefined);
  await until(
    `CRDs ${crds.map((c) => c.metadata!.name).join(', ')} to be deleted`,
    async () => {
      for (const path of paths) if ((await apiRequest(state, 'GET', path)).status !== 404) return false;
      return true;
    },
    60_000,
    500,
  ).catch((e: Error) => process.stderr.write(`${e.message}\n`));
}
