/**
 * What the Kruise e2e files need of the shared cluster (started once by the e2e project's global
 * setup): its kubeconfig, the registry every node pulls through, its nodes, and the images built
 * from source into that registry (once per run; later calls find them cached and up to date).
 */
import {
  type BuiltImage,
  type ClusterImages,
  ensureClusterImages,
  ensureUpstreamImage,
} from '../../cluster/images/index.js';
import { localCluster } from '../../cluster/state.js';
import { phase } from './phase.js';

export interface E2eEnv {
  readonly kubeconfig: string;
  /** host:port of the registry the nodes' containerd mirrors docker.io and registry.k8s.io to. */
  readonly registry: string;
  readonly nodes: ReadonlyArray<{ readonly name: string; readonly zone: string }>;
}

export function e2eEnv(): E2eEnv {
  const state = localCluster();
  return { kubeconfig: state.kubeconfigPath, registry: state.registry, nodes: state.nodes };
}

let images: Promise<ClusterImages> | undefined;

/** Upstream kruise-manager (+ kruise-daemon), the runtime base and the runtime image, in the cluster's registry. */
export function clusterImages(): Promise<ClusterImages> {
  images ??= phase('cluster images', () => ensureClusterImages({ registry: localCluster().registry, plainHttp: true }));
  return images;
}

/** `openkruise/kruise-manager:<version>` of another pinned release (e.g. the previous one, to upgrade from). */
export function upstreamImage(version: string): Promise<BuiltImage> {
  return phase(`upstream image ${version}`, () =>
    ensureUpstreamImage({ registry: localCluster().registry, plainHttp: true }, version),
  );
}
