/**
 * Generated WorkloadSpreads for the judges of WorkloadSpread validation (the in-process oracle,
 * test/integration/workloadspread-upstream-validation.test.ts, and the real upstream webhook,
 * test/integration/workloadspread-differential.test.ts): one change per field upstream's
 * validation reads (walked from pkg/webhook/workloadspread/validating and the core rules it
 * reaches: ValidateNodeSelectorTerm, ValidatePreferredSchedulingTerms, ValidateTolerations of
 * k8s.io/kubernetes v1.32) applied to valid WorkloadSpreads, conflicts and updates on them,
 * subset patches judged against the target's pod template (the case carries the target workload:
 * upstream merges each patch into its template and runs core ValidatePodSpec on the result), and
 * random WorkloadSpreads (fast-check) mixing valid and invalid values, patches included, most with
 * their target. A judge that does not create the `workloads` (the real webhook's differential)
 * compares them as upstream judges them without one: no patch check on either side.
 */
import fc from 'fast-check';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const zone = (operator: string, values?: string[]) => ({
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator, ...(values ? { values } : {}) }],
});

const BASES: Json[] = [
  {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    subsets: [
      { name: 'a', requiredNodeSelectorTerm: zone('In', ['zone-a']), maxReplicas: 3 },
      { name: 'b', requiredNodeSelectorTerm: zone('In', ['zone-b']) },
    ],
  },
  {
    targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
    subsets: [
      {
        name: 'a',
        preferredNodeSelectorTerms: [{ weight: 10, preference: zone('In', ['zone-a']) }],
        tolerations: [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }],
        maxReplicas: '50%',
        patch: { metadata: { labels: { subset: 'a' } } },
      },
      { name: 'b', maxReplicas: '50%' },
    ],
    scheduleStrategy: { type: 'Fixed' },
  },
  {
    targetRef: { apiVersion: 'batch/v1', kind: 'Job', name: 'web' },
    subsets: [
      { name: 'a', requiredNodeSelectorTerm: zone('In', ['zone-a']), maxReplicas: '30%' },
      { name: 'b', requiredNodeSelectorTerm: zone('In', ['zone-b']), maxReplicas: '30%' },
      { name: 'c' },
    ],
    scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } },
  },
];

const s0 = (s: Json) => s.subsets[0];
const last = (s: Json) => s.subsets[s.subsets.length - 1];

