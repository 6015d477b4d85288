// What the local clusters of one machine share (test/cluster/host.ts): the last to leave undoes it, a dead one is
// dropped, and each slot has names of its own (test/cluster/paths.ts).
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostMountPoint, joinHost, leaveHost } from '../../cluster/host.js';
import { clusterSite, MAX_SLOT, parseSlot } from '../../cluster/paths.js';
import { KUBELET_SYSCTLS, readSysctls } from '../../cluster/sys.js';

const scratch = () => mkdtempSync(join(tmpdir(), 'kruise-ha-host-'));
/** A process id that is gone (a child that has exited and been reaped). */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('the machine-wide state of the local clusters', () => {
  it('saves the sysctls once, keeps the mount points while a cluster is left, and undoes both with the last', () => {
    const dir = scratch();
    const place = scratch();
    const mountPoint = join(place, 'var', 'lib', 'kubelet');
    try {
      expect(joinHost(0, process.pid, dir)).toEqual([]);
      const saved = JSON.parse(readFileSync(join(dir, 'sysctls.json'), 'utf8')) as Record<string, string>;
      expect(saved).toEqual(readSysctls(KUBELET_SYSCTLS));
      hostMountPoint(mountPoint, dir);
      expect(existsSync(mountPoint)).toBe(true);
      // A second cluster (another slot of the same process) joins: the originals stay the first one's.
      expect(joinHost(1, process.pid, dir)).toEqual([]);
      hostMountPoint(mountPoint, dir); // already there: recorded once
      expect(JSON.parse(readFileSync(join(dir, 'created-paths.json'), 'utf8'))).toEqual([
        [mountPoint, join(place, 'var')],
      ]);
      // The first leaves: the second still needs its mount points.
      expect(leaveHost(0, process.pid, dir)).toEqual([]);
      expect(existsSync(mountPoint)).toBe(true);
      expect(existsSync(join(dir, 'sysctls.json'))).toBe(true);
      // The last leaves: what was made is removed up to what existed before, and the saved state goes.
      expect(leaveHost(1, process.pid, dir)).toEqual([]);
      expect(existsSync(join(place, 'var'))).toBe(false);
      expect(existsSync(place)).toBe(true);
      expect(existsSync(join(dir, 'sysctls.json'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(place, { recursive: true, force: true });
    }
  });

  it('drops a cluster whose process died: the next to join undoes what it left, as the only one alive', () => {
    const dir = scratch();
    const place = scratch();
    const mountPoint = join(place, 'etc', 'containerd');
    try {
      const dead = deadPid();
      joinHost(0, dead, dir);
      hostMountPoint(mountPoint, dir);
      // Its process is gone (SIGKILLed, say) and never left; a new cluster starts in another slot.
      expect(joinHost(1, process.pid, dir)).toEqual([]);
      expect(existsSync(join(place, 'etc'))).toBe(false);
      expect(JSON.parse(readFileSync(join(dir, 'users.json'), 'utf8'))).toEqual([{ pid: process.pid, slot: 1 }]);
      expect(leaveHost(1, process.pid, dir)).toEqual([]);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(place, { recursive: true, force: true });
    }
  });

  it('leaves a mount point with content in place and says so', () => {
    const dir = scratch();
    const place = scratch();
    const mountPoint = join(place, 'run-x');
    try {
      joinHost(0, process.pid, dir);
      hostMountPoint(mountPoint, dir);
      spawnSync('touch', [join(mountPoint, 'something')]);
      expect(leaveHost(0, process.pid, dir)).toEqual([
        `${mountPoint} (a mount point a cluster created) is not empty; left in place`,
      ]);
      expect(existsSync(join(mountPoint, 'something'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(place, { recursive: true, force: true });
    }
  });
});

describe('cluster slots', () => {
  it('give each cluster its own prefix, bridge, subnet, registry, directory and cgroups', () => {
    const sites = Array.from({ length: MAX_SLOT + 1 }, (_, i) => clusterSite(i));
    for (const key of ['prefix', 'bridge', 'bridgeCidr', 'hostIp', 'registry', 'dir'] as const)
      expect(new Set(sites.map((s) => s[key])).size).toBe(sites.length);
    const [a, b] = sites;
    expect([a.prefix, a.bridge, a.hostIp, a.registry]).toEqual(['kha', 'kha0', '10.77.0.1', '10.77.0.1:5000']);
    expect([b.prefix, b.bridgeCidr, b.cpName(0), b.nodeNetns(2), b.nodeIp(2), b.controlPlaneIp(1)]).toEqual([
      'khb',
      '10.78.0.0/24',
      'khb-cp-1',
      'khb-node-2',
      '10.78.0.22',
      '10.78.0.11',
    ]);
    // No name of one slot starts with another's prefix: cleanup finds a cluster's leftovers by prefix alone.
    for (const s of sites)
      for (const o of sites.filter((x) => x !== s)) expect(o.nodeNetns(1).startsWith(`${s.prefix}-`)).toBe(false);
  });

  it('are named by an integer from 0 to the last, else an error naming where the value came from', () => {
    expect(parseSlot(undefined)).toBe(0);
    expect(parseSlot('1')).toBe(1);
    expect(() => parseSlot('x', '--slot')).toThrow("cluster: --slot is 'x'; give an integer from 0 to 7 (default 0)");
    expect(() => parseSlot('8')).toThrow("cluster: KRUISE_HA_CLUSTER_SLOT is '8'; give an integer from 0 to 7");
  });
});
