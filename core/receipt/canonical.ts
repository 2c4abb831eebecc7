/**
 * The canonical serialization a receipt is signed over: JSON with object keys sorted (recursively, by UTF-16 code
 * unit, as Array.prototype.sort does), no whitespace, undefined members dropped. Two parties that parse the same
 * receipt get the same bytes, whatever order its fields arrived in. Pure.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('a receipt holds no NaN or Infinity');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The bytes (as a string) a receipt's body is signed over. */
export function canonicalReceipt(body: unknown): string {
  return canonicalJson(body);
}
