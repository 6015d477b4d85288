import type { V1Lease } from '@kubernetes/client-node';
import { V1MicroTime } from '../kube/client-node.js';
import { httpStatus } from '../kube/errors.js';
import type { CoordinationV1Client } from '../kube/index.js';

/** The fields of a Lease that leader election reads and writes (client-go's LeaderElectionRecord). */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** Timestamps are written for humans and other tools; no decision here ever reads them. */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
}

/** The three Lease calls the lock makes; CoordinationV1Client satisfies it, and so does a test fake. */
export type LeaseApi = Pick<
  CoordinationV1Client,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>;

export interface ObservedRecord {
  record: LeaderElectionRecord;
  /** Canonical serialisation: "did the record change" compares these. */
  raw: string;
}

/**
 * A `coordination.k8s.io/v1` Lease as a lock. It keeps the Lease it last read or wrote, so every
 * update carries that resourceVersion: when two candidates race, the API server accepts one and
 * answers 409 Conflict to the other.
 */
export class LeaseLock {
  private lease?: V1Lease;

  constructor(
    readonly api: LeaseApi,
    readonly namespace: string,
    readonly name: string,
  ) {
    if (!namespace || !name) throw new Error('leader election lock needs a namespace and a name');
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The current record, or undefined if the Lease does not exist. */
  async get(signal: AbortSignal): Promise<ObservedRecord | undefined> {
    try {
      this.lease = await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }, { signal });
    } catch (err) {
      if (httpStatus(err) === 404) {
        this.lease = undefined;
        return undefined;
      }
      throw err;
    }
    const record = toRecord(this.lease);
    return { record, raw: rawRecord(record) };
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    this.lease = await this.api.createNamespacedLease(
      {
        namespace: this.namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.name, namespace: this.namespace },
          spec: toSpec(record),
        },
      },
      { signal },
    );
  }

  /** Replaces the Lease last seen; throws (409) if anyone else wrote it since. */
  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    if (!this.lease) throw new Error(`lease ${this.describe()} must be read before it is updated`);
    const body: V1Lease = { ...this.lease, spec: toSpec(record) };
    this.lease = await this.api.replaceNamespacedLease(
      { name: this.name, namespace: this.namespace, body },
      { signal },
    );
  }

  /** What the lock believes the holder is, from the last Lease it read or wrote. */
  lastKnownHolder(): string | undefined {
    return this.lease?.spec?.holderIdentity;
  }
}

export function rawRecord(r: LeaderElectionRecord): string {
  return JSON.stringify([
    r.holderIdentity,
    r.leaseDurationSeconds,
    sameInstant(r.acquireTime),
    sameInstant(r.renewTime),
    r.leaseTransitions,
  ]);
}

// A watch hands timestamps over as the API server wrote them (microseconds), a read may hand
// them over as a Date (milliseconds): one instant must compare equal whichever way it arrived.
function sameInstant(text: string | undefined): string {
  if (!text) return '';
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
}

/** The record of a Lease object (e.g. from a watch), as {@link LeaseLock.get} reads it. */
export function recordOf(lease: V1Lease): LeaderElectionRecord {
  return toRecord(lease);
}

function toRecord(lease: V1Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
    leaseDurationSeconds: Number.isFinite(spec.leaseDurationSeconds) ? Number(spec.leaseDurationSeconds) : 0,
    acquireTime: timeText(spec.acquireTime),
    renewTime: timeText(spec.renewTime),
    leaseTransitions: Number.isFinite(spec.leaseTransitions) ? Number(spec.leaseTransitions) : 0,
  };
}

function toSpec(r: LeaderElectionRecord): V1Lease['spec'] {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    leaseTransitions: r.leaseTransitions,
    // MicroTime, so the API server gets the six fractional digits its MicroTime field expects.
    acquireTime: microTime(r.acquireTime),
    renewTime: microTime(r.renewTime),
  };
}

// An unparsable timestamp (written by some other tool) is dropped rather than sent as an
// Invalid Date, whose serialisation would throw and make every renewal fail.
function microTime(text: string | undefined): V1MicroTime | undefined {
  if (!text) return undefined;
  const t = new V1MicroTime(text);
  return Number.isNaN(t.getTime()) ? undefined : t;
}

// client-node hands MicroTime back as a string (it has no deserializer for it) or as a Date.
function timeText(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  return typeof value === 'string' && value ? value : undefined;
}
