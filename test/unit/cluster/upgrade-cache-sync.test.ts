// The upgrade test explains its webhook timeouts by a new replica's SidecarSet cache that had not synced yet.
import { describe, expect, it } from '@jest/globals';
import { cacheSyncedAt, timeoutsAfter } from '../../e2e/support/kube.js';

// As `kubectl logs --timestamps` prints a v1.9.1 replica's reflector lines (from the run of 2026-11-29 03:56).
const log = [
  '2026-11-29T03:56:25.765564824Z I1129 03:56:25.751442       1 reflector.go:313] Starting reflector *v1beta1.SidecarSet (0s) from k8s.io/client-go@v0.32.10/tools/cache/reflector.go:251',
  '2026-11-29T03:56:25.779720161Z I1129 03:56:25.779600       1 reflector.go:376] Caches populated for *v1alpha1.SidecarSet from k8s.io/client-go@v0.32.10/tools/cache/reflector.go:251',
  '2026-11-29T03:56:25.872247695Z W1129 03:56:25.872129       1 reflector.go:569] k8s.io/client-go@v0.32.10/tools/cache/reflector.go:251: failed to list *v1beta1.SidecarSet: conversion webhook for apps.kruise.io/v1alpha1, Kind=SidecarSet failed: no kind "SidecarSet" is registered for version "apps.kruise.io/v1beta1"',
  '2026-11-29T03:56:40.918747272Z I1129 03:56:40.918348       1 reflector.go:376] Caches populated for *v1beta1.SidecarSet from k8s.io/client-go@v0.32.10/tools/cache/reflector.go:251',
  '2026-11-29T03:57:40.918747272Z I1129 03:57:40.918348       1 reflector.go:376] Caches populated for *v1beta1.SidecarSet from k8s.io/client-go@v0.32.10/tools/cache/reflector.go:251',
].join('\n');

describe('cacheSyncedAt', () => {
  it('reads the first time the kind was listed, not a version of the same name', () => {
    expect(cacheSyncedAt(log, 'v1beta1.SidecarSet')?.toISOString()).toBe('2026-11-29T03:56:40.918Z');
    expect(cacheSyncedAt(log, 'v1alpha1.SidecarSet')?.toISOString()).toBe('2026-11-29T03:56:25.779Z');
  });

  it('says undefined when the cache never synced or the log is empty', () => {
    expect(cacheSyncedAt(log, 'v1.Pod')).toBeUndefined();
    expect(cacheSyncedAt('', 'v1beta1.SidecarSet')).toBeUndefined();
  });
});

describe('timeoutsAfter', () => {
  const synced = new Date('2026-11-29T03:56:40.918Z');
  const failure = (at: string) => `${at} load-0-1-x: context deadline exceeded`;

  it('explains a timeout whose review started before the cache synced', () => {
    // Started at 03:56:40.5, before the sync.
    expect(timeoutsAfter([failure('2026-11-29T03:56:50.500Z')], synced, 10_000)).toEqual([]);
    // Started 0.5 s after the sync: within the clocks' slack.
    expect(timeoutsAfter([failure('2026-11-29T03:56:51.418Z')], synced, 10_000)).toEqual([]);
  });

  it('returns a timeout whose review started after the cache had synced', () => {
    const late = failure('2026-11-29T03:56:53.000Z');
    expect(timeoutsAfter([failure('2026-11-29T03:56:45.000Z'), late], synced, 10_000)).toEqual([late]);
  });

  it('explains nothing when the sync time is unknown or a failure has no time', () => {
    const f = failure('2026-11-29T03:56:45.000Z');
    expect(timeoutsAfter([f], undefined, 10_000)).toEqual([f]);
    expect(timeoutsAfter(['load-0-1-x: context deadline exceeded'], synced, 10_000)).toHaveLength(1);
  });
});
