/**
 * Fixtures of upstream OpenKruise v1.8.3's pod webhook tests, as facts (inputs only):
 * pkg/webhook/pod/mutating/sidecarset_test.go, package-level `var (...)` block. Go zero values
 * are left out (an unset PodInjectPolicy is upstream's "", which injects after the app).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

const selector = { matchLabels: { app: 'suxing-test' } };

export const sidecarSet1 = (): SidecarSet => ({
  metadata: { name: 'sidecarset1', annotations: { 'kruise.io/sidecarset-hash': 'c4k2dbb95d' }, labels: {} },
  spec: {
    selector: structuredClone(selector),
    initContainers: [
      { name: 'init-2', image: 'busybox:1.0.0' },
      { name: 'init-1', image: 'busybox:1.0.0' },
    ],
    containers: [
      {
        name: 'dns-f',
        image: 'dns-f-image:1.0',
        podInjectPolicy: 'BeforeAppContainer',
        shareVolumePolicy: { type: 'disabled' },
      },
      {
        name: 'log-agent',
        image: 'log-agent-image:1.0',
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'disabled' },
      },
    ],
  },
});

export const sidecarSetWithInitContainer = (): SidecarSet => ({
  metadata: { name: 'sidecarset', annotations: { 'kruise.io/sidecarset-hash': 'c4k2dbb95d' }, labels: {} },
  spec: {
    selector: structuredClone(selector),
    initContainers: [
      {
        name: 'dns-e',
        image: 'dns-e-image:1.0',
        volumeMounts: [{ name: 'volume-1', mountPath: '' }],
        transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
      },
    ],
    volumes: [{ name: 'volume-1' }],
  },
});

export const sidecarsetWithTransferEnv = (): SidecarSet => ({
  metadata: { name: 'sidecarset2', annotations: { 'kruise.io/sidecarset-hash': 'c4k2dbb95d' }, labels: {} },
  spec: {
    selector: structuredClone(selector),
    initContainers: [
      {
        name: 'dns-e',
        image: 'dns-e-image:1.0',
        volumeMounts: [{ name: 'volume-1', mountPath: '' }],
        podInjectPolicy: 'BeforeAppContainer',
        transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
      },
    ],
    containers: [
      {
        name: 'dns-f',
        image: 'dns-f-image:1.0',
        volumeMounts: [{ name: 'volume-1', mountPath: '' }],
        podInjectPolicy: 'BeforeAppContainer',
        shareVolumePolicy: { type: 'disabled' },
        transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
      },
    ],
    volumes: [{ name: 'volume-1' }, { name: 'volume-2' }],
  },
});

export const sidecarSet3 = (): SidecarSet => ({
  metadata: { name: 'sidecarset3', annotations: { 'kruise.io/sidecarset-hash': 'gm967682cm' }, labels: {} },
  spec: {
    selector: structuredClone(selector),
    containers: [
      {
        name: 'dns-f',
        image: 'dns-f-image:1.0',
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'enabled' },
        volumeMounts: [
          { name: 'volume-1', mountPath: '/a/b/c' },
          { name: 'volume-2', mountPath: '/d/e/f' },
        ],
      },
      {
        name: 'log-agent',
        image: 'log-agent-image:1.0',
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'disabled' },
      },
    ],
    volumes: [{ name: 'volume-1' }, { name: 'volume-2' }],
  },
});

export const sidecarSetWithStaragent = (): SidecarSet => ({
  metadata: { name: 'sidecarset3', annotations: { 'kruise.io/sidecarset-hash': 'gm967682cm' }, labels: {} },
  spec: {
    selector: structuredClone(selector),
    initContainers: [
      {
        name: 'dns-e',
        image: 'dns-e-image:1.0',
        podInjectPolicy: 'BeforeAppContainer',
        shareVolumePolicy: { type: 'enabled' },
        volumeMounts: [
          { name: 'volume-3', mountPath: '/g/h/i' },
          { name: 'volume-4', mountPath: '/j/k/l' },
          { name: 'volume-staragent', mountPath: '/staragent' },
        ],
      },
    ],
    containers: [
      {
        name: 'dns-f',
        image: 'dns-f-image:1.0',
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'enabled' },
        volumeMounts: [
          { name: 'volume-1', mountPath: '/a/b/c' },
          { name: 'volume-2', mountPath: '/d/e/f' },
          { name: 'volume-staragent', mountPath: '/staragent' },
        ],
      },
      {
        name: 'staragent',
        image: 'staragent-image:1.0',
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'enabled' },
      },
      {
        name: 'log-agent',
        image: 'log-agent-image:1.0',
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'disabled' },
      },
    ],
    volumes: [
      { name: 'volume-1' },
      { name: 'volume-2' },
      { name: 'volume-staragent' },
      { name: 'volume-3' },
      { name: 'volume-4' },
    ],
  },
});

const nginxEnv = () => [
  { name: 'hello1', value: 'world1' },
  { name: 'hello2', value: 'world2' },
];

export const pod1 = (): V1Pod => ({
  metadata: { name: 'test-pod', namespace: 'default', labels: { app: 'suxing-test' } },
  spec: {
    initContainers: [{ name: 'init-0', image: 'busybox:1.0.0' }],
    containers: [
      {
        name: 'nginx',
        image: 'nginx:1.15.1',
        env: nginxEnv(),
        volumeMounts: [
          { name: 'volume-a', mountPath: '/a/b' },
          { name: 'volume-b', mountPath: '/e/f' },
        ],
      },
    ],
    volumes: [{ name: 'volume-a' }, { name: 'volume-b' }],
  },
});

export const podWithStaragent = (): V1Pod => ({
  metadata: { name: 'test-pod', namespace: 'default', labels: { app: 'suxing-test' } },
  spec: {
    containers: [
      {
        name: 'nginx',
        image: 'nginx:1.15.1',
        env: nginxEnv(),
        volumeMounts: [
          { name: 'volume-a', mountPath: '/a/b' },
          { name: 'volume-b', mountPath: '/e/f' },
          { name: 'volume-staragent', mountPath: '/staragent' },
        ],
      },
    ],
    volumes: [{ name: 'volume-a' }, { name: 'volume-b' }, { name: 'volume-staragent' }],
  },
});
