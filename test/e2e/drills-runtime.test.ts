/**
 * Issue [ha-drills] for the runtime flavour: the RuntimeImage-built image as the manager, drilled
 * on the real cluster under load. The drills are in support/drills.ts.
 */
import { jest } from '@jest/globals';
import { drillSuite } from './support/drills.js';
import { clusterImages, e2eEnv } from './support/e2e-env.js';
import { synthRuntime } from './support/synth.js';

// Real pods, real failures: each drill takes a minute or two.
jest.setTimeout(600_000);

drillSuite({
  flavour: 'runtime',
  synth: async () => synthRuntime(e2eEnv().registry, (await clusterImages()).runtime.baseImage),
});
