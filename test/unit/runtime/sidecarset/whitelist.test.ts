import { describe, expect, it } from '@jest/globals';
import {
  parsePatchMetadataWhitelist,
  patchMetadataWhitelistError,
  PatchMetadataWhitelistError,
} from '../../../../lib/runtime/sidecarset/metadata.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';

// The value of SidecarSet_PatchPodMetadata_WhiteList decodes as upstream's json.Unmarshal into
// SidecarSetPatchMetadataWhiteList (pkg/util/configuration/types.go) does.
describe('parsePatchMetadataWhitelist', () => {
  it('decodes rules with and without a selector', () => {
    expect(
      parsePatchMetadataWhitelist(
        '{"rules":[{"allowedAnnotationKeyExprs":["^mesh/"]},{"selector":{"matchLabels":{"app":"a"}},"allowedAnnotationKeyExprs":["x"]}]}',
      ),
    ).toEqual({
      rules: [
        { allowedAnnotationKeyExprs: ['^mesh/'] },
        { selector: { matchLabels: { app: 'a' } }, allowedAnnotationKeyExprs: ['x'] },
      ],
    });
  });

  it.each<[string, string, unknown]>([
    ['null is an empty whitelist', 'null', { rules: [] }],
    [
      'null rules and lists are empty',
      '{"rules":[null,{"selector":null,"allowedAnnotationKeyExprs":null}]}',
      { rules: [{ allowedAnnotationKeyExprs: [] }, { allowedAnnotationKeyExprs: [] }] },
    ],
    [
      'field names match case-insensitively, a later duplicate wins',
      '{"Rules":[{"AllowedAnnotationKeyExprs":["a"],"allowedannotationkeyexprs":["b"]}]}',
      { rules: [{ allowedAnnotationKeyExprs: ['b'] }] },
    ],
    ['unknown fields are ignored', '{"rules":[],"other":1}', { rules: [] }],
  ])('%s', (_name, text, expected) => {
    expect(parsePatchMetadataWhitelist(text)).toEqual(expected);
  });

  it.each<[string, string, RegExp]>([
    ['empty value', '', /is not JSON .*expected \{"rules"/],
    ['not JSON', '{rules:', /is not JSON/],
    ['a list at the top', '[]', /the value must be a JSON object/],
    ['rules not a list', '{"rules":{"a":1}}', /rules must be a JSON list/],
    ['a rule not an object', '{"rules":["x"]}', /rules\[0\] must be a JSON object/],
    [
      'an expression not a string',
      '{"rules":[{"allowedAnnotationKeyExprs":[1]}]}',
      /rules\[0\]\.allowedAnnotationKeyExprs\[0\] must be a string/,
    ],
    [
      'an invalid selector',
      '{"rules":[{"selector":{"matchExpressions":[{"key":"a","operator":"Bad"}]},"allowedAnnotationKeyExprs":["x"]}]}',
      /rules\[0\]\.selector\.matchExpressions\[0\]\.operator/,
    ],
    [
      'a selector label value not a string',
      '{"rules":[{"selector":{"matchLabels":{"a":1}}}]}',
      /rules\[0\]\.selector\.matchLabels\["a"\]/,
    ],
  ])('refuses %s, naming the ConfigMap key', (_name, text, message) => {
    let thrown: unknown;
    try {
      parsePatchMetadataWhitelist(text);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(PatchMetadataWhitelistError);
    expect((thrown as Error).message).toMatch(
      /^SidecarSet_PatchPodMetadata_WhiteList of ConfigMap kruise-configuration: /,
    );
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('validation with a whitelist', () => {
  const sidecarSet = (
    annotations: Record<string, string>,
    labels: Record<string, string> = { team: 'mesh' },
  ): SidecarSet => ({
    metadata: { name: 's', labels },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'c', image: 'i' }],
      patchPodMetadata: [{ annotations, patchPolicy: 'Overwrite' }],
    },
  });
  const whitelist =
    '{"rules":[{"selector":{"matchLabels":{"team":"mesh"}},"allowedAnnotationKeyExprs":["^mesh\\\\.io/"]}]}';

  it('accepts keys the matching rule allows and refuses others, naming the key and the fix', () => {
    expect(validateSidecarSet(sidecarSet({ 'mesh.io/inject': 'on' }), { patchMetadata: { whitelist } })).toEqual([]);
    expect(validateSidecarSet(sidecarSet({ 'other.io/x': 'on' }), { patchMetadata: { whitelist } })).toEqual([
      expect.stringMatching(
        /^spec\.patchPodMetadata: annotation "other\.io\/x" is not allowed .*SidecarSet_PatchPodMetadata_WhiteList of ConfigMap kruise-configuration/,
      ),
    ]);
  });

  it('ignores rules whose selector does not match the SidecarSet, even with an expression that does not compile', () => {
    const list = '{"rules":[{"selector":{"matchLabels":{"team":"other"}},"allowedAnnotationKeyExprs":["("]}]}';
    expect(patchMetadataWhitelistError(sidecarSet({ 'mesh.io/inject': 'on' }), { whitelist: list })).toMatch(
      /allows no annotation for this SidecarSet/,
    );
    expect(
      patchMetadataWhitelistError(sidecarSet({ 'mesh.io/inject': 'on' }), { whitelist: list, defaultsAllowed: true }),
    ).toBeUndefined();
  });

  it('refuses, without throwing, when the whitelist is malformed or an applying expression does not compile', () => {
    expect(
      patchMetadataWhitelistError(sidecarSet({ a: 'b' }), { whitelist: '{"rules":5}', defaultsAllowed: true }),
    ).toBe(
      'spec.patchPodMetadata: the patch metadata whitelist cannot be used: SidecarSet_PatchPodMetadata_WhiteList of ConfigMap kruise-configuration: rules must be a JSON list; fix the ConfigMap',
    );
    expect(
      patchMetadataWhitelistError(sidecarSet({ a: 'b' }), {
        whitelist: '{"rules":[{"allowedAnnotationKeyExprs":["("]}]}',
      }),
    ).toMatch(/rules\[0\]\.allowedAnnotationKeyExprs\[0\]: "\(" is not a regular expression/);
  });

  it('reads no whitelist for a SidecarSet that patches nothing', () => {
    const plain = { ...sidecarSet({}), spec: { ...sidecarSet({}).spec, patchPodMetadata: undefined } };
    const policy = {
      get whitelist(): string {
        throw new Error('read');
      },
    };
    expect(patchMetadataWhitelistError(plain, policy)).toBeUndefined();
  });
});