/** One change per field upstream's WorkloadSpread validation reads; "(valid)" ones at the edge of valid. */
const FIELDS: Record<string, (s: Json) => void> = {
  'targetRef missing': (s) => delete s.targetRef,
  'targetRef apiVersion empty': (s) => (s.targetRef.apiVersion = ''),
  'targetRef kind empty': (s) => (s.targetRef.kind = ''),
  'targetRef name empty': (s) => (s.targetRef.name = ''),
  'targetRef kind unknown': (s) => (s.targetRef = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'x' }),
  'targetRef Deployment of another group': (s) =>
    (s.targetRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'Deployment', name: 'x' }),
  'targetRef CloneSet of apps': (s) => (s.targetRef = { apiVersion: 'apps/v1', kind: 'CloneSet', name: 'x' }),
  'targetRef ReplicaSet (valid)': (s) => (s.targetRef = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x' }),
  'targetRef Job of apps': (s) => (s.targetRef = { apiVersion: 'apps/v1', kind: 'Job', name: 'x' }),
  'targetRef StatefulSet apps/v1 (valid)': (s) => {
    s.targetRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x' };
    for (const sub of s.subsets) if (typeof sub.maxReplicas === 'string') sub.maxReplicas = 2;
  },
  'targetRef StatefulSet of kruise v1beta1 (valid)': (s) => {
    s.targetRef = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'x' };
    for (const sub of s.subsets) if (typeof sub.maxReplicas === 'string') sub.maxReplicas = 2;
  },
  'targetRef StatefulSet of another group': (s) =>
    (s.targetRef = { apiVersion: 'rollouts.kruise.io/v1', kind: 'StatefulSet', name: 'x' }),
  'targetRef apiVersion with two slashes': (s) => (s.targetRef.apiVersion = 'apps/v1/x'),
  'targetRef apiVersion without group': (s) => (s.targetRef.apiVersion = 'v1'),
  'subsets empty': (s) => (s.subsets = []),
  'subsets missing': (s) => delete s.subsets,
  'subset name empty': (s) => (s0(s).name = ''),
  'subset name duplicated': (s) => (s.subsets[1].name = s0(s).name),
  'required term In without values': (s) => (s0(s).requiredNodeSelectorTerm = zone('In', [])),
  'required term Exists with values': (s) => (s0(s).requiredNodeSelectorTerm = zone('Exists', ['x'])),
  'required term Gt with two values': (s) => (s0(s).requiredNodeSelectorTerm = zone('Gt', ['1', '2'])),
  'required term Lt with one value (valid)': (s) => (s0(s).requiredNodeSelectorTerm = zone('Lt', ['7'])),
  'required term operator unknown': (s) => (s0(s).requiredNodeSelectorTerm = zone('Near', ['x'])),
  'required term key invalid': (s) =>
    (s0(s).requiredNodeSelectorTerm = { matchExpressions: [{ key: 'bad key', operator: 'Exists' }] }),
  // Valid in v1.8.3 (Kubernetes 1.30 checked no value); v1.9.1 checks a required term's values, not a preferred one's.
  'required term value not a label value': (s) => (s0(s).requiredNodeSelectorTerm = zone('In', ['not a label!'])),
  'required term matchFields metadata.name (valid)': (s) =>
    (s0(s).requiredNodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }),
  'required term matchFields other key': (s) =>
    (s0(s).requiredNodeSelectorTerm = { matchFields: [{ key: 'spec.nodeName', operator: 'In', values: ['n'] }] }),
  'required term matchFields two values': (s) =>
    (s0(s).requiredNodeSelectorTerm = {
      matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }],
    }),
  'required term matchFields Exists': (s) =>
    (s0(s).requiredNodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }),
  'required term matchFields bad node name': (s) =>
    (s0(s).requiredNodeSelectorTerm = {
      matchFields: [{ key: 'metadata.name', operator: 'In', values: ['Bad_Node'] }],
    }),
  'required term empty (valid)': (s) => (s0(s).requiredNodeSelectorTerm = {}),
  'preferred weight 0': (s) => (s0(s).preferredNodeSelectorTerms = [{ weight: 0, preference: zone('In', ['a']) }]),
  'preferred weight 101': (s) => (s0(s).preferredNodeSelectorTerms = [{ weight: 101, preference: zone('In', ['a']) }]),
  'preferred weight 100 (valid)': (s) =>
    (s0(s).preferredNodeSelectorTerms = [{ weight: 100, preference: zone('In', ['a']) }]),
  'preferred term value not a label value (valid)': (s) =>
    (s0(s).preferredNodeSelectorTerms = [{ weight: 5, preference: zone('In', ['not a label!']) }]),
  'preferred term invalid': (s) => (s0(s).preferredNodeSelectorTerms = [{ weight: 5, preference: zone('In', []) }]),
  'toleration key invalid': (s) => (s0(s).tolerations = [{ key: 'bad key', operator: 'Exists' }]),
  'toleration empty key with Equal': (s) => (s0(s).tolerations = [{ operator: 'Equal', value: 'x' }]),
  'toleration empty key with Exists (valid)': (s) => (s0(s).tolerations = [{ operator: 'Exists' }]),
  'toleration seconds without NoExecute': (s) =>
    (s0(s).tolerations = [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }]),
  'toleration seconds with NoExecute (valid)': (s) =>
    (s0(s).tolerations = [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]),
  'toleration Equal with bad value': (s) => (s0(s).tolerations = [{ key: 'k', operator: 'Equal', value: 'a b' }]),
  'toleration Exists with value': (s) => (s0(s).tolerations = [{ key: 'k', operator: 'Exists', value: 'v' }]),
  'toleration operator unknown': (s) => (s0(s).tolerations = [{ key: 'k', operator: 'Gt', value: '1' }]),
  'toleration effect unknown': (s) => (s0(s).tolerations = [{ key: 'k', operator: 'Exists', effect: 'Sometimes' }]),
  'toleration default operator (valid)': (s) => (s0(s).tolerations = [{ key: 'k', value: 'v' }]),
  'maxReplicas negative': (s) => (s0(s).maxReplicas = -1),
  'maxReplicas 0 (valid)': (s) => {
    for (const sub of s.subsets) delete sub.maxReplicas;
    s0(s).maxReplicas = 0;
  },
  'maxReplicas fractional percent': (s) => (s0(s).maxReplicas = '0.5%'),
  'maxReplicas not a percent': (s) => (s0(s).maxReplicas = 'five'),
  'maxReplicas negative percent': (s) => (s0(s).maxReplicas = '-1%'),
  'maxReplicas over 100%': (s) => (s0(s).maxReplicas = '101%'),
  'maxReplicas mixed types': (s) => {
    s0(s).maxReplicas = 2;
    s.subsets[1].maxReplicas = '20%';
  },
  'maxReplicas percentages sum over 100': (s) => {
    s0(s).maxReplicas = '60%';
    s.subsets[1].maxReplicas = '60%';
  },
  'maxReplicas percentages sum under 100 with all set': (s) => {
    for (const sub of s.subsets) sub.maxReplicas = '10%';
  },
  'maxReplicas percentages sum under 100, last unset (valid)': (s) => {
    for (const sub of s.subsets) sub.maxReplicas = '10%';
    delete last(s).maxReplicas;
  },
  'maxReplicas percent for a StatefulSet': (s) => {
    s.targetRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x' };
    s0(s).maxReplicas = '10%';
  },
  'scheduleStrategy type unknown': (s) => (s.scheduleStrategy = { type: 'Random' }),
  'adaptive with Fixed': (s) => (s.scheduleStrategy = { type: 'Fixed', adaptive: {} }),
  'adaptive without a type': (s) => (s.scheduleStrategy = { adaptive: { rescheduleCriticalSeconds: 10 } }),
  'adaptive with the last subset limited': (s) => {
    s.scheduleStrategy = { type: 'Adaptive', adaptive: {} };
    last(s).maxReplicas = 2;
  },
  'adaptive seconds negative': (s) => {
    s.scheduleStrategy = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: -1 } };
    delete last(s).maxReplicas;
  },
  'adaptive seconds over 295 / (subsets - 1)': (s) => {
    s.scheduleStrategy = {
      type: 'Adaptive',
      adaptive: { rescheduleCriticalSeconds: Math.trunc(295 / (s.subsets.length - 1)) + 1 },
    };
    delete last(s).maxReplicas;
  },
  'adaptive seconds at 295 / (subsets - 1) (valid)': (s) => {
    s.scheduleStrategy = {
      type: 'Adaptive',
      adaptive: { rescheduleCriticalSeconds: Math.trunc(295 / (s.subsets.length - 1)) },
    };
    delete last(s).maxReplicas;
  },
  'adaptive type only (valid)': (s) => {
    s.scheduleStrategy = { type: 'Adaptive' };
  },
  'targetFilter selector invalid': (s) =>
    (s.targetFilter = { selector: { matchExpressions: [{ key: 'role', operator: 'In' }] } }),
  'targetFilter selector label value invalid': (s) => (s.targetFilter = { selector: { matchLabels: { role: 'a b' } } }),
  'targetFilter selector valid (valid)': (s) =>
    (s.targetFilter = { selector: { matchLabels: { role: 'worker' } }, replicasPathList: ['spec.replicas'] }),
};

