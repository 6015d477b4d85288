// The bundled runtime (main.mjs, as the image runs it) against a real API server: leader
// election, self-managed certificates and caBundle injection, SidecarSet webhooks, injection into
// a pod, and the controller's in-place update and status. The bundle aliases undici, and redirects
// client-node's generated models and APIs, to stand-ins that throw (lib/runtime/kube/undici-shim.ts,
// client-node-gen-stub.ts); everything here working, and no log line naming either, shows no path
// of real operation reaches them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleRuntime } from '../../lib/constructs/runtime-image/runtime-bundle.js';
import { Names, SecretKeys, SidecarSetAnnotations } from '../../lib/contract.js';
import { envtest } from '../envtest/state.js';
import {
  containerImage,
  createSidecarSet,
  deletePods,
  deleteSidecarSet,
  podBody,
  setSidecarImage,
  until,
  type SidecarSetParams,
} from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import {
  addEndpoint,
  installRuntime,
  kubeConfig,
  removeEndpoint,
  uninstallWebhooks,
} from './support/runtime-cluster.js';
import { kubeletStatus, patchPodStatus, sidecarSetClient } from './support/sidecarset.js';

const SLOW = 60_000; // bound for waits on the API server; never a speed assertion
const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
// One name for the install namespace, the SidecarSet, its label and (suffixed) the rest.
const id = `bundle-${randomBytes(3).toString('hex')}`;
const podsNs = `${id}-pods`;
const sidecarSet: SidecarSetParams = {
  ...{ name: id, appLabel: id, namespace: podsNs, container: `${id}-sidecar` },
  image: 'registry.invalid/sidecar:v1',
};
const dir = mkdtempSync(join(tmpdir(), 'runtime-bundle-'));
const bundlePath = join(dir, 'main.mjs');
let code = '';
let manager: ManagerProcess | undefined;

beforeAll(async () => {
  const bundle = bundleRuntime(fileURLToPath(new URL('../../lib/runtime/main.ts', import.meta.url)), 'main.mjs');
  code = Buffer.from(bundle.code).toString('utf8');
  writeFileSync(bundlePath, bundle.code);
  writeFileSync(`${bundlePath}.map`, bundle.map);
  await installRuntime(kc, id);
  await core.createNamespace({ body: { metadata: { name: podsNs } } });
  manager = await ManagerProcess.start({
    name: 'bundle-0',
    kubeconfigPath: envtest().kubeconfigPath,
    namespace: id,
    bundle: bundlePath,
  });
  await manager.waitReady();
  await addEndpoint(kc, id, manager.name, manager.ports.webhook);
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  if (manager) await removeEndpoint(kc, id, manager.name);
  await deleteSidecarSet(kc, sidecarSet.name);
  // Webhooks first: vpod.kb.io (pod DELETE, failurePolicy Fail) has no replica left to answer.
  await uninstallWebhooks(kc);
  await deletePods(kc, podsNs);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('bundled runtime', () => {
  it('carries the undici shim instead of undici', () => {
    expect(code).toContain('the bundled runtime has no undici');
    // undici's own error codes: none of its code made it into the bundle.
    expect(code).not.toContain('UND_ERR_');
  });

  it("carries the stand-in for client-node's generated models and APIs instead of them", () => {
    expect(code).toContain('the bundled runtime has no generated client-node API');
    // A model's type name (ObjectSerializer's typeMap, attributeTypeMap): in the bundle before the stand-in.
    expect(code).not.toContain('"V1PodSpec"');
  });

  it('leads, writes its certificates and makes the API server trust them', async () => {
    await until('the bundled manager to lead', () => manager!.leading(), SLOW, 200);
    const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: id });
    const ca = secret.data![SecretKeys.caCert]; // base64 of the PEM, as caBundle holds it
    const admission = kc.makeApiClient(AdmissionregistrationV1Api);
    await until(
      'every webhook entry to trust the stored CA',
      async () => {
        const m = await admission.readMutatingWebhookConfiguration({ name: Names.mutatingWebhookConfiguration });
        const v = await admission.readValidatingWebhookConfiguration({ name: Names.validatingWebhookConfiguration });
        return [...(m.webhooks ?? []), ...(v.webhooks ?? [])].every((w) => w.clientConfig.caBundle === ca);
      },
      SLOW,
    );
  }, 90_000);

  it('injects a SidecarSet into a pod, updates it in place and reports status', async () => {
    await createSidecarSet(kc, sidecarSet);
    const pod: V1Pod = await until(
      'a pod created through the API server to carry the sidecar',
      async () => {
        const created = await core.createNamespacedPod({
          namespace: podsNs,
          body: podBody(`p-${randomBytes(2).toString('hex')}`, sidecarSet.appLabel),
        });
        return containerImage(created, sidecarSet.container) === sidecarSet.image ? created : false;
      },
      SLOW,
      500,
    );
    expect(pod.metadata?.annotations?.[SidecarSetAnnotations.injectedList]).toBe(sidecarSet.name);
    await patchPodStatus(core, pod, kubeletStatus(pod, true));
    await setSidecarImage(kc, sidecarSet, 'registry.invalid/sidecar:v2');
    // The controller's JSON patch of the pod (through lib/runtime/kube).
    await until(
      'the sidecar to be updated in place',
      async () => {
        const now = await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: podsNs });
        return containerImage(now, sidecarSet.container) === 'registry.invalid/sidecar:v2';
      },
      SLOW,
      200,
    );
    // Its merge patch of the SidecarSet status, after ControllerRevisions were listed and created.
    const sidecarSets = sidecarSetClient(kc);
    await until(
      'the SidecarSet status to count the pod',
      async () => {
        const s = await sidecarSets.get(sidecarSet.name);
        return s.status?.matchedPods === 1 && s.status?.latestRevision;
      },
      SLOW,
      200,
    );
  }, 120_000);

  it('stops cleanly, and never logged reaching undici or the generated code', async () => {
    expect(await manager!.stop()).toEqual({ code: 0, signal: null });
    expect(manager!.logs()).toMatch(/"msg":"released the lease"/);
    expect(manager!.logs()).not.toMatch(/undici/i);
    expect(manager!.logs()).not.toMatch(/makeApiClient|generated client-node/);
  }, 30_000);
});
