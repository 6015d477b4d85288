/**
 * Webhook bindings by kind and operation, in Pepr's shape (`manager.when(Kinds.Pod).isCreated().mutate(...)`): each
 * binding is one entry of the program's registrations, from which the constructs render the webhook configuration
 * (rules, namespace and object selectors, failure policy, timeout), and one handler the manager serves. The filters
 * the configuration expresses are checked again in the handler, so an edited or stale configuration never widens
 * what the program touches.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ADMISSION_OPERATIONS,
  dnsLabelProblems,
  isValidLabelKey,
  isValidLabelValue,
  resourceRef,
  type AdmissionOperation,
  type WebhookRegistration,
} from '../../contract.js';
import type { Kind } from '../client/kinds.js';
import type { AdmissionRequest } from '../webhook/admission.js';
import {
  allow,
  mutating,
  patch,
  validating,
  type AdmissionContext,
  type Allowed,
  type Awaitable,
  type Denied,
  type Webhook,
} from '../webhook/handler.js';
import { cloneJson, createPatch } from '../webhook/jsonpatch.js';

/**
 * A mutation: change `object` (a copy of the request's) in place, or return the object to admit instead; the runtime
 * sends the JSON patch between the two. Return `deny(message)` to refuse the request.
 */
export type MutateAction<T extends KubernetesObject> = (
  object: T,
  request: AdmissionRequest,
  context: AdmissionContext,
) => Awaitable<void | T | Denied | Allowed>;

/** A validation: return `deny(message)` to refuse, nothing (or `allow(warnings)`) to admit. */
export type ValidateAction<T extends KubernetesObject> = (
  object: T,
  request: AdmissionRequest,
  context: AdmissionContext,
) => Awaitable<void | Denied | Allowed>;

/** What a binding hands the manager: the entry for the registrations and the handler to serve at its path. */
export interface BoundWebhook {
  readonly registration: Omit<WebhookRegistration, 'name' | 'path'>;
  readonly webhook: (exempt: readonly string[]) => Webhook;
}

const labelsOk = (labels: Record<string, string>, where: string) => {
  for (const [k, v] of Object.entries(labels))
    if (!isValidLabelKey(k) || typeof v !== 'string' || !isValidLabelValue(v))
      throw new TypeError(`${where}: ${JSON.stringify(k)}=${JSON.stringify(v)} is not a valid label`);
};

/**
 * An admission binding on one kind: pick the operations (`isCreated()`, ...), narrow with filters, end with
 * `mutate(action)` or `validate(action)`. Every method but those two returns the binding, so it reads as a sentence.
 * By default the binding fails closed (`failurePolicy('Fail')`) with a 10 s timeout, and never intercepts kube-system
 * or the program's own namespace, so the program can always start its own pods.
 */
export class AdmissionBinding<T extends KubernetesObject> {
  private readonly operations = new Set<AdmissionOperation>();
  private readonly namespaces = new Set<string>();
  private readonly exempt = new Set<string>();
  private namespaceLabels: Record<string, string> = {};
  private labels: Record<string, string> = {};
  private readonly names = new Set<string>();
  private policy: 'Fail' | 'Ignore' = 'Fail';
  private timeout = 10;
  private done = false;

  /** @internal Manager.when makes bindings. */
  constructor(
    private readonly kind: Kind<T>,
    private readonly bind: (bound: BoundWebhook, type: 'mutating' | 'validating') => void,
  ) {}

  /** On CREATE. */
  isCreated(): this {
    return this.on('CREATE');
  }
  /** On UPDATE. */
  isUpdated(): this {
    return this.on('UPDATE');
  }
  /** On DELETE: the action gets the object being deleted (the request's oldObject). */
  isDeleted(): this {
    return this.on('DELETE');
  }
  /** On CREATE and UPDATE. */
  isCreatedOrUpdated(): this {
    return this.on('CREATE').on('UPDATE');
  }

