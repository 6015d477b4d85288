/**
 * WorkloadSpread's admission paths, as upstream OpenKruise v1.9.1's webhooks:
 * - pod CREATE (pkg/webhook/pod/mutating/workloadspread.go, pkg/util/workloadspread HandlePodCreation):
 *   the pod's owner chain is matched against the namespace's WorkloadSpreads, a subset is chosen
 *   and booked in the WorkloadSpread's status (optimistic concurrency, retried on conflict), and the
 *   subset is injected into the pod; runs before SidecarSet injection, as upstream;
 * - pod DELETE and eviction (pkg/webhook/pod/validating/workloadspread.go, HandlePodDeletion): the
 *   pod's subset is booked as deleting, so the next creation fills its place;
 * - WorkloadSpread CREATE/UPDATE (pkg/webhook/workloadspread/validating): the contract's rules,
 *   the conflict with another WorkloadSpread of the namespace, the immutable target, and each
 *   subset patch merged into the target's pod template.
 *
 * Reads: WorkloadSpreads from the informer cache (with this process's own last status write when
 * newer, as upstream's GlobalCache); owners, target workloads and evicted pods through the API
 * server (upstream reads them from its caches; this runtime keeps no workload caches).
 */
import { randomUUID } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { isRecord } from '../../contract.js';
import { apiGroupOf, type CustomWorkloadEntry, WORKLOADSPREAD_TARGETS } from '../../contract/workloadspread.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { StaleCacheError } from '../informer/index.js';
import { matchesSelector, validateSelector } from '../../contract/selector.js';
import {
  allow,
  deny,
  validating,
  type AdmissionRequest,
  type Denied,
  type ValidatingWebhook,
} from '../webhook/index.js';
import { isPodActive } from './deletion-cost.js';
import { isConflict, isNotFound, replicasAtPath, workloadReplicas, type WorkloadSpreadApi } from './api.js';
import { StrategicMergeError } from './strategic-merge.js';
import {
  controllerOf,
  decideSubset,
  hasPercentSubset,
  injectSubset,
  podVersion,
  readInjected,
  type Injected,
} from './subset.js';
import { patchCheckTarget, subsetPatchProblems, validateWorkloadSpread } from './validate.js';

export { subsetPatchProblems };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** What the webhooks read from this replica's caches. */
export interface WorkloadSpreadCache {
  /** The WorkloadSpreads of a namespace. */
  list(namespace: string): Json[];
  get(namespace: string, name: string): Json | undefined;
  /** Settles once the cache is current enough (Informer.awaitFresh); throws StaleCacheError when it stays stale. */
  assertFresh?(signal?: AbortSignal): void | Promise<void>;
}

export interface WorkloadSpreadWebhookDeps {
  cache: WorkloadSpreadCache;
  api: Pick<WorkloadSpreadApi, 'getWorkloadSpread' | 'updateStatus' | 'getWorkload' | 'getPod'>;
  clock: Clock;
  logger: Logger;
  /** Sleeps between conflict retries (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  newUID?: () => string;
  /** The custom workload whitelist (kruise-configuration); throws when it cannot be read or decoded. */
  customWorkloads?: () => readonly CustomWorkloadEntry[];
}

/** retry.DefaultBackoff of client-go (4 steps from 10 ms, x5, 10 % jitter), as upstream's RetryOnConflict. */
const BACKOFF_STEPS = [10, 50, 250, 1250];

/**
 * Upstream's workloads a pod's controller may be (matchReference): the built-in targets, and the
 * whitelisted custom kinds with their sub-resources (by group and kind).
 */
export function isSpreadableOwner(ref: Json, custom: readonly CustomWorkloadEntry[] = []): boolean {
  if (!isRecord(ref)) return false;
  const groups = WORKLOADSPREAD_TARGETS[String(ref.kind)];
  const group = apiGroupOf(String(ref.apiVersion ?? ''));
  if (group === undefined) return false;
  if (groups?.includes(group)) return true;
  return custom.some((w) => [w, ...w.subResources].some((k) => k.kind === ref.kind && k.group === group));
}

