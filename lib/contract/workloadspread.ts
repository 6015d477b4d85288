/**
 * WorkloadSpread rules upstream's validating webhook enforces (OpenKruise v1.9.1
 * pkg/webhook/workloadspread/validating/workloadspread_validation.go, with the core/v1 rules it
 * reaches: ValidateNodeSelectorTerm, ValidatePreferredSchedulingTerms, ValidateTolerations of
 * k8s.io/kubernetes v1.32), written once for the construct (synth-time errors) and the runtime
 * (admission denials). Pure: problems as `[field, message]`, fields from `spec`.
 *
 * Not here: the check of each subset's patch merged into the target's pod template (it needs the
 * workload, read from the cluster: lib/runtime/workloadspread/webhooks.ts subsetPatchProblems).
 */
import { isValidLabelKey as isQualifiedName, isValidLabelValue as isLabelValue } from './selector.js';
import { DNS_SUBDOMAIN, isRecord } from './values.js';

/** The kinds upstream spreads, with the API groups it accepts for each (verifyGroupKind). */
export const WORKLOADSPREAD_TARGETS: Readonly<Record<string, readonly string[]>> = {
  CloneSet: ['apps.kruise.io'],
  Deployment: ['apps'],
  ReplicaSet: ['apps'],
  Job: ['batch'],
  StatefulSet: ['apps', 'apps.kruise.io'],
};

/**
 * The key of ConfigMap kruise-configuration (the manager's namespace) listing the custom workload
 * kinds WorkloadSpread may target (upstream pkg/util/configuration WSWatchCustomWorkloadWhiteList).
 */
export const WORKLOADSPREAD_WHITELIST_KEY = 'WorkloadSpread_Watch_Custom_Workload_WhiteList';

/** A group, version and kind (Go's schema.GroupVersionKind, whose JSON keys are Group, Version, Kind). */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** One entry of the whitelist (upstream configuration.CustomWorkload). */
export interface CustomWorkloadEntry extends GroupVersionKind {
  /** Kinds between the workload and its pods (pods owned by one of these are its pods too). */
  readonly subResources: readonly GroupVersionKind[];
  /** Where the workload keeps its replicas (e.g. `spec.replicas`); '' for none. */
  readonly replicasPath: string;
}

/** Go's encoding/json picks a struct field by its name case-insensitively (the last matching key wins). */
function goField(o: Record<string, unknown>, name: string): unknown {
  let v: unknown;
  for (const k of Object.keys(o)) if (k.toLowerCase() === name.toLowerCase()) v = o[k];
  return v;
}

function goString(o: Record<string, unknown>, name: string, at: string): string {
  const v = goField(o, name);
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`${at}.${name}: ${JSON.stringify(v)} is not a string`);
  return v;
}

function goGvk(v: unknown, at: string): GroupVersionKind {
  if (v === null) return { group: '', version: '', kind: '' };
  if (!isRecord(v)) throw new Error(`${at}: ${JSON.stringify(v)} is not an object`);
  return { group: goString(v, 'Group', at), version: goString(v, 'Version', at), kind: goString(v, 'Kind', at) };
}

/**
 * The whitelist as upstream decodes it (json.Unmarshal into WSCustomWorkloadWhiteList): absent or
 * empty is no custom workload; anything that does not decode throws, naming where (upstream then
 * refuses every WorkloadSpread on a kind it does not know with an internal error).
 */
