// test/envtest/process.ts's liveness checks: a zombie (exited, not yet reaped) is not alive. An init that never reaps
// keeps an orphaned zombie, and `kill(pid, 0)`, which succeeds for one, kept a stopped job "alive" (local-loop on CI).
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { alive, liveGroupMembers, procStat } from '../../envtest/process.js';

describe('process liveness', () => {
  it('calls a zombie dead, and a group holding only zombies empty, where kill(pid, 0) says alive', async () => {
    // sh starts a sleep, prints its PID, then becomes a sleep that never reaps it; the test kills the child when it has
    // seen it alive (a timed child died too soon on a loaded machine), and it stays a zombie until the group goes.
    const parent = spawn('/bin/sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const pid = Number(
        await new Promise<string>((res) => parent.stdout!.once('data', (d: Buffer) => res(String(d)))),
      );
      expect(alive(pid)).toBe(true);
      expect(liveGroupMembers(parent.pid!).sort()).toEqual([parent.pid!, pid].sort());
      process.kill(pid, 'SIGKILL');
      while (procStat(pid)?.state !== 'Z') await sleep(50);
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(alive(pid)).toBe(false);
      expect(liveGroupMembers(parent.pid!)).toEqual([parent.pid!]);
      expect(alive(parent.pid!)).toBe(true);
    } finally {
      process.kill(-parent.pid!, 'SIGKILL');
    }
  });
});
