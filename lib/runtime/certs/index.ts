import type { KubeConfig } from '@kubernetes/client-node';
import { CertModes, Names, type CertMode } from '../../contract.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { admissionregistrationV1, apiextensionsV1, coreV1, kubeClient } from '../kube/index.js';
import { ConversionWebhookTarget, WebhookConfigurationTarget } from './ca-bundle.js';
import { ExternalCertificates } from './external.js';
import type { CertificateProvider } from './provider.js';
import type { RotationPolicy } from './rotation.js';
import { KubeSecretStore } from './secret-store.js';
import { SelfManagedCertificates } from './self-managed.js';

export * from './ca-bundle.js';
export * from './cert-dir.js';
export * from './duration.js';
export * from './external.js';
export * from './generate.js';
export * from './provider.js';
export * from './rotation.js';
export * from './secret-store.js';
export * from './self-managed.js';
export * from './verify.js';

export interface CertificateProviderConfig {
  kubeConfig: KubeConfig;
  mode: CertMode;
  namespace: string;
  certDir: string;
  logger: Logger;
  clock?: Clock;
  secretName?: string;
  serviceName?: string;
  mutatingWebhookConfiguration?: string;
  validatingWebhookConfiguration?: string;
  /** CRDs served through our conversion webhook (upstream: the Advanced StatefulSet CRD). */
  conversionCrds?: string[];
  /** Self-managed only; parse CERTS_RENEW_BEFORE with parseDuration. */
  policy?: Partial<RotationPolicy>;
  onCertificatesWritten?: () => unknown;
}

/** Wires the chosen mode to the Kubernetes API with the contract's object names. */
export function createCertificateProvider(cfg: CertificateProviderConfig): CertificateProvider {
  const client = kubeClient(cfg.kubeConfig);
  const secrets = new KubeSecretStore(coreV1(client), cfg.namespace, cfg.secretName ?? Names.webhookSecret);
  const common = {
    secrets,
    certDir: cfg.certDir,
    logger: cfg.logger,
    clock: cfg.clock,
    serviceName: cfg.serviceName ?? Names.webhookService,
    namespace: cfg.namespace,
    onCertificatesWritten: cfg.onCertificatesWritten,
  };
  if (cfg.mode === CertModes.external) return new ExternalCertificates(common);
  const admission = admissionregistrationV1(client);
  const extensions = apiextensionsV1(client);
  return new SelfManagedCertificates({
    ...common,
    policy: cfg.policy,
    caBundleTargets: [
      new WebhookConfigurationTarget(
        admission,
        'mutating',
        cfg.mutatingWebhookConfiguration ?? Names.mutatingWebhookConfiguration,
      ),
      new WebhookConfigurationTarget(
        admission,
        'validating',
        cfg.validatingWebhookConfiguration ?? Names.validatingWebhookConfiguration,
      ),
      ...(cfg.conversionCrds ?? []).map((name) => new ConversionWebhookTarget(extensions, name)),
    ],
  });
}
