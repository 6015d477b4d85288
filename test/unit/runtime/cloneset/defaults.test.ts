/**
 * CloneSet defaulting as upstream v1.9.1's mutating webhook applies it (pkg/webhook/cloneset/mutating
 * Handle, apis/apps/defaults/v1alpha1.go SetDefaultsCloneSet and pod.go SetDefaultPodSpec). Upstream
 * has no test table for it; test/integration/cloneset-upstream-differential.test.ts compares it with
 * upstream's code on generated CloneSets. These are the rules, one by one.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultCloneSet } from '../../../../lib/runtime/cloneset/defaults.js';
import type { CloneSet } from '../../../../lib/runtime/cloneset/types.js';

const cloneSet = (): CloneSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [{ name: 'app', image: 'nginx:1.27', resources: { limits: { cpu: '1000m' } } }],
        initContainers: [{ name: 'setup', image: 'busybox:1.36' }],
        volumes: [{ name: 'scratch' }],
      },
    },
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1024Mi' } } } }],
  },
});

describe('CloneSet defaulting (upstream SetDefaultsCloneSet through its mutating webhook)', () => {
  it('fills replicas, history, the strategy and the pod template on CREATE', () => {
    const cs = defaultCloneSet(cloneSet());
    expect(cs.spec.replicas).toBe(1);
    expect(cs.spec.revisionHistoryLimit).toBe(10);
    expect(cs.spec.updateStrategy).toEqual({ type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 });
    const pod = cs.spec.template.spec!;
    expect(pod).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
    });
    // App containers pull Always (for in-place update); init containers by Kubernetes' tag rule.
    expect(pod.containers[0]).toMatchObject({ imagePullPolicy: 'Always', resources: { limits: { cpu: '1' } } });
    expect(pod.initContainers![0].imagePullPolicy).toBe('IfNotPresent');
    expect(pod.volumes![0]).toEqual({ name: 'scratch', emptyDir: {} });
    expect(cs.spec.volumeClaimTemplates![0]).toMatchObject({
      spec: { resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Pending' },
    });
    // Stored as Go encodes it: the template's creationTimestamp, the status' counters.
    expect(cs.spec.template.metadata).toEqual({ creationTimestamp: null, labels: { app: 'web' } });
    expect(cs.status).toEqual({
      replicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      updatedReplicas: 0,
      updatedReadyReplicas: 0,
    });
  });

  it('gives the in-place types an inPlaceUpdateStrategy and keeps what is set', () => {
    const input = cloneSet();
    input.spec.updateStrategy = { type: 'InPlaceOnly', partition: '50%', maxUnavailable: 2 };
    input.spec.replicas = 0;
    const cs = defaultCloneSet(input);
    expect(cs.spec.updateStrategy).toEqual({
      type: 'InPlaceOnly',
      partition: '50%',
      maxUnavailable: 2,
      maxSurge: 0,
      inPlaceUpdateStrategy: {},
    });
    expect(cs.spec.replicas).toBe(0);
  });

  it('on UPDATE defaults the template only when it changed', () => {
    const stored = defaultCloneSet(cloneSet());
    // The template unchanged, a field of it left undefaulted by hand: upstream leaves it so.
    const unchanged = structuredClone(stored);
    delete unchanged.spec.template.spec!.schedulerName;
    const older = structuredClone(unchanged);
    unchanged.spec.replicas = 3;
    expect(defaultCloneSet(unchanged, older).spec.template.spec!.schedulerName).toBeUndefined();
    // Changed: defaulted again.
    const changed = structuredClone(unchanged);
    changed.spec.template.spec!.containers[0].image = 'nginx:1.28';
    expect(defaultCloneSet(changed, older).spec.template.spec!.schedulerName).toBe('default-scheduler');
  });

  it('leaves a CloneSet that needs no default exactly as sent', () => {
    const stored = defaultCloneSet(cloneSet());
    const sent = { ...structuredClone(stored), metadata: { ...stored.metadata, annotations: { unknownToGo: 'kept' } } };
    (sent.spec as unknown as Record<string, unknown>).fieldGoLacks = 'kept when nothing changes';
    expect(defaultCloneSet(sent, stored)).toBe(sent);
    // ... and drops what Go's types lack when it does default something.
    delete sent.spec.revisionHistoryLimit;
    expect(defaultCloneSet(sent, stored).spec).not.toHaveProperty('fieldGoLacks');
  });

  it('leaves a shape upstream cannot decode as sent, for the API server to name', () => {
    const input = cloneSet();
    (input.spec as unknown as Record<string, unknown>).replicas = 'three';
    expect(defaultCloneSet(input)).toBe(input);
  });
});
