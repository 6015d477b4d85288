import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  cloneJson,
  createPatch,
  encodePatch,
  pointer,
  validatePatch,
  type JsonPatchOperation,
} from '../../../../lib/runtime/webhook/jsonpatch.js';
import { draw } from '../../../support/draw.js';

const PATCH_DRAW = draw('jsonpatch createPatch', {
  full: 2000,
  budget: 300,
  modules: ['lib/runtime/webhook'],
  fallbackSeed: 20261123,
  file: 'test/unit/runtime/webhook/jsonpatch.test.ts',
});

/** A minimal RFC 6902 applier for add/remove/replace, written independently of createPatch. */
function apply(doc: unknown, ops: JsonPatchOperation[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    const parts =
      op.path === ''
        ? []
        : op.path
            .slice(1)
            .split('/')
            .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (parts.length === 0) {
      if (op.op !== 'replace') throw new Error(`unsupported root op ${op.op}`);
      root = structuredClone(op.value);
      continue;
    }
    let parent = root as Record<string, unknown> | unknown[];
    for (const p of parts.slice(0, -1))
      parent = Object.getOwnPropertyDescriptor(parent, p)!.value as Record<string, unknown>;
    const last = parts[parts.length - 1];
    if (Array.isArray(parent)) {
      const i = Number(last);
      if (op.op === 'remove') parent.splice(i, 1);
      else if (op.op === 'add') parent.splice(i, 0, structuredClone((op as { value: unknown }).value));
      else parent[i] = structuredClone((op as { value: unknown }).value);
    } else if (op.op === 'remove') {
      if (!Object.hasOwn(parent, last)) throw new Error(`remove of missing ${op.path}`);
      delete parent[last];
    } else {
      if (op.op === 'replace' && !Object.hasOwn(parent, last)) throw new Error(`replace of missing ${op.path}`);
      // defineProperty, so a key named __proto__ becomes data as JSON.parse makes it, not a prototype.
      Object.defineProperty(parent, last, {
        value: structuredClone((op as { value: unknown }).value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return root;
}

describe('pointer', () => {
  it('escapes ~ and / per RFC 6901', () => {
    expect(pointer('metadata', 'annotations', 'kruise.io/sidecarset-hash')).toBe(
      '/metadata/annotations/kruise.io~1sidecarset-hash',
    );
    expect(pointer('a~b', 0)).toBe('/a~0b/0');
  });
});

describe('validatePatch', () => {
  it('accepts well-formed operations and names the first bad one', () => {
    expect(
      validatePatch([
        { op: 'add', path: '/a', value: 1 },
        { op: 'remove', path: '/b' },
        { op: 'move', from: '/c', path: '/d' },
      ]),
    ).toBeUndefined();
    expect(validatePatch({})).toMatch(/must be an array/);
    expect(validatePatch([{ op: 'add', path: '/a' }])).toBe('patches[0].value must be a JSON value');
    expect(
      validatePatch([
        { op: 'remove', path: '/a' },
        { op: 'frobnicate', path: '/a' },
      ]),
    ).toMatch(/^patches\[1\]\.op must be/);
    expect(validatePatch([{ op: 'replace', path: '/a~2', value: 1 }])).toMatch(
      /patches\[0\]\.path must be a JSON pointer/,
    );
    expect(validatePatch([{ op: 'copy', path: '/a' }])).toBe('patches[0].from must be a JSON pointer');
    expect(validatePatch([{ op: 'add', path: '/a', value: Number.NaN }])).toBe('patches[0].value must be a JSON value');
    expect(validatePatch([null])).toBe('patches[0] must be an object');
  });
});

describe('createPatch', () => {
  it('turns a mutated copy into the minimal add/replace/remove operations', () => {
    const before = { metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'app' }] } };
    const after = {
      metadata: { name: 'p', labels: { b: '2' }, annotations: { 'x/y': 'z' } },
      spec: { containers: [{ name: 'app' }, { name: 'sidecar' }] },
    };
    expect(createPatch(before, after)).toEqual([
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'add', path: '/metadata/annotations', value: { 'x/y': 'z' } },
      { op: 'replace', path: '/spec/containers', value: [{ name: 'app' }, { name: 'sidecar' }] },
    ]);
    expect(createPatch(before, structuredClone(before))).toEqual([]);
  });

  // Full draw 2000; budget 300: fc.jsonValue has no branches of ours to stratify, the budget covers
  // the shapes (scalars, arrays, nested objects up to depth 4) many times over; fast-check prints the
  // seed in a failure, and the name carries the replay command.
  it(`always produces a valid patch that turns the original into the target (${PATCH_DRAW.replay})`, () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    fc.assert(
      fc.property(json, json, (a, b) => {
        const ops = createPatch(a, b);
        expect(validatePatch(ops)).toBeUndefined();
        const wire = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown; // what the API server sees (-0 is 0)
        expect(wire(apply(a, ops))).toEqual(wire(b));
        expect(JSON.parse(Buffer.from(encodePatch(ops), 'base64').toString('utf8'))).toEqual(
          JSON.parse(JSON.stringify(ops)),
        );
      }),
      { numRuns: PATCH_DRAW.numRuns, seed: PATCH_DRAW.seed },
    );
  });
});

describe('cloneJson', () => {
  it('copies any JSON value as structuredClone does, sharing nothing with the original', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const copy = cloneJson(v);
        expect(copy).toStrictEqual(structuredClone(v));
        if (typeof v === 'object' && v !== null) {
          expect(copy).not.toBe(v);
          const mutate = (x: unknown): void => {
            if (Array.isArray(x)) x.forEach(mutate);
            else if (typeof x === 'object' && x !== null)
              for (const k of Object.keys(x)) (x as Record<string, unknown>)[k] = 'mutated';
          };
          const before = JSON.stringify(v);
          mutate(copy);
          expect(JSON.stringify(v)).toBe(before);
        }
      }),
    );
  });

  it('keeps a "__proto__" key JSON.parse made as an own key, not as the prototype', () => {
    const v = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = cloneJson(v);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
  });
});
