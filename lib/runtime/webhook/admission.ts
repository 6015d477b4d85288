/**
 * AdmissionReview (admission.k8s.io v1 and v1beta1) as data: strict parsing of what the API
 * server sends, and the response envelope it expects back. Both versions share one schema, so
 * the server answers in whichever version it was asked.
 */
import { checkObject, checkOptionalString, checkString, type FieldError } from './fields.js';

const ADMISSION_API_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionApiVersion = (typeof ADMISSION_API_VERSIONS)[number];

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A Kubernetes object as JSON; handlers narrow it themselves. */
export type KubeObject = Record<string, unknown>;

export interface AdmissionRequest {
  uid: string;
  /** The review version the API server used; the response is sent back in it. */
  apiVersion: AdmissionApiVersion;
  operation: Operation;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  /** Empty for cluster-scoped objects. */
  namespace?: string;
  userInfo: UserInfo;
  /** Absent for DELETE. */
  object?: KubeObject;
  /** Present for UPDATE and DELETE. */
  oldObject?: KubeObject;
  dryRun: boolean;
  options?: KubeObject;
}

export type ParseResult = { ok: true; request: AdmissionRequest } | { ok: false; error: FieldError };

/** Validates a decoded JSON body; every rejection names the offending field. */
export function parseAdmissionReview(body: unknown): ParseResult {
  const fail = (field: string, message: string): ParseResult => ({ ok: false, error: { field, message } });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return fail('(body)', 'must be a JSON object (an AdmissionReview)');
  }
  const review = body as Record<string, unknown>;
  const apiVersion = review.apiVersion;
  if (typeof apiVersion !== 'string' || !(ADMISSION_API_VERSIONS as readonly string[]).includes(apiVersion)) {
    return fail('apiVersion', `must be one of ${ADMISSION_API_VERSIONS.join(', ')}, got ${describeValue(apiVersion)}`);
  }
  if (review.kind !== 'AdmissionReview')
    return fail('kind', `must be AdmissionReview, got ${describeValue(review.kind)}`);
  if (review.request === undefined || review.request === null) return fail('request', 'is missing');
  const errors: FieldError[] = [];
  const req = checkObject(review.request, 'request', errors);
  if (!req) return { ok: false, error: errors[0] };

  const uid = checkString(req.uid, 'request.uid', errors, { nonEmpty: true });
  const operation = checkString(req.operation, 'request.operation', errors);
  if (operation !== undefined && !(OPERATIONS as readonly string[]).includes(operation)) {
    errors.push({
      field: 'request.operation',
      message: `must be one of ${OPERATIONS.join(', ')}, got ${describeValue(operation)}`,
    });
  }
  const kind = parseGroupVersion(req.kind, 'request.kind', 'kind', errors);
  const resource = parseGroupVersion(req.resource, 'request.resource', 'resource', errors);
  const userInfo = parseUserInfo(req.userInfo, errors);
  const object = parseEmbedded(req.object, 'request.object', errors);
  const oldObject = parseEmbedded(req.oldObject, 'request.oldObject', errors);
  const options = parseEmbedded(req.options, 'request.options', errors);
  if (
    (operation === 'CREATE' || operation === 'UPDATE') &&
    object === undefined &&
    !errors.some((e) => e.field === 'request.object')
  ) {
    errors.push({ field: 'request.object', message: `is required for ${operation}, got ${describeValue(req.object)}` });
  }
  if (req.dryRun !== undefined && req.dryRun !== null && typeof req.dryRun !== 'boolean') {
    errors.push({ field: 'request.dryRun', message: `must be a boolean, got ${describeValue(req.dryRun)}` });
  }
  const request: Partial<AdmissionRequest> = {
    uid,
    apiVersion: apiVersion as AdmissionApiVersion,
    operation: operation as Operation,
    kind: kind as GroupVersionKind | undefined,
    resource: resource as GroupVersionResource | undefined,
    subResource: checkOptionalString(req.subResource, 'request.subResource', errors),
    name: checkOptionalString(req.name, 'request.name', errors),
    namespace: checkOptionalString(req.namespace, 'request.namespace', errors),
    userInfo,
    object,
    oldObject,
    options,
    dryRun: req.dryRun === true,
  };
  if (errors.length > 0) return { ok: false, error: errors[0] };
  return { ok: true, request: request as AdmissionRequest };
}

export interface AdmissionResponseBody {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export function reviewResponse(apiVersion: AdmissionApiVersion, response: AdmissionResponseBody) {
  return { apiVersion, kind: 'AdmissionReview', response };
}

function parseGroupVersion(value: unknown, field: string, last: 'kind' | 'resource', errors: FieldError[]) {
  const obj = checkObject(value, field, errors);
  if (!obj) return undefined;
  return {
    // The core group is the empty string, which Go always serialises but hand-written reviews omit.
    group: checkOptionalString(obj.group, `${field}.group`, errors) ?? '',
    version: checkString(obj.version, `${field}.version`, errors),
    [last]: checkString(obj[last], `${field}.${last}`, errors, { nonEmpty: true }),
  };
}

function parseUserInfo(value: unknown, errors: FieldError[]): UserInfo {
  if (value === undefined || value === null) return {};
  const obj = checkObject(value, 'request.userInfo', errors);
  if (!obj) return {};
  const info: UserInfo = {
    username: checkOptionalString(obj.username, 'request.userInfo.username', errors),
    uid: checkOptionalString(obj.uid, 'request.userInfo.uid', errors),
  };
  if (obj.groups !== undefined && obj.groups !== null) {
    if (!Array.isArray(obj.groups) || obj.groups.some((g) => typeof g !== 'string')) {
      errors.push({ field: 'request.userInfo.groups', message: 'must be an array of strings' });
    } else {
      info.groups = obj.groups as string[];
    }
  }
  if (obj.extra !== undefined && obj.extra !== null) {
    const extra = checkObject(obj.extra, 'request.userInfo.extra', errors);
    const valid = extra && Object.values(extra).every((v) => Array.isArray(v) && v.every((s) => typeof s === 'string'));
    if (extra && !valid)
      errors.push({ field: 'request.userInfo.extra', message: 'must map keys to arrays of strings' });
    else if (extra) info.extra = extra as Record<string, string[]>;
  }
  return info;
}

/** Embedded objects (RawExtension) may be absent or null, otherwise they must be JSON objects. */
function parseEmbedded(value: unknown, field: string, errors: FieldError[]): KubeObject | undefined {
  if (value === undefined || value === null) return undefined;
  return checkObject(value, field, errors);
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}...` : value);
  return `a ${typeof value}`;
}
