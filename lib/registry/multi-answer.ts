import type { Jute } from './client-internals.js';
import { readMultiReadResult } from './multi-read.js';

/**
 * The client's reader of a `multi` answer (jute's TransactionResponse.deserialize) builds two generic jute records
 * an op (a MultiHeader, then the op's response), each walking its field specification with a closure and a result
 * object a field: the answers to a burst's running markers (a thousand jobs' creates in a few requests) were about
 * 2 KB of garbage an item start (docs/benchmarks.md, issue 43). This reads the same bytes into the same results:
 * `{ type, path }` a create (its chroot taken off), `{ type }` a delete or check, `{ type, err }` an error; a
 * setData's answer carries a Stat record, still read by the client's own records. A multiRead's answers (the same
 * frame format, read back through this reader) are read by multi-read.ts.
 *
 * The wire format (ZooKeeper's MultiResponse): per op a MultiHeader (`int type; boolean done; int err`), then the
 * op's response, until a header with `done`; a create's response is its path (`ustring`: an int length, -1 for
 * none, then UTF-8), an error's its code (`int`).
 */
/** The prototypes already given the lean reader (each client installs it; once is enough). */
const installed = new WeakSet<object>();

export function installLeanMultiAnswers(jute: Jute): void {
  const proto = jute.TransactionResponse.prototype;
  if (installed.has(proto)) return;
  installed.add(proto);
  const codes = jute.OP_CODES;
  const SetDataResponse = jute.protocol.SetDataResponse;
  function leanDeserialize(this: TransactionResponseState, buffer: Buffer, offset: number): number {
    let at = offset;
    for (;;) {
      const type = buffer.readInt32BE(at);
      const done = buffer.readUInt8(at + 4) === 1;
      at += 9;
      if (done) break;
      if (type === codes.CREATE) {
        const length = buffer.readInt32BE(at);
        at += 4;
        let path: string | undefined;
        if (length !== -1) {
          path = buffer.toString('utf8', at, at + length);
          at += length;
          if (this.chrootPath) path = path === this.chrootPath ? '/' : path.substring(this.chrootPath.length);
        }
        this.results.push({ type, path });
      } else if (type === codes.DELETE || type === codes.CHECK) {
        this.results.push({ type });
      } else if (type === codes.ERROR) {
        this.results.push({ type, err: buffer.readInt32BE(at) });
        at += 4;
      } else if (type === codes.SET_DATA) {
        const response = new SetDataResponse();
        response.setChrootPath(this.chrootPath);
        at += response.deserialize(buffer, at);
        this.results.push({ type, stat: response.stat });
      } else {
        // A multiRead's answers (multi-read.ts): its requests are read back as a multi's.
        const next = readMultiReadResult(type, buffer, at, this.results);
        if (next < 0) throw new Error(`Unknown type: ${type} in transaction response.`);
        at = next;
      }
    }
    return at - offset;
  }
  proto.deserialize = leanDeserialize;
}

/** What the client's TransactionResponse holds while it is read. */
export interface TransactionResponseState {
  results: unknown[];
  chrootPath: string | undefined;
}
