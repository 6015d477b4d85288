/**
 * What a program on the runtime serves and needs, as one manifest both rooms read: the runtime writes it from the
 * program's registrations (`node main.mjs --registrations`), and the constructs render the webhook configurations
 * and the RBAC from it, so nothing is declared twice (issue [own-operator]). Plain JSON: the constructs read it at
 * synth, in another Node and module system than the runtime's.
 */
import { isValidLabelKey, isValidLabelValue, type SelectorLike } from './selector.js';
import type { Problem } from './problems.js';
import { Labels } from './names.js';
import { DNS_LABEL } from './values.js';

/** The manifest's format version; a reader refuses any other. */
export const REGISTRATIONS_VERSION = 1;

/** The flag that makes a program print its registrations as JSON and exit 0, without reaching a cluster. */
export const REGISTRATIONS_FLAG = 'registrations';

/** A resource by its API coordinates (what RBAC and webhook rules name). */
export interface ResourceRef {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** The API coordinates of a kind (a runtime Kind carries more; only these reach the manifest). */
export function resourceRef(k: ResourceRef): ResourceRef {
  return { group: k.group, version: k.version, kind: k.kind, plural: k.plural, namespaced: k.namespaced };
}

/** What RBAC grants by: a resource's group and plural (one key per resource, whatever its version). */
export function resourceKey(k: Pick<ResourceRef, 'group' | 'plural'>): string {
  return `${k.group}/${k.plural}`;
}

/** Admission operations a webhook binding can name. */
export const ADMISSION_OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type AdmissionOperation = (typeof ADMISSION_OPERATIONS)[number];

/** One admission webhook the program serves: one entry of its mutating or validating webhook configuration. */
export interface WebhookRegistration {
  readonly type: 'mutating' | 'validating';
  /** The configuration entry's name, a qualified name: `<m|v><kind>[-n].<program>.kruise-ha.io`. */
  readonly name: string;
  /** The HTTPS path the program serves it at. */
  readonly path: string;
  readonly resource: ResourceRef;
  readonly operations: readonly AdmissionOperation[];
  /** Namespaces by name (empty: every namespace but the exempt ones). */
  readonly namespaces: readonly string[];
  /** Namespaces never intercepted, besides kube-system and the program's own (which the constructs add). */
  readonly exemptNamespaces: readonly string[];
  /** Labels the object's namespace must carry. */
  readonly namespaceLabels: { readonly [key: string]: string };
  /** Labels the object must carry. */
  readonly labels: { readonly [key: string]: string };
  /** Object names (empty: any); checked by the handler, as a webhook configuration cannot select by name. */
  readonly names: readonly string[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
}

/** One leader-only controller and the kinds it reads and writes (its RBAC). */
export interface ControllerRegistration {
  readonly name: string;
  /** Kinds it watches (cached, all namespaces): get, list, watch. */
  readonly watches: readonly ResourceRef[];
  /** Other kinds it reads through its client: get, list. */
  readonly reads: readonly ResourceRef[];
  /** Kinds it writes through its client, status included: create, update, patch, delete. */
  readonly writes: readonly ResourceRef[];
}

/** The manifest. */
export interface Registrations {
  readonly version: typeof REGISTRATIONS_VERSION;
  /** The program's name (run's `name`): the prefix of its object names. */
  readonly name: string;
  readonly webhooks: readonly WebhookRegistration[];
  readonly controllers: readonly ControllerRegistration[];
  /** Kinds the webhooks read from caches (Manager.informer with a Kind): get, list, watch. */
  readonly watches: readonly ResourceRef[];
  /** The program's own flags (run's `flags`), which it parses beside the runtime's. */
  readonly flags: readonly string[];
  /** The controllers it declares (run's `controllers`), each with its `--<name>-workers` flag. */
  readonly declaredControllers: readonly string[];
}

/** The webhook configuration entry's namespaceSelector: names, labels, and never the exempt namespaces. */
export function webhookNamespaceSelector(w: WebhookRegistration, alwaysExempt: readonly string[]): SelectorLike {
  const exempt = [...new Set([...alwaysExempt, ...w.exemptNamespaces])].sort();
  const name = Labels.namespaceName;
  const expressions = [
    ...(w.namespaces.length > 0 ? [{ key: name, operator: 'In', values: [...w.namespaces].sort() }] : []),
    { key: name, operator: 'NotIn', values: exempt },
  ];
  return {
    ...(Object.keys(w.namespaceLabels).length > 0 ? { matchLabels: { ...w.namespaceLabels } } : {}),
    matchExpressions: expressions,
  };
}

const QUALIFIED = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const PATH = /^\/[a-z0-9][-a-z0-9/]*$/;

/**
 * What is wrong with a manifest read from a program (or a file): a wrong version, a malformed entry, two entries
 * on one name or path. `field` is a path into the manifest.
 */
export function registrationsProblems(value: unknown): Problem[] {
  const problems: Problem[] = [];
  const add = (field: string, v: unknown, message: string, fix: string) =>
    problems.push({ field, value: v, message, fix });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    add('registrations', value, 'is not a JSON object', 'print it with `node main.mjs --registrations`');
    return problems;
  }
  const r = value as Partial<Registrations>;
  if (r.version !== REGISTRATIONS_VERSION)
    add(
      'version',
      r.version,
      `is not ${REGISTRATIONS_VERSION}`,
      'use the kruise-ha-runtime that matches these constructs',
    );
  if (typeof r.name !== 'string' || r.name === '') add('name', r.name, 'is not a program name', 'set run({ name })');
  const names = new Set<string>();
  const paths = new Map<string, string>();
  (Array.isArray(r.webhooks) ? r.webhooks : []).forEach((w, i) => {
    const at = `webhooks[${i}]`;
    if (w.type !== 'mutating' && w.type !== 'validating')
      add(`${at}.type`, w.type, 'is not mutating or validating', 'register with mutate() or validate()');
    if (typeof w.name !== 'string' || !QUALIFIED.test(w.name) || w.name.length > 253)
      add(`${at}.name`, w.name, 'is not a qualified name', 'a DNS subdomain of at least three parts');
    else if (names.has(w.name)) add(`${at}.name`, w.name, 'is used twice', 'give each binding its own name');
    names.add(w.name);
    if (typeof w.path !== 'string' || !PATH.test(w.path))
      add(`${at}.path`, w.path, 'is not a lower-case absolute path', 'e.g. /mutate-v1-pod');
    else if (paths.has(w.path) && paths.get(w.path) !== w.type)
      add(`${at}.path`, w.path, 'is served as both a mutating and a validating webhook', 'one path per type');
    paths.set(w.path, w.type);
    if (!Array.isArray(w.operations) || w.operations.length === 0)
      add(`${at}.operations`, w.operations, 'names no operation', 'isCreated(), isUpdated(), isDeleted()');
    else
      for (const op of w.operations)
        if (!(ADMISSION_OPERATIONS as readonly string[]).includes(op))
          add(`${at}.operations`, op, 'is not an admission operation', ADMISSION_OPERATIONS.join(', '));
    for (const [key, labels] of [
      ['labels', w.labels],
      ['namespaceLabels', w.namespaceLabels],
    ] as const)
      for (const [k, v] of Object.entries(labels ?? {}))
        if (!isValidLabelKey(k) || typeof v !== 'string' || !isValidLabelValue(v))
          add(`${at}.${key}.${k}`, v, 'is not a valid label', 'label keys and values as Kubernetes allows them');
    if (w.failurePolicy !== 'Fail' && w.failurePolicy !== 'Ignore')
      add(`${at}.failurePolicy`, w.failurePolicy, 'is not Fail or Ignore', 'failurePolicy("Fail") or ("Ignore")');
    if (!Number.isInteger(w.timeoutSeconds) || w.timeoutSeconds < 1 || w.timeoutSeconds > 30)
      add(`${at}.timeoutSeconds`, w.timeoutSeconds, 'is not a whole number of seconds in 1..30', 'timeoutSeconds(10)');
    for (const [key, list] of [
      ['namespaces', w.namespaces],
      ['exemptNamespaces', w.exemptNamespaces],
    ] as const)
      if (!Array.isArray(list) || list.some((n) => typeof n !== 'string' || !DNS_LABEL.test(n)))
        add(`${at}.${key}`, list, 'is not a list of namespace names', 'lower-case DNS labels, e.g. team-a');
  });
  for (const key of ['flags', 'declaredControllers'] as const)
    if (!Array.isArray(r[key]) || r[key].some((f) => typeof f !== 'string'))
      add(
        key,
        r[key],
        'is not a list of names',
        'print the manifest with the kruise-ha-runtime matching these constructs',
      );
  const controllers = new Set<string>();
  (Array.isArray(r.controllers) ? r.controllers : []).forEach((c, i) => {
    if (controllers.has(c.name)) add(`controllers[${i}].name`, c.name, 'is used twice', 'one name per controller');
    controllers.add(c.name);
  });
  return problems;
}

/** The kinds a manifest reads (watches and reads) and writes, once each, for RBAC. */
export function registrationsAccess(r: Registrations): { read: ResourceRef[]; write: ResourceRef[] } {
  const unique = (refs: ResourceRef[]) => [...new Map(refs.map((k) => [resourceKey(k), k])).values()];
  return {
    read: unique([...r.watches, ...r.controllers.flatMap((c) => [...c.watches, ...c.reads])]),
    write: unique(r.controllers.flatMap((c) => [...c.writes])),
  };
}
