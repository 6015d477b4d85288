// The cooperative parser must be JSON.parse, value for value and error for error, while giving
// the event loop turns on a large text.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { checkJsonShape } from '../../../../lib/runtime/webhook/limits.js';
import { parseJsonCooperatively } from '../../../../lib/runtime/webhook/parse.js';

/** Parses with tiny slices (so every input takes the cooperative path) and counts the yields. */
async function parse(text: string): Promise<{ value: unknown; yields: number }> {
  let yields = 0;
  const value = await parseJsonCooperatively(text, {
    sliceChars: 4,
    yieldNow: async () => {
      yields++;
    },
  });
  return { value, yields };
}

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

/** JSON text with random whitespace wherever the grammar allows it. */
const spaced = fc
  .tuple(fc.jsonValue(), fc.constantFrom('', ' ', '\n\t', ' \r\n '))
  .map(([v, ws]) => JSON.stringify(v, null, ws.length > 0 ? ws.replace(/\S/g, '') || ' ' : undefined) ?? 'null');

describe('parseJsonCooperatively', () => {
  it('returns what JSON.parse returns, for any JSON text', async () => {
    await fc.assert(
      fc.asyncProperty(spaced, async (text) => {
        expect((await parse(text)).value).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps JSON.parse\'s edge cases: duplicate keys, "__proto__", -0, out-of-range numbers, escapes', async () => {
    const text =
      '{"a":1,"__proto__":{"x":[]},"b":"\\u00e9\\n\\"q\\\\","a":2,"z":-0,"n":[1e999999,-1e999999,5e-324,0.1],"e":{},"l":[[],[{}]]}';
    const { value, yields } = await parse(text);
    const expected = JSON.parse(text) as Record<string, unknown>;
    expect(value).toEqual(expected);
    expect(Object.keys(value as object)).toEqual(Object.keys(expected));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.is((value as { z: number }).z, -0)).toBe(true);
    expect(yields).toBeGreaterThan(5);
  });

  it.each([
    ['a trailing comma', '{"a":[1,2,],"b":1}'],
    ['a leading zero', '[01, 2, 3, 4, 5]'],
    ['a control character in a string', '["a\u0001b", "cccc"]'],
    ['an unterminated string', '["abc, "def"'],
    ['garbage after the value', '{"a":1}  x'],
    ['a missing colon', '{"a" 1, "b": 2}'],
    ['a bad escape', '["\\x41", "bbbbbb"]'],
    ['an unclosed container', '[[[1, 2], [3, 4]'],
  ])('fails like JSON.parse on %s', async (_, text) => {
    await expect(parseJsonCooperatively(text, { sliceChars: 4 })).rejects.toThrow(errorOf(() => JSON.parse(text)));
  });

  it('with emptyAtDepth, the shape check finds the same first violation, and the same value when there is none', async () => {
    const nested = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('0', '1e999', '-1e999', '"s"', 'null', '{}', '[]'),
        fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
        fc
          .array(fc.tuple(fc.constantFrom('a', '1', '0', '__proto__'), tie('value')), { maxLength: 3 })
          .map((members) => `{${members.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
      ),
    })).value as fc.Arbitrary<string>;
    await fc.assert(
      fc.asyncProperty(nested, fc.integer({ min: 0, max: 4 }), async (text, maxDepth) => {
        const full = JSON.parse(text) as unknown;
        const cut = await parseJsonCooperatively(text, {
          sliceChars: 1,
          yieldNow: async () => undefined,
          emptyAtDepth: maxDepth,
        });
        const verdict = checkJsonShape(full, 'x', maxDepth);
        expect(checkJsonShape(cut, 'x', maxDepth)).toEqual(verdict);
        if (!verdict) expect(cut).toEqual(full);
      }),
      { numRuns: 500 },
    );
  });

  it('parses nesting far deeper than the call stack allows, without recursion', async () => {
    const depth = 200_000;
    const text = `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
    let value = (await parseJsonCooperatively(text, { sliceChars: 1024, yieldNow: async () => undefined })) as {
      a: unknown[];
    };
    for (let i = 1; i < depth; i++) value = value.a[0] as { a: unknown[] };
    expect(value.a).toEqual([1]);
  });

  it('gives the event loop turns on a large text: a timer fires while it parses', async () => {
    const text = JSON.stringify({ items: Array.from({ length: 200_000 }, (_, i) => ({ name: `n${i}`, value: i })) });
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
    }, 0);
    const value = (await parseJsonCooperatively(text, { sliceChars: 16 * 1024 })) as { items: Array<{ name: string }> };
    clearInterval(timer);
    expect(value.items).toHaveLength(200_000);
    expect(value.items[199_999]).toEqual({ name: 'n199999', value: 199_999 });
    // A single blocking JSON.parse would let the timer run at most once, after it.
    expect(ticks).toBeGreaterThan(10);
    // Seconds on a quiet machine; a loaded 2-core CI machine stretched it past jest's default 5 s.
  }, 60_000);
});
