import { Gauge, type Registry } from 'prom-client';

/** Per registry: the lease name -> "do we lead right now?" of each elector reporting into it. */
const sources = new WeakMap<Registry, Map<string, () => boolean>>();

/**
 * client-go's `leader_election_master_status{name}`: 1 on the leader, 0 on standbys. One gauge
 * per registry; its value is read from `leading` at every scrape, so it flips the moment
 * leadership is lost (a renew deadline that passed while the process was paused included), not
 * when the renew loop next runs.
 */
export function registerMasterStatus(registry: Registry, name: string, leading: () => boolean): void {
  let byName = sources.get(registry);
  if (!byName) {
    const map = (byName = new Map());
    sources.set(registry, map);
    new Gauge({
      name: 'leader_election_master_status',
      help:
        'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. ' +
        "'name' is the string used to identify the lease.",
      labelNames: ['name'],
      registers: [registry],
      collect() {
        for (const [lease, isLeading] of map) this.set({ name: lease }, isLeading() ? 1 : 0);
      },
    });
  }
  byName.set(name, leading);
}