export function parseWorkloadSpreadWhitelist(value: string | undefined): CustomWorkloadEntry[] {
  if (value === undefined) return [];
  let doc: unknown;
  try {
    doc = JSON.parse(value);
  } catch (e) {
    throw new Error(`${WORKLOADSPREAD_WHITELIST_KEY}: not JSON (${(e as Error).message})`, { cause: e });
  }
  if (doc === null) return [];
  const at = WORKLOADSPREAD_WHITELIST_KEY;
  if (!isRecord(doc)) throw new Error(`${at}: ${JSON.stringify(doc)} is not an object like {"workloads": [...]}`);
  const workloads = goField(doc, 'workloads');
  if (workloads === undefined || workloads === null) return [];
  if (!Array.isArray(workloads)) throw new Error(`${at}.workloads: is not a list`);
  return workloads.map((w: unknown, i) => {
    const here = `${at}.workloads[${i}]`;
    const gvk = goGvk(w, here);
    const o = isRecord(w) ? w : {};
    const subs = goField(o, 'subResources');
    if (subs !== undefined && subs !== null && !Array.isArray(subs))
      throw new Error(`${here}.subResources: is not a list`);
    return {
      ...gvk,
      subResources: (Array.isArray(subs) ? subs : []).map((sub: unknown, j) =>
        goGvk(sub, `${here}.subResources[${j}]`),
      ),
      replicasPath: goString(o, 'replicasPath', here),
    };
  });
}

/** Upstream MaxScheduledFailedDuration (300 s), which bounds rescheduleCriticalSeconds. */
export const WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS = 300;

/** schema.ParseGroupVersion's group, or undefined when it does not parse (more than one `/`). */
export function apiGroupOf(apiVersion: string): string | undefined {
  if (apiVersion === '' || apiVersion === '/') return '';
  const parts = apiVersion.split('/');
  if (parts.length === 1) return '';
  if (parts.length === 2) return parts[0];
  return undefined;
}

type Problems = Array<[string, string]>;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => String(x)) : []);

/**
 * core ValidateNodeSelectorTerm (Kubernetes 1.32, which upstream v1.9.1 links): expressions on labels, fields on
 * metadata.name. `labelValues`: In/NotIn/Gt/Lt values must be label values too, as upstream checks a required term
 * (allowInvalidLabelValueInRequiredNodeAffinity false; v1.8.3's 1.30 library checked no value), not a preferred one.
 */
