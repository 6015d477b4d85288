import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { dockerConfigCredentials, dockerConfigPath, staticCredentials } from '../../../lib/image/docker-config.js';

const dir = mkdtempSync(join(tmpdir(), 'docker-config-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const b64 = (s: string) => Buffer.from(s).toString('base64');

function config(json: unknown): string {
  const path = join(mkdtempSync(join(dir, 'cfg-')), 'config.json');
  writeFileSync(path, JSON.stringify(json));
  return path;
}

describe('Docker config credentials', () => {
  it('reads DOCKER_CONFIG, else ~/.docker', () => {
    expect(dockerConfigPath({ DOCKER_CONFIG: '/ci/docker' })).toBe('/ci/docker/config.json');
    expect(dockerConfigPath({})).toMatch(/\.docker\/config\.json$/);
  });

  it('finds auths by host, with or without scheme, and Docker Hub under its v1 URL', () => {
    const source = dockerConfigCredentials(
      config({
        auths: {
          'https://registry.example.com': { auth: b64('bob:pa:ss') },
          'https://index.docker.io/v1/': { auth: b64('hub:token') },
          'ghcr.io': { identitytoken: 'refresh' },
        },
      }),
    );
    expect(source.find('registry.example.com')).toMatchObject({ username: 'bob', password: 'pa:ss' });
    expect(source.find('docker.io')).toMatchObject({ username: 'hub', password: 'token' });
    expect(source.find('ghcr.io')).toMatchObject({ identityToken: 'refresh' });
    expect(source.find('other.example.com')).toBeUndefined();
    expect(dockerConfigCredentials(join(dir, 'absent.json')).find('x.io')).toBeUndefined();
  });

  it('asks the credential helper the config names', () => {
    const bin = mkdtempSync(join(dir, 'bin-'));
    const helper = join(bin, 'docker-credential-fake');
    // Echoes the server it was asked about, as the password, to prove the protocol.
    writeFileSync(
      helper,
      '#!/bin/sh\nread server\n[ "$1" = get ] && printf \'{"Username":"robot","Secret":"%s"}\' "$server"\n',
    );
    chmodSync(helper, 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const source = dockerConfigCredentials(config({ credHelpers: { 'registry.example.com': 'fake' } }), env);
    expect(source.find('registry.example.com')).toMatchObject({
      username: 'robot',
      password: 'registry.example.com',
      source: expect.stringContaining('docker-credential-fake'),
    });
    expect(() => dockerConfigCredentials(config({ credsStore: 'absent' }), env).find('x.io')).toThrow(
      /names the credential helper docker-credential-absent for x\.io, which failed/,
    );
  });

  it('prefers explicit credentials and rejects a broken config with its path', () => {
    const path = config({ auths: { 'r.io': { auth: b64('from:config') } } });
    const source = staticCredentials(
      { 'r.io': { username: 'explicit', password: 'x' } },
      dockerConfigCredentials(path),
    );
    expect(source.find('r.io')).toMatchObject({ username: 'explicit', source: 'the registryAuth option' });
    expect(source.searched).toBe(`the registryAuth option and ${path}`);
    writeFileSync(path, '{not json');
    expect(() => dockerConfigCredentials(path).find('r.io')).toThrow(
      new RegExp(`cannot read Docker credentials from ${path}`),
    );
  });
});
