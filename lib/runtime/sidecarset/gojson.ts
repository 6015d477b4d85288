import { createHash } from 'node:crypto';
import { isRecord } from '../../contract.js';
import { GO_ROOT, GO_TYPES, type GoType } from './gojson.generated.js';

/**
 * Upstream's JSON encoding of SidecarSet containers, byte for byte: Go's encoding/json of
 * apps.kruise.io/v1alpha1 SidecarContainer (fields in struct order, `omitempty`, maps with sorted
 * keys, `<>&` escaped, quantities canonical), so that {@link upstreamSidecarSetHash} equals the
 * `kruise.io/sidecarset-hash` upstream's webhook records. The layout is generated from upstream's
 * own types (gojson.generated.ts); a field it does not have fails by name.
 */
export class GoEncodingError extends Error {}

/** Go escapes these in strings (encoding/json with HTML escaping, its default). */
export function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isEmpty(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    v === '' ||
    v === 0 ||
    v === false ||
    (Array.isArray(v) && v.length === 0) ||
    (isRecord(v) && Object.keys(v).length === 0)
  );
}

function zero(type: string, types: Record<string, GoType>): string {
  if (type === 'string') return '""';
  if (type === 'int' || type === 'float') return '0';
  if (type === 'bool') return 'false';
  if (type === 'quantity') return '"0"';
  const t = types[type];
  return t?.kind === 'struct' ? encode({}, type, '', false, types) : 'null';
}

/**
 * `value` as Go's encoding/json writes it once decoded into `type`. A field the Go type lacks
 * fails by name, unless `dropUnknown`: then it is dropped, as Go's decoding drops it (for fields the
 * CRD stores unpruned, such as volumes, which upstream reads through its typed client). `types` is the
 * layout table: SidecarSet's by default, another generated one (CloneSet's) for other roots.
 */
