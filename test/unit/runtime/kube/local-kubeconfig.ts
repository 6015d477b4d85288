import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig for a plain-HTTP test server, with a bearer token as the only credential. */
export function localKubeConfig(server: string, token = 'secret-token'): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kubeConfig;
}
