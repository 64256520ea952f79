/** Bench: a transport job's item over NATS. Run by bench/run.ts. */
import { LineProcess } from '../../test/support/line-process.js';
import { LocalNats } from '../../test/support/local-nats.js';
import { percentile, sleep, ns, quick, zk } from '../support/bench-support.js';

/**
 * A transport job's item over NATS (Debian's nats-server, local): how long after the item started the worker
 * process received it (the wait in the transport, one way), and the round trip to its reply. One item every second,
 * scheduler and worker in separate processes on the same machine (same clock).
 */
export async function transportWait(): Promise<{
  waitP50: number;
  waitP99: number;
  roundTripP50: number;
  roundTripP99: number;
  items: number;
}> {
  const seconds = quick ? 5 : 10;
  const nats = await LocalNats.create();
  const worker = new LineProcess(process.execPath, ['build/test/fixtures/worker-app.js'], {
    ...process.env,
    NATS_URL: nats.url,
  });
  const scheduler = new LineProcess(process.execPath, ['build/bench/fixtures/transport-app.js'], {
    ...process.env,
    NATS_URL: nats.url,
    ZK_CONNECT: zk().connectString,
    ZK_NAMESPACE: ns('transport'),
  });
  try {
    await worker.waitForLine(/^READY$/, 30_000);
    await scheduler.waitForLine(/"event":"item"/, 60_000);
    const from = { worker: worker.lines.length, scheduler: scheduler.lines.length };
    await sleep(seconds * 1000);
    const served = worker.lines
      .slice(from.worker)
      .filter((line) => line.includes('"served"'))
      .map((line) => (JSON.parse(line.slice(4)) as { at: number }).at);
    const items = scheduler.lines
      .slice(from.scheduler)
      .filter((line) => line.includes('"item"'))
      .map((line) => JSON.parse(line.slice(4)) as { start: number; complete: number; success: boolean })
      .filter((item) => item.success);
    const waits: number[] = [];
    for (const item of items) {
      const at = served.find((time) => time >= item.start && time <= item.complete);
      if (at !== undefined) waits.push(at - item.start);
    }
    const roundTrips = items.map((item) => item.complete - item.start);
    return {
      waitP50: percentile(waits, 50),
      waitP99: percentile(waits, 99),
      roundTripP50: percentile(roundTrips, 50),
      roundTripP99: percentile(roundTrips, 99),
      items: items.length,
    };
  } finally {
    scheduler.kill('SIGKILL');
    worker.kill('SIGKILL');
    await nats.stop();
  }
}
