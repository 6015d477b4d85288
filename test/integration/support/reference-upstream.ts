/**
 * The differential tests' two managers on one envtest API server, one after the other: the reference upstream
 * kruise-manager (its default output synthesized by the constructs, installed server-side, the binary built from the
 * pinned module) and then this runtime (the runtime flavour installed, same configuration names). Each is reached
 * through its own EndpointSlice on loopback; the webhooks are removed after each run, so later suites' requests are
 * not intercepted.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { envtest } from '../../envtest/state.js';
import { kubectlApply, objectPath } from './apply.js';
import { ManagerProcess } from './manager-process.js';
import { addEndpoint, installRuntime, removeEndpoint, uninstallWebhooks } from './runtime-cluster.js';
import type { ApiClient } from './sidecarset-differential.js';
import { renderedManager, synthesizeDefault, UpstreamManager, type RenderedManager } from './upstream-manager.js';

export interface ReferenceUpstreamOptions {
  /** The upstream release whose default output is installed and whose binary runs. */
  readonly release: string;
  /** Suffix of the upstream replica's name and of this runtime's (`<suffix>-ours-0`). */
  readonly suffix: string;
  readonly api: ApiClient;
  readonly kc: KubeConfig;
  /** Where the upstream replica's files and the install manifest are written. */
  readonly runDir: string;
  /**
   * CRDs an earlier suite may have installed from the runtime flavour under the same names (another field manager):
   * removed, and waited for, before upstream's output is applied.
   */
  readonly foreignCrds: readonly string[];
  /** The test's own objects an aborted earlier run may have left: removed with no webhook installed, first. */
  readonly clear?: () => Promise<void>;
}

export class ReferenceUpstream {
  /** The synthesized default output of the release. */
  public readonly objects: KubernetesObject[];
  public readonly rendered: RenderedManager;
  private upstream: UpstreamManager | undefined;
  private ours: { process: ManagerProcess; namespace: string } | undefined;

  constructor(private readonly o: ReferenceUpstreamOptions) {
    this.objects = synthesizeDefault(o.release);
    this.rendered = renderedManager(this.objects);
  }

  /**
   * Installs upstream's default output, starts the upstream replica and runs `fn` while it serves the webhooks; then
   * stops it and removes its webhooks, endpoint and Lease. A failure of `fn` carries the replica's last output.
   */
  async withUpstream<T>(fn: () => Promise<T>): Promise<T> {
    const { api, kc, runDir } = this.o;
    const rendered = this.rendered;
    await uninstallWebhooks(kc);
    await this.o.clear?.();
    for (const crd of this.o.foreignCrds) await this.removeCrd(crd);
    await this.removeOutputObjects(false);
    const applied = await kubectlApply(this.objects, join(runDir, 'install.yaml'), {
      serverSide: true,
      fieldManager: 'kruise-ha',
    });
    if (!applied.ok) throw new Error(`installing the synthesized default output failed:\n${applied.output}`);
    const upstream = await UpstreamManager.start(
      rendered,
      `${rendered.deployment.metadata!.name}-${this.o.suffix}`,
      runDir,
    );
    this.upstream = upstream;
    await removeEndpoint(kc, rendered.namespace, upstream.name);
    await addEndpoint(kc, rendered.namespace, upstream.name, upstream.webhookPort);
    await upstream.waitReady(120_000);
    try {
      return await fn();
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${upstream.tail()}`, { cause: e });
    } finally {
      await uninstallWebhooks(kc);
      await upstream.stop('SIGTERM', 10_000);
      await removeEndpoint(kc, rendered.namespace, upstream.name);
      await api.call(
        'DELETE',
        `/apis/coordination.k8s.io/v1/namespaces/${rendered.lease.namespace}/leases/${rendered.lease.name}`,
      );
    }
  }

  /**
   * Installs the runtime flavour in `namespace`, starts one replica of this runtime and runs `fn` while it serves the
   * webhooks; then removes the webhooks. A failure of `fn` carries the replica's last logs.
   */
  async withOurs<T>(namespace: string, fn: () => Promise<T>, readyTimeoutMs?: number): Promise<T> {
    const { kc } = this.o;
    await installRuntime(kc, namespace);
    const ours = await ManagerProcess.start({
      name: `${this.o.suffix}-ours-0`,
      kubeconfigPath: envtest().kubeconfigPath,
      namespace,
    });
    this.ours = { process: ours, namespace };
    await ours.waitReady(readyTimeoutMs);
    await addEndpoint(kc, namespace, ours.name, ours.ports.webhook);
    try {
      return await fn();
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${ours.logs().slice(-3000)}`, { cause: e });
    } finally {
      await uninstallWebhooks(kc);
    }
  }

  /** For afterAll: removes the webhooks and stops whichever manager a failed run left behind. */
  async stop(): Promise<void> {
    await uninstallWebhooks(this.o.kc);
    this.upstream?.signal('SIGKILL');
    if (this.ours) {
      await this.ours.process.stop();
      await removeEndpoint(this.o.kc, this.ours.namespace, this.ours.process.name);
    }
  }

  /** Deletes the default output's objects that exist (never Namespaces; CRDs only if `crds`). */
  async removeOutputObjects(crds: boolean): Promise<void> {
    for (const o of [...this.objects]
      .reverse()
      .filter((x) => x.kind !== 'Namespace' && (crds || x.kind !== 'CustomResourceDefinition')))
      await this.o.api.call('DELETE', await objectPath(o)).catch(() => undefined);
  }

  /** Deletes a CRD (whichever flavour installed it) and waits until it is gone. */
  async removeCrd(name: string): Promise<void> {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
    await this.o.api.call('DELETE', path);
    for (let i = 0; i < 600; i++) {
      if ((await this.o.api.call('GET', path)).status === 404) return;
      await sleep(100);
    }
    throw new Error(`CRD ${name} still exists 60 s after its deletion`);
  }
}

/** Writes both recordings of a differential run as JSON, to study a difference (the tests' *_DUMP variables). */
export function dumpRecordings(
  file: string | undefined,
  seed: number,
  cases: unknown,
  recordings: { upstream?: Map<string, unknown>; ours?: Map<string, unknown> },
): void {
  if (!file) return;
  const upstream = Object.fromEntries(recordings.upstream ?? []);
  const ours = Object.fromEntries(recordings.ours ?? []);
  writeFileSync(file, JSON.stringify({ seed, cases, upstream, ours }, null, 1));
}
