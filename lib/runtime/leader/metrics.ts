import { Gauge, type Registry } from 'prom-client';

const gauges = new WeakMap<Registry, Gauge<'name'>>();

/** client-go's `leader_election_master_status{name}`: 1 on the leader, 0 on standbys. One per registry. */
export function masterStatusGauge(registry: Registry): Gauge<'name'> {
  let gauge = gauges.get(registry);
  if (!gauge) {
    gauge = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. ' +
        '\'name\' is the string used to identify the lease.',
      labelNames: ['name'], registers: [registry],
    });
    gauges.set(registry, gauge);
  }
  return gauge;
}