/**
 * Upstream GetReplicasFromCustomWorkload: the integer at the whitelist entry's replicasPath of the
 * workload's group and kind; 0 without an entry, and when the path cannot be read (absent, through
 * a short list, no integer: upstream logs it and goes on with 0, unlike a targetFilter path, whose
 * error fails the pod, and unlike its controller, which fails the sync on either).
 */
export function customWorkloadReplicas(
  object: Json,
  apiVersion: string,
  kind: string,
  custom: readonly CustomWorkloadEntry[],
): number {
  const group = apiGroupOf(apiVersion);
  const entry = custom.find((w) => w.group === group && w.kind === kind);
  if (!entry) return 0;
  try {
    return replicasAtPath(object, entry.replicasPath);
  } catch {
    return 0;
  }
}

/**
 * Whether upstream's pod webhook reads the target's replicas for this pod (getWorkloadReplicas, from
 * initializedSubsetStatuses in updateSubsetForPod): not for one unlimited subset nor a StatefulSet
 * (acquireSuitableSubset decides without it), nor without a percentage, nor when the statuses of
 * the pod's version exist.
 */
export function readsWorkloadReplicas(ws: Json, pod: Json): boolean {
  const subsets: Json[] = ws?.spec?.subsets ?? [];
  if (subsets.length === 1 && (subsets[0].maxReplicas === undefined || subsets[0].maxReplicas === null)) return false;
  if (ws?.spec?.targetRef?.kind === 'StatefulSet') return false;
  return hasPercentSubset(ws) && !ws.status?.versionedSubsetStatuses?.[podVersion(pod)]?.length;
}

/**
 * Upstream getWorkloadReplicas on the target as read: the sum at targetFilter.replicasPathList
 * (throwing upstream's error on a path the workload does not have: the pod is then refused), a
 * custom workload's whitelisted path (0 when unreadable), or the built-in kind's replicas.
 */
export function replicasOfWorkload(ws: Json, object: Json, custom: readonly CustomWorkloadEntry[] = []): number {
  const ref = ws.spec.targetRef;
  const paths: string[] = ws.spec.targetFilter?.replicasPathList ?? [];
  if (paths.length) return paths.reduce((sum, p) => sum + replicasAtPath(object, p), 0);
  if (!WORKLOADSPREAD_TARGETS[String(ref.kind)])
    return customWorkloadReplicas(object, String(ref.apiVersion), String(ref.kind), custom);
  return workloadReplicas(String(ref.kind), object);
}

/**
 * Upstream IsPodSelected: no filter selects every pod; a filter without a selector selects none
 * (util.ValidatedLabelSelectorAsSelector(nil) is labels.Nothing(): a targetFilter holding only
 * replicasPathList leaves every pod unspread by the pod webhook); an empty selector, every pod;
 * a selector that does not parse, none. (The controller filters its pods only by a selector that
 * is set, as upstream's filterWorkload.)
 */
export function podSelectedByFilter(filter: Json, labels: Record<string, string> | undefined): boolean {
  if (filter === undefined || filter === null) return true;
  if (!isRecord(filter) || filter.selector === undefined || filter.selector === null) return false;
  // LabelSelectorAsSelector refuses a selector that does not validate: upstream then skips the WorkloadSpread.
  if (validateSelector(filter.selector, 'selector').length) return false;
  return matchesSelector(filter.selector, labels ?? {});
}

/** A newer of two copies of one WorkloadSpread by resourceVersion (upstream tryToGetTheLatestMatchedWS). */
const rv = (o: Json) => {
  const n = Number(o?.metadata?.resourceVersion);
  return Number.isFinite(n) ? n : 0;
};

/**
 * The shared state of WorkloadSpread's pod paths on one replica: the last status each of this
 * process's writes produced, and one lane per WorkloadSpread (upstream's GlobalKeyedMutex), so this
 * replica's own writes to one WorkloadSpread never race each other.
 */
export class WorkloadSpreadPodHandler {
  private readonly written = new Map<string, Json>();
  private readonly lanes = new Map<string, Promise<unknown>>();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly newUID: () => string;

  constructor(private readonly deps: WorkloadSpreadWebhookDeps) {
    this.sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.newUID = deps.newUID ?? randomUUID;
  }

