import type { IncomingMessage } from 'node:http';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { kubeClient, parseJson, readText, type KubeClient } from '../kube/index.js';
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
 * List and watch over the runtime's own API client (lib/runtime/kube: node:https with the
 * KubeConfig's credentials and TLS, errors as ApiException) with our own stream handling.
 * We do not use client-node's `Watch`: it hard-codes a 30s inactivity abort, swallows
 * undecodable lines (silently losing events), and gives no hook for "connected"; the informer
 * needs every one of those decisions in its own hands.
 */
export class HttpListWatcher<T extends KubernetesObject> implements ListWatcher<T> {
  private readonly client: KubeClient;

  constructor(private readonly options: HttpListWatcherOptions) {
    if (!options.path.startsWith('/'))
      throw new Error(`resource path must start with "/" (got ${JSON.stringify(options.path)})`);
    this.client = kubeClient(options.kubeConfig);
  }

  async list(options: { limit?: number; continueToken?: string; signal: AbortSignal }): Promise<ListPage<T>> {
    const query: Record<string, string> = {};
    if (options.limit !== undefined && options.limit > 0) query.limit = String(options.limit);
    if (options.continueToken) query.continue = options.continueToken;
    const response = await this.send(query, options.signal);
    const body = parseJson(await readText(response), 'list response') as {
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
    onConnected?.();
    await readLines(response, (line) => onEvent(parseEvent<T>(line)));
  }

  private send(query: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
    const { path, labelSelector, fieldSelector } = this.options;
    // An empty selector is left out, not sent empty.
    const selectors = { labelSelector: labelSelector || undefined, fieldSelector: fieldSelector || undefined };
    return this.client.open({ method: 'GET', path, query: { ...selectors, ...query }, signal });
  }
}

/** Calls `onLine` for each non-empty line of a UTF-8 stream, as it arrives. */
async function readLines(stream: IncomingMessage, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const value of stream) {
      buffer += decoder.decode(value as Buffer, { stream: true });
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
    // Leaving early (a bad line, a throwing callback) must close the connection, not leave it streaming.
    stream.destroy();
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