export function encode(
  value: unknown,
  type: string,
  path: string,
  dropUnknown = false,
  types: Record<string, GoType> = GO_TYPES,
): string {
  switch (type) {
    case 'string':
    case 'time':
    case 'bytes':
      if (typeof value !== 'string')
        throw new GoEncodingError(`${path}: must be a string, got ${JSON.stringify(value)}`);
      return goString(value);
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value))
        throw new GoEncodingError(`${path}: must be a whole number, got ${JSON.stringify(value)}`);
      return String(value);
    case 'bool':
      if (typeof value !== 'boolean')
        throw new GoEncodingError(`${path}: must be true or false, got ${JSON.stringify(value)}`);
      return String(value);
    case 'intOrString':
      if (typeof value === 'number' && Number.isInteger(value)) return String(value);
      if (typeof value === 'string') return goString(value);
      throw new GoEncodingError(`${path}: must be a whole number or a string, got ${JSON.stringify(value)}`);
    case 'quantity':
      return goString(canonicalQuantity(value, path));
    case 'rawJSON':
      // metav1.FieldsV1 writes its raw bytes; callers that compare re-encode them with sorted keys.
      return JSON.stringify(value);
    default:
  }
  const t = types[type] ?? (type.startsWith('[]') ? { kind: 'slice', elem: type.slice(2) } : undefined);
  if (!t) throw new GoEncodingError(`${path}: no Go layout for type ${type}`);
  if (value === null || value === undefined) return t.kind === 'struct' ? encode({}, type, path, false, types) : 'null';
  if (t.kind === 'slice') {
    if (!Array.isArray(value)) throw new GoEncodingError(`${path}: must be a list`);
    return `[${value.map((v, i) => encode(v, t.elem!, `${path}[${i}]`, dropUnknown, types)).join(',')}]`;
  }
  if (!isRecord(value)) throw new GoEncodingError(`${path}: must be an object`);
  if (t.kind === 'map') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${goString(k)}:${encode(value[k], t.elem!, `${path}[${JSON.stringify(k)}]`, dropUnknown, types)}`)
      .join(',')}}`;
  }
  const known = new Set(t.fields!.map((f) => f.json));
  const unknown = Object.keys(value).find((k) => !known.has(k) && value[k] !== undefined);
  if (unknown && !dropUnknown)
    throw new GoEncodingError(`${path}.${unknown}: is not a field of upstream's ${type}; remove it`);
  const parts: string[] = [];
  for (const f of t.fields!) {
    const v = value[f.json];
    const at = path ? `${path}.${f.json}` : f.json;
    if (v === undefined || v === null) {
      if (f.omitempty) continue;
      parts.push(`${goString(f.json)}:${f.pointer ? 'null' : zero(f.type, types)}`);
      continue;
    }
    if (f.omitempty && !f.pointer && isEmpty(v) && types[f.type]?.kind !== 'struct' && f.type !== 'quantity') continue;
    parts.push(`${goString(f.json)}:${encode(v, f.type, at, dropUnknown, types)}`);
  }
  return `{${parts.join(',')}}`;
}

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** A resource quantity as Kubernetes prints it canonically (resource.Quantity's String()). */
export function canonicalQuantity(value: unknown, path: string, roundUpToMilli = false): string {
  const text = typeof value === 'number' ? String(value) : value;
  const m = typeof text === 'string' ? QUANTITY.exec(text.trim()) : null;
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) {
    throw new GoEncodingError(`${path}: ${JSON.stringify(value)} is not a quantity like "100m" or "128Mi"`);
  }
  const [, sign, whole, fraction = '', suffix = ''] = m;
  if (sign === '-')
    throw new GoEncodingError(
      `${path}: ${JSON.stringify(value)}: negative quantities are not supported; use a positive one`,
    );
  // value = digits / 10^fraction.length * multiplier, kept exact as a fraction of BigInts.
  let num = BigInt(`${whole}${fraction}` || '0');
  let den = 10n ** BigInt(fraction.length);
  let binary = false;
  if (suffix in BINARY_SUFFIX) {
    num *= 2n ** BigInt(BINARY_SUFFIX[suffix]);
    binary = true;
  } else {
    const exp = suffix in DECIMAL_SUFFIX ? DECIMAL_SUFFIX[suffix] : Number(suffix.slice(1));
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  const exponentFormat = /^[eE]/.test(suffix);
  if (num === 0n) return '0';
  if (roundUpToMilli) {
    // resource.Quantity RoundUp(-3), as upstream's defaulting does to limits and requests.
    const milli = (num * 1000n + den - 1n) / den;
    [num, den] = [milli, 1000n];
  }
  if (binary && num >= 1024n * den && num % den === 0n) {
    let v = num / den;
    let k = 0;
    while (k < 6 && v % 1024n === 0n) {
      v /= 1024n;
      k++;
    }
    return `${v}${['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][k]}`;
  }
  // Decimal: rounded up to nano units, then the largest exponent that is a multiple of 3.
  let mantissa = (num * 10n ** 9n + den - 1n) / den;
  let exp = -9;
  while (mantissa % 1000n === 0n && exp < 18) {
    mantissa /= 1000n;
    exp += 3;
  }
  if (exponentFormat) return exp === 0 ? `${mantissa}` : `${mantissa}e${exp}`;
  return `${mantissa}${Object.keys(DECIMAL_SUFFIX).find((s) => DECIMAL_SUFFIX[s] === exp)}`;
}

/** Kubernetes' rand.SafeEncodeString: hex digits mapped onto letters and digits that spell no words. */
export function safeEncode(s: string): string {
  const alphanums = 'bcdfghjklmnpqrstvwxz2456789';
  return [...s].map((c) => alphanums[c.charCodeAt(0) % alphanums.length]).join('');
}

interface Containers {
  containers?: unknown[];
  initContainers?: unknown[];
}

/**
 * Upstream's SidecarSet hash (pkg/control/sidecarcontrol/hash.go): sha256 over
 * `{"containers":…}`, plus `"initContainers":…` (all of them) when any init container is a
 * native sidecar (`restartPolicy: Always`); `withoutImage` blanks every image first.
 */
export function upstreamSidecarSetHash(spec: Containers, withoutImage = false): string {
  const blank = (list: unknown[] | undefined) =>
    withoutImage && list ? list.map((c) => (isRecord(c) ? { ...c, image: '' } : c)) : list;
  const containers = blank(spec.containers);
  const inits = blank(spec.initContainers);
  const list = `[]${GO_ROOT}`;
  let json = `{"containers":${containers ? encode(containers, list, 'spec.containers') : 'null'}`;
  if (inits?.some((c) => isRecord(c) && c.restartPolicy === 'Always'))
    json = `{"containers":${containers ? encode(containers, list, 'spec.containers') : 'null'},"initContainers":${encode(inits, list, 'spec.initContainers')}`;
  json += '}';
  return safeEncode(createHash('sha256').update(json).digest('hex'));
}
