// Locates kube-apiserver and etcd (and, for test/cluster, the node binaries) through
// binaries/build.sh, which honours KUBEBUILDER_ASSETS / TEST_ASSET_* and otherwise builds and caches them.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Binaries {
  kubeApiServer: string;
  etcd: string;
  /** Version pinned in binaries/kube-apiserver/go.mod; what a built binary reports. */
  pinnedKubernetesVersion: string;
  /** `built`, `KUBEBUILDER_ASSETS` or `TEST_ASSET_KUBE_APISERVER`. */
  kubeApiServerSource: string;
  /**
   * The real upstream kruise-manager of the release under test (KRUISE_RELEASE, else the
   * default release of tools/upstream/pin.json), built from its checksum-pinned module.
   */
  kruiseManager: string;
  /** Upstream version of that binary. */
  kruiseVersion: string;
  /**
   * Every kruise-manager built for this run, by release: the one under test and the runtime's
   * reference release ({@link RUNTIME_REFERENCE_RELEASE}, which the differential tests compare with).
   */
  kruiseManagers: Record<string, string>;
}

/**
 * The upstream release the runtime's SidecarSet/WorkloadSpread behaviour is written against:
 * the differential tests run this release's binary whatever the constructs' default is.
 */
export const RUNTIME_REFERENCE_RELEASE = 'v1.9.1';

export const BUILD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'binaries', 'build.sh');

/**
 * Runs build.sh with `args` (none: the envtest set; `cluster`: the local cluster's set) and returns
 * its KEY=VALUE lines, failing unless every key in `required` is there. Progress goes to our
 * stderr because a cold build takes minutes.
 */
export function runBuildScript(
  args: string[],
  required: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.once('error', (e) => reject(new Error(`envtest: cannot run bash ${BUILD_SCRIPT}: ${e.message}`)));
    child.once('close', (code) => {
      if (code !== 0) {
        reject(
          new Error(
            `envtest: ${BUILD_SCRIPT} ${args.join(' ')} exited with ${code}; see its message above. ` +
              'Set KUBEBUILDER_ASSETS (dir with kube-apiserver and etcd) or TEST_ASSET_<BINARY> to use prebuilt binaries.',
          ),
        );
        return;
      }
      const kv = Object.fromEntries(
        out
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      for (const key of required) {
        if (!kv[key]) return reject(new Error(`envtest: ${BUILD_SCRIPT} printed no ${key}=... line; got:\n${out}`));
      }
      resolve(kv);
    });
  });
}

/** Runs build.sh for the envtest control plane (kube-apiserver, etcd, kruise-manager). */
export async function resolveBinaries(): Promise<Binaries> {
  // No kruise-daemon: nothing here runs it (the local cluster's images build it, through build.sh too).
  const kv = await runBuildScript(
    [],
    ['KUBE_APISERVER', 'ETCD', 'KUBERNETES_VERSION', 'KUBE_APISERVER_SOURCE', 'KRUISE_MANAGER', 'KRUISE_VERSION'],
    { ...process.env, KRUISE_WITHOUT_DAEMON: '1' },
  );
  const kruiseManagers: Record<string, string> = { [kv.KRUISE_VERSION]: kv.KRUISE_MANAGER };
  if (!(RUNTIME_REFERENCE_RELEASE in kruiseManagers) && !process.env.TEST_ASSET_KRUISE_MANAGER) {
    const ref = await runBuildScript([], ['KRUISE_MANAGER', 'KRUISE_VERSION'], {
      ...process.env,
      KRUISE_RELEASE: RUNTIME_REFERENCE_RELEASE,
      KRUISE_WITHOUT_DAEMON: '1',
    });
    kruiseManagers[ref.KRUISE_VERSION] = ref.KRUISE_MANAGER;
  }
  return {
    kubeApiServer: kv.KUBE_APISERVER,
    etcd: kv.ETCD,
    pinnedKubernetesVersion: kv.KUBERNETES_VERSION,
    kubeApiServerSource: kv.KUBE_APISERVER_SOURCE,
    kruiseManager: kv.KRUISE_MANAGER,
    kruiseVersion: kv.KRUISE_VERSION,
    kruiseManagers,
  };
}

/** cert-manager's controller and cainjector, and its CRDs, from the module pinned in binaries/cert-manager/pin.json. */
export interface CertManagerBinaries {
  controller: string;
  cainjector: string;
  /** Directory of the module's CRD manifests (`deploy/crds`). */
  crdsDir: string;
  version: string;
}

/** Runs `build.sh cert-manager` (builds and caches on first use: minutes). */
export async function resolveCertManager(): Promise<CertManagerBinaries> {
  const kv = await runBuildScript(
    ['cert-manager'],
    ['CERT_MANAGER_CONTROLLER', 'CERT_MANAGER_CAINJECTOR', 'CERT_MANAGER_CRDS', 'CERT_MANAGER_VERSION'],
  );
  return {
    controller: kv.CERT_MANAGER_CONTROLLER,
    cainjector: kv.CERT_MANAGER_CAINJECTOR,
    crdsDir: kv.CERT_MANAGER_CRDS,
    version: kv.CERT_MANAGER_VERSION,
  };
}
