/**
 * The answers of a pure function kept by key, for start-up paths that ask the same few questions once per job (issue
 * 43: a thousand jobs sharing a handful of crons). Only what `compute` returns is kept (a throw keeps nothing), and
 * the memo is bounded: it is cleared when it holds `limit` answers.
 */
export class BoundedMemo<V> {
  private readonly answers = new Map<string, V>();

  constructor(private readonly limit = 1024) {}

  get(key: string, compute: () => V): V {
    const known = this.answers.get(key);
    if (known !== undefined) return known;
    const answer = compute();
    if (this.answers.size >= this.limit) this.answers.clear();
    this.answers.set(key, answer);
    return answer;
  }
}