export function nodeSelectorTermProblems(term: unknown, at: string, labelValues = false): Problems {
  const out: Problems = [];
  if (!isRecord(term)) return [[at, 'must be an object with matchExpressions and/or matchFields']];
  (Array.isArray(term.matchExpressions) ? term.matchExpressions : []).forEach((rq: unknown, j) => {
    const here = `${at}.matchExpressions[${j}]`;
    const r = isRecord(rq) ? rq : {};
    const values = strings(r.values);
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (!values.length) out.push([`${here}.values`, "must be specified when `operator` is 'In' or 'NotIn'"]);
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length)
          out.push([`${here}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"]);
        break;
      case 'Gt':
      case 'Lt':
        if (values.length !== 1)
          out.push([`${here}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"]);
        break;
      default:
        out.push([
          `${here}.operator`,
          `${JSON.stringify(r.operator)} is not a valid selector operator (In, NotIn, Exists, DoesNotExist, Gt, Lt)`,
        ]);
    }
    if (typeof r.key !== 'string' || !isQualifiedName(r.key))
      out.push([`${here}.key`, `${JSON.stringify(r.key)} is not a valid label key ([prefix/]name)`]);
    if (labelValues)
      values.forEach((v, i) => {
        if (!isLabelValue(v))
          out.push([
            `${here}.values[${i}]`,
            `${JSON.stringify(v)} is not a valid label value (at most 63 characters: alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric); a required term matches node labels`,
          ]);
      });
  });
  (Array.isArray(term.matchFields) ? term.matchFields : []).forEach((rq: unknown, j) => {
    const here = `${at}.matchFields[${j}]`;
    const r = isRecord(rq) ? rq : {};
    const values = strings(r.values);
    if (r.operator !== 'In' && r.operator !== 'NotIn')
      out.push([`${here}.operator`, `${JSON.stringify(r.operator)} is not a valid selector operator (In, NotIn)`]);
    else if (values.length !== 1)
      out.push([`${here}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"]);
    if (r.key !== 'metadata.name')
      out.push([`${here}.key`, `${JSON.stringify(r.key)} is not a valid field selector key (metadata.name)`]);
    else
      values.forEach((v, i) => {
        if (v.length > 253 || !DNS_SUBDOMAIN.test(v))
          out.push([`${here}.values[${i}]`, `${JSON.stringify(v)} is not a valid node name (DNS subdomain)`]);
      });
  });
  return out;
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** core ValidateTolerations (v1.32). */
export function tolerationProblems(tolerations: unknown, at: string): Problems {
  const out: Problems = [];
  (Array.isArray(tolerations) ? tolerations : []).forEach((t: unknown, i) => {
    const here = `${at}[${i}]`;
    const o = isRecord(t) ? t : {};
    const key = typeof o.key === 'string' ? o.key : '';
    const operator = o.operator ?? '';
    const value = typeof o.value === 'string' ? o.value : '';
    if (key && !isQualifiedName(key)) out.push([`${here}.key`, `${JSON.stringify(key)} is not a valid label key`]);
    if (!key && operator !== 'Exists')
      out.push([`${here}.operator`, 'must be Exists when `key` is empty, which means "match all values and all keys"']);
    if (o.tolerationSeconds !== undefined && o.tolerationSeconds !== null && o.effect !== 'NoExecute')
      out.push([`${here}.effect`, "must be 'NoExecute' when `tolerationSeconds` is set"]);
    if (operator === 'Equal' || operator === '') {
      if (!isLabelValue(value)) out.push([`${here}.value`, `${JSON.stringify(value)} is not a valid label value`]);
    } else if (operator === 'Exists') {
      if (value) out.push([`${here}.value`, "must be empty when `operator` is 'Exists'"]);
    } else out.push([`${here}.operator`, `${JSON.stringify(operator)} must be Equal or Exists`]);
    if (o.effect !== undefined && o.effect !== '' && !EFFECTS.includes(o.effect as string))
      out.push([`${here}.effect`, `${JSON.stringify(o.effect)} must be one of ${EFFECTS.join(', ')}`]);
  });
  return out;
}

/** intstr.GetValueFromIntOrPercent(v, 100, true): the value, or undefined when it does not parse. */
export function maxReplicasValue(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v !== 'string' || !v.endsWith('%')) return undefined;
  const digits = v.slice(0, -1);
  return /^[-+]?\d+$/.test(digits) ? Number(digits) : undefined;
}

/** Label selector syntax as metav1.LabelSelectorAsSelector checks it (targetFilter.selector). */
function labelSelectorProblems(selector: unknown, at: string): Problems {
  if (selector === undefined || selector === null) return [];
  if (!isRecord(selector)) return [[at, 'must be a label selector']];
  const out: Problems = [];
  for (const [k, v] of Object.entries(isRecord(selector.matchLabels) ? selector.matchLabels : {})) {
    if (!isQualifiedName(k)) out.push([`${at}.matchLabels`, `${JSON.stringify(k)} is not a valid label key`]);
    if (typeof v !== 'string' || !isLabelValue(v))
      out.push([`${at}.matchLabels["${k}"]`, `${JSON.stringify(v)} is not a valid label value`]);
  }
  (Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []).forEach((e: unknown, i) => {
    const here = `${at}.matchExpressions[${i}]`;
    const r = isRecord(e) ? e : {};
    const values = strings(r.values);
    if (typeof r.key !== 'string' || !isQualifiedName(r.key))
      out.push([`${here}.key`, `${JSON.stringify(r.key)} is not a valid label key`]);
    if (r.operator === 'In' || r.operator === 'NotIn') {
      if (!values.length) out.push([`${here}.values`, 'must be non-empty for In and NotIn']);
    } else if (r.operator === 'Exists' || r.operator === 'DoesNotExist') {
      if (values.length) out.push([`${here}.values`, 'must be empty for Exists and DoesNotExist']);
    } else out.push([`${here}.operator`, `${JSON.stringify(r.operator)} is not In, NotIn, Exists or DoesNotExist`]);
    values.forEach((v) => {
      if (!isLabelValue(v)) out.push([`${here}.values`, `${JSON.stringify(v)} is not a valid label value`]);
    });
  });
  return out;
}

/**
 * Every problem upstream's validateWorkloadSpreadSpec finds in `spec` on its own (without the
 * target workload), in upstream's order. `[field, message]`, fields from `spec`. A kind other
 * than the built-in targets must be in `customWorkloads` (the whitelist; by group and kind).
 */
export function workloadSpreadSpecProblems(
  spec: unknown,
  customWorkloads: ReadonlyArray<{ readonly group: string; readonly kind: string }> = [],
): Problems {
  if (!isRecord(spec)) return [['spec', 'is required']];
  const out: Problems = [];
  const ref = spec.targetRef;
  if (ref === undefined || ref === null) out.push(['spec.targetRef', 'is required (the workload to spread)']);
  else if (!isRecord(ref) || !ref.apiVersion || !ref.kind || !ref.name)
    out.push(['spec.targetRef', 'needs apiVersion, kind and name']);
  else {
    const groups = WORKLOADSPREAD_TARGETS[ref.kind as string];
    const group = apiGroupOf(String(ref.apiVersion));
    if (!groups) {
      if (group === undefined || !customWorkloads.some((w) => w.kind === ref.kind && w.group === group))
        out.push([
          'spec.targetRef',
          `${JSON.stringify(ref.apiVersion)} kind ${JSON.stringify(ref.kind)} is not permitted; use ` +
            `${Object.keys(WORKLOADSPREAD_TARGETS).join(', ')}, or list its group and kind in ConfigMap ` +
            `kruise-configuration's ${WORKLOADSPREAD_WHITELIST_KEY}`,
        ]);
    } else if (group === undefined || !groups.includes(group))
      out.push([
        'spec.targetRef.apiVersion',
        `${JSON.stringify(ref.apiVersion)} is not valid for ${String(ref.kind)} (API group ${groups.join(' or ')})`,
      ]);
  }
  out.push(...subsetProblems(spec));
  const strategy = isRecord(spec.scheduleStrategy) ? spec.scheduleStrategy : {};
  const type = strategy.type ?? '';
  if (type !== '' && type !== 'Fixed' && type !== 'Adaptive')
    out.push(['spec.scheduleStrategy.type', `${JSON.stringify(type)} must be Fixed or Adaptive`]);
  const adaptive = strategy.adaptive;
  if (adaptive !== undefined && adaptive !== null) {
    const a = isRecord(adaptive) ? adaptive : {};
    const subsets = Array.isArray(spec.subsets) ? spec.subsets : [];
    if (type !== 'Adaptive')
      out.push(['spec.scheduleStrategy.type', 'must be Adaptive when scheduleStrategy.adaptive is set']);
    const last = subsets[subsets.length - 1];
    if (subsets.length > 1 && isRecord(last) && last.maxReplicas !== undefined && last.maxReplicas !== null)
      out.push([
        'spec.scheduleStrategy.adaptive',
        "the last subset's maxReplicas must not be set under the Adaptive strategy (it takes the pods no other subset can)",
      ]);
    const max =
      subsets.length > 1
        ? Math.trunc((WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS - 5) / (subsets.length - 1))
        : 2 ** 31 - 1;
    const seconds = a.rescheduleCriticalSeconds;
    if (typeof seconds === 'number' && (seconds < 0 || seconds > max))
      out.push([
        'spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds',
        `${seconds} must be from 0 to ${max} (${WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS - 5} s over ${Math.max(1, subsets.length - 1)} subset(s) to try)`,
      ]);
  }
  const filter = spec.targetFilter;
  if (isRecord(filter)) out.push(...labelSelectorProblems(filter.selector, 'spec.targetFilter.selector'));
  return out;
}

