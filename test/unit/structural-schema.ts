/**
 * Validates an object against a CRD's structural openAPIV3Schema the way the API server reads
 * it: types (with `x-kubernetes-int-or-string`), required, enum, minimum, string lengths, and
 * unknown fields, which the API server would silently prune unless the schema says
 * `x-kubernetes-preserve-unknown-fields` (so here they are an error: nothing a construct renders
 * may be dropped). Of the CEL rules (`x-kubernetes-validations`), only the `!has(self.<field>)`
 * form is evaluated; the API server judges every rule in the integration tests.
 */

// CRD schemas and manifests are untyped JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return false;
  }
}

/** Every problem with `value` under `schema`, each prefixed with its JSON path. */
export function validateStructural(schema: Json, value: unknown, path = ''): string[] {
  const at = path || '<root>';
  if (schema['x-kubernetes-int-or-string']) {
    return Number.isInteger(value) || typeof value === 'string' ? [] : [`${at}: must be an integer or a string`];
  }
  if (schema.type && !typeOk(schema.type, value))
    return [`${at}: must be of type ${schema.type}, got ${JSON.stringify(value)}`];
  const errors: string[] = [];
  if (schema.enum && !schema.enum.includes(value))
    errors.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      errors.push(`${at}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      errors.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum)
    errors.push(`${at}: below ${schema.minimum}`);
  if (Array.isArray(value) && schema.items)
    value.forEach((item, i) => errors.push(...validateStructural(schema.items, item, `${path}[${i}]`)));
  if (isObject(value)) {
    for (const key of schema.required ?? [])
      if (value[key] === undefined) errors.push(`${path ? `${path}.` : ''}${key}: is required`);
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (schema.properties?.[key]) errors.push(...validateStructural(schema.properties[key], child, childPath));
      else if (isObject(schema.additionalProperties))
        errors.push(...validateStructural(schema.additionalProperties, child, childPath));
      else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.properties)
        errors.push(`${childPath}: unknown field (the API server would prune it)`);
    }
    for (const rule of schema['x-kubernetes-validations'] ?? []) {
      const field = /^!has\(self\.(\w+)\)$/.exec(rule.rule)?.[1];
      if (field !== undefined && value[field] !== undefined) errors.push(`${at}: ${rule.message}`);
    }
  }
  return errors;
}

/** The openAPIV3Schema of a CRD's storage version. */
export function crdSchema(crd: Json): Json {
  return crd.spec.versions.find((v: Json) => v.storage).schema.openAPIV3Schema;
}

/**
 * An object against its CRD: the schema for everything but `metadata` (the API server handles
 * ObjectMeta itself), plus a name and the scope.
 */
export function validateAgainstCrd(crd: Json, object: Json): string[] {
  const { metadata, ...rest } = object ?? {};
  const errors = validateStructural(
    {
      ...crdSchema(crd),
      properties: {
        ...crdSchema(crd).properties,
        metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    { ...rest, metadata: metadata ?? {} },
  );
  if (typeof metadata?.name !== 'string' || metadata.name === '') errors.push('metadata.name: is required');
  const clusterScoped = crd.spec.scope === 'Cluster';
  if (clusterScoped && metadata?.namespace !== undefined)
    errors.push(`metadata.namespace: ${crd.spec.names.kind} is cluster-scoped`);
  if (!clusterScoped && !metadata?.namespace) errors.push(`metadata.namespace: ${crd.spec.names.kind} is namespaced`);
  const [group, version] = String(object?.apiVersion).split('/');
  if (group !== crd.spec.group || !crd.spec.versions.some((v: Json) => v.name === version && v.served))
    errors.push(`apiVersion: ${object?.apiVersion} is not served by ${crd.metadata.name}`);
  if (object?.kind !== crd.spec.names.kind) errors.push(`kind: ${object?.kind} is not ${crd.spec.names.kind}`);
  return errors;
}
