/**
 * Shape limits for untrusted JSON, checked without recursion. JSON.parse itself is iterative, but
 * almost everything after it (structuredClone, JSON.stringify, patch computation) recurses, so a
 * body nested a few thousand levels deep overflows the stack there. One walk right after parsing
 * refuses such bodies (and numbers JSON.parse turned into Infinity) with the field's path, so
 * nothing downstream ever sees untrusted depth.
 */
import type { FieldError } from './fields.js';

/**
 * Deepest nesting a review body may have. Real objects stay far below it (a pod's deepest
 * paths, in affinity terms and managedFields, are about 15 levels; the review adds 2), and every
 * recursive step after parsing is safe at this depth.
 */
export const MAX_JSON_DEPTH = 100;

interface Frame {
  value: unknown;
  key: string | number | undefined;
  parent: Frame | undefined;
  depth: number;
}

/** `request.object.spec.containers[0]`; deep paths keep their first and last segments. */
function pathOf(frame: Frame, root: string): string {
  const parts: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f && f.key !== undefined; f = f.parent) parts.push(f.key);
  parts.reverse();
  const show = parts.length > 16 ? [...parts.slice(0, 8), '…', ...parts.slice(-4)] : parts;
  let path = root;
  for (const p of show) {
    if (typeof p === 'number') path += `[${p}]`;
    else if (p === '…') path += '.…';
    else path += /^[A-Za-z_$][\w$-]*$/.test(p) ? `${path ? '.' : ''}${p}` : `[${JSON.stringify(p)}]`;
  }
  return path || '(body)';
}

/**
 * The first place where `value` (parsed JSON, named `root` in messages) nests deeper than
 * `maxDepth` containers or holds a number that is not finite; undefined when there is none.
 */
export function checkJsonShape(value: unknown, root: string, maxDepth = MAX_JSON_DEPTH): FieldError | undefined {
  const stack: Frame[] = [{ value, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { field: pathOf(frame, root), message: 'is a number out of range (it does not fit a 64-bit float)' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (frame.depth >= maxDepth) {
      return { field: pathOf(frame, root), message: `nests deeper than ${maxDepth} levels; no Kubernetes object this webhook serves is that deep` };
    }
    const depth = frame.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: frame, depth });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]], key: keys[i], parent: frame, depth });
    }
  }
  return undefined;
}
