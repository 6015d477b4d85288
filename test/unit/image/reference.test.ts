import { describe, expect, it } from '@jest/globals';
import { formatReference, parseReference, registryBaseUrl } from '../../../lib/image/reference.js';

describe('image references', () => {
  it('parses registry, repository, tag and digest the way Docker does', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(parseReference('node:24-slim')).toEqual({
      registry: 'docker.io',
      repository: 'library/node',
      tag: '24-slim',
      digest: undefined,
    });
    expect(parseReference(`localhost:5000/team/app:1.0@${digest}`)).toEqual({
      registry: 'localhost:5000',
      repository: 'team/app',
      tag: '1.0',
      digest,
    });
    expect(parseReference('ghcr.io/org/app')).toEqual({
      registry: 'ghcr.io',
      repository: 'org/app',
      tag: undefined,
      digest: undefined,
    });
    // "team" has no "." or ":", so it is a Docker Hub namespace, not a host.
    expect(parseReference('team/app:1').registry).toBe('docker.io');
    expect(formatReference(parseReference('node:24'))).toBe('docker.io/library/node:24');
  });

  it('says which part of a reference is wrong', () => {
    expect(() => parseReference('r.example.com/App:1')).toThrow(/path component "App" must be lower-case/);
    expect(() => parseReference('node:bad tag')).toThrow(/tag "bad tag" is not a valid tag/);
    expect(() => parseReference('node@sha256:1234')).toThrow(/digest "sha256:1234" is not sha256:<64 hex>/);
  });

  it('speaks plain HTTP to loopback registries only, unless told', () => {
    expect(registryBaseUrl('127.0.0.1:5000')).toBe('http://127.0.0.1:5000');
    expect(registryBaseUrl('localhost:5000')).toBe('http://localhost:5000');
    expect(registryBaseUrl('docker.io')).toBe('https://registry-1.docker.io');
    expect(registryBaseUrl('registry.lan:5000')).toBe('https://registry.lan:5000');
    expect(registryBaseUrl('registry.lan:5000', ['registry.lan:5000'])).toBe('http://registry.lan:5000');
  });
});
