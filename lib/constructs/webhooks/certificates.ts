import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { Labels } from '../../contract.js';
import { KRUISE_MANAGER_NAMES, type ManagerNames } from '../core/names.js';
import { propError, wholeSeconds } from '../core/errors.js';

/** A reference to an existing cert-manager issuer. */
export interface IssuerRef {
  readonly name: string;
  /**
   * `Issuer` (in the install namespace) or `ClusterIssuer`.
   * @default 'Issuer'
   */
  readonly kind?: string;
}

/** Options for {@link WebhookCertificates.certManager}. */
export interface CertManagerOptions {
  /**
   * Issuer of the serving certificate.
   * @default - a private CA created for the webhook (self-signed root -> CA issuer)
   */
  readonly issuer?: IssuerRef;
  /**
   * Lifetime of the serving certificate.
   * @default Duration.days(90)
   */
  readonly duration?: Duration;
  /**
   * Renew this long before expiry.
   * @default Duration.days(30)
   */
  readonly renewBefore?: Duration;
}

/** Who issues the webhook's serving certificate. */
export class WebhookCertificates {
  /**
   * Every replica generates or reads the CA and serving certificate in the Secret
   * `kruise-webhook-certs` (race-safe) and patches `caBundle` itself. No dependency.
   */
  public static selfManaged(): WebhookCertificates {
    return new WebhookCertificates(false, {});
  }

  /** cert-manager issues the certificate and injects `caBundle` (`inject-ca-from`). */
  public static certManager(options: CertManagerOptions = {}): WebhookCertificates {
    const duration = options.duration ? wholeSeconds('certificates.duration', options.duration) : 90 * 86400;
    const renewBefore = options.renewBefore
      ? wholeSeconds('certificates.renewBefore', options.renewBefore)
      : 30 * 86400;
    if (renewBefore >= duration) {
      throw propError(
        'certificates.renewBefore',
        `${renewBefore}s`,
        `is not shorter than the certificate duration (${duration}s), so cert-manager would renew forever`,
        'set renewBefore well below duration, e.g. 30 days of 90',
      );
    }
    return new WebhookCertificates(true, options, true);
  }

  /**
   * Bring your own: something else (your PKI, a CSI driver, another operator) writes the CA and
   * the serving certificate into the Secret `kruise-webhook-certs` in the install namespace,
   * under `ca.crt`, `tls.crt` and `tls.key`, and puts the CA into the webhook configurations
   * (and, for the upstream image, the CRDs with conversion webhooks): give your injector's
   * annotation in `webhooks.annotations`, which reaches both. The manager reads and verifies
   * the certificate, and waits until it exists.
   */
  public static external(): WebhookCertificates {
    return new WebhookCertificates(true, {}, false);
  }

  private constructor(
    /** True when something other than the manager issues the certificate. */
    public readonly isExternal: boolean,
    private readonly options: CertManagerOptions,
    /** True when cert-manager is that something (this library renders its objects). */
    private readonly certManagerIssues = false,
  ) {}

  /**
   * The objects behind this mode, under `scope`: the (empty) Secret the manager fills, or
   * cert-manager's issuers and Certificate; and the annotations the webhook configurations need.
   * @internal
   */
  public _render(
    scope: Construct,
    ns: string,
    names: ManagerNames = KRUISE_MANAGER_NAMES,
  ): { apiObjects: ApiObject[]; webhookAnnotations: { [key: string]: string } } {
    if (!this.isExternal) {
      return {
        apiObjects: [
          new ApiObject(scope, 'Secret', {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: names.webhookSecret, namespace: ns },
            type: 'Opaque',
          }),
        ],
        webhookAnnotations: {},
      };
    }
    if (!this.certManagerIssues) return { apiObjects: [], webhookAnnotations: {} };
    const options = this.options;
    const apiObjects: ApiObject[] = [];
    let issuerRef = options.issuer
      ? { name: options.issuer.name, kind: options.issuer.kind ?? 'Issuer', group: 'cert-manager.io' }
      : undefined;
    if (!issuerRef) {
      // A private CA keeps caBundle stable across serving-certificate renewals.
      const cmNames = names.certManager;
      const cm = (name: string, kind: string, spec: object) =>
        new ApiObject(scope, name, { apiVersion: 'cert-manager.io/v1', kind, metadata: { name, namespace: ns }, spec });
      apiObjects.push(
        cm(cmNames.selfSigned, 'Issuer', { selfSigned: {} }),
        cm(cmNames.ca, 'Certificate', {
          isCA: true,
          commonName: cmNames.ca,
          secretName: cmNames.ca,
          duration: `${5 * 365 * 24}h`,
          privateKey: { algorithm: 'ECDSA', size: 256 },
          issuerRef: { name: cmNames.selfSigned, kind: 'Issuer', group: 'cert-manager.io' },
        }),
        cm(cmNames.caIssuer, 'Issuer', { ca: { secretName: cmNames.ca } }),
      );
      issuerRef = { name: cmNames.caIssuer, kind: 'Issuer', group: 'cert-manager.io' };
    }
    const svc = names.webhookService;
    apiObjects.push(
      new ApiObject(scope, 'Certificate', {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: names.webhookSecret, namespace: ns },
        spec: {
          secretName: names.webhookSecret,
          dnsNames: [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`, 'localhost'],
          duration: goDuration(options.duration?.toMilliseconds() ?? 90 * 86400_000),
          renewBefore: goDuration(options.renewBefore?.toMilliseconds() ?? 30 * 86400_000),
          privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
          issuerRef,
        },
      }),
    );
    return { apiObjects, webhookAnnotations: { [Labels.certManagerInjectCaFrom]: `${ns}/${names.webhookSecret}` } };
  }
}

/** Props of {@link CertificateResources}. */
export interface CertificateResourcesProps {
  readonly namespace: string;
  readonly certificates: WebhookCertificates;
  /** @internal */
  readonly names: ManagerNames;
}

/**
 * The objects behind the chosen certificate mode: the (empty) Secret the manager fills, or
 * cert-manager's issuers and Certificate, whose dnsNames include `localhost` because the
 * readiness self-check dials localhost.
 */
export class CertificateResources extends Construct {
  /** Objects rendered, in order. */
  public readonly apiObjects: ApiObject[];
  /** Annotations the webhook configurations need (cert-manager's CA injection). */
  public readonly webhookAnnotations: { [key: string]: string };

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: CertificateResourcesProps): CertificateResources {
    return new CertificateResources(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: CertificateResourcesProps) {
    super(scope, id);
    ({ apiObjects: this.apiObjects, webhookAnnotations: this.webhookAnnotations } = props.certificates._render(
      this,
      props.namespace,
      props.names,
    ));
  }
}

/** cert-manager takes Go durations; whole hours where possible keep the YAML readable. */
function goDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds % 3600 === 0 ? `${seconds / 3600}h` : `${seconds}s`;
}
