/**
 * RFC 6902 JSON Patch, the only patch type admission webhooks may return. Handlers either build
 * operations themselves (with {@link pointer} for escaping) or mutate a copy of the object and
 * let {@link createPatch} compute them; the server validates and encodes whatever comes back.
 */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** A JSON Pointer (RFC 6901) from raw segments: `pointer('metadata', 'labels', 'a/b')` → `/metadata/labels/a~1b`. */
export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

const POINTER = /^(\/([^~]|~[01])*)*$/;

/** Returns why `ops` is not a valid JSON Patch, naming the operation, or undefined when it is. */
export function validatePatch(ops: unknown): string | undefined {
  if (!Array.isArray(ops)) return 'patches must be an array of operations';
  for (const [i, op] of ops.entries()) {
    const at = `patches[${i}]`;
    if (typeof op !== 'object' || op === null) return `${at} must be an object`;
    const { op: name, path, from, value } = op as Record<string, unknown>;
    if (typeof path !== 'string' || !POINTER.test(path))
      return `${at}.path must be a JSON pointer, got ${JSON.stringify(path)}`;
    switch (name) {
      case 'add':
      case 'replace':
      case 'test':
        if (value === undefined || !isJsonValue(value)) return `${at}.value must be a JSON value`;
        break;
      case 'remove':
        break;
      case 'move':
      case 'copy':
        if (typeof from !== 'string' || !POINTER.test(from)) return `${at}.from must be a JSON pointer`;
        break;
      default:
        return `${at}.op must be add, remove, replace, move, copy or test, got ${JSON.stringify(name)}`;
    }
  }
  return undefined;
}

/** The base64 JSON the AdmissionResponse `patch` field carries. */
export function encodePatch(ops: JsonPatchOperation[]): string {
  return Buffer.from(JSON.stringify(ops), 'utf8').toString('base64');
}

/**
 * The operations that turn `from` into `to`. Arrays that changed length are replaced whole:
 * index-wise add/remove against a list another webhook may also have edited is how patches go
 * wrong, and a replace is always exactly what the handler meant.
 *
 * One walk, linear in the objects: parts `to` shares with `from` (what a handler left alone) are
 * skipped by identity, and nothing is compared twice (an up-front deep comparison at every level
 * made a pod with 200,000 annotations cost seconds).
 */
export function createPatch(from: unknown, to: unknown, path = ''): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diff(from, to, path, ops);
  return ops;
}

function diff(from: unknown, to: unknown, path: string, ops: JsonPatchOperation[]): void {
  if (from === to) return;
  if (isPlainObject(from) && isPlainObject(to)) {
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && own(to, key) === undefined) ops.push({ op: 'remove', path: path + pointer(key) });
    }
    for (const key of Object.keys(to)) {
      const value = to[key];
      if (value === undefined) continue;
      const old = own(from, key);
      if (old === undefined) ops.push({ op: 'add', path: path + pointer(key), value });
      else if (old !== value) diff(old, value, path + pointer(key), ops);
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    if (from.length !== to.length) {
      ops.push({ op: 'replace', path, value: to });
      return;
    }
    // An element-wise diff of equal-length arrays, unless it would be a replace of the whole
    // anyway (elements that differ in type or whose own diff is a replace stay per element).
    for (let i = 0; i < to.length; i++) if (from[i] !== to[i]) diff(from[i], to[i], path + pointer(i), ops);
    return;
  }
  ops.push({ op: 'replace', path, value: to });
}

/** Own properties only: `{}.toString` is a function, and a key named `toString` must not see it. */
function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * A deep copy of a JSON value (what JSON.parse or the API server gives): 8x faster than structuredClone on the
 * objects admission copies per request (a sidecar container: 0.43 against 3.5 µs), which was 7 % of the webhook's CPU.
 * `__proto__` is copied as the own key JSON.parse makes of it, never as the copy's prototype.
 */
export function cloneJson<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(cloneJson) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = cloneJson((v as Record<string, unknown>)[k]);
    if (k === '__proto__')
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out as T;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isJsonValue(v: unknown, depth = 0): boolean {
  if (depth > 100) return false;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isJsonValue(x, depth + 1));
  if (isPlainObject(v)) return Object.values(v).every((x) => x === undefined || isJsonValue(x, depth + 1));
  return false;
}