const TEMPLATED = [
  'apps/v1 Deployment',
  'apps/v1 ReplicaSet',
  'apps/v1 StatefulSet',
  'batch/v1 Job',
  'apps.kruise.io/v1alpha1 CloneSet',
];

/**
 * The target workload, so upstream checks each subset patch merged into its pod template (core
 * ValidatePodSpec): a container `main` mounting volume `data`, a claim `claim` (a CloneSet's or
 * StatefulSet's as a volume claim template). Named and namespaced as the WorkloadSpread's target.
 */
export function targetWorkload(targetRef: Json): Json | undefined {
  // Only the kinds upstream reads a template of (its fake API knows no other).
  if (!TEMPLATED.includes(`${targetRef.apiVersion} ${targetRef.kind}`)) return undefined;
  const template = {
    metadata: { labels: { app: 'web' } },
    spec: {
      containers: [{ name: 'main', image: 'nginx:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
  const claims = targetRef.kind === 'CloneSet' || targetRef.kind === 'StatefulSet';
  if (!claims) template.spec.volumes.push({ name: 'claim', persistentVolumeClaim: { claimName: 'c' } } as Json);
  return {
    apiVersion: targetRef.apiVersion,
    kind: targetRef.kind,
    metadata: { name: targetRef.name, namespace: 'apps' },
    spec: {
      ...(targetRef.kind === 'Job' ? { parallelism: 2 } : { replicas: 2 }),
      selector: { matchLabels: { app: 'web' } },
      template,
      ...(claims
        ? {
            volumeClaimTemplates: [
              {
                metadata: { name: 'claim' },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
              },
            ],
          }
        : {}),
    },
  };
}

/**
 * Subset patches judged against the target's template: what core pod validation refuses once
 * merged (a mount of a volume the template does not declare, two sources on one volume, a volume
 * deleted under its mount, names, images, devices, pod-level fields) and what it accepts.
 */
const PATCHES: Record<string, Json> = {
  'patch mounts an undeclared volume': {
    spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] },
  },
  'patch gives a volume a second source': { spec: { volumes: [{ name: 'data', configMap: { name: 'cm' } }] } },
  'patch deletes a mounted volume': { spec: { volumes: [{ $patch: 'delete', name: 'data' }] } },
  'patch adds a volume with an invalid name': { spec: { volumes: [{ name: 'Bad_Vol', emptyDir: {} }] } },
  'patch adds a volume twice': {
    spec: {
      volumes: [
        { name: 'dup', emptyDir: {} },
        { name: 'dup', emptyDir: {} },
      ],
    },
  },
  'patch adds a container without image': { spec: { containers: [{ name: 'side' }] } },
  'patch adds a container with an invalid name': { spec: { containers: [{ name: 'Side_Car', image: 'x:1' }] } },
  'patch adds an init container named as a container': { spec: { initContainers: [{ name: 'main', image: 'x:1' }] } },
  'patch adds an init container mounting an undeclared volume': {
    spec: { initContainers: [{ name: 'init', image: 'x:1', volumeMounts: [{ name: 'gone', mountPath: '/g' }] }] },
  },
  'patch replaces every container away': { spec: { containers: [{ $patch: 'replace' }] } },
  'patch adds a block device on an emptyDir': {
    spec: { containers: [{ name: 'main', volumeDevices: [{ name: 'data', devicePath: '/dev/d' }] }] },
  },
  'patch sets an unknown restart policy': { spec: { restartPolicy: 'Sometimes' } },
  'patch sets an invalid hostname': { spec: { hostname: 'Bad.Host' } },
  'patch sets a port out of range': { spec: { containers: [{ name: 'main', ports: [{ containerPort: 70000 }] }] } },
  'patch adds a volume and mounts it (valid)': {
    spec: {
      volumes: [{ name: 'cache', emptyDir: {} }],
      containers: [{ name: 'main', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
    },
  },
  'patch mounts the claim (valid)': {
    spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'claim', mountPath: '/claim' }] }] },
  },
  'patch adds a sidecar (valid)': { spec: { containers: [{ name: 'side', image: 'side:1' }] } },
  'patch sets env and a priority class (valid)': {
    spec: { priorityClassName: 'high', containers: [{ name: 'main', env: [{ name: 'ZONE', value: 'a' }] }] },
  },
};

