/**
 * Issue [ha-drills] for the upstream flavour: the default output (kruise-manager v1.8.3 built from
 * its Go module) drilled on the real cluster under load. The drills are in support/drills.ts.
 */
import { jest } from '@jest/globals';
import { drillSuite } from './support/drills.js';
import { clusterImages } from './support/e2e-env.js';
import { synthExample } from './support/synth.js';

// Real pods, real failures: each drill takes a minute or two.
jest.setTimeout(600_000);

drillSuite({
  flavour: 'upstream',
  synth: async () => {
    await clusterImages();
    return synthExample('default-ha.ts');
  },
});
