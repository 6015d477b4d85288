/**
 * The default app (examples/default-ha.ts) pinned to one upstream release, as a user's app reads
 * when it sets `ManagerImage.upstream({ version })`: KRUISE_HA_RELEASE names the release.
 * Run as the cdk8s app by synthRelease() (support/synth.ts).
 */
import { App, Chart } from 'cdk8s';
import { KruiseManager, ManagerImage } from '../../../lib/index.js';

const version = process.env.KRUISE_HA_RELEASE;
if (!version)
  throw new Error('release-app: KRUISE_HA_RELEASE is not set. Fix: KRUISE_HA_RELEASE=v1.9.1 tsx release-app.ts');
const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
const chart = new Chart(app, 'kruise');
new KruiseManager(chart, 'Kruise', { image: ManagerImage.upstream({ version }) });
app.synth();
