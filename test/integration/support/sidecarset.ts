/**
 * SidecarSet helpers for tests and benchmarks against a real API server with no kubelet: the
 * caller acts as the kubelet by writing pod status (phase, Ready condition, and the images the
 * containers run, reported in the normalized form containerd's kubelet uses).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets' } as const;

/** A SidecarSet as the API returns it (untyped JSON). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SidecarSetObject = any;

/** What the API server said when it refused a request: the Status message, or the error text. */
export function apiMessage(err: unknown): string {
  const e = err as { body?: unknown; message?: string };
  try {
    const body =
      typeof e.body === 'string'
        ? (JSON.parse(e.body) as { message?: string })
        : (e.body as { message?: string } | undefined);
    if (body?.message) return body.message;
  } catch {
    /* not JSON */
  }
  return e.message ?? String(err);
}

/** The message of the rejection `action` must end in; fails if it succeeds. */
export async function rejection(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
  } catch (err) {
    return apiMessage(err);
  }
  throw new Error('expected the API server to reject the request, but it was accepted');
}

/** A failure a {@link waitFor} probe must not retry (an invariant broke, not a transient error). */
export class Fatal extends Error {}

/**
 * Polls `probe` until it returns a value other than undefined; fails after `timeoutMs` with
 * `what` and the last error. Errors are retried (transient API failures), except {@link Fatal}.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      if (err instanceof Fatal) throw err;
      last = apiMessage(err);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(intervalMs);
  }
}

/** The reference a containerd kubelet reports for `image`: `proxy:1` runs as `docker.io/library/proxy:1`. */
export function reportedImage(image: string): string {
  const slash = image.indexOf('/');
  const first = slash < 0 ? '' : image.slice(0, slash);
  const hasDomain = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasDomain) return image;
  return `docker.io/${slash < 0 ? 'library/' : ''}${image}`;
}

/**
 * Pod status as a kubelet writes it: Running, Ready (or not), and per container the image it
 * runs (`running`: container name -> image; containers not listed run their spec image).
 */
export function kubeletStatus(pod: V1Pod, ready: boolean, running: Record<string, string> = {}): object {
  const now = new Date().toISOString();
  // Plain JSON for a merge patch (client-node's models want Date objects for timestamps).
  const statuses = (pod.spec?.containers ?? []).map((c) => {
    const image = reportedImage(running[c.name] ?? c.image!);
    // A digest per image, as a registry gives: a new image shows as a new imageID (how upstream detects a finished
    // in-place update).
    return {
      name: c.name,
      image,
      imageID: image.includes('@')
        ? image
        : `${image.replace(/:[^:/]*$/, '')}@sha256:${createHash('sha256').update(image).digest('hex')}`,
      ready,
      restartCount: 0,
      started: true,
      state: { running: { startedAt: now } },
    };
  });
  return {
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now },
        { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: now },
      ],
      containerStatuses: statuses,
    },
  };
}

export async function patchPodStatus(core: CoreV1Api, pod: V1Pod, status: object): Promise<V1Pod> {
  return core.patchNamespacedPodStatus(
    { name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: status },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

export const isReady = (pod: V1Pod): boolean =>
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export function sidecarSetClient(kc: KubeConfig) {
  const custom = kc.makeApiClient(CustomObjectsApi);
  return {
    create: (body: SidecarSetObject): Promise<SidecarSetObject> =>
      custom.createClusterCustomObject({ ...SIDECARSETS, body }),
    get: (name: string): Promise<SidecarSetObject> => custom.getClusterCustomObject({ ...SIDECARSETS, name }),
    /** RFC 6902 JSON Patch, e.g. `[{ op: 'replace', path: '/spec/containers/0/image', value: 'proxy:2' }]`. */
    jsonPatch: (name: string, ops: object[]): Promise<SidecarSetObject> =>
      custom.patchClusterCustomObject(
        { ...SIDECARSETS, name, body: ops },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ),
    delete: (name: string): Promise<unknown> =>
      custom.deleteClusterCustomObject({ ...SIDECARSETS, name }).catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      }),
  };
}
