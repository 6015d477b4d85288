// Issue #11: the runtime reads upstream's patchPodMetadata whitelist from ConfigMap
// kruise-configuration in its namespace (upstream pkg/util/configuration). The runtime runs as a
// process under the ServiceAccount the constructs render, with their RBAC: its ConfigMap watch is
// granted only by name (a fieldSelector on metadata.name, authorized as that resourceName).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KRUISE_CONFIGURATION, Names } from '../../lib/contract.js';
import { PATCH_METADATA_WHITELIST_KEY } from '../../lib/runtime/sidecarset/metadata.js';
import { auditEvents, rbacDenials, serviceAccountUser } from './support/audit.js';
import { ManagerProcess } from './support/manager-process.js';
import { addEndpoint, installRuntime, kubeConfig, uninstallWebhooks } from './support/runtime-cluster.js';
import { apiMessage, rejection, sidecarSetClient, waitFor, type SidecarSetObject } from './support/sidecarset.js';
import { serviceAccountKubeconfig } from './support/upstream-manager.js';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const sidecarSets = sidecarSetClient(kc);
const INSTALL_NS = 'kruise-it-whitelist';
const APPS_NS = 'whitelist-it-apps';
const created: string[] = [];
let manager: ManagerProcess;
let started: Date;

const sidecarSet = (name: string, annotations: Record<string, string>): SidecarSetObject => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name, labels: { team: 'mesh' } },
  spec: {
    selector: { matchLabels: { app: 'wl' } },
    containers: [{ name: 'proxy', image: 'proxy:1' }],
    patchPodMetadata: [{ annotations, patchPolicy: 'Overwrite' }],
  },
});

async function setWhitelist(value: string): Promise<void> {
  const body = {
    metadata: { name: KRUISE_CONFIGURATION, namespace: INSTALL_NS },
    data: { [PATCH_METADATA_WHITELIST_KEY]: value },
  };
  await core
    .replaceNamespacedConfigMap({ name: KRUISE_CONFIGURATION, namespace: INSTALL_NS, body })
    .catch(() => core.createNamespacedConfigMap({ namespace: INSTALL_NS, body }));
}

beforeAll(async () => {
  await installRuntime(kc, INSTALL_NS);
  await core.createNamespace({ body: { metadata: { name: APPS_NS } } });
  const dir = mkdtempSync(join(tmpdir(), 'whitelist-it-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, await serviceAccountKubeconfig(INSTALL_NS, Names.managerServiceAccount), {
    mode: 0o600,
  });
  started = new Date();
  manager = await ManagerProcess.start({ name: 'wl-m0', kubeconfigPath, namespace: INSTALL_NS });
  await manager.waitReady();
  await waitFor('the runtime to lead', async () => ((await manager.leading()) ? true : undefined));
  await addEndpoint(kc, INSTALL_NS, manager.name, manager.ports.webhook);
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await uninstallWebhooks(kc);
  for (const name of created) await sidecarSets.delete(name).catch(() => undefined);
  for (const namespace of [APPS_NS, INSTALL_NS]) {
    await core.deleteCollectionNamespacedPod({ namespace }).catch(() => undefined);
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}, 60_000);

describe('patchPodMetadata whitelist from ConfigMap kruise-configuration', () => {
  const annotations = { 'mesh.io/inject': 'proxy' };

  it('refuses patchPodMetadata while there is no ConfigMap', async () => {
    const message = await waitFor('the validating webhook to answer', async () => {
      const m = await rejection(() => sidecarSets.create(sidecarSet('wl-early', annotations)));
      return m.includes('vsidecarset.kb.io') ? m : undefined;
    });
    expect(message).toMatch(
      /spec\.patchPodMetadata: no patch metadata whitelist is configured; add the keys to SidecarSet_PatchPodMetadata_WhiteList of ConfigMap kruise-configuration/,
    );
  });

  it('refuses a malformed whitelist, naming the ConfigMap key', async () => {
    await setWhitelist('{"rules":{"allowedAnnotationKeyExprs":["^mesh"]}}');
    const message = await waitFor('the malformed whitelist to reach the cache', async () => {
      const m = await rejection(() => sidecarSets.create(sidecarSet('wl-malformed', annotations)));
      return m.includes('cannot be used') ? m : undefined;
    });
    expect(message).toMatch(
      /SidecarSet_PatchPodMetadata_WhiteList of ConfigMap kruise-configuration: rules must be a JSON list; fix the ConfigMap/,
    );
    expect(manager.child.exitCode).toBeNull(); // a malformed whitelist never crashes the runtime
  });

  it('accepts it once the ConfigMap whitelists the key, and patches the pods it injects', async () => {
    await setWhitelist(
      '{"rules":[{"selector":{"matchLabels":{"team":"mesh"}},"allowedAnnotationKeyExprs":["^mesh\\\\.io/"]}]}',
    );
    created.push('wl-mesh');
    await waitFor('the whitelist to reach the cache', async () => {
      try {
        return await sidecarSets.create(sidecarSet('wl-mesh', annotations));
      } catch (err) {
        if (!/whitelist/.test(String((err as { body?: unknown }).body ?? err))) throw err;
        return undefined;
      }
    });
    // A key the whitelist does not allow is still refused, by name.
    expect(await rejection(() => sidecarSets.create(sidecarSet('wl-other', { 'other.io/x': 'y' })))).toMatch(
      /annotation "other\.io\/x" is not allowed by the whitelist/,
    );
    const pod = await waitFor('the SidecarSet to reach the injection cache', async () => {
      const p: V1Pod = await core.createNamespacedPod({
        namespace: APPS_NS,
        body: {
          metadata: { name: 'probe', labels: { app: 'wl' } },
          spec: { containers: [{ name: 'app', image: 'app:1' }] },
        },
        dryRun: 'All',
      });
      return p.spec!.containers.some((c) => c.name === 'proxy') ? p : undefined;
    });
    expect(pod.metadata!.annotations).toMatchObject(annotations);
    const stored = await core.createNamespacedPod({
      namespace: APPS_NS,
      body: {
        metadata: { name: 'app-1', labels: { app: 'wl' } },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    });
    expect(stored.metadata!.annotations).toMatchObject(annotations);
  });

  it('refuses it again once the ConfigMap is deleted (the cache follows the watch)', async () => {
    await core.deleteNamespacedConfigMap({ name: KRUISE_CONFIGURATION, namespace: INSTALL_NS });
    created.push('wl-after-delete');
    const message = await waitFor('the deletion to reach the cache', async () => {
      try {
        await sidecarSets.create(sidecarSet('wl-after-delete', annotations));
        await sidecarSets.delete('wl-after-delete');
        return undefined;
      } catch (err) {
        return apiMessage(err);
      }
    });
    expect(message).toMatch(/no patch metadata whitelist is configured/);
  });

  it('needed no permission the rendered RBAC does not grant', async () => {
    const user = serviceAccountUser(INSTALL_NS, Names.managerServiceAccount);
    expect(await rbacDenials(user, started)).toEqual([]);
    // The witness sees this user: its reads of the whitelist ConfigMap are in the audit log, so an empty list of
    // denials is about the manager's own requests, not a log that never names it.
    const configMapReads = auditEvents({ user, since: started }).filter(
      (e) => e.objectRef?.resource === 'configmaps' && ['get', 'list', 'watch'].includes(e.verb),
    );
    expect(configMapReads.length).toBeGreaterThan(0);
  });
});
