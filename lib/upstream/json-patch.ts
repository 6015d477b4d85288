/**
 * The generated data stores the newest upstream release whole and every other release as the
 * difference from it (most of a release is its CRD schemas, which change little between
 * releases). A difference is a list of operations on JSON values: `[path, value]` sets the
 * value at `path`, `[path]` removes it, and `[path, null, picks]` rebuilds the array at `path`
 * from its own items (a number: the item at that index, copied) and new ones (`{ value }`).
 * Arrays of equal length are compared item by item; arrays of named objects (CRD versions,
 * flags, gates) by name; other arrays are replaced whole.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** One operation: set (`[path, value]`) or remove (`[path]`). */
export type PatchOp =
  | [path: Array<string | number>]
  | [path: Array<string | number>, value: Json]
  | [path: Array<string | number>, rebuild: null, picks: Array<number | { value: Json }>];

const nameOf = (v: Json): string | undefined => (isObject(v) && typeof v.name === 'string' ? v.name : undefined);

const isObject = (v: Json | undefined): v is { [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Own keys only: `valueOf` or `__proto__` in a document is data, never a property of Object.prototype. */
const has = (o: object, key: string | number): boolean => Object.prototype.hasOwnProperty.call(o, key);
const own = (o: Json, key: string | number): Json | undefined =>
  typeof o === 'object' && o !== null && has(o, key) ? (o as { [key: string]: Json })[key] : undefined;
/** Sets an own, enumerable property, as JSON.parse does (plain assignment of `__proto__` would set the prototype). */
const setOwn = (o: Json, key: string | number, value: Json): void => {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
};

/** The operations that turn `from` into `to`. */
export function diffJson(from: Json, to: Json, path: Array<string | number> = []): PatchOp[] {
  if (from === to) return [];
  if (isObject(from) && isObject(to)) {
    const ops: PatchOp[] = [];
    for (const key of Object.keys(from)) if (!has(to, key)) ops.push([[...path, key]]);
    for (const key of Object.keys(to)) {
      if (!has(from, key)) ops.push([[...path, key], to[key]]);
      else ops.push(...diffJson(from[key], to[key], [...path, key]));
    }
    return ops;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    let ops: PatchOp[] | undefined;
    if (from.length === to.length) {
      ops = to.flatMap((item, i) => diffJson(from[i], item, [...path, i]));
    } else if ([...from, ...to].every((v) => nameOf(v) !== undefined)) {
      const index = new Map(from.map((v, i) => [nameOf(v)!, i]));
      const picks = to.map((v) => index.get(nameOf(v)!) ?? { value: v });
      ops = [
        [path, null, picks],
        ...to.flatMap((item, i) => (typeof picks[i] === 'number' ? diffJson(from[picks[i]], item, [...path, i]) : [])),
      ];
    }
    // Many small changes inside one array cost more than the array itself.
    if (ops && JSON.stringify(ops).length < JSON.stringify(to).length) return ops;
    if (JSON.stringify(from) === JSON.stringify(to)) return [];
    return [[path, to]];
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  return [[path, to]];
}

/** Applies `ops` to `value` in place (the root itself cannot be removed); returns the result. */
export function applyPatch(value: Json, ops: readonly PatchOp[]): Json {
  let root = value;
  for (const op of ops) {
    const path = op[0];
    if (path.length === 0) {
      if (op.length !== 2) throw new Error('json patch: the root can only be replaced');
      root = op[1];
      continue;
    }
    let parent: Json = root;
    for (const key of path.slice(0, -1)) {
      const next: Json | undefined = own(parent, key);
      if (typeof next !== 'object' || next === null)
        throw new Error(`json patch: no container at /${path.join('/')} (stopped at ${String(key)})`);
      parent = next;
    }
    const last = path[path.length - 1];
    if (op.length === 3) {
      const current = own(parent, last);
      if (!Array.isArray(current)) throw new Error(`json patch: no array at /${path.join('/')}`);
      setOwn(
        parent,
        last,
        op[2].map((p) => (typeof p === 'number' ? (JSON.parse(JSON.stringify(current[p])) as Json) : p.value)),
      );
    } else if (op.length === 1) {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete (parent as { [key: string]: Json })[last];
    } else {
      setOwn(parent, last, op[1]);
    }
  }
  return root;
}
