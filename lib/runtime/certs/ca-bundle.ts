/**
 * Writes our CA bundle into the objects the API server uses to trust the webhook: every entry of
 * the mutating and validating webhook configurations, and CRDs whose conversion is a webhook.
 *
 * Patches touch only `caBundle` (strategic merge on the webhook name, so fields this client does
 * not model survive) and carry the resourceVersion read just before, so a concurrent writer
 * makes us re-read instead of being overwritten.
 */
import { failedError, isConflict, isNotFound } from '../kube/errors.js';
import { PatchTypes, type AdmissionregistrationV1Client, type ApiextensionsV1Client } from '../kube/index.js';
import { isNewerBundle } from './verify.js';

export type InjectOutcome =
  | 'updated'
  | 'unchanged'
  /** The object does not exist (yet): nothing to do until it does. */
  | 'absent'
  /** The object trusts a newer CA than ours: our copy of the Secret is stale, re-read it. */
  | 'stale';

export interface CaBundleTarget {
  readonly ref: string;
  /** `overrideNewer` writes even over a newer CA (after re-reading the Secret did not help). */
  inject(caBundlePem: string, now: number, overrideNewer?: boolean): Promise<InjectOutcome>;
}

interface Current {
  resourceVersion: string;
  bundles: Array<{ key: string; caBundle?: string }>;
}

/** Shared read → compare → guarded patch loop. */
abstract class PatchingTarget implements CaBundleTarget {
  abstract readonly ref: string;
  protected abstract read(): Promise<Current | undefined>;
  protected abstract patch(resourceVersion: string, keys: string[], caBundle: string): Promise<void>;

  async inject(caBundlePem: string, now: number, overrideNewer = false): Promise<InjectOutcome> {
    const encoded = Buffer.from(caBundlePem, 'utf8').toString('base64');
    for (let attempt = 0; attempt < 5; attempt++) {
      let current: Current | undefined;
      try {
        current = await this.read();
      } catch (e) {
        throw failedError(e, `reading ${this.ref}`);
      }
      if (!current) return 'absent';
      const outdated = current.bundles.filter((b) => b.caBundle !== encoded);
      if (outdated.length === 0) return 'unchanged';
      const newer = outdated.some(
        (b) => b.caBundle && isNewerBundle(Buffer.from(b.caBundle, 'base64').toString('utf8'), caBundlePem, now),
      );
      if (newer && !overrideNewer) return 'stale';
      try {
        await this.patch(
          current.resourceVersion,
          current.bundles.map((b) => b.key),
          encoded,
        );
        return 'updated';
      } catch (e) {
        if (isConflict(e)) continue;
        if (isNotFound(e)) return 'absent';
        throw failedError(e, `patching caBundle into ${this.ref}`);
      }
    }
    throw new Error(`patching caBundle into ${this.ref}: still conflicting after 5 attempts`);
  }
}

function notFound(e: unknown): boolean {
  return isNotFound(e);
}

export class WebhookConfigurationTarget extends PatchingTarget {
  readonly ref: string;

  constructor(
    private readonly api: AdmissionregistrationV1Client,
    private readonly kind: 'mutating' | 'validating',
    private readonly name: string,
  ) {
    super();
    this.ref = `${kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration'} ${name}`;
  }

  protected async read(): Promise<Current | undefined> {
    try {
      const obj =
        this.kind === 'mutating'
          ? await this.api.readMutatingWebhookConfiguration({ name: this.name })
          : await this.api.readValidatingWebhookConfiguration({ name: this.name });
      return {
        resourceVersion: obj.metadata?.resourceVersion ?? '',
        bundles: (obj.webhooks ?? []).map((w) => ({ key: w.name, caBundle: w.clientConfig?.caBundle })),
      };
    } catch (e) {
      if (notFound(e)) return undefined;
      throw e;
    }
  }

  protected async patch(resourceVersion: string, names: string[], caBundle: string): Promise<void> {
    // Strategic merge: `webhooks` merges by name, so only caBundle changes in each entry.
    const body = {
      metadata: { resourceVersion },
      webhooks: names.map((name) => ({ name, clientConfig: { caBundle } })),
    };
    const options = { patchType: PatchTypes.strategicMerge };
    if (this.kind === 'mutating') await this.api.patchMutatingWebhookConfiguration({ name: this.name, body }, options);
    else await this.api.patchValidatingWebhookConfiguration({ name: this.name, body }, options);
  }
}

export class ConversionWebhookTarget extends PatchingTarget {
  readonly ref: string;

  constructor(
    private readonly api: ApiextensionsV1Client,
    private readonly name: string,
  ) {
    super();
    this.ref = `CustomResourceDefinition ${name}`;
  }

  protected async read(): Promise<Current | undefined> {
    try {
      const crd = await this.api.readCustomResourceDefinition({ name: this.name });
      const conversion = crd.spec.conversion;
      // A CRD without webhook conversion has no client config to trust us with.
      if (conversion?.strategy !== 'Webhook' || !conversion.webhook) return undefined;
      return {
        resourceVersion: crd.metadata?.resourceVersion ?? '',
        bundles: [{ key: 'conversion', caBundle: conversion.webhook.clientConfig?.caBundle }],
      };
    } catch (e) {
      if (notFound(e)) return undefined;
      throw e;
    }
  }

  protected async patch(resourceVersion: string, _keys: string[], caBundle: string): Promise<void> {
    const body = { metadata: { resourceVersion }, spec: { conversion: { webhook: { clientConfig: { caBundle } } } } };
    await this.api.patchCustomResourceDefinition({ name: this.name, body }, { patchType: PatchTypes.merge });
  }
}
