/**
 * Issue 41's item logs, measured by CPU time rather than lateness: the burst row's handlers (2000 items, each logging
 * 100 lines synchronously right after its start) run back to back in one process, through each logger, and what the
 * process spent is reported from process.cpuUsage() and the garbage collector's entries (perf_hooks), which a machine
 * shared with other work disturbs far less than wall time. Each configuration runs in a process of its own, the
 * configurations alternated round by round; the median of the rounds is printed.
 *
 *   npm run build:all && node --expose-gc build/bench/micro/item-logs-cpu.js [rounds]
 *
 * Configurations: `none` (handlers that log nothing), `strings` (the handlers' strings built and handed to a no-op
 * logger: the handler's own cost), `plain` (a plain Nest Logger of the job's name, 'log' off as in the bench app),
 * `kept` (the item's `context.logger`: lib/job/policies/item-lines.ts, its lines filed in an ExecutionLog as the
 * executor files them, and the item's end told as the executor tells it).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import { ItemLogger } from '../../lib/job/policies/item-lines.js';
import { ExecutionLog } from '../../lib/tracing/execution-log.js';

const ITEMS = 2000;
const LINES = 100;
/** Bursts per process: the first warms the JIT and is not counted. */
const BURSTS = 6;
const CONFIGS = ['none', 'strings', 'plain', 'kept'] as const;
type Config = (typeof CONFIGS)[number];

interface Sample {
  /** CPU (user + system) per burst, ms. */
  cpuMs: number;
  /** GC pauses per burst: count, and their total ms. */
  gcCount: number;
  gcMs: number;
  /** Of which major (mark-sweep-compact) GCs. */
  majorCount: number;
}

interface LineSink {
  log(message: string): void;
}
/** Keeps only the last line: so the handler's strings are built (a sink that drops them, inlined, is not). */
let lastLine = '';
const noop: LineSink = {
  log: (message) => {
    lastLine = message;
  },
};

function burst(config: Config, loggers: Logger[], book: ExecutionLog): void {
  for (let item = 0; item < ITEMS; item++) {
    const shardingItem = item % 2;
    let sink: LineSink | undefined;
    let itemLogger: ItemLogger | undefined;
    if (config === 'strings') sink = noop;
    else if (config === 'plain') sink = loggers[item >> 1]!;
    else if (config === 'kept') {
      itemLogger = new ItemLogger(loggers[item >> 1]!, shardingItem);
      book.keepLines(randomUUID(), itemLogger.kept);
      sink = itemLogger;
    }
    if (sink !== undefined) for (let line = 0; line < LINES; line++) sink.log(`item ${shardingItem}: line ${line}`);
    itemLogger?.end();
  }
}

function child(config: Config): void {
  Logger.overrideLogger(['error', 'warn']); // as the bench app: NestFactory's { logger: ['error', 'warn'] }
  const loggers = Array.from({ length: ITEMS / 2 }, (_, i) => new Logger(`ElasticJob:bench-${i}`));
  const book = new ExecutionLog();
  // The burst's window in performance.now() time: the GCs that started in it are the burst's.
  const window = { from: Infinity, to: -Infinity };
  const gc = { count: 0, ms: 0, major: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.startTime < window.from || entry.startTime > window.to) continue;
      gc.count++;
      gc.ms += entry.duration;
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const collect = (globalThis as { gc?: () => void }).gc;
  const samples: Sample[] = [];
  const run = (index: number): void => {
    collect?.(); // each burst from the same heap: the GCs it causes are its own
    // GC entries are delivered asynchronously: read the counts a turn after each burst.
    setImmediate(() => {
      Object.assign(gc, { count: 0, ms: 0, major: 0 });
      window.from = performance.now();
      window.to = Infinity;
      const cpu = process.cpuUsage();
      burst(config, loggers, book);
      const spent = process.cpuUsage(cpu);
      window.to = performance.now();
      setTimeout(() => {
        if (index > 0)
          samples.push({
            cpuMs: (spent.user + spent.system) / 1000,
            gcCount: gc.count,
            gcMs: gc.ms,
            majorCount: gc.major,
          });
        if (index + 1 < BURSTS) run(index + 1);
        else {
          observer.disconnect();
          process.send!(samples, () => process.exit(0));
        }
      }, 20);
    });
  };
  run(0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function inChild(config: Config): Promise<Sample[]> {
  return new Promise((resolve, reject) => {
    const process_ = fork(fileURLToPath(import.meta.url), ['--child', config], { execArgv: ['--expose-gc'] });
    let samples: Sample[] | undefined;
    process_.on('message', (message) => (samples = message as Sample[]));
    process_.on('exit', (code) => (samples ? resolve(samples) : reject(new Error(`${config} exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const all: Record<Config, Sample[]> = { none: [], strings: [], plain: [], kept: [] };
  for (let round = 0; round < rounds; round++)
    for (const config of CONFIGS) all[config].push(...(await inChild(config)));
  const f = (v: number): string => v.toFixed(1);
  if (lastLine === 'never') process.stdout.write('');
  process.stdout.write(
    `${ITEMS} items × ${LINES} lines, ${rounds} processes × ${BURSTS - 1} bursts each; medians per burst\n` +
      `config   cpu ms   gc count  gc ms   major GCs\n`,
  );
  for (const config of CONFIGS) {
    const s = all[config];
    process.stdout.write(
      `${config.padEnd(8)} ${f(median(s.map((x) => x.cpuMs))).padStart(6)}   ` +
        `${f(median(s.map((x) => x.gcCount))).padStart(7)}  ${f(median(s.map((x) => x.gcMs))).padStart(6)}   ` +
        `${f(median(s.map((x) => x.majorCount))).padStart(9)}\n`,
    );
  }
}

if (process.argv[2] === '--child') child(process.argv[3] as Config);
else void main();
