/**
 * The string as V8's one internalized copy: flat, shared with every other internalized string of the same text
 * (property names, literals), and without the ConsString or SlicedString it may have come as. A path kept for the
 * job's life costs its characters only, not also the full path a sliced string keeps alive or a cons string's cell.
 * Property names are always internalized; Object.keys hands back that copy.
 */
export function intern(text: string): string {
  return Object.keys({ [text]: 0 })[0] ?? text;
}