  /** Keeps a status this process wrote (the controller's too) as the newest copy to book from. */
  remember(ws: Json): void {
    if (ws?.metadata?.namespace && ws.metadata.name)
      this.written.set(`${ws.metadata.namespace}/${ws.metadata.name}`, ws);
  }

  /** Forgets this process's copy of a deleted WorkloadSpread. */
  forget(namespace: string, name: string): void {
    this.written.delete(`${namespace}/${name}`);
  }

  /**
   * HandlePodCreation: the pod with its subset injected, or undefined when no WorkloadSpread
   * spreads it. Throws on what upstream answers with an error (500).
   */
  async handleCreation(pod: V1Pod, signal?: AbortSignal): Promise<V1Pod | undefined> {
    if (!isPodActive(pod)) return undefined;
    const owner = controllerOf(pod);
    if (!owner || !isSpreadableOwner(owner, this.custom())) return undefined;
    const namespace = pod.metadata?.namespace ?? '';
    await this.deps.cache.assertFresh?.(signal);
    let matched: Json | undefined;
    for (const ws of this.deps.cache.list(namespace)) {
      if (!ws?.spec?.targetRef || ws.metadata?.deletionTimestamp) continue;
      let equal: boolean;
      try {
        equal = await this.referenceEqual(ws.spec.targetRef, owner, namespace, signal);
      } catch (e) {
        // Upstream fails the pod when an owner it walks to does not exist, and skips the WorkloadSpread otherwise.
        if (isNotFound(e)) throw e;
        this.deps.logger.warn('could not match the pod owner to a WorkloadSpread target; skipped', {
          workloadSpread: `${namespace}/${ws.metadata?.name}`,
          error: String((e as Error).message ?? e),
        });
        continue;
      }
      if (equal && podSelectedByFilter(ws.spec.targetFilter, pod.metadata?.labels)) {
        matched = ws;
        break;
      }
    }
    if (!matched) return undefined;
    const { subset, generatedUID } = await this.acquireSubset(matched, pod, undefined, 'Create', signal);
    if (!subset) return undefined;
    return injectSubset(matched, pod, subset, generatedUID);
  }

  /** HandlePodDeletion: books the pod's subset as deleting. Throws on what upstream answers with an error. */
  async handleDeletion(pod: Json, operation: 'Delete' | 'Eviction', signal?: AbortSignal): Promise<void> {
    const raw = pod?.metadata?.annotations?.['apps.kruise.io/matched-workloadspread'];
    if (typeof raw !== 'string' || raw === '') return;
    const injected = readInjected(pod);
    if (!injected || !isPodActive(pod) || !controllerOf(pod)) return;
    const namespace = pod.metadata?.namespace ?? '';
    // Upstream reads it from its cache: an absent WorkloadSpread is nothing to book.
    await this.deps.cache.assertFresh?.(signal);
    const ws = this.deps.cache.get(namespace, injected.name);
    if (!ws) return;
    await this.acquireSubset(ws, pod, injected, operation, signal);
  }

  /** Upstream isReferenceEqual: the target is the pod's owner, or (walking controllers) an owner of it. */
  private async referenceEqual(target: Json, owner: Json, namespace: string, signal?: AbortSignal): Promise<boolean> {
    if (!owner) return false;
    const targetGroup = apiGroupOf(String(target.apiVersion ?? ''));
    const ownerGroup = apiGroupOf(String(owner.apiVersion ?? ''));
    if (targetGroup === undefined)
      throw new Error(`targetRef apiVersion ${JSON.stringify(target.apiVersion)} does not parse`);
    if (ownerGroup === undefined)
      throw new Error(`owner apiVersion ${JSON.stringify(owner.apiVersion)} does not parse`);
    if (targetGroup === ownerGroup && target.kind === owner.kind && target.name === owner.name) return true;
    if (!isSpreadableOwner(owner, this.custom())) return false;
    const object = await this.deps.api.getWorkload(
      String(owner.apiVersion),
      String(owner.kind),
      namespace,
      String(owner.name),
      signal,
    );
    if (!object) throw Object.assign(new Error(`${owner.kind} ${namespace}/${owner.name} not found`), { code: 404 });
    return this.referenceEqual(target, controllerOf(object), namespace, signal);
  }

