// Preloaded into the bench app (runs.mjs does it): at its `registered` line, prints an `EVT {"event":"probe"}` line
// with the process's CPU (all threads), the main thread's CPU (/proc, 10 ms ticks), both also from the start of the
// orchestrator's registerAll(), and the JavaScript heap allocated since the process started (GC statistics, as
// bench/fixtures/allocation-meter.ts); then exits. Run from a build's directory (it patches that build's orchestrator).
import { readFileSync } from 'node:fs';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const profiler = new GCProfiler();
profiler.start();
const usedAtStart = getHeapStatistics().used_heap_size;
const mainThreadMs = () => {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const { ElasticJobOrchestrator } = await import(`${process.cwd()}/build/lib/elastic-job.orchestrator.js`);
let atRegister;
const registerAll = ElasticJobOrchestrator.prototype.registerAll;
ElasticJobOrchestrator.prototype.registerAll = function (...args) {
  atRegister ??= { cpuMs: cpuMs(), mainMs: mainThreadMs() };
  return registerAll.apply(this, args);
};
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const text = String(chunk);
  if (!text.includes('"event":"registered"')) return write(chunk, ...rest);
  const usedNow = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let allocated = 0;
  let from = usedAtStart;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - from;
    from = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += usedNow - from;
  const [cpu, main] = [cpuMs(), mainThreadMs()];
  write(text);
  write(
    `EVT ${JSON.stringify({
      event: 'probe',
      cpuMs: Math.round(cpu),
      mainMs: main,
      regCpuMs: Math.round(cpu - atRegister.cpuMs),
      regMainMs: main - atRegister.mainMs,
      allocMB: Math.round(allocated / 1e5) / 10,
    })}\n`,
  );
  setImmediate(() => process.exit(0));
  return true;
};
