/**
 * Sharding items for a log line: ascending, runs of consecutive items as ranges (`0-3,5,7-9`), and past
 * `maxParts` parts cut short with the count (a job may have ten thousand items).
 */
export function describeItems(items: readonly number[], maxParts = 12): string {
  const sorted = [...new Set(items)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  if (parts.length <= maxParts) return parts.join(',');
  return `${parts.slice(0, maxParts).join(',')},... (${sorted.length} items)`;
}

/** Java's `List.toString()`, which ElasticJob's messages and its status table use for item lists: `[0, 1, 2]`. */
export function javaItemList(items: readonly number[]): string {
  return `[${items.join(', ')}]`;
}