  /**
   * The whitelist, or none when it cannot be read or decoded (upstream's pod webhook then matches
   * only the built-in kinds, logging nothing more).
   */
  private custom(): readonly CustomWorkloadEntry[] {
    try {
      return this.deps.customWorkloads?.() ?? [];
    } catch {
      return [];
    }
  }

  /** The newest copy: this process's last write, the cache's, or (after a conflict) the API server's. */
  private async latest(ws: Json, refresh: boolean, signal?: AbortSignal): Promise<Json | undefined> {
    const key = `${ws.metadata.namespace}/${ws.metadata.name}`;
    if (refresh) return this.deps.api.getWorkloadSpread(ws.metadata.namespace, ws.metadata.name, signal);
    const cached = this.deps.cache.get(ws.metadata.namespace, ws.metadata.name);
    const mine = this.written.get(key);
    if (!cached) this.written.delete(key);
    let newest = mine && cached ? mine : (cached ?? ws);
    if (cached && rv(newest) < rv(cached)) newest = cached;
    return structuredClone(newest);
  }

  /** Upstream acquireSuitableSubset: the StatefulSet ordinal rule, or the booking retried on conflict. */
  private async acquireSubset(
    ws: Json,
    pod: Json,
    injected: Injected | undefined,
    operation: 'Create' | 'Delete' | 'Eviction',
    signal?: AbortSignal,
  ): Promise<{ subset: string; generatedUID?: string }> {
    const subsets: Json[] = ws.spec?.subsets ?? [];
    if (subsets.length === 1 && (subsets[0].maxReplicas === undefined || subsets[0].maxReplicas === null))
      return { subset: subsets[0].name };
    if (ws.spec?.targetRef?.kind === 'StatefulSet')
      return {
        subset: decideSubset(ws, pod, {
          operation,
          injected,
          now: new Date(this.deps.clock.now()),
          newUID: this.newUID,
        }).subset,
      };
    const key = `${ws.metadata.namespace}/${ws.metadata.name}`;
    return this.inLane(key, async () => {
      let refresh = false;
      for (let attempt = 0; ; attempt++) {
        const clone = await this.latest(ws, refresh, signal);
        if (!clone) return { subset: '' };
        const replicas = await this.replicasFor(clone, pod, signal);
        const decision = decideSubset(clone, pod, {
          operation,
          injected,
          replicas,
          now: new Date(this.deps.clock.now()),
          newUID: this.newUID,
        });
        if (!decision.changed)
          return { subset: decision.subset, ...(decision.generatedUID ? { generatedUID: decision.generatedUID } : {}) };
        try {
          const written = await this.deps.api.updateStatus({ ...clone, status: decision.status }, signal);
          this.written.set(key, written);
          return { subset: decision.subset, ...(decision.generatedUID ? { generatedUID: decision.generatedUID } : {}) };
        } catch (e) {
          if (!isConflict(e) || attempt >= BACKOFF_STEPS.length - 1) throw e;
          refresh = true;
          await this.sleep(BACKOFF_STEPS[attempt] * (1 + Math.random() * 0.1));
        }
      }
    });
  }

  /** Upstream getWorkloadReplicas, read only when a percentage needs it and the version's statuses start afresh. */
  private async replicasFor(ws: Json, pod: Json, signal?: AbortSignal): Promise<number> {
    if (!readsWorkloadReplicas(ws, pod)) return 0;
    const ref = ws.spec.targetRef;
    const object = await this.deps.api.getWorkload(
      String(ref.apiVersion),
      String(ref.kind),
      ws.metadata.namespace,
      String(ref.name),
      signal,
    );
    return object ? replicasOfWorkload(ws, object, this.custom()) : 0;
  }

  private inLane<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.lanes.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.lanes.set(key, settled);
    void settled.then(() => {
      if (this.lanes.get(key) === settled) this.lanes.delete(key);
    });
    return run;
  }
}

/** 503 naming the stale cache (as SidecarSet's webhooks): another replica may answer, the client retries. */
const unavailable = (e: StaleCacheError): Denied => ({
  allowed: false,
  code: 503,
  reason: 'ServiceUnavailable',
  message: `${e.message}; retry shortly (another replica may answer)`,
});

/** `dryRun` of a DeleteOptions/CreateOptions object ("All"). */
const isDryRun = (options: Json) => Array.isArray(options?.dryRun) && options.dryRun.length > 0;

