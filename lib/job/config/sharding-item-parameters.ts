/**
 * Parses ElasticJob's `shardingItemParameters` (`"0=a,1=b"`), with its rules: entries split on ',', trimmed,
 * each exactly `int=value` (so `0=` and `0=a=b` are errors). Returns item → parameter, or an error message.
 */
export function parseShardingItemParameters(
  value: string | Readonly<Record<number, string>> | undefined,
): Map<number, string> | string {
  const result = new Map<number, string>();
  if (value === undefined || value === null) return result;
  if (typeof value === 'object') {
    for (const [key, parameter] of Object.entries(value)) {
      if (!/^\d+$/.test(key.trim())) return `key '${key}' is not a non-negative integer`;
      if (typeof parameter !== 'string') return `the value of item ${key} must be a string`;
      if (result.has(Number(key))) return `item ${Number(key)} is given twice: give each item one parameter`;
      result.set(Number(key), parameter);
    }
    return result;
  }
  if (typeof value !== 'string') return 'must be a string like "0=a,1=b" or an object like { 0: "a" }';
  if (value.trim() === '') return result;
  for (const entry of value.split(',')) {
    const parts = entry.trim().split('=');
    if (parts.length !== 2 || parts[1] === '') return `'${value}' format error, should be int=xx,int=xx`;
    const key = parts[0]!.trim();
    if (!/^\d+$/.test(key)) return `key '${key}' is not a non-negative integer`;
    const item = Number(key);
    if (result.has(item))
      return `item ${item} is given twice ('${item}=${result.get(item)}' and '${entry.trim()}'): give each item one parameter`;
    result.set(item, parts[1]!.trim());
  }
  return result;
}

/** The canonical string form, as written to the config node: `0=a,1=b`, items ascending. */
export function formatShardingItemParameters(parameters: ReadonlyMap<number, string>): string {
  return [...parameters.entries()]
    .sort(([a], [b]) => a - b)
    .map(([item, parameter]) => `${item}=${parameter}`)
    .join(',');
}
