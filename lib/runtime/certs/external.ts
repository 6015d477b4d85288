/**
 * External certificates (cert-manager): the Secret is someone else's. We only read it, check it
 * would actually work (chains to `ca.crt`, in validity, covers the names the API server and the
 * self-check dial, key matches), and install it. Never a write to the Secret or a caBundle:
 * cert-manager's CA injector owns those.
 */
import { SecretKeys } from '../../contract.js';
import { writeCertDir } from './cert-dir.js';
import { servingDnsNames } from './generate.js';
import { ProviderLoop, type ProviderLoopOptions, type SyncResult } from './provider.js';
import type { SecretStore } from './secret-store.js';
import { verifyServing } from './verify.js';

export interface ExternalOptions extends ProviderLoopOptions {
  /** Only `get` is ever called. */
  secrets: Pick<SecretStore, 'get' | 'ref'>;
  certDir: string;
  serviceName: string;
  namespace: string;
  /**
   * Names the certificate must cover. Default: `<service>.<ns>.svc` (what the API server dials)
   * and `localhost` (what the readiness self-check dials).
   */
  requiredDnsNames?: string[];
}

const KEYS = [SecretKeys.caCrt, SecretKeys.tlsCert, SecretKeys.tlsKey] as const;

export class ExternalCertificates extends ProviderLoop {
  private readonly dnsNames: string[];

  constructor(private readonly opts: ExternalOptions) {
    super({
      ...opts,
      logger: opts.logger.child({ component: 'certs', mode: 'external' }),
      resyncIntervalMs: opts.resyncIntervalMs ?? 60_000,
    });
    this.dnsNames = opts.requiredDnsNames ?? [servingDnsNames(opts.serviceName, opts.namespace)[0], 'localhost'];
  }

  protected async sync(): Promise<SyncResult> {
    const { ref } = this.opts.secrets;
    const snapshot = await this.opts.secrets.get();
    if (!snapshot) throw new Error(`${ref} does not exist yet; waiting for cert-manager to issue it`);
    for (const key of KEYS) {
      if (!snapshot.data[key]?.trim())
        throw new Error(`${ref} has no ${key} yet; waiting for cert-manager to issue it`);
    }
    const now = this.clock.now();
    let notAfter: number;
    try {
      notAfter = verifyServing({
        certPem: snapshot.data[SecretKeys.tlsCert],
        keyPem: snapshot.data[SecretKeys.tlsKey],
        caPem: snapshot.data[SecretKeys.caCrt],
        dnsNames: this.dnsNames,
        now,
        sources: { cert: `${ref} tls.crt`, key: `${ref} tls.key`, ca: `${ref} ca.crt` },
      }).notAfter;
    } catch (e) {
      throw new Error(`refusing to serve the certificate from cert-manager: ${(e as Error).message}`, { cause: e });
    }
    if (this.stopped()) return { nextCheckAt: now };
    const changed = await writeCertDir(this.opts.certDir, {
      cert: snapshot.data[SecretKeys.tlsCert],
      key: snapshot.data[SecretKeys.tlsKey],
      ca: snapshot.data[SecretKeys.caCrt],
    });
    await this.install({ caPem: snapshot.data[SecretKeys.caCrt], notAfter }, changed);
    if (changed)
      this.log.info('installed the certificate from cert-manager', {
        secret: ref,
        notAfter: new Date(notAfter).toISOString(),
      });
    return { nextCheckAt: notAfter };
  }
}
