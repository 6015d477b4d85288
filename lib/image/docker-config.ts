/**
 * Registry credentials from Docker's own config (`$DOCKER_CONFIG/config.json`, else
 * `~/.docker/config.json`), so `docker login` / CI login actions work unchanged: inline
 * `auths`, identity tokens, and `credHelpers` / `credsStore` helper programs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DOCKER_HUB } from './reference.js';

export interface Credentials {
  readonly username?: string;
  readonly password?: string;
  /** OAuth2 refresh token (`identitytoken`), exchanged at the token endpoint. */
  readonly identityToken?: string;
}

/** Where credentials came from, for error messages. */
export interface FoundCredentials extends Credentials {
  readonly source: string;
}

/** Looks up credentials for a registry host; asked only when a registry challenges us. */
export interface CredentialSource {
  find(registry: string): FoundCredentials | undefined;
  /** Where `find` looks, for the error when it finds nothing. */
  readonly searched: string;
}

interface DockerConfigFile {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

/** Docker Hub's credentials are stored under its v1 index URL. */
const HUB_KEYS = ['https://index.docker.io/v1/', 'index.docker.io', 'docker.io', 'registry-1.docker.io'];

export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json');
}

export function dockerConfigCredentials(
  path = dockerConfigPath(),
  env: NodeJS.ProcessEnv = process.env,
): CredentialSource {
  return {
    searched: path,
    find: (registry) => {
      if (!existsSync(path)) return undefined;
      let config: DockerConfigFile;
      try {
        config = JSON.parse(readFileSync(path, 'utf8')) as DockerConfigFile;
      } catch (e) {
        throw new Error(
          `cannot read Docker credentials from ${path}: ${(e as Error).message}. Fix: repair the JSON or point DOCKER_CONFIG elsewhere`,
          { cause: e },
        );
      }
      const keys = registry === DOCKER_HUB ? HUB_KEYS : [registry];
      const helper = keys.map((k) => config.credHelpers?.[k]).find(Boolean) ?? config.credsStore;
      const entryKey = Object.keys(config.auths ?? {}).find((k) => keys.includes(hostOf(k)) || keys.includes(k));
      const entry = entryKey ? config.auths![entryKey] : undefined;
      if (entry && (entry.auth || entry.username || entry.identitytoken)) {
        const [user, ...rest] = entry.auth ? Buffer.from(entry.auth, 'base64').toString('utf8').split(':') : [];
        return {
          username: entry.username ?? user,
          password: entry.password ?? (rest.length ? rest.join(':') : undefined),
          identityToken: entry.identitytoken,
          source: `${path} (auths["${entryKey}"])`,
        };
      }
      return helper ? fromHelper(helper, registry === DOCKER_HUB ? HUB_KEYS[0] : registry, path, env) : undefined;
    },
  };
}

/** Static credentials per registry host, tried before the Docker config. */
export function staticCredentials(map: Record<string, Credentials>, fallback?: CredentialSource): CredentialSource {
  return {
    searched: fallback ? `the registryAuth option and ${fallback.searched}` : 'the registryAuth option',
    find: (registry) =>
      map[registry] ? { ...map[registry], source: 'the registryAuth option' } : fallback?.find(registry),
  };
}

function hostOf(key: string): string {
  try {
    return new URL(key.includes('://') ? key : `https://${key}`).host;
  } catch {
    return key;
  }
}

/** The docker-credential-helpers protocol: server URL on stdin, JSON on stdout. */
function fromHelper(
  helper: string,
  server: string,
  path: string,
  env: NodeJS.ProcessEnv,
): FoundCredentials | undefined {
  const program = `docker-credential-${helper}`;
  let out: string;
  try {
    out = execFileSync(program, ['get'], {
      input: server,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 30_000,
      env,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stdout?: string };
    // Helpers answer "credentials not found" with a non-zero exit: that is "no credentials".
    if (err.code !== 'ENOENT' && /not found/i.test(`${err.stdout ?? ''}${err.message}`)) return undefined;
    throw new Error(
      `${path} names the credential helper ${program} for ${server}, which failed: ${err.message}. Fix: install it, or run docker login again`,
      { cause: e },
    );
  }
  const parsed = JSON.parse(out) as { Username?: string; Secret?: string };
  const source = `${program} (from ${path})`;
  // By the helpers' convention, the user "<token>" marks an identity token.
  if (parsed.Username === '<token>') return { identityToken: parsed.Secret, source };
  return { username: parsed.Username, password: parsed.Secret, source };
}