/** As the API server passes it: stored ones (and every UPDATE's objects) carry a resourceVersion. */
const wsOf = (name: string, spec: Json): Json => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name, namespace: 'apps', resourceVersion: '1' },
  spec,
});

/** Random specs: any mix of valid and invalid values per field. */
const term = fc.record(
  {
    matchExpressions: fc.array(
      fc.record(
        {
          key: fc.constantFrom('topology.kubernetes.io/zone', 'pool', 'bad key'),
          operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Near'),
          values: fc.array(fc.constantFrom('a', '3', 'x y'), { maxLength: 2 }),
        },
        { requiredKeys: ['key', 'operator'] },
      ),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: [] },
);
const subsetArb = fc.record(
  {
    name: fc.constantFrom('a', 'b', 'c', ''),
    requiredNodeSelectorTerm: term,
    preferredNodeSelectorTerms: fc.array(fc.record({ weight: fc.integer({ min: -1, max: 101 }), preference: term }), {
      maxLength: 1,
    }),
    tolerations: fc.array(
      fc.record(
        {
          key: fc.constantFrom('', 'spot', 'bad key'),
          operator: fc.constantFrom('Exists', 'Equal', 'Other'),
          value: fc.constantFrom('', 'v'),
          effect: fc.constantFrom('', 'NoSchedule', 'NoExecute', 'Never'),
          tolerationSeconds: fc.constantFrom(5),
        },
        { requiredKeys: ['key'] },
      ),
      { maxLength: 2 },
    ),
    maxReplicas: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom('20%', '50%', '100%', '110%', '1.5%', 'x')),
    patch: fc.constantFrom({ metadata: { labels: { s: 'x' } } }, ...Object.values(PATCHES)),
  },
  { requiredKeys: ['name'] },
);
const specArb = fc.record(
  {
    targetRef: fc.record({
      apiVersion: fc.constantFrom('apps/v1', 'apps.kruise.io/v1alpha1', 'apps.kruise.io/v1beta1', 'batch/v1', 'v1'),
      kind: fc.constantFrom('Deployment', 'ReplicaSet', 'CloneSet', 'Job', 'StatefulSet', 'DaemonSet'),
      name: fc.constantFrom('web', 'db'),
    }),
    subsets: fc.array(subsetArb, { minLength: 0, maxLength: 3 }),
    scheduleStrategy: fc.record(
      {
        type: fc.constantFrom('', 'Fixed', 'Adaptive', 'Other'),
        adaptive: fc.record(
          { rescheduleCriticalSeconds: fc.integer({ min: -5, max: 400 }), disableSimulationSchedule: fc.boolean() },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['targetRef', 'subsets'] },
);

export interface WorkloadSpreadCase {
  label: string;
  ws: Json;
  wsOlder?: Json;
  wsExisting?: Json[];
  /** The target workload when it exists (then upstream checks the patches against its template). */
  workloads?: Json[];
}

/** Every generated case: per-field changes x bases, conflicts and updates, then `random` random ones. */
export function generateWorkloadSpreadCases(
  random = 600,
  seed = 24,
): {
  fieldCases: WorkloadSpreadCase[];
  pairCases: WorkloadSpreadCase[];
  randomCases: WorkloadSpreadCase[];
  patchCases: WorkloadSpreadCase[];
} {
  const fieldCases: WorkloadSpreadCase[] = Object.entries(FIELDS).flatMap(([field, change]) =>
    BASES.map((base, b) => {
      const spec = structuredClone(base);
      change(spec);
      return { label: `${field} (base ${b})`, ws: wsOf('ws', spec) };
    }),
  );
  const randomCases: WorkloadSpreadCase[] = fc
    .sample(
      fc.record({
        spec: specArb,
        other: fc.option(specArb, { nil: undefined }),
        update: fc.option(specArb, { nil: undefined }),
        // Most random cases have their target: upstream then merges and validates every patch.
        withTarget: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
      }),
      { numRuns: random, seed },
    )
    .map(({ spec, other, update, withTarget }, i) => {
      const target = withTarget ? targetWorkload(spec.targetRef) : undefined;
      return {
        label: `random ${i}`,
        ws: wsOf('ws', spec),
        ...(other ? { wsExisting: [wsOf('other', other)] } : {}),
        ...(update ? { wsOlder: wsOf('ws', update) } : {}),
        ...(target ? { workloads: [target] } : {}),
      };
    });
  // Each patch on each base's first subset, with the target present.
  const patchCases: WorkloadSpreadCase[] = Object.entries(PATCHES).flatMap(([label, patch]) =>
    BASES.map((base, b) => {
      const spec = structuredClone(base);
      s0(spec).patch = patch;
      return { label: `${label} (base ${b})`, ws: wsOf('ws', spec), workloads: [targetWorkload(spec.targetRef)!] };
    }),
  );
  // Conflicts and updates on valid bases: the same target in another WorkloadSpread, a changed target.
  const pairCases: WorkloadSpreadCase[] = BASES.flatMap((base, b) => [
    { label: `conflict, same target (base ${b})`, ws: wsOf('ws', base), wsExisting: [wsOf('other', base)] },
    {
      label: `conflict, same target of another version (base ${b})`,
      ws: wsOf('ws', base),
      wsExisting: [
        wsOf('other', { ...base, targetRef: { ...base.targetRef, apiVersion: `${base.targetRef.apiVersion}x` } }),
      ],
    },
    {
      label: `update, target renamed (base ${b})`,
      ws: wsOf('ws', { ...base, targetRef: { ...base.targetRef, name: 'renamed' } }),
      wsOlder: wsOf('ws', base),
    },
    { label: `update, same target (valid) (base ${b})`, ws: wsOf('ws', base), wsOlder: wsOf('ws', base) },
  ]);
  return { fieldCases, pairCases, randomCases, patchCases };
}
