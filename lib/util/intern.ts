/**
 * The string as V8's one internalized copy: flat, shared with every other internalized string of the same text
 * (property names, literals), and without the ConsString or SlicedString it may have come as. A path kept for the
 * job's life costs its characters only, not also the full path a sliced string keeps alive or a cons string's cell.
 * Property names are always internalized; Object.keys hands back that copy. The object is one dictionary-mode
 * object, emptied after each call: a fresh `{ [text]: 0 }` each time made a new hidden class per path (2.4–3.6 µs
 * a call against 1.5 µs, 25 calls a job at start-up).
 */
const names: Record<string, number> = Object.create(null) as Record<string, number>;

export function intern(text: string): string {
  names[text] = 0;
  const interned = Object.keys(names)[0];
  delete names[text];
  return interned ?? text;
}