/** Upstream validateWorkloadSpreadSubsets without the patch check (which needs the workload). */
function subsetProblems(spec: Record<string, unknown>): Problems {
  const subsets = spec.subsets;
  if (!Array.isArray(subsets) || subsets.length === 0) return [['spec.subsets', 'at least one subset is required']];
  const out: Problems = [];
  const names = new Set<string>();
  let firstType: 'int' | 'percent' | undefined;
  let percentSum = 0;
  const ref = isRecord(spec.targetRef) ? spec.targetRef : {};
  for (let i = 0; i < subsets.length; i++) {
    const at = `spec.subsets[${i}]`;
    const s = isRecord(subsets[i]) ? (subsets[i] as Record<string, unknown>) : {};
    const name = typeof s.name === 'string' ? s.name : '';
    if (!name) out.push([`${at}.name`, 'is required']);
    else {
      if (names.has(name)) out.push([`${at}.name`, `duplicated subset name ${JSON.stringify(name)}`]);
      names.add(name);
    }
    if (s.requiredNodeSelectorTerm !== undefined && s.requiredNodeSelectorTerm !== null)
      out.push(...nodeSelectorTermProblems(s.requiredNodeSelectorTerm, `${at}.requiredNodeSelectorTerm`, true));
    if (Array.isArray(s.preferredNodeSelectorTerms))
      s.preferredNodeSelectorTerms.forEach((t: unknown, j) => {
        const here = `${at}.preferredNodeSelectorTerms[${j}]`;
        const term = isRecord(t) ? t : {};
        const w = term.weight;
        if (typeof w !== 'number' || w <= 0 || w > 100) out.push([`${here}.weight`, 'must be in the range 1-100']);
        out.push(...nodeSelectorTermProblems(term.preference ?? {}, `${here}.preference`));
      });
    out.push(...tolerationProblems(s.tolerations, `${at}.tolerations`));
    const max = s.maxReplicas;
    if (max === undefined || max === null) continue;
    const type = typeof max === 'string' ? 'percent' : 'int';
    if (firstType === undefined) firstType = type;
    else if (type !== firstType) {
      out.push([
        `${at}.maxReplicas`,
        'the maxReplicas of all subsets must be of one type (all numbers or all percentages)',
      ]);
      return out;
    }
    if (ref.kind === 'StatefulSet' && type !== 'int') {
      out.push([`${at}.maxReplicas`, 'must be a number for a StatefulSet (its pods are ordered)']);
      return out;
    }
    const value = maxReplicasValue(max);
    if (value === undefined || value < 0) {
      out.push([
        `${at}.maxReplicas`,
        `${JSON.stringify(max)} is not a whole number >= 0 or a whole percentage like "40%"`,
      ]);
      return out;
    }
    if (type === 'percent') {
      percentSum += value;
      if (percentSum > 100) {
        out.push([`${at}.maxReplicas`, 'the maxReplicas of all subsets add up to more than 100%']);
        return out;
      }
    }
  }
  const last = subsets[subsets.length - 1];
  if (
    firstType === 'percent' &&
    percentSum < 100 &&
    isRecord(last) &&
    last.maxReplicas !== undefined &&
    last.maxReplicas !== null
  )
    out.push([
      'spec.subsets[0].maxReplicas',
      'percentages must add up to 100% when every subset has one; leave the last subset without maxReplicas to take the rest',
    ]);
  return out;
}