  /** Only in these namespaces (by name). */
  inNamespaces(...names: string[]): this {
    if (names.includes('kube-system'))
      throw new TypeError(
        'inNamespaces: kube-system is never intercepted (the cluster must always start its own pods). Fix: remove it',
      );
    return this.addNamespaces(this.namespaces, names, 'inNamespaces');
  }
  /** Never in these namespaces (kube-system and the program's own never are). */
  exceptNamespaces(...names: string[]): this {
    return this.addNamespaces(this.exempt, names, 'exceptNamespaces');
  }
  /** Only in namespaces carrying all these labels (the configuration's namespaceSelector). */
  inNamespacesLabelled(labels: Record<string, string>): this {
    labelsOk(labels, 'inNamespacesLabelled');
    this.namespaceLabels = { ...this.namespaceLabels, ...labels };
    return this;
  }
  /** Only objects carrying all these labels (the configuration's objectSelector). */
  withLabels(labels: Record<string, string>): this {
    labelsOk(labels, 'withLabels');
    this.labels = { ...this.labels, ...labels };
    return this;
  }
  /** Only objects with one of these names (checked by the handler: a configuration cannot select by name). */
  withName(...names: string[]): this {
    for (const n of names) {
      if (typeof n !== 'string' || n === '') throw new TypeError(`withName: ${JSON.stringify(n)} is not a name`);
      this.names.add(n);
    }
    return this;
  }
  /** When no replica answers in time: `Fail` (default) makes the API server refuse the request, `Ignore` admit it. */
  failurePolicy(policy: 'Fail' | 'Ignore'): this {
    if (policy !== 'Fail' && policy !== 'Ignore')
      throw new TypeError(`failurePolicy: ${JSON.stringify(policy)} is not 'Fail' or 'Ignore'`);
    this.policy = policy;
    return this;
  }
  /** How long the API server waits for an answer, 1 to 30 s (default 10). */
  timeoutSeconds(seconds: number): this {
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 30)
      throw new RangeError(`timeoutSeconds: ${seconds} is not a whole number of seconds from 1 to 30`);
    this.timeout = seconds;
    return this;
  }

  /** Serves `action` as a mutating webhook for the operations and filters chosen. */
  mutate(action: MutateAction<T>): void {
    this.finish('mutating', (exempt) =>
      mutating(async (request, context) => {
        const object = this.subject(request, exempt);
        if (!object) return allow();
        const copy = cloneJson(object);
        const result = await action(copy, request, context);
        if (isDecision(result)) return result;
        const patches = createPatch(object, result ?? copy);
        return patches.length > 0 ? patch(patches) : allow();
      }),
    );
  }

  /** Serves `action` as a validating webhook for the operations and filters chosen. */
  validate(action: ValidateAction<T>): void {
    this.finish('validating', (exempt) =>
      validating(async (request, context) => {
        const object = this.subject(request, exempt);
        if (!object) return allow();
        const result = await action(cloneJson(object), request, context);
        return isDecision(result) ? result : allow();
      }),
    );
  }

  private on(operation: AdmissionOperation): this {
    this.operations.add(operation);
    return this;
  }

  private addNamespaces(into: Set<string>, names: string[], method: string): this {
    for (const n of names) {
      if (typeof n !== 'string' || dnsLabelProblems(method, n).length > 0)
        throw new TypeError(`${method}: ${JSON.stringify(n)} is not a namespace name (a lower-case DNS label)`);
      if (!this.kind.namespaced)
        throw new TypeError(`${method}: ${this.kind.kind} is cluster-scoped, so it has no namespace to filter on`);
      into.add(n);
    }
    return this;
  }

  private finish(type: 'mutating' | 'validating', webhook: (exempt: readonly string[]) => Webhook): void {
    if (this.done)
      throw new Error(
        `when(${this.kind.kind}): this binding already has its ${type === 'mutating' ? 'validate' : 'mutate'} action; start another with when()`,
      );
    if (this.operations.size === 0)
      throw new Error(
        `when(${this.kind.kind}).${type === 'mutating' ? 'mutate' : 'validate'}: no operation chosen. Fix: add isCreated(), isUpdated(), isDeleted() or isCreatedOrUpdated() before it`,
      );
    if (type === 'mutating' && this.operations.has('DELETE'))
      throw new Error(`when(${this.kind.kind}).isDeleted().mutate: a deletion cannot be mutated. Fix: use validate()`);
    this.done = true;
    this.bind(
      {
        registration: {
          type,
          resource: resourceRef(this.kind),
          operations: ADMISSION_OPERATIONS.filter((o) => this.operations.has(o)),
          namespaces: [...this.namespaces].sort(),
          exemptNamespaces: [...this.exempt].sort(),
          namespaceLabels: { ...this.namespaceLabels },
          labels: { ...this.labels },
          names: [...this.names].sort(),
          failurePolicy: this.policy,
          timeoutSeconds: this.timeout,
        },
        webhook,
      },
      type,
    );
  }

  /**
   * The object the action sees, or undefined when the filters leave the request out: another operation (a
   * configuration that names more), an exempt or unlisted namespace, missing labels, another name.
   */
  private subject(request: AdmissionRequest, exempt: readonly string[]): T | undefined {
    if (!this.operations.has(request.operation as AdmissionOperation)) return undefined;
    const ns = request.namespace;
    if (ns) {
      if (exempt.includes(ns) || this.exempt.has(ns)) return undefined;
      if (this.namespaces.size > 0 && !this.namespaces.has(ns)) return undefined;
    }
    const object = (request.operation === 'DELETE' ? request.oldObject : request.object) as T | undefined;
    if (!object) return undefined;
    const labels = (object.metadata?.labels ?? {}) as Record<string, string>;
    for (const [k, v] of Object.entries(this.labels)) if (labels[k] !== v) return undefined;
    const name = object.metadata?.name ?? request.name;
    if (this.names.size > 0 && (!name || !this.names.has(name))) return undefined;
    return object;
  }
}

function isDecision(v: unknown): v is Allowed | Denied {
  return typeof v === 'object' && v !== null && typeof (v as { allowed?: unknown }).allowed === 'boolean';
}
