/**
 * One change per field that upstream v1.9.1's SidecarSet validation reads, most making it invalid,
 * some at the edge of valid (so over-refusal shows too). Walked from upstream's code, in its order:
 * pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go validateSidecarSet
 * (ValidateObjectMeta with validateSidecarSetName, validateSidecarSetSpec: selector,
 * namespace/namespaceSelector, validateSidecarSetUpdateStrategy, getCoreVolumes,
 * validateContainersForSidecarSet with validateDownwardAPI), then the core validation it reaches
 * through ValidatePodCreate on a fake pod of the sidecars (k8s.io/kubernetes
 * pkg/apis/core/validation: ValidateObjectMeta, validateVolumes, validateInitContainers,
 * validateContainers -> validateContainerCommon: name, image, terminationMessagePolicy,
 * validateContainerPorts, ValidateEnv, ValidateEnvFrom, ValidateVolumeMounts, validatePullPolicy,
 * ValidateContainerResourceRequirements, validateResizePolicy, ValidateSecurityContext; probes and
 * lifecycle handlers; checkHostPortConflicts; validateContainersOnlyForPod).
 *
 * Used by both judges of SidecarSet validation: the in-process oracle
 * (test/integration/sidecarset-upstream-inject.test.ts) and the real upstream webhook
 * (test/integration/sidecarset-differential.test.ts). Each takes a raw SidecarSet
 * (`{ metadata, spec }`) with at least one container and changes it in place.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const c0 = (s: Json) => s.spec.containers[0];
const withVolume = (s: Json, name: string) => {
  if (!(s.spec.volumes ?? []).some((v: Json) => v.name === name))
    s.spec.volumes = [...(s.spec.volumes ?? []), { name, emptyDir: {} }];
};
const mount = (s: Json, m: Json) => {
  withVolume(s, m.name);
  c0(s).volumeMounts = [...(c0(s).volumeMounts ?? []).filter((x: Json) => x.mountPath !== m.mountPath), m];
};
const init = (s: Json, c: Json, strategy = 'NotUpdate') => {
  s.spec.initContainers = [{ name: 'zinit', image: 'init:1', ...c }];
  s.spec.updateStrategy = { ...(s.spec.updateStrategy ?? {}), type: strategy };
};

export const INVALID_FIELDS: Record<string, (s: Json) => void> = {
  // metadata (validateSidecarSetName)
  'metadata.name 64 characters': (s) => (s.metadata.name = `${s.metadata.name}-${'x'.repeat(64)}`.slice(0, 64)),
  'metadata.name 63 characters (valid)': (s) => (s.metadata.name = `${s.metadata.name}-${'x'.repeat(63)}`.slice(0, 63)),
  'metadata.name with a dot': (s) => (s.metadata.name = `${s.metadata.name}.v1`),
  // spec.selector (validateSelector)
  'selector empty': (s) => (s.spec.selector = {}),
  'selector In without values': (s) =>
    (s.spec.selector.matchExpressions = [{ key: 'app', operator: 'In', values: [] }]),
  'selector Exists with values': (s) =>
    (s.spec.selector.matchExpressions = [{ key: 'app', operator: 'Exists', values: ['x'] }]),
  'selector unknown operator': (s) =>
    (s.spec.selector.matchExpressions = [{ key: 'app', operator: 'Near', values: ['x'] }]),
  'selector label key invalid': (s) =>
    (s.spec.selector.matchLabels = { ...s.spec.selector.matchLabels, 'bad key': 'x' }),
  'selector label value invalid': (s) =>
    (s.spec.selector.matchLabels = { ...s.spec.selector.matchLabels, k: 'bad value!' }),
  'selector label value 64 characters': (s) =>
    (s.spec.selector.matchLabels = { ...s.spec.selector.matchLabels, k: 'v'.repeat(64) }),
  // namespace, namespaceSelector
  'namespace and namespaceSelector': (s) => {
    s.spec.namespace = 'apps';
    s.spec.namespaceSelector = { matchLabels: { team: 'a' } };
  },
  'namespaceSelector empty': (s) => {
    delete s.spec.namespace;
    s.spec.namespaceSelector = {};
  },
  'namespaceSelector label value invalid': (s) => {
    delete s.spec.namespace;
    s.spec.namespaceSelector = { matchLabels: { team: 'a b' } };
  },
  // updateStrategy (validateSidecarSetUpdateStrategy, RollingUpdate only)
  'updateStrategy.selector empty': (s) => (s.spec.updateStrategy = { selector: {} }),
  'updateStrategy.selector empty under NotUpdate (valid)': (s) =>
    (s.spec.updateStrategy = { type: 'NotUpdate', selector: {} }),
  'updateStrategy.selector invalid': (s) =>
    (s.spec.updateStrategy = { selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }),
  'updateStrategy partition with selector': (s) =>
    (s.spec.updateStrategy = { partition: 1, selector: { matchLabels: { canary: 'true' } } }),
  'updateStrategy partition not a percentage': (s) => (s.spec.updateStrategy = { partition: 'half' }),
  'updateStrategy partition negative': (s) => (s.spec.updateStrategy = { partition: -1 }),
  'updateStrategy partition not a percentage under NotUpdate (valid)': (s) =>
    (s.spec.updateStrategy = { type: 'NotUpdate', partition: 'half' }),
  'updateStrategy maxUnavailable negative': (s) => (s.spec.updateStrategy = { maxUnavailable: -2 }),
  'updateStrategy maxUnavailable bad percentage': (s) => (s.spec.updateStrategy = { maxUnavailable: '1.5%' }),
  'priorityStrategy weight and order': (s) =>
    (s.spec.updateStrategy = {
      priorityStrategy: {
        weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: 'b' } } }],
        orderPriority: [{ orderedKey: 'k' }],
      },
    }),
  'priorityStrategy weight 101': (s) =>
    (s.spec.updateStrategy = {
      priorityStrategy: { weightPriority: [{ weight: 101, matchSelector: { matchLabels: { a: 'b' } } }] },
    }),
  'priorityStrategy empty matchSelector': (s) =>
    (s.spec.updateStrategy = { priorityStrategy: { weightPriority: [{ weight: 1, matchSelector: {} }] } }),
  'priorityStrategy empty orderedKey': (s) =>
    (s.spec.updateStrategy = { priorityStrategy: { orderPriority: [{ orderedKey: '' }] } }),
  'scatterStrategy empty key': (s) => (s.spec.updateStrategy = { scatterStrategy: [{ key: '', value: 'x' }] }),
  'scatterStrategy duplicate term': (s) =>
    (s.spec.updateStrategy = {
      scatterStrategy: [
        { key: 'k', value: 'v' },
        { key: 'k', value: 'v' },
      ],
    }),
  // volumes (getCoreVolumes, then core validateVolumes)
  'volume duplicate name': (s) => {
    s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'dup', emptyDir: {} }, { name: 'dup', emptyDir: {} }];
  },
  'volume name not a DNS label': (s) =>
    (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'Bad_Vol', emptyDir: {} }]),
  'volume without a source': (s) => (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'nosource' }]),
  'volume with two sources': (s) =>
    (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'two', emptyDir: {}, hostPath: { path: '/x' } }]),
  'volume hostPath with ..': (s) =>
    (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'hp', hostPath: { path: '/a/../b' } }]),
  'volume hostPath type unknown': (s) =>
    (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'hp', hostPath: { path: '/x', type: 'Folder' } }]),
  'volume configMap without name': (s) => (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'cm', configMap: {} }]),
  'volume secret defaultMode out of range': (s) =>
    (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'sec', secret: { secretName: 's', defaultMode: 4096 } }]),
  'volume configMap item path absolute': (s) =>
    (s.spec.volumes = [
      ...(s.spec.volumes ?? []),
      { name: 'cm', configMap: { name: 'c', items: [{ key: 'k', path: '/abs' }] } },
    ]),
  'volume downwardAPI fieldPath unknown': (s) =>
    (s.spec.volumes = [
      ...(s.spec.volumes ?? []),
      { name: 'dw', downwardAPI: { items: [{ path: 'x', fieldRef: { fieldPath: 'spec.unknown' } }] } },
    ]),
  'volume emptyDir sizeLimit negative': (s) =>
    (s.spec.volumes = [...(s.spec.volumes ?? []), { name: 'ed', emptyDir: { sizeLimit: '-1Gi' } }]),
  // containers (validateContainersForSidecarSet)
  'no containers at all': (s) => {
    s.spec.containers = [];
    delete s.spec.initContainers;
  },
  'container duplicate name': (s) => s.spec.containers.push({ ...c0(s), image: 'dup:1' }),
  'container name not a DNS label': (s) => (c0(s).name = 'Bad_Name'),
  'container name 64 characters': (s) => (c0(s).name = 'c'.repeat(64)),
  'container without image': (s) => delete c0(s).image,
  'container image with spaces': (s) => (c0(s).image = ` ${c0(s).image}`),
  'podInjectPolicy unknown': (s) => (c0(s).podInjectPolicy = 'Sideways'),
  'shareVolumePolicy unknown': (s) => (c0(s).shareVolumePolicy = { type: 'maybe' }),
  'transferEnv envName invalid (valid for upstream)': (s) =>
    (c0(s).transferEnv = [{ sourceContainerName: 'main', envName: '1 BAD' }]),
  'terminationMessagePolicy unknown': (s) => (c0(s).terminationMessagePolicy = 'Log'),
  'imagePullPolicy unknown': (s) => (c0(s).imagePullPolicy = 'Sometimes'),
  // ports
  'port containerPort 0': (s) => (c0(s).ports = [{ containerPort: 0, name: 'zero' }]),
  'port containerPort 70000': (s) => (c0(s).ports = [{ containerPort: 70000 }]),
  'port containerPort 65535 (valid)': (s) => (c0(s).ports = [{ containerPort: 65535 }]),
  'port hostPort 65536': (s) => (c0(s).ports = [{ containerPort: 80, hostPort: 65536 }]),
  'port name 16 characters': (s) => (c0(s).ports = [{ containerPort: 80, name: 'metrics-endpoint' }]),
  'port name 15 characters (valid)': (s) => (c0(s).ports = [{ containerPort: 80, name: 'metrics-endpoin' }]),
  'port name digits only': (s) => (c0(s).ports = [{ containerPort: 80, name: '8080' }]),
  'port name uppercase': (s) => (c0(s).ports = [{ containerPort: 80, name: 'Admin' }]),
  'port name with --': (s) => (c0(s).ports = [{ containerPort: 80, name: 'a--b' }]),
  'port name duplicate': (s) =>
    (c0(s).ports = [
      { containerPort: 80, name: 'p' },
      { containerPort: 81, name: 'p' },
    ]),
  'port protocol unknown': (s) => (c0(s).ports = [{ containerPort: 80, protocol: 'HTTP' }]),
  'hostPort used by two containers': (s) => {
    c0(s).ports = [{ containerPort: 80, hostPort: 18080 }];
    s.spec.containers.push({ name: 'zz-second', image: 'z:1', ports: [{ containerPort: 81, hostPort: 18080 }] });
  },
  // env, envFrom
  'env name empty': (s) => (c0(s).env = [{ name: '', value: 'x' }]),
  'env name invalid': (s) => (c0(s).env = [{ name: '1 BAD', value: 'x' }]),
  'env value and valueFrom': (s) =>
    (c0(s).env = [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]),
  'env valueFrom empty': (s) => (c0(s).env = [{ name: 'A', valueFrom: {} }]),
  'env valueFrom two sources': (s) =>
    (c0(s).env = [
      {
        name: 'A',
        valueFrom: { fieldRef: { fieldPath: 'metadata.name' }, configMapKeyRef: { name: 'c', key: 'k' } },
      },
    ]),
  'env fieldRef path unknown': (s) =>
    (c0(s).env = [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.unknown' } } }]),
  'env resourceFieldRef resource unknown': (s) =>
    (c0(s).env = [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'gpu' } } }]),
  'env configMapKeyRef key invalid': (s) =>
    (c0(s).env = [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c', key: 'bad key' } } }]),
  'env secretKeyRef without key': (s) => (c0(s).env = [{ name: 'A', valueFrom: { secretKeyRef: { name: 's' } } }]),
  'envFrom prefix invalid': (s) => (c0(s).envFrom = [{ prefix: '1 bad', configMapRef: { name: 'c' } }]),
  'envFrom without a source': (s) => (c0(s).envFrom = [{ prefix: 'P_' }]),
  'envFrom configMapRef name invalid': (s) => (c0(s).envFrom = [{ configMapRef: { name: 'Bad_Name' } }]),
  // volumeMounts
  'mount of a missing volume': (s) => (c0(s).volumeMounts = [{ name: 'nowhere', mountPath: '/nowhere' }]),
  'mount without mountPath': (s) => mount(s, { name: 'mv', mountPath: '' }),
  'mount duplicate mountPath': (s) => {
    mount(s, { name: 'mv', mountPath: '/dup' });
    withVolume(s, 'mv2');
    c0(s).volumeMounts.push({ name: 'mv2', mountPath: '/dup' });
  },
  'mount relative mountPath (valid for upstream)': (s) => mount(s, { name: 'mv', mountPath: 'rel/path' }),
  'mount subPath absolute': (s) => mount(s, { name: 'mv', mountPath: '/sp', subPath: '/etc' }),
  'mount subPath with ..': (s) => mount(s, { name: 'mv', mountPath: '/sp', subPath: 'a/../..' }),
  'mount subPath and subPathExpr': (s) => mount(s, { name: 'mv', mountPath: '/sp', subPath: 'a', subPathExpr: 'b' }),
  'mount mountPropagation unknown': (s) => mount(s, { name: 'mv', mountPath: '/mp', mountPropagation: 'Both' }),
  'mount Bidirectional unprivileged': (s) =>
    mount(s, { name: 'mv', mountPath: '/mp', mountPropagation: 'Bidirectional' }),
  'mount Bidirectional privileged (valid)': (s) => {
    mount(s, { name: 'mv', mountPath: '/mp', mountPropagation: 'Bidirectional' });
    c0(s).securityContext = { privileged: true };
  },
  'volumeDevice of a missing volume': (s) => (c0(s).volumeDevices = [{ name: 'nowhere', devicePath: '/dev/x' }]),
  // resources
  'resource name not standard': (s) => (c0(s).resources = { limits: { gpu: '1' } }),
  'resource name invalid': (s) => (c0(s).resources = { requests: { 'a/b/c': '1' } }),
  'resource quantity negative': (s) => (c0(s).resources = { requests: { cpu: '-1' } }),
  'resource request over limit': (s) => (c0(s).resources = { limits: { cpu: '1' }, requests: { cpu: '2' } }),
  'extended resource request without limit': (s) => (c0(s).resources = { requests: { 'example.com/gpu': '1' } }),
  'extended resource fractional': (s) => (c0(s).resources = { limits: { 'example.com/gpu': '500m' } }),
  'extended resource request below limit': (s) =>
    (c0(s).resources = { limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '1' } }),
  'hugepages without cpu or memory': (s) => (c0(s).resources = { limits: { 'hugepages-2Mi': '2Mi' } }),
  'resource claim unknown': (s) => (c0(s).resources = { claims: [{ name: 'gpu' }] }),
  'resizePolicy resource unknown': (s) =>
    (c0(s).resizePolicy = [{ resourceName: 'gpu', restartPolicy: 'NotRequired' }]),
  'resizePolicy restartPolicy unknown': (s) =>
    (c0(s).resizePolicy = [{ resourceName: 'cpu', restartPolicy: 'Sometimes' }]),
  // probes
  'probe without handler': (s) => (c0(s).livenessProbe = { periodSeconds: 3 }),
  'probe with two handlers': (s) => (c0(s).readinessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 80 } }),
  'probe periodSeconds negative': (s) => (c0(s).livenessProbe = { exec: { command: ['true'] }, periodSeconds: -1 }),
  'probe timeoutSeconds negative': (s) => (c0(s).readinessProbe = { exec: { command: ['true'] }, timeoutSeconds: -1 }),
  'probe initialDelaySeconds negative': (s) =>
    (c0(s).readinessProbe = { exec: { command: ['true'] }, initialDelaySeconds: -1 }),
  'probe failureThreshold negative': (s) =>
    (c0(s).startupProbe = { exec: { command: ['true'] }, failureThreshold: -1 }),
  'probe successThreshold negative': (s) =>
    (c0(s).readinessProbe = { exec: { command: ['true'] }, successThreshold: -1 }),
  'liveness successThreshold 2': (s) => (c0(s).livenessProbe = { exec: { command: ['true'] }, successThreshold: 2 }),
  'startup successThreshold 2': (s) => (c0(s).startupProbe = { exec: { command: ['true'] }, successThreshold: 2 }),
  'readiness successThreshold 2 (valid)': (s) =>
    (c0(s).readinessProbe = { exec: { command: ['true'] }, successThreshold: 2 }),
  'probe terminationGracePeriodSeconds 0': (s) =>
    (c0(s).livenessProbe = { exec: { command: ['true'] }, terminationGracePeriodSeconds: 0 }),
  'readiness terminationGracePeriodSeconds set': (s) =>
    (c0(s).readinessProbe = { exec: { command: ['true'] }, terminationGracePeriodSeconds: 10 }),
  'probe exec without command': (s) => (c0(s).livenessProbe = { exec: {} }),
  'probe httpGet port 0': (s) => (c0(s).readinessProbe = { httpGet: { port: 0 } }),
  'probe httpGet scheme unknown': (s) => (c0(s).readinessProbe = { httpGet: { port: 80, scheme: 'FTP' } }),
  'probe httpGet header name invalid': (s) =>
    (c0(s).readinessProbe = { httpGet: { port: 80, httpHeaders: [{ name: 'bad header', value: 'x' }] } }),
  'probe tcpSocket port name invalid': (s) => (c0(s).readinessProbe = { tcpSocket: { port: 'Admin_Port' } }),
  'probe grpc port 0': (s) => (c0(s).readinessProbe = { grpc: { port: 0 } }),
  // lifecycle
  'lifecycle preStop without handler': (s) => (c0(s).lifecycle = { preStop: {} }),
  'lifecycle postStart exec without command': (s) => (c0(s).lifecycle = { postStart: { exec: { command: [] } } }),
  'lifecycle preStop sleep negative': (s) => (c0(s).lifecycle = { preStop: { sleep: { seconds: -1 } } }),
  // v1.9.1 validates in a pod with terminationGracePeriodSeconds 30 (v1.8.3's had none, refusing every sleep).
  'lifecycle preStop sleep 5 (valid)': (s) => (c0(s).lifecycle = { preStop: { sleep: { seconds: 5 } } }),
  'lifecycle preStop sleep 0': (s) => (c0(s).lifecycle = { preStop: { sleep: { seconds: 0 } } }),
  'lifecycle preStop sleep 31': (s) => (c0(s).lifecycle = { preStop: { sleep: { seconds: 31 } } }),
  // securityContext
  'securityContext runAsUser negative': (s) => (c0(s).securityContext = { runAsUser: -1 }),
  'securityContext privileged without privilege escalation': (s) =>
    (c0(s).securityContext = { privileged: true, allowPrivilegeEscalation: false }),
  'securityContext SYS_ADMIN without privilege escalation': (s) =>
    (c0(s).securityContext = { allowPrivilegeEscalation: false, capabilities: { add: ['SYS_ADMIN'] } }),
  'securityContext procMount unknown': (s) => (c0(s).securityContext = { procMount: 'Weird' }),
  // init containers (validateInitContainers)
  'init container restartPolicy Never': (s) => init(s, { restartPolicy: 'Never' }),
  'init container with a probe': (s) => init(s, { readinessProbe: { exec: { command: ['x'] } } }),
  'init container with lifecycle': (s) => init(s, { lifecycle: { preStop: { exec: { command: ['x'] } } } }),
  'native sidecar with a probe (valid)': (s) =>
    init(s, { restartPolicy: 'Always', readinessProbe: { exec: { command: ['x'] } } }),
  'native sidecar under RollingUpdate': (s) => init(s, { restartPolicy: 'Always' }, 'RollingUpdate'),
  'init container named like a container': (s) => init(s, { name: c0(s).name }),
  'init container bad port name': (s) => init(s, { ports: [{ containerPort: 80, name: 'UPPER' }] }),
  // other
  'revisionHistoryLimit negative (valid)': (s) => (s.spec.revisionHistoryLimit = -1),
  'imagePullSecrets empty name (valid for upstream)': (s) => (s.spec.imagePullSecrets = [{ name: '' }]),
};
