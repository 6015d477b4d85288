/**
 * Self-managed certificates (upstream's default): every replica, not only the leader, makes sure
 * the Secret holds a valid CA and serving certificate, and converges on whatever the Secret holds.
 *
 * Race safety comes from the API server alone: creation is first-writer-wins (409 AlreadyExists →
 * re-read and use theirs), every update carries the resourceVersion it was planned from (409 →
 * re-read and re-plan). So however many replicas start or rotate at once, exactly one generated
 * bundle is stored and all of them serve it.
 */
import { SecretKeys } from '../../contract.js';
import { writeCertDir } from './cert-dir.js';
import type { CaBundleTarget } from './ca-bundle.js';
import { servingDnsNames } from './generate.js';
import { planSecret } from './plan.js';
import { ProviderLoop, type ProviderLoopOptions, type SyncResult } from './provider.js';
import { assess, DEFAULT_POLICY, validatePolicy, type RotationPolicy } from './rotation.js';
import { ConflictError, type SecretStore } from './secret-store.js';

export interface SelfManagedOptions extends ProviderLoopOptions {
  secrets: SecretStore;
  certDir: string;
  serviceName: string;
  namespace: string;
  /** Objects whose caBundle must trust our CA (webhook configurations, conversion CRDs). */
  caBundleTargets?: CaBundleTarget[];
  extraDnsNames?: string[];
  /** For example `['127.0.0.1']` when something dials the webhook by IP. */
  ipAddresses?: string[];
  policy?: Partial<RotationPolicy>;
}

const MAX_CONFLICTS = 10;
/** How soon to look again after finding someone else's newer CA in a caBundle. */
const STALE_RECHECK_MS = 1_000;
/**
 * A caBundle still "newer" than the Secret after this many fresh reads did not come from a
 * replica that rotated (we would have read its Secret by now): someone set it by hand. Ours wins.
 */
const MAX_STALE_ROUNDS = 5;

export class SelfManagedCertificates extends ProviderLoop {
  private readonly policy: RotationPolicy;
  private readonly dnsNames: string[];
  private staleRounds = 0;

  constructor(private readonly opts: SelfManagedOptions) {
    super({ ...opts, logger: opts.logger.child({ component: 'certs', mode: 'self-managed' }) });
    this.policy = { ...DEFAULT_POLICY, ...opts.policy };
    validatePolicy(this.policy);
    this.dnsNames = [...new Set([...servingDnsNames(opts.serviceName, opts.namespace), ...(opts.extraDnsNames ?? [])])];
  }

  protected async sync(): Promise<SyncResult> {
    const data = await this.ensureSecret();
    const now = this.clock.now();
    const verdict = assess(data, this.dnsNames, now, this.policy);
    if (verdict.action !== 'keep')
      throw new Error(`the stored certificates are still unusable after writing them: ${verdict.reason}`);
    if (this.stopped()) return { nextCheckAt: now };

    // Trust first, serve second: the API server must accept a new CA before anything presents it.
    const caBundle = data[SecretKeys.caCert];
    const failures: string[] = [];
    let stale = false;
    for (const target of this.opts.caBundleTargets ?? []) {
      try {
        const outcome = await target.inject(caBundle, now, this.staleRounds >= MAX_STALE_ROUNDS);
        if (outcome === 'updated') this.log.info('caBundle updated', { target: target.ref });
        if (outcome === 'stale') stale = true;
      } catch (e) {
        failures.push((e as Error).message);
      }
    }
    const changed = await writeCertDir(this.opts.certDir, {
      cert: data[SecretKeys.tlsCert],
      key: data[SecretKeys.tlsKey],
      ca: caBundle,
    });
    await this.install({ caPem: caBundle, notAfter: verdict.servingNotAfter }, changed);
    this.staleRounds = stale ? this.staleRounds + 1 : 0;
    if (failures.length > 0)
      throw new Error(`certificates are in place but caBundle injection failed: ${failures.join('; ')}`);
    if (stale) {
      this.log.info('a caBundle already trusts a newer CA than our copy of the Secret; re-reading it');
      return { nextCheckAt: now + STALE_RECHECK_MS };
    }
    return { nextCheckAt: verdict.nextCheckAt };
  }

  /** Reads the Secret and, if it needs (re)generating, writes it race-safely; returns what is stored. */
  private async ensureSecret(): Promise<Record<string, string>> {
    const { secrets } = this.opts;
    for (let attempt = 0; attempt < MAX_CONFLICTS; attempt++) {
      const snapshot = await secrets.get();
      const plan = await planSecret(snapshot?.data, {
        dnsNames: this.dnsNames,
        ipAddresses: this.opts.ipAddresses ?? [],
        now: this.clock.now(),
        policy: this.policy,
        caName: `${this.opts.serviceName}-ca`,
      });
      if (snapshot && !plan.changed) return snapshot.data;
      if (plan.action !== 'keep')
        this.log.info('generating certificates', { action: plan.action, reason: plan.reason, secret: secrets.ref });
      try {
        if (!snapshot) await secrets.create(plan.data);
        else await secrets.update(snapshot.resourceVersion, plan.data);
        return plan.data;
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e;
        this.log.info('another replica wrote the certificate Secret first; using theirs', { secret: secrets.ref });
      }
    }
    throw new Error(`${secrets.ref} kept changing under us: ${MAX_CONFLICTS} conflicting writes in a row`);
  }
}
