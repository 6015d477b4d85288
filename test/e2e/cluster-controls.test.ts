// The levers the HA drills pull, each shown to do what it says on the real cluster: cutting a
// node's link isolates it, a node's containerd and a control-plane API server can be stopped
// and started again, and the API stays reachable through it all where the design says so.
import { describe, expect, it, jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { execInNode, kubectl, localCluster, setLink, startComponent, stopComponent } from '../cluster/state.js';

jest.setTimeout(240_000);

const state = localCluster();
const [first, , third] = state.nodes;
/** Whether `from` reaches `to`'s kube-proxy (listening on the node's own address). */
const reaches = (from: string, toIp: string): boolean => {
  try {
    execInNode(from, 'timeout', ['3', 'busybox', 'wget', '-q', '-O', '/dev/null', `http://${toIp}:10256/livez`]);
    return true;
  } catch {
    return false;
  }
};

describe('cluster controls', () => {
  it("cuts a node's only link and restores it", () => {
    expect(reaches(first.name, third.ip)).toBe(true);
    setLink(third.netns, false);
    try {
      expect(reaches(first.name, third.ip)).toBe(false);
    } finally {
      setLink(third.netns, true);
    }
    expect(reaches(first.name, third.ip)).toBe(true);
  });

  it("stops a node's containerd (its socket goes) and starts it again", async () => {
    const node = state.nodes[1];
    const version = () =>
      execFileSync('ctr', ['--address', node.containerdSocket, 'version'], { encoding: 'utf8', stdio: 'pipe' });
    expect(version()).toMatch(/Server:/);
    await stopComponent(node.name, 'containerd');
    expect(() => version()).toThrow();
    await startComponent(node.name, 'containerd');
    for (let i = 0; i < 60 && !existsSync(node.containerdSocket); i++) await sleep(250);
    expect(version()).toMatch(/Server:/);
  });

  it('kills an API server and starts it again; with --ha the API stays up meanwhile', async () => {
    const member = state.controlPlane[0].name;
    await stopComponent(member, 'kube-apiserver', 'kill');
    try {
      if (state.ha) expect(kubectl(['get', 'nodes', '-o', 'name']).trim().split('\n')).toHaveLength(state.nodes.length);
      else expect(() => kubectl(['get', 'nodes', '--request-timeout=3s'])).toThrow();
    } finally {
      await startComponent(member, 'kube-apiserver');
    }
    expect(kubectl(['get', '--raw', '/readyz'])).toBe('ok');
  });
});
