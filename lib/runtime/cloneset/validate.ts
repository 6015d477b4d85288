import { isDeepStrictEqual } from 'node:util';
import { isRecord } from '../../contract.js';
import { describeProblem } from '../../contract/problems.js';
import { isValidLabelKey, isValidLabelValue, matchesSelector, validateSelector } from '../../contract/selector.js';
import { DNS_LABEL, DNS_SUBDOMAIN } from '../../contract/values.js';
import { encode, GoEncodingError } from '../sidecarset/gojson.js';
import { mergedPodSpecProblems } from '../workloadspread/pod-template.js';
import { defaultPodSpec } from './defaults.js';
import { CLONESET_GO_TYPES } from './gojson.generated.js';

/**
 * Upstream's CloneSet validating webhook (pkg/webhook/cloneset/validating, v1.9.1), rule for rule,
 * on a CloneSet its defaulting webhook has seen. Field paths are upstream's; the CloneSet's own rules
 * name the bad value and the fix (`field: message (got value). Fix: …`). The pod template is checked
 * with the core pod rules the runtime ports (../workloadspread/pod-template.ts, after upstream's pod
 * defaults, with each volume claim template mounted as a volume of its name), in that port's
 * wording (core validation's: the field, the value and the rule broken); what it does not port is
 * listed there. As upstream, `lifecycle` and `scaleStrategy.maxUnavailable` are not validated.
 */

type Obj = Record<string, unknown>;

/** What the checks read from the cluster: the pods of the CloneSet's namespace, by name. */
export interface CloneSetValidationContext {
  /** The stored CloneSet on UPDATE. */
  older?: unknown;
  /** A pod of the CloneSet's namespace, or undefined when there is none of that name. */
  pod?: (name: string) => Obj | undefined;
}

const err = (field: string, value: unknown, message: string, fix: string) =>
  describeProblem({ field, value, message, fix });

const MAX_INT32 = 2147483647;
const UPDATE_TYPES = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'];
const ANNOTATIONS_MAX = 256 * 1024;

