/** Java's `String.hashCode()`: 32-bit signed, with int overflow (UTF-16 code units, as Java). */
export function javaStringHashCode(value: string): number {
  let h = 0;
  for (let i = 0; i < value.length; i++) {
    h = (Math.imul(31, h) + value.charCodeAt(i)) | 0;
  }
  return h;
}

/** Java's `Math.abs(int)`: `Math.abs(Integer.MIN_VALUE)` stays negative. */
export function javaAbs(value: number): number {
  return value === -2147483648 ? value : Math.abs(value);
}

/** Java's `String.compareTo` order (UTF-16 code units), descending: how ElasticJob sorts children. */
export function descendingStringOrder(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}
