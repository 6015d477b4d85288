import { FeatureGates, Names, Ports } from '../../contract.js';
import { propError } from '../core/errors.js';
import type { CrdManifest } from '../crds/crds.js';
import { WebhookDefinition, WebhookGroup } from '../webhooks/webhooks.js';
import { managerPermissions } from '../../upstream/permissions.js';
import { CustomResourceAccess } from './custom-resource-access.js';
import {
  effectiveGates,
  Environment,
  PolicyRule,
  servedWebhooks,
  startedControllers,
  unknownGates,
  UpstreamController,
  UpstreamRelease,
  UpstreamWebhook,
} from '../../upstream/release.js';
import { DEFAULT_UPSTREAM_RELEASE, releasesWith, upstreamRelease } from '../../upstream/releases.js';

/** Inputs that decide what the upstream binary does. */
export interface UpstreamProfileInput {
  /** Release whose definitions are rendered. @default - the default release */
  readonly version?: string;
  readonly namespace: string;
  /** The user's `featureGates` prop. */
  readonly featureGates?: { readonly [gate: string]: boolean };
  /** cert-manager certificates (upstream's EnableExternalCerts gate). */
  readonly externalCertificates: boolean;
  readonly customResourceAccess?: CustomResourceAccess;
  /** Gates another choice needs (uninstall protection); the user's gates still win. */
  readonly protectionGates?: { readonly [gate: string]: boolean };
  /** Labels for every CRD (uninstall protection). */
  readonly crdLabels?: { readonly [key: string]: string };
}

/**
 * Everything the upstream flavour renders, resolved once from the generated release data:
 * the gates passed on the command line, the gates the binary then runs with, and from those
 * the webhooks it serves, the controllers it starts and the permissions they need.
 */
export interface UpstreamProfile {
  readonly release: UpstreamRelease;
  /** Rendered as `--feature-gates`. */
  readonly flags: { readonly [gate: string]: boolean };
  /** What the binary runs with after its defaults and implications. */
  readonly gates: { readonly [gate: string]: boolean };
  readonly webhooks: WebhookDefinition[];
  readonly controllers: UpstreamController[];
  /** The manager's ClusterRole rules. */
  readonly clusterRules: PolicyRule[];
  /** Rules the manager needs only in one namespace (a Role there), by namespace. */
  readonly namespacedRules: { readonly [namespace: string]: PolicyRule[] };
  /** Rules of the leader-election Role (the Lease lock and events). */
  readonly leaderElectionRules: PolicyRule[];
  /** CRDs whose conversion webhook caBundle the manager patches. */
  readonly conversionCrds: string[];
  /** Upstream's CRDs, conversion webhooks pointed at the install namespace. */
  readonly crds: CrdManifest[];
}

/** The chart's default: image pre-pulling jobs on (it ships with kruise-daemon). */
const CHART_GATES = { ImagePullJobGate: true };

export function resolveUpstreamProfile(input: UpstreamProfileInput): UpstreamProfile {
  const release = upstreamRelease(input.version ?? DEFAULT_UPSTREAM_RELEASE);
  const user = input.featureGates ?? {};
  for (const gate of unknownGates(release, user)) {
    const others = releasesWith((r) => r.featureGates.some((g) => g.name === gate));
    throw propError(
      `featureGates.${gate}`,
      user[gate],
      `is not a feature gate of kruise-manager ${release.version}, which refuses to start with it` +
        (others.length ? `; ${others.join(', ')} ${others.length > 1 ? 'have' : 'has'} it` : ''),
      others.length
        ? `remove ${gate}, or use ManagerImage.upstream({ version: '${others[others.length - 1]}' })`
        : `use one of: ${release.featureGates.map((g) => g.name).join(', ')}`,
    );
  }
  const external = user[FeatureGates.enableExternalCerts];
  if (external !== undefined && external !== input.externalCertificates) {
    throw propError(
      `featureGates.${FeatureGates.enableExternalCerts}`,
      external,
      external
        ? 'makes the manager wait for certificates that something else writes into its Secret, while certificates is WebhookCertificates.selfManaged(): the manager would never turn ready'
        : 'turns off reading the certificates cert-manager issues, while certificates is WebhookCertificates.certManager()',
      `remove ${FeatureGates.enableExternalCerts} (certificates sets it), and choose the mode with certificates`,
    );
  }
  const flags = {
    ...CHART_GATES,
    ...input.protectionGates,
    ...(input.externalCertificates ? { [FeatureGates.enableExternalCerts]: true } : {}),
    ...user,
  };
  const gates = effectiveGates(release, flags);
  // The CRDs are rendered (or managed elsewhere): every kind counts as installed.
  const env: Environment = { gates, crds: new Set(release.crds.map((c) => c.kind)) };
  const permissions = managerPermissions(
    release,
    env,
    (input.customResourceAccess ?? CustomResourceAccess.kruiseAndBuiltIn())._toResourceAccess(),
  );
  return {
    release,
    flags,
    gates,
    webhooks: servedWebhooks(release, env).map(definition),
    controllers: startedControllers(release, env),
    clusterRules: permissions.cluster,
    namespacedRules: permissions.namespaced,
    leaderElectionRules: release.leaderElectionRbac.filter(
      (r) => r.resources.includes('leases') || r.resources.includes('events'),
    ),
    conversionCrds: release.crds.filter((c) => c.conversionWebhook).map((c) => `${c.plural}.${c.group}`),
    crds: release.crds.map((c) => ({
      manifest: withLabels(
        c.conversionWebhook ? withConversion(c.manifest, release.conversionPath, input.namespace) : c.manifest,
        input.crdLabels ?? {},
      ),
    })),
  };
}

function definition(w: UpstreamWebhook): WebhookDefinition {
  // Upstream's patch selects the pod webhooks by namespace and delete protection by label.
  const group = w.namespaceSelector
    ? WebhookGroup.PODS
    : w.objectSelector
      ? WebhookGroup.DELETE_PROTECTION
      : WebhookGroup.RESOURCES;
  return {
    type: w.type,
    name: w.name,
    path: w.path,
    group,
    rules: w.rules,
    ...(w.objectSelector ? { objectSelector: w.objectSelector } : {}),
  };
}

function withLabels(
  manifest: { readonly [key: string]: unknown },
  labels: { readonly [key: string]: string },
): { [key: string]: unknown } {
  if (Object.keys(labels).length === 0) return { ...manifest };
  const metadata = manifest.metadata as { labels?: { [key: string]: string } };
  return { ...manifest, metadata: { ...metadata, labels: { ...metadata.labels, ...labels } } };
}

function withConversion(
  manifest: { readonly [key: string]: unknown },
  path: string,
  namespace: string,
): { [key: string]: unknown } {
  const spec = manifest.spec as { [key: string]: unknown };
  return {
    ...manifest,
    spec: {
      ...spec,
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { namespace, name: Names.webhookService, path, port: Ports.webhookService } },
          conversionReviewVersions: ['v1', 'v1beta1'],
        },
      },
    },
  };
}