/** Go's strconv.ParseFloat(text, 64) for what it accepts (no digit-separating underscores): the value, or undefined. */
function goParseFloat(text: string): number | undefined {
  if (/^[+-]?(inf|infinity|nan)$/i.test(text))
    return text.toLowerCase().includes('nan') ? NaN : text.startsWith('-') ? -Infinity : Infinity;
  const hex = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(text);
  if (hex) {
    const [, sign, whole, fraction = '', exp] = hex;
    if (whole === '' && fraction === '') return undefined;
    const mantissa = parseInt(`${whole}${fraction}` || '0', 16) / 16 ** fraction.length;
    const v = (sign === '-' ? -1 : 1) * mantissa * 2 ** Number(exp);
    return Number.isFinite(v) ? v : undefined; // out of range: ParseFloat's ErrRange
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
  const v = Number(text);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * upstream util.GetScaledValueFromIntOrPercent(v, total, roundUp=true): a number as is, "N%" scaled
 * and rounded up, anything else an error (undefined: no value). Go's ParseFloat reads the number
 * before the %, so "1.5%", "1e2%" and "0x1p4%" are percentages, and ±Inf or NaN turn into Go's int
 * of them (math.MinInt64 on the platforms upstream ships for; here the most negative safe integer).
 */
export function scaledIntOrPercent(v: unknown, total: number): { value: number } | { error: string } {
  if (v === undefined || v === null) return { error: 'no value' };
  if (typeof v === 'number') return { value: Math.trunc(v) };
  if (typeof v !== 'string' || !v.endsWith('%')) return { error: 'a string must be a percentage like "20%"' };
  const percent = goParseFloat(v.slice(0, -1));
  if (percent === undefined) return { error: `${JSON.stringify(v.slice(0, -1))} before the % is not a number` };
  const scaled = Math.ceil((percent * total) / 100);
  return { value: Number.isFinite(scaled) ? scaled : Number.MIN_SAFE_INTEGER };
}

/** ValidateObjectMeta for a namespaced object named as a DNS subdomain: what a CloneSet's metadata can break. */
function metadataErrors(meta: Obj): string[] {
  const out: string[] = [];
  const name = typeof meta.name === 'string' ? meta.name : '';
  const generateName = typeof meta.generateName === 'string' ? meta.generateName : '';
  const subdomain = (v: string) => v.length <= 253 && DNS_SUBDOMAIN.test(v);
  const nameFix = 'use at most 253 lower-case letters, digits, "-" and ".", starting and ending with a letter or digit';
  if (generateName && !subdomain(generateName.replace(/-$/, 'a')))
    out.push(err('metadata.generateName', generateName, 'is not a valid name prefix', nameFix));
  if (!name) out.push(err('metadata.name', name, 'name or generateName is required', 'set metadata.name'));
  else if (!subdomain(name)) out.push(err('metadata.name', name, 'is not a valid CloneSet name', nameFix));
  const namespace = typeof meta.namespace === 'string' ? meta.namespace : '';
  if (!namespace) out.push(err('metadata.namespace', namespace, 'is required', 'create the CloneSet in a namespace'));
  else if (namespace.length > 63 || !DNS_LABEL.test(namespace))
    out.push(err('metadata.namespace', namespace, 'is not a valid namespace name', 'use a DNS label'));
  out.push(
    ...labelErrors(meta.labels, 'metadata.labels'),
    ...annotationErrors(meta.annotations, 'metadata.annotations'),
    ...ownerReferenceErrors(meta.ownerReferences),
    ...finalizerErrors(meta.finalizers),
  );
  return out;
}

/** The finalizers Kubernetes knows without a domain prefix (core helper.IsStandardFinalizerName). */
const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];

/** ValidateFinalizers, then core's validateKubeFinalizerName per finalizer. */
function finalizerErrors(finalizers: unknown): string[] {
  const list = (Array.isArray(finalizers) ? finalizers : []).map(String);
  const out = list
    .filter((f) => !isValidLabelKey(f))
    .map((f) =>
      err('metadata.finalizers', f, 'is not a qualified name', 'use [domain/]name, e.g. example.com/cleanup'),
    );
  if (list.includes('orphan') && list.includes('foregroundDeletion'))
    out.push(err('metadata.finalizers', list, 'may not hold both orphan and foregroundDeletion', 'keep one of them'));
  list.forEach((f, i) => {
    if (!f.includes('/') && !STANDARD_FINALIZERS.includes(f))
      out.push(
        err(
          `metadata.finalizers[${i}]`,
          f,
          'is neither a standard finalizer nor fully qualified',
          'prefix it with a domain, e.g. example.com/' + f,
        ),
      );
  });
  return out;
}

/** ValidateOwnerReferences: each names a version, kind, name and uid; one controller at most; no Event owners. */
function ownerReferenceErrors(references: unknown): string[] {
  const at = 'metadata.ownerReferences';
  const out: string[] = [];
  let controller = '';
  for (const raw of Array.isArray(references) ? references : []) {
    const ref = isRecord(raw) ? raw : {};
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const parts = apiVersion.split('/');
    // schema.FromAPIVersionAndKind: "v1", "group/v1"; more slashes do not parse, so no version.
    const version = parts.length > 2 ? '' : parts[parts.length - 1];
    const group = parts.length === 2 ? parts[0] : '';
    const fix = 'name the owner by apiVersion, kind, name and uid';
    if (!version) out.push(err(`${at}.apiVersion`, apiVersion, 'has no version', fix));
    if (!kind) out.push(err(`${at}.kind`, kind, 'must not be empty', fix));
    if (!ref.name) out.push(err(`${at}.name`, ref.name ?? '', 'must not be empty', fix));
    if (!ref.uid) out.push(err(`${at}.uid`, ref.uid ?? '', 'must not be empty', fix));
    if (group === '' && version === 'v1' && kind === 'Event')
      out.push(err(at, ref, 'names an Event, which may not own objects', 'name another owner'));
    if (ref.controller === true) {
      const name = `${kind}/${String(ref.name ?? '')}`;
      if (controller)
        out.push(
          err(
            at,
            references,
            `has two controllers, ${controller} and ${name}`,
            'set controller: true on one reference only',
          ),
        );
      else controller = name;
    }
  }
  return out;
}

function labelErrors(labels: unknown, at: string): string[] {
  if (!isRecord(labels)) return [];
  return Object.entries(labels).flatMap(([k, v]) => [
    ...(isValidLabelKey(k)
      ? []
      : [
          err(
            at,
            k,
            'is not a valid label key',
            'use [prefix/]name, name at most 63 characters of letters, digits, "-", "_", "."',
          ),
        ]),
    ...(typeof v === 'string' && isValidLabelValue(v)
      ? []
      : [
          err(
            at,
            v,
            `is not a valid value for label ${JSON.stringify(k)}`,
            'use at most 63 letters, digits, "-", "_", ".", starting and ending with a letter or digit',
          ),
        ]),
  ]);
}

function annotationErrors(annotations: unknown, at: string): string[] {
  if (!isRecord(annotations)) return [];
  const out = Object.keys(annotations)
    .filter((k) => !isValidLabelKey(k.toLowerCase()))
    .map((k) =>
      err(
        at,
        k,
        'is not a valid annotation key',
        'use [prefix/]name, name at most 63 characters of letters, digits, "-", "_", "."',
      ),
    );
  const size = Object.entries(annotations).reduce(
    (n, [k, v]) => n + k.length + (typeof v === 'string' ? v.length : 0),
    0,
  );
  if (size > ANNOTATIONS_MAX)
    out.push(
      err(
        at,
        `${size} bytes`,
        `may not be larger than ${ANNOTATIONS_MAX} bytes in total`,
        'move large values elsewhere',
      ),
    );
  return out;
}

/** The pod template's checks: its labels and annotations, and the core pod rules on its defaulted spec. */
function templateErrors(spec: Obj): string[] {
  const template = isRecord(spec.template) ? spec.template : {};
  const meta = isRecord(template.metadata) ? template.metadata : {};
  const podSpec = structuredClone(isRecord(template.spec) ? template.spec : {});
  defaultPodSpec(podSpec);
  // Upstream mounts each volume claim template as a volume of its name before validating.
  const claims = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [];
  podSpec.volumes = [
    ...(Array.isArray(podSpec.volumes) ? podSpec.volumes : []),
    ...claims.map((c) => {
      const name = isRecord(c) && isRecord(c.metadata) ? c.metadata.name : '';
      return { name, persistentVolumeClaim: { claimName: name } };
    }),
  ];
  return [
    ...labelErrors(meta.labels, 'spec.template.labels'),
    ...annotationErrors(meta.annotations, 'spec.template.annotations'),
    ...mergedPodSpecProblems(podSpec, 'spec.template.spec', {
      podTemplate: true,
      terminationGracePeriodSeconds:
        typeof podSpec.terminationGracePeriodSeconds === 'number' ? podSpec.terminationGracePeriodSeconds : undefined,
    }),
  ];
}

function scaleStrategyErrors(spec: Obj, oldSpec: Obj | undefined, meta: Obj, ctx: CloneSetValidationContext): string[] {
  const at = 'spec.scaleStrategy.podsToDelete';
  const strategy = isRecord(spec.scaleStrategy) ? spec.scaleStrategy : {};
  const names = (Array.isArray(strategy.podsToDelete) ? strategy.podsToDelete : []).map(String);
  const duplicated = names.filter((n, i) => names.indexOf(n) !== i);
  if (duplicated.length)
    return [
      err(
        at,
        names,
        `lists ${duplicated.map((n) => JSON.stringify(n)).join(', ')} more than once`,
        'list each pod once',
      ),
    ];
  const oldStrategy = oldSpec && isRecord(oldSpec.scaleStrategy) ? oldSpec.scaleStrategy : {};
  const before = new Set((Array.isArray(oldStrategy.podsToDelete) ? oldStrategy.podsToDelete : []).map(String));
  const out: string[] = [];
  for (const name of [...new Set(names)].filter((n) => !before.has(n)).sort()) {
    const pod = ctx.pod?.(name);
    const podMeta = pod && isRecord(pod.metadata) ? pod.metadata : undefined;
    const owner = (Array.isArray(podMeta?.ownerReferences) ? podMeta.ownerReferences : []).find(
      (o) => isRecord(o) && o.controller === true,
    ) as Obj | undefined;
    if (!podMeta)
      out.push(
        err(
          at,
          name,
          `names pod ${JSON.stringify(name)}, which is not in namespace ${JSON.stringify(meta.namespace)}`,
          'list only pods of this CloneSet',
        ),
      );
    else if (podMeta.deletionTimestamp)
      out.push(
        err(
          at,
          name,
          `names pod ${JSON.stringify(name)}, which is already terminating`,
          'leave it out: it is being deleted',
        ),
      );
    else if (!owner || owner.uid !== meta.uid)
      out.push(
        err(
          at,
          name,
          `names pod ${JSON.stringify(name)}, whose controller is not this CloneSet`,
          'list only pods of this CloneSet',
        ),
      );
  }
  return out;
}

/** UpdatePriorityStrategy.FieldsValidation: the first problem, or undefined. */
function priorityProblem(p: unknown): string | undefined {
  if (!isRecord(p)) return undefined;
  const weights = Array.isArray(p.weightPriority) ? p.weightPriority : [];
  const orders = Array.isArray(p.orderPriority) ? p.orderPriority : [];
  if (weights.length && orders.length) return 'only one of weightPriority and orderPriority can be used';
  for (const w of weights.map((w) => (isRecord(w) ? w : {}))) {
    const weight = typeof w.weight === 'number' ? w.weight : 0;
    if (weight < 0 || weight > 100) return `weight ${weight} is not in the range 0-100`;
    const selector = isRecord(w.matchSelector) ? w.matchSelector : {};
    const size =
      (isRecord(selector.matchLabels) ? Object.keys(selector.matchLabels).length : 0) +
      (Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0);
    if (size === 0) return "a weight term's matchSelector can not be empty";
    const problems = validateSelector(selector, 'matchSelector');
    if (problems.length) return `invalid selector: ${problems[0]}`;
  }
  for (const o of orders) if (!isRecord(o) || !o.orderedKey) return "an order term's orderedKey can not be empty";
  return undefined;
}

/** UpdateScatterStrategy.FieldsValidation: the first problem, or undefined. */
function scatterProblem(terms: unknown): string | undefined {
  const seen = new Set<string>();
  for (const t of Array.isArray(terms) ? terms : []) {
    const term = isRecord(t) ? t : {};
    if (!term.key) return "a term's key should not be empty";
    const id = `${String(term.key)}:${String(term.value ?? '')}`;
    if (seen.has(id)) return `key=${String(term.key)} value=${String(term.value ?? '')} is listed twice`;
    seen.add(id);
  }
  return undefined;
}

function updateStrategyErrors(strategy: Obj, replicas: number): string[] {
  const at = 'spec.updateStrategy';
  const out: string[] = [];
  if (!UPDATE_TYPES.includes(strategy.type as string))
    out.push(
      err(`${at}.type`, strategy.type ?? '', 'is not an update strategy type', `use one of ${UPDATE_TYPES.join(', ')}`),
    );
  // On an error upstream checks the zero value next, which passes.
  const partition = scaledIntOrPercent(strategy.partition, replicas);
  if ('error' in partition)
    out.push(
      err(`${at}.partition`, strategy.partition, partition.error, 'use a whole number or a percentage like "20%"'),
    );
  else if (partition.value < 0)
    out.push(
      err(
        `${at}.partition`,
        strategy.partition,
        'must be greater than or equal to 0',
        'use 0 or more, or a percentage',
      ),
    );
  const priority = priorityProblem(strategy.priorityStrategy);
  if (priority) out.push(err(`${at}.priorityStrategy`, strategy.priorityStrategy, priority, 'fix the term named'));
  const scatter = scatterProblem(strategy.scatterStrategy);
  if (scatter)
    out.push(
      err(
        `${at}.scatterStrategy`,
        strategy.scatterStrategy,
        scatter,
        'give each term a key, and each key and value once',
      ),
    );
  let maxUnavailable = 0;
  if (strategy.maxUnavailable !== undefined && strategy.maxUnavailable !== null) {
    const mu = scaledIntOrPercent(strategy.maxUnavailable, replicas);
    if ('error' in mu)
      out.push(
        err(`${at}.maxUnavailable`, strategy.maxUnavailable, mu.error, 'use a whole number or a percentage like "20%"'),
      );
    else maxUnavailable = mu.value;
  }
  let maxSurge = 0;
  if (strategy.maxSurge !== undefined && strategy.maxSurge !== null) {
    const ms = scaledIntOrPercent(strategy.maxSurge, replicas);
    if ('error' in ms)
      out.push(err(`${at}.maxSurge`, strategy.maxSurge, ms.error, 'use a whole number or a percentage like "20%"'));
    else maxSurge = ms.value;
    if (strategy.type === 'InPlaceOnly' && maxSurge > 0)
      out.push(
        err(
          `${at}.maxSurge`,
          strategy.maxSurge,
          'can not be used with update strategy type InPlaceOnly',
          'set maxSurge to 0, or use InPlaceIfPossible',
        ),
      );
  }
  if (replicas > 0 && maxUnavailable < 1 && maxSurge < 1)
    out.push(
      err(
        `${at}.maxUnavailable`,
        strategy.maxUnavailable ?? null,
        'and maxSurge are both less than 1 pod, so no pod could ever be updated',
        'let maxUnavailable or maxSurge be at least 1 pod',
      ),
    );
  return out;
}

/**
 * Every problem with a CloneSet on CREATE (or, with `ctx.older`, the checks UPDATE repeats), each
 * naming field, value and fix.
 */
export function validateCloneSet(cs: unknown, ctx: CloneSetValidationContext = {}): string[] {
  if (!isRecord(cs)) return [err('CloneSet', cs, 'must be an object', 'send a CloneSet')];
  const meta = isRecord(cs.metadata) ? cs.metadata : {};
  const spec = isRecord(cs.spec) ? cs.spec : {};
  const oldSpec = isRecord(ctx.older) && isRecord(ctx.older.spec) ? ctx.older.spec : undefined;
  const out = metadataErrors(meta);
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 0;
  if (replicas < 0) out.push(err('spec.replicas', replicas, 'must be greater than or equal to 0', 'use 0 or more'));
  const selector = spec.selector;
  const selectorProblems =
    selector === undefined || selector === null ? [] : validateSelector(selector, 'spec.selector');
  const selectorSize = isRecord(selector)
    ? (isRecord(selector.matchLabels) ? Object.keys(selector.matchLabels).length : 0) +
      (Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0)
    : 0;
  const selectorFix = 'select the pods by the template\'s labels, e.g. { matchLabels: { app: "web" } }';
  if (selector === undefined || selector === null)
    out.push(err('spec.selector', selector ?? null, 'is required', selectorFix));
  else {
    out.push(...selectorProblems);
    if (selectorSize === 0)
      out.push(err('spec.selector', selector, 'is empty, which is invalid for a CloneSet', selectorFix));
  }
  const template = isRecord(spec.template) ? spec.template : {};
  const templateLabels =
    isRecord(template.metadata) && isRecord(template.metadata.labels) ? template.metadata.labels : {};
  if (selectorProblems.length) out.push(err('spec.selector', selector, 'is not a valid label selector', selectorFix));
  else {
    // A missing selector selects nothing (so never the template's labels); an empty one everything.
    if (selectorSize > 0 || selector === undefined || selector === null) {
      if (!matchesSelector(isRecord(selector) ? selector : undefined, templateLabels as Record<string, string>))
        out.push(
          err(
            'spec.template.metadata.labels',
            templateLabels,
            'are not selected by spec.selector',
            'give the template the labels the selector matches',
          ),
        );
    }
    out.push(...templateErrors(spec));
  }
  const templateSpec = isRecord(template.spec) ? template.spec : {};
  const restart = selectorProblems.length ? templateSpec.restartPolicy : templateSpec.restartPolicy || 'Always';
  if (restart !== undefined && restart !== '' && restart !== 'Always')
    out.push(
      err(
        'spec.template.spec.restartPolicy',
        restart,
        'is not supported by a CloneSet',
        'use Always (or leave it unset)',
      ),
    );
  if (templateSpec.activeDeadlineSeconds !== undefined && templateSpec.activeDeadlineSeconds !== null)
    out.push(
      err(
        'spec.template.spec.activeDeadlineSeconds',
        templateSpec.activeDeadlineSeconds,
        'is not supported in a CloneSet',
        'remove it',
      ),
    );
  out.push(...scaleStrategyErrors(spec, oldSpec, meta, ctx));
  out.push(...updateStrategyErrors(isRecord(spec.updateStrategy) ? spec.updateStrategy : {}, replicas));
  const deadline = spec.progressDeadlineSeconds;
  if (typeof deadline === 'number') {
    const minReady = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
    if (deadline < 0)
      out.push(err('spec.progressDeadlineSeconds', deadline, 'must be greater than or equal to 0', 'use 0 or more'));
    if (deadline !== MAX_INT32 && deadline <= minReady)
      out.push(
        err(
          'spec.progressDeadlineSeconds',
          deadline,
          `must be greater than minReadySeconds (${minReady})`,
          `use more than ${minReady}, or ${MAX_INT32} for no deadline`,
        ),
      );
  }
  return out;
}

/** The spec fields an UPDATE may change (upstream validateCloneSetUpdate): all but the selector. */
const MUTABLE = [
  'replicas',
  'template',
  'scaleStrategy',
  'updateStrategy',
  'minReadySeconds',
  'lifecycle',
  'revisionHistoryLimit',
  'volumeClaimTemplates',
  'progressDeadlineSeconds',
];

/** Go's encoding of a value of a Go type (`undefined` as Go's zero): two compared as upstream's typed code does. */
function asGo(value: unknown, type: string): unknown {
  try {
    return JSON.parse(encode(value ?? null, type, '', true, CLONESET_GO_TYPES)) as unknown;
  } catch (e) {
    if (!(e instanceof GoEncodingError)) throw e;
    return value;
  }
}

/**
 * The differences between two JSON values as JSON-patch operations (op and path), as
 * github.com/appscode/jsonpatch's CreatePatch finds them: per key of objects, per index of lists of
 * one length; a list whose length changed is added to or removed from at its end.
 */
function patchOps(a: unknown, b: unknown, path: string): Array<[string, string]> {
  if (isDeepStrictEqual(a, b)) return [];
  if (isRecord(a) && isRecord(b)) {
    const ops: Array<[string, string]> = [];
    for (const k of Object.keys(a)) {
      const p = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!(k in b)) ops.push(['remove', p]);
      else ops.push(...patchOps(a[k], b[k], p));
    }
    for (const k of Object.keys(b))
      if (!(k in a)) ops.push(['add', `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
    return ops;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const ops: Array<[string, string]> = [];
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) ops.push(...patchOps(a[i], b[i], `${path}/${i}`));
    for (let i = n; i < b.length; i++) ops.push(['add', `${path}/${i}`]);
    for (let i = a.length - 1; i >= n; i--) ops.push(['remove', `${path}/${i}`]);
    return ops;
  }
  return [['replace', path]];
}

/** Every problem with an UPDATE of `older` to `cs` (upstream validateCloneSetUpdate), then the CREATE checks. */
export function validateCloneSetUpdate(
  cs: unknown,
  older: unknown,
  ctx: Omit<CloneSetValidationContext, 'older'> = {},
): string[] {
  if (!isRecord(cs) || !isRecord(older)) return validateCloneSet(cs, { ...ctx, older });
  const out: string[] = [];
  const meta = isRecord(cs.metadata) ? cs.metadata : {};
  const oldMeta = isRecord(older.metadata) ? older.metadata : {};
  for (const field of ['name', 'namespace', 'uid', 'creationTimestamp'])
    if ((meta[field] ?? '') !== (oldMeta[field] ?? ''))
      out.push(
        err(
          `metadata.${field}`,
          meta[field],
          `is immutable (was ${JSON.stringify(oldMeta[field])})`,
          `keep ${JSON.stringify(oldMeta[field])}`,
        ),
      );
  if (!meta.resourceVersion)
    out.push(
      err(
        'metadata.resourceVersion',
        meta.resourceVersion ?? '',
        'must be specified for an update',
        'send the resourceVersion of the CloneSet read',
      ),
    );
  out.push(...metadataErrors(meta));
  const spec = isRecord(cs.spec) ? cs.spec : {};
  const oldSpec = isRecord(older.spec) ? older.spec : {};
  const fixed = (s: Obj) =>
    asGo(Object.fromEntries(Object.entries(s).filter(([k]) => !MUTABLE.includes(k))), 'v1alpha1.CloneSetSpec');
  if (!isDeepStrictEqual(fixed(spec), fixed(oldSpec)))
    out.push(
      err(
        'spec',
        spec.selector,
        `changes a field other than ${MUTABLE.join(', ')} (the selector is immutable)`,
        `keep spec.selector ${JSON.stringify(oldSpec.selector)}`,
      ),
    );
  const strategy = isRecord(spec.updateStrategy) ? spec.updateStrategy : {};
  if (strategy.type === 'InPlaceOnly') {
    const podSpec = (s: Obj) => asGo(isRecord(s.template) ? s.template.spec : undefined, 'v1.PodSpec');
    const other = patchOps(podSpec(oldSpec), podSpec(spec), '').find(
      ([op, p]) => op !== 'replace' || !/^\/containers\/\d+\/image$/.test(p),
    );
    if (other)
      out.push(
        err(
          'spec',
          `${other[0]} ${other[1]}`,
          'changes the pod template beyond container images, which update strategy InPlaceOnly does not allow',
          'change only spec.template.spec.containers[*].image, or use InPlaceIfPossible or ReCreate',
        ),
      );
  }
  return [...out, ...validateCloneSet(cs, { ...ctx, older })];
}
