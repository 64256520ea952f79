/** A cell with nothing to show (an absent value, not an empty string). */
export const NONE = '-';

/**
 * Columns aligned with two spaces between them, a header row first, no trailing spaces; one line per row, each
 * ending in a newline. Line breaks and tabs inside a cell become spaces, so that a row stays one line for grep.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [headers, ...rows].map((row) => row.map((cell) => cell.replace(/[\r\n\t]+/g, ' ')));
  const widths = headers.map((_, column) => Math.max(...lines.map((row) => (row[column] ?? '').length)));
  return lines
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** `key: value` lines with the values aligned, for one record (a job's configuration). */
export function formatFields(fields: readonly (readonly [key: string, value: string])[]): string {
  const width = Math.max(...fields.map(([key]) => key.length)) + 1;
  return fields.map(([key, value]) => `${`${key}:`.padEnd(width)} ${value}`.trimEnd() + '\n').join('');
}