/** Upstream validateWorkloadSpreadConflict: another WorkloadSpread of the namespace targets the same workload. */
export function workloadSpreadConflict(
  candidate: { name: string; targetRef?: unknown },
  others: ReadonlyArray<{ name: string; targetRef?: unknown }>,
): string | undefined {
  const key = (r: unknown) =>
    isRecord(r) ? `${apiGroupOf(String(r.apiVersion ?? '')) ?? ''}/${String(r.kind)}/${String(r.name)}` : undefined;
  const mine = key(candidate.targetRef);
  if (mine === undefined) return undefined;
  return others.find((o) => o.name !== candidate.name && key(o.targetRef) === mine)?.name;
}

/** Upstream validateWorkloadSpreadTargetRefUpdate: the target's group, kind and name are immutable. */
export function workloadSpreadTargetChanged(targetRef: unknown, oldTargetRef: unknown): boolean {
  if (!isRecord(targetRef) || !isRecord(oldTargetRef)) return false;
  return (
    (apiGroupOf(String(targetRef.apiVersion ?? '')) ?? '') !==
      (apiGroupOf(String(oldTargetRef.apiVersion ?? '')) ?? '') ||
    targetRef.kind !== oldTargetRef.kind ||
    targetRef.name !== oldTargetRef.name
  );
}