/**
 * Pod CREATE's WorkloadSpread step, run by the pod webhook before SidecarSet injection: the
 * mutated pod, undefined when nothing changes, or a denial (upstream's 500 on an error).
 */
export function workloadSpreadPodMutation(handler: WorkloadSpreadPodHandler) {
  return async (pod: V1Pod, request: AdmissionRequest, signal?: AbortSignal): Promise<V1Pod | Denied | undefined> => {
    if (request.subResource || request.resource.resource !== 'pods' || request.operation !== 'CREATE') return undefined;
    if (request.dryRun || isDryRun(request.options)) return undefined;
    try {
      return await handler.handleCreation(pod, signal);
    } catch (e) {
      if (e instanceof StaleCacheError) return unavailable(e);
      if (e instanceof StrategicMergeError)
        return deny(`WorkloadSpread subset patch could not be merged into the pod: ${e.message}`, 500);
      return deny(`WorkloadSpread: ${String((e as Error).message ?? e)}`, 500);
    }
  };
}

/**
 * Pod DELETE and eviction (vpod.kb.io, vpodeviction.kb.io): books the deletion in the pod's
 * WorkloadSpread. Never refuses on its own; an error (the WorkloadSpread cannot be read or
 * written) answers 400 as upstream, so the deletion is retried rather than left uncounted.
 */
export function podDeletionWebhook(
  handler: WorkloadSpreadPodHandler,
  api: Pick<WorkloadSpreadApi, 'getPod'>,
): ValidatingWebhook {
  return validating(async (request, ctx) => {
    try {
      if (request.operation === 'DELETE') {
        if (request.subResource || !isRecord(request.oldObject)) return allow();
        if (request.dryRun || isDryRun(request.options)) return allow();
        const pod = {
          ...request.oldObject,
          metadata: { ...(request.oldObject.metadata as object), namespace: request.namespace },
        };
        await handler.handleDeletion(pod, 'Delete', ctx?.signal);
      } else if (request.operation === 'CREATE') {
        if (request.subResource !== 'eviction') return allow();
        const eviction = request.object as Json;
        if (request.dryRun || isDryRun(eviction?.deleteOptions)) return allow();
        const pod = await api.getPod(request.namespace ?? '', request.name ?? '', ctx?.signal);
        if (!pod) return deny(`pods "${request.name ?? ''}" not found`, 400);
        await handler.handleDeletion(pod, 'Eviction', ctx?.signal);
      }
      return allow();
    } catch (e) {
      if (e instanceof StaleCacheError) return unavailable(e);
      return deny(`WorkloadSpread: ${String((e as Error).message ?? e)}`, 400);
    }
  });
}

/** WorkloadSpread CREATE/UPDATE (vworkloadspread.kb.io). */
export function workloadSpreadValidatingWebhook(
  cache: WorkloadSpreadCache,
  api: Pick<WorkloadSpreadApi, 'getWorkload'>,
  customWorkloads?: () => readonly CustomWorkloadEntry[],
): ValidatingWebhook {
  return validating(async (request, ctx) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
    const ws = request.object as Json;
    const namespace = request.namespace ?? ws?.metadata?.namespace ?? '';
    try {
      await cache.assertFresh?.(ctx?.signal);
    } catch (e) {
      if (e instanceof StaleCacheError) return unavailable(e);
      throw e;
    }
    const others = cache
      .list(namespace)
      .map((o) => ({ name: String(o?.metadata?.name ?? ''), targetRef: o?.spec?.targetRef }));
    const ref = patchCheckTarget(ws);
    const workload = ref
      ? await api
          .getWorkload(String(ref.apiVersion), String(ref.kind), namespace, String(ref.name), ctx?.signal)
          .catch(() => undefined)
      : undefined;
    const errors = validateWorkloadSpread(ws, {
      others,
      previous: request.operation === 'UPDATE' ? request.oldObject : undefined,
      customWorkloads,
      workload,
    });
    return errors.length === 0
      ? allow()
      : deny(`WorkloadSpread ${request.name ?? ws?.metadata?.name ?? ''} is invalid: ${errors.join('; ')}`, 400);
  });
}
