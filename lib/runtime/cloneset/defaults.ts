import { isDeepStrictEqual } from 'node:util';
import { isRecord } from '../../contract.js';
import { defaultContainerFields, defaultVolume, pullsAlways } from '../sidecarset/defaults.js';
import { canonicalQuantity, encode, GoEncodingError } from '../sidecarset/gojson.js';
import { CLONESET_GO_ROOTS, CLONESET_GO_TYPES } from './gojson.generated.js';
import type { CloneSet } from './types.js';

type Obj = Record<string, unknown>;

/** core/v1 SetDefaults_ResourceList: every quantity rounded up to milli units, written canonically. */
function defaultResourceList(list: unknown, path: string): void {
  if (!isRecord(list)) return;
  for (const [k, v] of Object.entries(list)) {
    try {
      list[k] = canonicalQuantity(v, `${path}.${k}`, true);
    } catch (err) {
      if (!(err instanceof GoEncodingError)) throw err; // not a quantity: the schema names it
    }
  }
}

/**
 * Upstream's SetDefaultPodSpec (apis/apps/defaults/pod.go, v1.9.1): core/v1 SetDefaults_PodSpec
 * (dnsPolicy, restartPolicy, securityContext, terminationGracePeriodSeconds, schedulerName), the
 * volumes' defaults, SetDefaults_Container on init containers and containers (app containers pull
 * `Always` when unset, for in-place update), the per-container defaults on all three lists (ephemeral
 * containers get no termination message or pull policy), and the overhead's quantities.
 */
export function defaultPodSpec(spec: Obj): void {
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.restartPolicy ||= 'Always';
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ||= 'default-scheduler';
  if (Array.isArray(spec.volumes)) spec.volumes.forEach(defaultVolume);
  const each = (list: unknown, f: (c: Obj) => void) => Array.isArray(list) && list.filter(isRecord).forEach(f);
  each(spec.initContainers, (c) => {
    c.terminationMessagePath ||= '/dev/termination-log';
    c.terminationMessagePolicy ||= 'File';
    c.imagePullPolicy ||= pullsAlways(c.image) ? 'Always' : 'IfNotPresent';
    defaultContainerFields(c);
  });
  each(spec.containers, (c) => {
    c.imagePullPolicy ||= 'Always';
    c.terminationMessagePath ||= '/dev/termination-log';
    c.terminationMessagePolicy ||= 'File';
    defaultContainerFields(c);
  });
  each(spec.ephemeralContainers, defaultContainerFields);
  defaultResourceList(spec.overhead, 'spec.template.spec.overhead');
}

/**
 * Upstream's SetDefaultsCloneSet (apis/apps/defaults/v1alpha1.go, v1.9.1) on a copy: replicas 1,
 * revisionHistoryLimit 10; with `injectTemplateDefaults` the pod template's defaults and each
 * volume claim template's (status.phase Pending, quantities canonical); updateStrategy.type
 * ReCreate (the in-place types get `inPlaceUpdateStrategy: {}`), partition 0, maxUnavailable
 * "20%", maxSurge 0.
 */
export function setCloneSetDefaults(original: CloneSet, injectTemplateDefaults: boolean): CloneSet {
  const cs = structuredClone(original);
  const spec = cs.spec as unknown as Obj;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  if (injectTemplateDefaults) {
    const template = (spec.template ??= {}) as Obj;
    defaultPodSpec((template.spec ??= {}) as Obj);
    if (Array.isArray(spec.volumeClaimTemplates))
      spec.volumeClaimTemplates.filter(isRecord).forEach((claim, i) => {
        const at = `spec.volumeClaimTemplates[${i}]`;
        const status = (claim.status ??= {}) as Obj;
        if (isRecord(status)) {
          status.phase ||= 'Pending';
          defaultResourceList(status.capacity, `${at}.status.capacity`);
        }
        const resources = isRecord(claim.spec) && isRecord(claim.spec.resources) ? claim.spec.resources : {};
        defaultResourceList(resources.limits, `${at}.spec.resources.limits`);
        defaultResourceList(resources.requests, `${at}.spec.resources.requests`);
      });
  }
  const strategy = (spec.updateStrategy ??= {}) as Obj;
  if (!isRecord(strategy)) return cs; // the schema names it
  if (!strategy.type) strategy.type = 'ReCreate';
  else if (strategy.type === 'InPlaceIfPossible' || strategy.type === 'InPlaceOnly')
    strategy.inPlaceUpdateStrategy ??= {};
  strategy.partition ??= 0;
  strategy.maxUnavailable ??= '20%';
  strategy.maxSurge ??= 0;
  return cs;
}

/** `cs` as upstream's Go types read and write it back (encoding/json of apps.kruise.io/v1alpha1 CloneSet). */
function asGo(cs: unknown): Obj {
  return JSON.parse(encode(cs, CLONESET_GO_ROOTS.cloneSet, '', true, CLONESET_GO_TYPES)) as Obj;
}

/**
 * What upstream's CloneSet mutating webhook (pkg/webhook/cloneset/mutating, v1.9.1) makes of a
 * CloneSet: the template's defaults are injected on CREATE, and on UPDATE only when the template
 * changed (the TemplateNoDefaults gate is off, upstream's default); when defaulting changes
 * nothing the object is left exactly as sent, otherwise it is stored as Go encodes the defaulted
 * object (its patch turns the request into that encoding: fields upstream's types lack dropped,
 * empty omitempty fields gone, `creationTimestamp: null`, the status' counters written). A shape
 * upstream's types cannot hold is left as sent, for the API server's schema to name.
 */
export function defaultCloneSet(cs: CloneSet, older?: CloneSet): CloneSet {
  try {
    const before = asGo(cs);
    const templateChanged =
      !older || !isDeepStrictEqual((before.spec as Obj).template, (asGo(older).spec as Obj).template);
    const after = asGo(setCloneSetDefaults(cs, templateChanged));
    return isDeepStrictEqual(before, after) ? cs : (after as unknown as CloneSet);
  } catch (err) {
    if (!(err instanceof GoEncodingError)) throw err;
    return cs;
  }
}
