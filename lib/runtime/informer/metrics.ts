import { Counter, Gauge, type Registry } from 'prom-client';

export type RestartReason = 'closed' | 'gone' | 'stalled' | 'error';

interface InformerView {
  resource: string;
  size(): number;
  lastActivity(): number;
  /** ms without proof that the cache is current; Infinity before the first list. */
  staleness(): number;
}

class InformerFamilies {
  readonly lists: Counter<'resource'>;
  readonly restarts: Counter<'resource' | 'reason'>;
  readonly views = new Set<InformerView>();

  constructor(registry: Registry) {
    const registers = [registry];
    const views = this.views;
    this.lists = new Counter({
      name: 'informer_lists_total',
      help: 'Full lists made by an informer (initial sync and relists).',
      labelNames: ['resource'],
      registers,
    });
    this.restarts = new Counter({
      name: 'informer_watch_restarts_total',
      help: 'Watches that ended, by reason: closed (server rotated the stream), gone (410, relist), stalled (no event or bookmark in time), error.',
      labelNames: ['resource', 'reason'],
      registers,
    });
    new Gauge({
      name: 'informer_cache_objects',
      help: "Objects in an informer's cache.",
      labelNames: ['resource'],
      registers,
      collect() {
        this.reset();
        for (const v of views) this.set({ resource: v.resource }, v.size());
      },
    });
    new Gauge({
      name: 'informer_last_activity_timestamp_seconds',
      help: 'When an informer last heard from the API server (list, watch connect, event or bookmark).',
      labelNames: ['resource'],
      registers,
      collect() {
        this.reset();
        for (const v of views) this.set({ resource: v.resource }, v.lastActivity() / 1000);
      },
    });
    new Gauge({
      name: 'informer_cache_staleness_seconds',
      help: "How long an informer's cache has gone without proof that it is current (0 while its watch is live); absent before the first list.",
      labelNames: ['resource'],
      registers,
      collect() {
        this.reset();
        for (const v of views) {
          const staleMs = v.staleness();
          if (Number.isFinite(staleMs)) this.set({ resource: v.resource }, staleMs / 1000);
        }
      },
    });
  }
}

const familiesByRegistry = new WeakMap<Registry, InformerFamilies>();

export class InformerMetrics {
  private readonly families: InformerFamilies;

  constructor(
    private readonly view: InformerView,
    registry: Registry,
  ) {
    let families = familiesByRegistry.get(registry);
    if (!families) familiesByRegistry.set(registry, (families = new InformerFamilies(registry)));
    this.families = families;
    families.views.add(view);
  }

  listed(): void {
    this.families.lists.inc({ resource: this.view.resource });
  }

  restarted(reason: RestartReason): void {
    this.families.restarts.inc({ resource: this.view.resource, reason });
  }

  close(): void {
    this.families.views.delete(this.view);
  }
}
