/**
 * HTTP to one registry's distribution API, with its auth dance: a 401 with
 * `WWW-Authenticate: Bearer realm=...` sends us to the token endpoint (with Basic
 * credentials when we have them), `Basic` means credentials on every request. Every error
 * names the registry, what we were doing and which image, and suggests the fix.
 */
import type { CredentialSource, FoundCredentials } from './docker-config.js';
import { registryBaseUrl } from './reference.js';

export class RegistryError extends Error {
  constructor(
    message: string,
    public readonly status?: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

export interface RegistryHttpOptions {
  readonly credentials?: CredentialSource;
  /** Registries (host:port) to reach over plain HTTP besides loopback ones. */
  readonly plainHttp?: readonly string[];
  /** Per request. @default 300000 */
  readonly timeoutMs?: number;
  /** For tests that simulate failures. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

export interface RegistryRequest {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the registry (`/v2/...`) or an absolute upload Location. */
  readonly url: string;
  /** Token scopes, e.g. `repository:library/node:pull`. */
  readonly scopes: readonly string[];
  /** What we are doing, for errors: `pulling the manifest of docker.io/library/node:24`. */
  readonly action: string;
  readonly headers?: Record<string, string>;
  /** Bytes only, never a stream: a request may be replayed once after an auth challenge. */
  readonly body?: Uint8Array;
  /** Statuses the caller handles itself; others become a RegistryError. */
  readonly accept: readonly number[];
}

export class RegistryHttp {
  public readonly baseUrl: string;
  private readonly tokens = new Map<string, string>();
  /** A registry that wants Basic wants it for every scope: no need to be challenged again. */
  private basicAuth?: string;
  private creds?: FoundCredentials | null;

  constructor(
    public readonly registry: string,
    private readonly options: RegistryHttpOptions = {},
  ) {
    this.baseUrl = registryBaseUrl(registry, options.plainHttp);
  }

  async request(req: RegistryRequest): Promise<Response> {
    const key = [...req.scopes].sort().join(' ');
    let res = await this.send(req, this.tokens.get(key) ?? this.basicAuth);
    if (res.status === 401) {
      const challenge = res.headers.get('www-authenticate') ?? '';
      await res.body?.cancel();
      this.tokens.set(key, await this.authorize(challenge, req));
      res = await this.send(req, this.tokens.get(key));
      if (res.status === 401) throw this.denied(401, req, await errorDetail(res));
    }
    if (res.status === 403) throw this.denied(403, req, await errorDetail(res));
    if (!req.accept.includes(res.status)) {
      throw new RegistryError(
        `registry ${this.registry} answered ${res.status} ${res.statusText} while ${req.action}: ${await errorDetail(res)}`,
        res.status,
      );
    }
    return res;
  }

  private async send(req: RegistryRequest, authorization: string | undefined): Promise<Response> {
    const url = new URL(req.url, this.baseUrl);
    const headers = {
      'user-agent': 'kruise-ha-image-publish',
      ...req.headers,
      ...(authorization ? { authorization } : {}),
    };
    try {
      return await (this.options.fetch ?? fetch)(url, {
        method: req.method,
        headers,
        body: req.body,
        redirect: 'follow',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 300_000),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      throw new RegistryError(
        `registry ${this.registry} is unreachable (${why}) at ${url.origin} while ${req.action}. ` +
          'Fix: check the registry address, that it is running, and the network (proxy, TLS: loopback registries use plain HTTP)',
      );
    }
  }

  /** Answers a challenge: a token from the realm for Bearer, our credentials for Basic. */
  private async authorize(challenge: string, req: RegistryRequest): Promise<string> {
    const scheme = challenge.split(' ')[0].toLowerCase();
    const creds = this.credentials();
    if (scheme === 'basic') {
      if (!creds?.username || creds.password === undefined)
        throw this.denied(401, req, 'the registry needs a user name and password');
      return (this.basicAuth = basic(creds.username, creds.password));
    }
    if (scheme !== 'bearer')
      throw new RegistryError(
        `registry ${this.registry} asked for unsupported auth "${challenge}" while ${req.action}`,
        401,
      );
    const params = parseChallenge(challenge);
    if (!params.realm)
      throw new RegistryError(
        `registry ${this.registry} sent a Bearer challenge without realm while ${req.action}`,
        401,
      );
    const scopes = [...new Set([...req.scopes, ...(params.scope ? params.scope.split(' ') : [])])];
    const url = new URL(params.realm);
    const form = new URLSearchParams();
    if (params.service) {
      url.searchParams.set('service', params.service);
      form.set('service', params.service);
    }
    for (const s of scopes) {
      url.searchParams.append('scope', s);
      form.append('scope', s);
    }
    let res: Response;
    try {
      if (creds?.identityToken) {
        // OAuth2 refresh-token grant, as docker does for identity tokens.
        form.set('grant_type', 'refresh_token');
        form.set('refresh_token', creds.identityToken);
        form.set('client_id', 'kruise-ha');
        res = await (this.options.fetch ?? fetch)(params.realm, {
          method: 'POST',
          body: form,
          signal: AbortSignal.timeout(60_000),
        });
      } else {
        const headers: Record<string, string> = creds?.username
          ? { authorization: basic(creds.username, creds.password ?? '') }
          : {};
        res = await (this.options.fetch ?? fetch)(url, { headers, signal: AbortSignal.timeout(60_000) });
      }
    } catch (e) {
      throw new RegistryError(
        `token service ${url.origin} of registry ${this.registry} is unreachable (${(e as Error).message}) while ${req.action}`,
      );
    }
    if (res.status === 401 || res.status === 403)
      throw this.denied(res.status, req, `token service ${url.origin}: ${await errorDetail(res)}`);
    if (!res.ok)
      throw new RegistryError(
        `token service ${url.origin} of registry ${this.registry} answered ${res.status} while ${req.action}: ${await errorDetail(res)}`,
        res.status,
      );
    const body = (await res.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token)
      throw new RegistryError(
        `token service ${url.origin} of registry ${this.registry} returned no token while ${req.action}`,
      );
    return `Bearer ${token}`;
  }

  private credentials(): FoundCredentials | undefined {
    if (this.creds === undefined) this.creds = this.options.credentials?.find(this.registry) ?? null;
    return this.creds ?? undefined;
  }

  private denied(status: number, req: RegistryRequest, detail: string): RegistryError {
    const creds = this.credentials();
    const searched = this.options.credentials?.searched ?? 'nowhere (no credential source given)';
    const problem =
      status === 403
        ? `denied access (403) to ${creds ? `the account from ${creds.source}` : 'anonymous requests'}`
        : creds
          ? `rejected the credentials from ${creds.source} (401)`
          : `requires credentials (401) and none were found for it in ${searched}`;
    const fix =
      status === 403
        ? `grant the account ${req.method === 'GET' || req.method === 'HEAD' ? 'pull' : 'push'} access to the repository`
        : `run docker login ${this.registry} (or set DOCKER_CONFIG to a folder whose config.json has it)`;
    return new RegistryError(
      `registry ${this.registry} ${problem} while ${req.action}: ${detail}. Fix: ${fix}`,
      status,
    );
  }
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** `Bearer realm="https://auth",service="reg",scope="repository:a:pull"` → its parameters. */
export function parseChallenge(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const m of header.slice(header.indexOf(' ') + 1).matchAll(/(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  }
  return params;
}

/** The registry's `{"errors":[{"code","message"}]}`, or the start of the body. */
async function errorDetail(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const errors = (JSON.parse(text) as { errors?: { code?: string; message?: string }[] }).errors ?? [];
    if (errors.length) return errors.map((e) => `${e.code ?? ''} ${e.message ?? ''}`.trim()).join('; ');
  } catch {
    /* not JSON */
  }
  return text.trim().slice(0, 200) || res.statusText || `status ${res.status}`;
}
