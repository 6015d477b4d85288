import {
  ApiException,
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  type KubeConfig,
  type KubernetesObject,
  type ResponseContext,
} from '@kubernetes/client-node';
import type { ListPage, ListWatcher, WatchEvent, WatchEventType } from './types.js';

export interface HttpListWatcherOptions {
  kubeConfig: KubeConfig;
  /** Collection path, e.g. `/api/v1/namespaces/default/configmaps` or `/apis/apps.kruise.io/v1alpha1/sidecarsets`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
}

const EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);
/** A watch line longer than this is not an object the API server would send; fail instead of buffering forever. */
const MAX_LINE_CHARS = 64 * 1024 * 1024;

/**
 * List and watch over client-node's own request machinery (RequestContext, the KubeConfig's
 * authentication and TLS dispatcher, the undici fetch library) with our own stream handling.
 * We do not use client-node's `Watch`: it hard-codes a 30s inactivity abort, swallows
 * undecodable lines (silently losing events), and gives no hook for "connected"; the informer
 * needs every one of those decisions in its own hands.
 */
export class HttpListWatcher<T extends KubernetesObject> implements ListWatcher<T> {
  private readonly http = new IsomorphicFetchHttpLibrary();

  constructor(private readonly options: HttpListWatcherOptions) {
    if (!options.path.startsWith('/'))
      throw new Error(`resource path must start with "/" (got ${JSON.stringify(options.path)})`);
  }

  async list(options: { limit?: number; continueToken?: string; signal: AbortSignal }): Promise<ListPage<T>> {
    const query: Record<string, string> = {};
    if (options.limit !== undefined && options.limit > 0) query.limit = String(options.limit);
    if (options.continueToken) query.continue = options.continueToken;
    const response = await this.send(query, options.signal);
    const body = parseJson(await response.body.text(), 'list response') as {
      apiVersion?: string;
      kind?: string;
      metadata?: { resourceVersion?: string; continue?: string };
      items?: unknown;
    };
    if (!Array.isArray(body?.items)) throw new Error(`list of ${this.options.path} returned no items array`);
    // List items carry no apiVersion/kind; fill them in so listed and watched objects look alike.
    const kind = typeof body.kind === 'string' && body.kind.endsWith('List') ? body.kind.slice(0, -4) : undefined;
    const items = (body.items as T[]).map((item) => ({ apiVersion: body.apiVersion, kind, ...item }));
    return {
      items,
      resourceVersion: body.metadata?.resourceVersion ?? '',
      continueToken: body.metadata?.continue ?? '',
    };
  }

  async watch(
    options: { resourceVersion: string; timeoutSeconds: number; signal: AbortSignal },
    onEvent: (event: WatchEvent<T>) => void,
    onConnected?: () => void,
  ): Promise<void> {
    const query: Record<string, string> = {
      watch: 'true',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(Math.max(1, Math.floor(options.timeoutSeconds))),
    };
    if (options.resourceVersion) query.resourceVersion = options.resourceVersion;
    const response = await this.send(query, options.signal);
    const stream = response.body.stream();
    if (!stream) throw new Error(`watch of ${this.options.path} returned no body`);
    onConnected?.();
    await readLines(stream, (line) => onEvent(parseEvent<T>(line)));
  }

  private async send(query: Record<string, string>, signal: AbortSignal): Promise<ResponseContext> {
    const server = this.options.kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new Error('kubeconfig has no current cluster');
    const url = new URL(server.replace(/\/+$/, '') + this.options.path);
    if (this.options.labelSelector) url.searchParams.set('labelSelector', this.options.labelSelector);
    if (this.options.fieldSelector) url.searchParams.set('fieldSelector', this.options.fieldSelector);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);

    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    ctx.setHeaderParam('Accept', 'application/json');
    await this.options.kubeConfig.applySecurityAuthentication(ctx);
    ctx.setSignal(signal);
    const response = await this.http.send(ctx).toPromise();
    if (response.httpStatusCode >= 200 && response.httpStatusCode < 300) return response;
    throw await statusError(response, this.options.path);
  }
}

/** Turns a non-2xx response into client-node's ApiException, keeping the Status body. */
async function statusError(response: ResponseContext, path: string): Promise<ApiException<unknown>> {
  const text = await response.body.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not a Status object: keep the raw text
  }
  const message = (body as { message?: unknown })?.message;
  return new ApiException(
    response.httpStatusCode,
    `${path}: HTTP ${response.httpStatusCode}${typeof message === 'string' ? `: ${message}` : ''}`,
    body,
    response.headers,
  );
}

/** Calls `onLine` for each non-empty line of a UTF-8 stream, as it arrives. */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let start = 0;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n', start)) {
        const line = buffer.slice(start, nl).trim();
        start = nl + 1;
        if (line) onLine(line);
      }
      buffer = buffer.slice(start);
      if (buffer.length > MAX_LINE_CHARS) throw new Error(`watch line exceeds ${MAX_LINE_CHARS} characters`);
    }
    const rest = (buffer + decoder.decode()).trim();
    if (rest) onLine(rest);
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

function parseEvent<T extends KubernetesObject>(line: string): WatchEvent<T> {
  const event = parseJson(line, 'watch event') as { type?: unknown; object?: unknown };
  if (
    typeof event?.type !== 'string' ||
    !EVENT_TYPES.has(event.type) ||
    typeof event.object !== 'object' ||
    event.object === null
  ) {
    // Skipping it would silently lose an event; failing makes the informer re-watch from the
    // last good resourceVersion, so the event is delivered again or covered by a relist.
    throw new Error(`undecodable watch event: ${line.slice(0, 200)}`);
  }
  return { type: event.type as WatchEventType, object: event.object as T };
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not JSON (${(e as Error).message}): ${text.slice(0, 200)}`, { cause: e });
  }
}
