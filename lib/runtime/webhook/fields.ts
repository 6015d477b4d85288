/**
 * Field checks for untrusted JSON. Each records an error naming the field (as a JSON path the
 * caller would recognise) instead of throwing, so one pass reports the first problem precisely.
 */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * Longest message a denial carries (the API server shows it to the user and may log it): input
 * quoted in a message is the client's, and must not come back as megabytes.
 */
export const MAX_MESSAGE_CHARS = 4096;

/** `message`, cut to {@link MAX_MESSAGE_CHARS} with a note of how much was left out. */
export function boundMessage(message: string, max = MAX_MESSAGE_CHARS): string {
  return message.length <= max ? message : `${message.slice(0, max)}… (${message.length - max} more characters)`;
}

export function formatFieldError(e: FieldError): string {
  return boundMessage(`${e.field}: ${e.message}`);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

export function checkObject(value: unknown, field: string, errors: FieldError[]): Record<string, unknown> | undefined {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  errors.push({ field, message: value === undefined ? 'is missing' : `must be an object, got ${kindOf(value)}` });
  return undefined;
}

export function checkString(
  value: unknown,
  field: string,
  errors: FieldError[],
  opts: { nonEmpty?: boolean } = {},
): string | undefined {
  if (typeof value === 'string' && (!opts.nonEmpty || value !== '')) return value;
  let message: string;
  if (value === undefined) message = 'is missing';
  else if (typeof value === 'string') message = 'must not be empty';
  else message = `must be a string, got ${kindOf(value)}`;
  errors.push({ field, message });
  return undefined;
}

/** Absent and null both mean "not set", as with Go's omitempty pointers. */
export function checkOptionalString(value: unknown, field: string, errors: FieldError[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  return checkString(value, field, errors);
}
