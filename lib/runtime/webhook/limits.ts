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

/**
 * One open container on the walk's stack. Only containers get frames, with a cursor over their
 * members: a frame per element made a 3-million-element array (7 MB of `0,`) cost seconds of
 * allocation on the event loop.
 */
interface Frame {
  value: unknown;
  key: string | number | undefined;
  parent: Frame | undefined;
  depth: number;
  /** Member names of an object; undefined for an array. */
  keys: string[] | undefined;
  next: number;
}

/** Characters of one key shown in a path; the rest is summarized by its length. */
const MAX_KEY_IN_PATH = 64;

/**
 * `request.object.spec.containers[0]`; deep paths keep their first and last segments, long keys
 * their first {@link MAX_KEY_IN_PATH} characters.
 */
function pathOf(frame: Frame, root: string): string {
  const parts: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f && f.key !== undefined; f = f.parent) parts.push(f.key);
  parts.reverse();
  const show = parts.length > 16 ? [...parts.slice(0, 8), '…', ...parts.slice(-4)] : parts;
  let path = root;
  for (const p of show) {
    if (typeof p === 'number') path += `[${p}]`;
    else if (p === '…') path += '.…';
    else {
      // A key is the client's input: a denial names it, but never echoes megabytes of it.
      const key = p.length > MAX_KEY_IN_PATH ? `${p.slice(0, MAX_KEY_IN_PATH)}… (${p.length} characters)` : p;
      path += /^[A-Za-z_$][\w$-]*$/.test(key) ? `${path ? '.' : ''}${key}` : `[${JSON.stringify(key)}]`;
    }
  }
  return path || '(body)';
}

/**
 * The first place where `value` (parsed JSON, named `root` in messages) nests deeper than
 * `maxDepth` containers or holds a number that is not finite; undefined when there is none.
 */
export function checkJsonShape(value: unknown, root: string, maxDepth = MAX_JSON_DEPTH): FieldError | undefined {
  const walk = shapeWalk(value, root, maxDepth, Infinity);
  let step = walk.next();
  while (!step.done) step = walk.next();
  return step.value;
}

/**
 * {@link checkJsonShape} for a large body: the same walk, handing the event loop a turn every
 * `sliceMembers` members (a 7 MB array of numbers is millions of them).
 */
export async function checkJsonShapeCooperatively(
  value: unknown,
  root: string,
  yieldNow: () => Promise<void>,
  maxDepth = MAX_JSON_DEPTH,
  sliceMembers = 50_000,
): Promise<FieldError | undefined> {
  const walk = shapeWalk(value, root, maxDepth, sliceMembers);
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) return step.value;
    await yieldNow();
  }
}

/** The walk, as a generator that pauses after every `sliceMembers` members; returns the first violation. */
function* shapeWalk(
  value: unknown,
  root: string,
  maxDepth: number,
  sliceMembers: number,
): Generator<void, FieldError | undefined> {
  let budget = sliceMembers;
  const top: Frame = { value: [value], key: undefined, parent: undefined, depth: -1, keys: undefined, next: 0 };
  const stack: Frame[] = [top];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    const container = frame.value as Record<string, unknown> & unknown[];
    const length = frame.keys ? frame.keys.length : container.length;
    if (frame.next >= length) {
      stack.pop();
      continue;
    }
    if (--budget <= 0) {
      yield;
      budget = sliceMembers;
    }
    const key: string | number = frame.keys ? frame.keys[frame.next] : frame.next;
    frame.next++;
    const v = container[key as keyof typeof container];
    // The synthetic top frame's only member is the root itself, which has no key in paths.
    const parent = frame === top ? undefined : frame;
    const childKey = frame === top ? undefined : key;
    if (typeof v === 'number') {
      if (!Number.isFinite(v))
        return {
          field: pathOf({ value: v, key: childKey, parent, depth: 0, keys: undefined, next: 0 }, root),
          message: 'is a number out of range (it does not fit a 64-bit float)',
        };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const child: Frame = {
      value: v,
      key: childKey,
      parent,
      depth: frame.depth + 1,
      keys: Array.isArray(v) ? undefined : Object.keys(v),
      next: 0,
    };
    if (child.depth >= maxDepth) {
      return {
        field: pathOf(child, root),
        message: `nests deeper than ${maxDepth} levels; no Kubernetes object this webhook serves is that deep`,
      };
    }
    stack.push(child);
  }
  return undefined;
}
