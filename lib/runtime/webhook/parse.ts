/**
 * JSON.parse for large request bodies without holding the event loop: one JSON.parse of a 7 MB
 * review of small objects runs 50-700 ms in one piece (measured on the 2-core CI machine under
 * load), during which no other review is answered. This parser walks the text with an explicit
 * stack (no recursion, any depth) and yields to the event loop every `sliceChars` characters.
 *
 * Answers stay those of JSON.parse: strings with escapes and every number go through JSON.parse
 * or Number (which round identically for JSON number syntax), and any text this parser does not
 * accept is handed to JSON.parse whole, so an invalid body gets JSON.parse's own error message
 * (and a parser gap could only cost time, never change a value).
 */

export interface CooperativeParseOptions {
  /** Characters parsed between two yields (default 64 Ki: a few milliseconds of work). */
  sliceChars?: number;
  /** Lets other work run; default setImmediate. */
  yieldNow?: () => Promise<void>;
  /**
   * Containers at this depth (the root is at 0) are kept empty and nothing inside them is built,
   * though all of it is still checked to be JSON. For callers that refuse such depth anyway with
   * {@link checkJsonShape} (same limit), which then finds the same first violation without
   * looking inside: an object nested a million levels deep then costs no million objects (whose
   * garbage collection alone held the event loop for 100-200 ms at a time).
   */
  emptyAtDepth?: number;
}

class Unhandled extends Error {}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// A string with an escape or a raw control character (which JSON forbids) goes to JSON.parse.
// eslint-disable-next-line no-control-regex
const NEEDS_DECODING = /[\\\u0000-\u001f]/;

/** Parses `text` as JSON.parse would, yielding between slices; throws JSON.parse's SyntaxError on invalid JSON. */
export async function parseJsonCooperatively(text: string, opts: CooperativeParseOptions = {}): Promise<unknown> {
  const slice = opts.sliceChars ?? 64 * 1024;
  if (text.length <= slice) return JSON.parse(text);
  const yieldNow = opts.yieldNow ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
  try {
    return await walk(text, slice, yieldNow, opts.emptyAtDepth ?? Infinity);
  } catch {
    // Invalid JSON (or a string JSON.parse refused): JSON.parse of the whole text gives its own message.
    return JSON.parse(text);
  }
}

/** Stand for every container below `emptyAtDepth` (never written to: see store()). */
const DROPPED_OBJECT = Object.freeze({});
const DROPPED_ARRAY = Object.freeze([]);

async function walk(
  text: string,
  slice: number,
  yieldNow: () => Promise<void>,
  emptyAtDepth: number,
): Promise<unknown> {
  // Open containers and, for objects, the key their next value goes to.
  const containers: Array<Record<string, unknown> | readonly unknown[]> = [];
  const keys: Array<string | undefined> = [];
  let pos = 0;
  let nextYield = slice;
  let root: unknown;
  const fail = (): never => {
    throw new Unhandled();
  };
  const skipSpace = () => {
    for (
      let c = text.charCodeAt(pos);
      c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
      c = text.charCodeAt(++pos)
    );
  };
  const readString = (): string => {
    const start = pos; // at the opening quote
    let end = pos;
    for (;;) {
      end = text.indexOf('"', end + 1);
      if (end < 0) fail();
      let backslashes = 0;
      while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
      if (backslashes % 2 === 0) break;
    }
    pos = end + 1;
    const raw = text.slice(start + 1, end);
    return NEEDS_DECODING.test(raw) ? (JSON.parse(text.slice(start, end + 1)) as string) : raw;
  };
  /** Stores a finished value in the innermost open container (or as the root). */
  const store = (value: unknown) => {
    const depth = containers.length;
    if (depth === 0) {
      root = value;
      return;
    }
    if (depth - 1 >= emptyAtDepth) return;
    const c = containers[depth - 1] as Record<string, unknown> | unknown[];
    if (Array.isArray(c)) {
      c.push(value);
      return;
    }
    const key = keys[depth - 1]!;
    // JSON.parse defines "__proto__" as an own property; assignment would set the prototype.
    if (key === '__proto__')
      Object.defineProperty(c, key, { value, writable: true, enumerable: true, configurable: true });
    else c[key] = value;
  };
  /** After a value: a separator, a closer (finishing containers), or the end of the text. */
  const afterValue = (): boolean => {
    for (;;) {
      skipSpace();
      const depth = containers.length;
      if (depth === 0) {
        if (pos !== text.length) fail();
        return false;
      }
      const c = containers[depth - 1];
      const ch = text[pos++];
      if (ch === ',') {
        if (!Array.isArray(c)) readKey();
        return true;
      }
      if (ch !== (Array.isArray(c) ? ']' : '}')) fail();
      containers.pop();
      keys.pop();
      store(c);
    }
  };
  const readKey = () => {
    skipSpace();
    if (text[pos] !== '"') fail();
    keys[keys.length - 1] = readString();
    skipSpace();
    if (text[pos++] !== ':') fail();
  };
  for (let more = true; more;) {
    if (pos >= nextYield) {
      await yieldNow();
      nextYield = pos + slice;
    }
    skipSpace();
    const ch = text[pos];
    if (ch === '{' || ch === '[') {
      pos++;
      skipSpace();
      const empty = text[pos] === (ch === '{' ? '}' : ']');
      if (empty) {
        pos++;
        store(ch === '{' ? {} : []);
        more = afterValue();
        continue;
      }
      if (containers.length > emptyAtDepth) containers.push(ch === '{' ? DROPPED_OBJECT : DROPPED_ARRAY);
      else containers.push(ch === '{' ? {} : []);
      keys.push(undefined);
      if (ch === '{') readKey();
      continue;
    }
    if (ch === '"') store(readString());
    else if (text.startsWith('true', pos)) {
      pos += 4;
      store(true);
    } else if (text.startsWith('false', pos)) {
      pos += 5;
      store(false);
    } else if (text.startsWith('null', pos)) {
      pos += 4;
      store(null);
    } else {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(text) ?? fail();
      pos += m[0].length;
      store(Number(m[0]));
    }
    more = afterValue();
  }
  return root;
}
