// An in-memory Lease endpoint with the API server's concurrency rules: every write bumps
// resourceVersion, a replace carrying a stale resourceVersion gets 409 Conflict, and a create of
// an existing Lease gets 409 AlreadyExists. Objects round-trip through JSON as they would over
// the wire (so MicroTime comes back as a string, as it does from client-node).
import { ApiException, type V1Lease } from '@kubernetes/client-node';
import type { LeaseApi } from '../../../../lib/runtime/leader/index.js';

const statusError = (code: number, message: string) =>
  new ApiException(code, message, { kind: 'Status', code, message }, {});

export class FakeLeaseServer {
  private stored?: string;
  private rv = 1;
  /** Every successful write, in order (what a watcher of the Lease would see). */
  readonly writes: V1Lease[] = [];

  current(): V1Lease | undefined {
    return this.stored ? (JSON.parse(this.stored) as V1Lease) : undefined;
  }

  /** Writes the Lease directly, as another tool or a human might. */
  put(lease: V1Lease): void {
    this.stored = JSON.stringify({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } });
  }

  /** A client of this server; each candidate gets its own, so it can be cut off alone. */
  client(): FakeLeaseClient {
    return new FakeLeaseClient(this);
  }

  read(namespace: string, name: string): V1Lease {
    const lease = this.current();
    if (!lease || lease.metadata?.namespace !== namespace || lease.metadata?.name !== name) {
      throw statusError(404, `leases.coordination.k8s.io "${name}" not found`);
    }
    return lease;
  }

  create(body: V1Lease): V1Lease {
    if (this.stored) throw statusError(409, `leases.coordination.k8s.io "${body.metadata?.name}" already exists`);
    return this.write(body);
  }

  replace(body: V1Lease): V1Lease {
    const current = this.current();
    if (!current) throw statusError(404, 'not found');
    if (body.metadata?.resourceVersion !== current.metadata?.resourceVersion) {
      throw statusError(
        409,
        'Operation cannot be fulfilled on leases.coordination.k8s.io: the object has been modified',
      );
    }
    return this.write(body);
  }

  private write(body: V1Lease): V1Lease {
    const wire = JSON.parse(JSON.stringify(body)) as V1Lease; // V1MicroTime → string, as on the wire
    wire.metadata = { ...wire.metadata, resourceVersion: String(++this.rv) };
    this.stored = JSON.stringify(wire);
    this.writes.push(JSON.parse(this.stored) as V1Lease);
    return JSON.parse(this.stored) as V1Lease;
  }
}

export class FakeLeaseClient implements LeaseApi {
  /** Every call fails as if the network were down. */
  partitioned = false;
  /** Every call hangs forever (and ignores abort), as a black-holed connection. */
  hang = false;
  calls = 0;

  constructor(private readonly server: FakeLeaseServer) {}

  readNamespacedLease = (p: { name: string; namespace: string }) =>
    this.call(() => this.server.read(p.namespace, p.name));

  createNamespacedLease = (p: { namespace: string; body: V1Lease }) => this.call(() => this.server.create(p.body));

  replaceNamespacedLease = (p: { name: string; namespace: string; body: V1Lease }) =>
    this.call(() => this.server.replace(p.body));

  private async call(fn: () => V1Lease): Promise<V1Lease> {
    this.calls++;
    if (this.hang) return new Promise<V1Lease>(() => undefined);
    await Promise.resolve();
    if (this.partitioned) throw Object.assign(new TypeError('fetch failed'), { cause: new Error('ECONNREFUSED') });
    return fn();
  }
}
