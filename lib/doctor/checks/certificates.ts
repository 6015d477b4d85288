/** The serving certificate in the Secret, and every caBundle that must trust its CA. */
import { X509Certificate } from 'node:crypto';
import { Names, SecretKeys } from '../../contract.js';
import type { Expectations } from '../expectations.js';
import type { CheckResult, ClusterSnapshot } from '../model.js';
import { entriesOnService, human, list } from './common.js';

/** Warn when the serving certificate expires sooner than this. */
export const EXPIRY_WARNING_MS = 7 * 86400_000;

function decode(value: string | undefined): string | undefined {
  return value ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

/** Every certificate of a PEM bundle (unparseable blocks are skipped). */
export function parseBundle(pem: string | undefined): X509Certificate[] {
  const blocks = (pem ?? '').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.flatMap((b) => {
    try {
      return [new X509Certificate(b)];
    } catch {
      return [];
    }
  });
}

interface StoredCertificates {
  ca: X509Certificate[];
  serving?: X509Certificate;
  /** Where the CA came from, for messages. */
  caSource: string;
}

function stored(s: ClusterSnapshot): StoredCertificates | undefined {
  const data = s.secret?.data ?? {};
  // Self-managed (both flavours): ca-cert.pem + cert.pem; cert-manager: ca.crt + tls.crt.
  const caKey = data[SecretKeys.caCert] ? SecretKeys.caCert : SecretKeys.caCrt;
  const servingKey = data[SecretKeys.serverCert] ? SecretKeys.serverCert : SecretKeys.tlsCert;
  if (!data[caKey] && !data[servingKey]) return undefined;
  return {
    ca: parseBundle(decode(data[caKey])),
    serving: parseBundle(decode(data[servingKey]))[0],
    caSource: `Secret ${s.namespace}/${Names.webhookSecret} key ${caKey}`,
  };
}

function sans(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((x) => x.replace(/^DNS:/, '').replace(/^IP Address:/, ''));
}

export function checkCertificate(s: ClusterSnapshot, e: Expectations | undefined): CheckResult {
  const id = 'certificate';
  const secretName = `${s.namespace}/${Names.webhookSecret}`;
  const fixMissing = e?.externalCertificates
    ? `check the cert-manager Certificate ${secretName} (kubectl -n ${s.namespace} describe certificate ${Names.webhookSecret}) and cert-manager's logs`
    : `the manager fills the Secret at start: check that it may write Secrets in ${s.namespace} (see the rbac check) and restart a replica`;
  if (!s.secret)
    return {
      id,
      status: 'fail',
      message: `Secret ${secretName} does not exist: the webhook has no serving certificate`,
      fix: fixMissing,
    };
  const certs = stored(s);
  if (!certs?.serving)
    return { id, status: 'fail', message: `Secret ${secretName} holds no serving certificate yet`, fix: fixMissing };
  const cert = certs.serving;
  const notAfter = Date.parse(cert.validTo);
  const dns = `${Names.webhookService}.${s.namespace}.svc`;
  const names = sans(cert);
  const details = [
    `subject: ${cert.subject.replace(/\n/g, ', ')}`,
    `SANs: ${names.join(', ')}`,
    `expires: ${new Date(notAfter).toISOString()}`,
  ];
  const rotate = e?.externalCertificates
    ? `cert-manager renews it: check the Certificate ${secretName} (kubectl -n ${s.namespace} describe certificate ${Names.webhookSecret})`
    : `delete the Secret's data so the manager issues a new certificate (kubectl -n ${s.namespace} delete secret ${Names.webhookSecret}, then restart the manager pods one at a time: kubectl -n ${s.namespace} rollout restart deploy -l control-plane=controller-manager)`;
  if (notAfter <= s.now) {
    return {
      id,
      status: 'fail',
      message: `the serving certificate expired ${human(s.now - notAfter)} ago (${cert.validTo}): the API server rejects every webhook call`,
      fix: rotate,
      details,
    };
  }
  if (!names.includes(dns)) {
    return {
      id,
      status: 'fail',
      message: `the serving certificate does not name ${dns} (SANs: ${list(names)}): the API server's TLS check fails`,
      fix: rotate,
      details,
    };
  }
  const issuer = certs.ca.find((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
  if (!issuer) {
    return {
      id,
      status: 'fail',
      message: `the serving certificate is not signed by the CA in ${certs.caSource}: the Secret is half-rewritten`,
      fix: rotate,
      details,
    };
  }
  if (notAfter - s.now < EXPIRY_WARNING_MS) {
    return {
      id,
      status: 'warn',
      message: `the serving certificate expires in ${human(notAfter - s.now)} (${cert.validTo})`,
      fix: rotate,
      details,
    };
  }
  return {
    id,
    status: 'pass',
    message: `serving certificate for ${dns} valid for ${human(notAfter - s.now)}, signed by the Secret's CA`,
    details,
  };
}

export function checkCaBundles(s: ClusterSnapshot, e: Expectations | undefined): CheckResult {
  const id = 'ca-bundle';
  const certs = stored(s);
  if (!certs || certs.ca.length === 0)
    return { id, status: 'skip', message: 'no CA in the Secret to compare with (see certificate)' };
  // The CA that signed the serving certificate must be trusted (the Secret may hold older CAs too).
  const issuers = certs.ca.filter((ca) => certs.serving?.checkIssued(ca));
  const fingerprints = new Set((issuers.length > 0 ? issuers : certs.ca).map((c) => c.fingerprint256));
  const targets: Array<{ what: string; bundle?: string }> = [
    ...entriesOnService(s, Names.webhookService).map((w) => ({
      what: `${w.kind} webhook ${w.name}`,
      bundle: w.clientConfig.caBundle,
    })),
    ...(e?.conversionCrds ?? []).flatMap((name) => {
      const crd = s.crds.find((c) => c.metadata?.name === name);
      return crd
        ? [{ what: `conversion webhook of CRD ${name}`, bundle: crd.spec.conversion?.webhook?.clientConfig?.caBundle }]
        : [];
    }),
  ];
  const stale = targets.filter((t) => !parseBundle(decode(t.bundle)).some((c) => fingerprints.has(c.fingerprint256)));
  if (targets.length === 0)
    return { id, status: 'skip', message: 'no webhook entry points at the Service (see webhook-configurations)' };
  if (stale.length > 0) {
    const empty = stale.filter((t) => !t.bundle).length;
    return {
      id,
      status: 'fail',
      message: `${stale.length} of ${targets.length} caBundles do not contain the CA in ${certs.caSource}${empty ? ` (${empty} empty)` : ''}: the API server cannot verify the webhook (x509: certificate signed by unknown authority): ${list(
        stale.map((t) => t.what),
        4,
      )}`,
      fix: e?.externalCertificates
        ? `cert-manager's cainjector fills them from the annotation ${'cert-manager.io/inject-ca-from'}: check that the annotation is present and cainjector runs`
        : 'the manager patches every caBundle at start and on rotation: restart one manager pod (kubectl -n ' +
          s.namespace +
          ' delete pod <one manager pod>) and check that it may patch the webhook configurations (see the rbac check)',
      details: stale.map((t) => t.what),
    };
  }
  return { id, status: 'pass', message: `all ${targets.length} caBundles contain the Secret's CA` };
}
