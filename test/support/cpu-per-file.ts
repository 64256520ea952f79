import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';

/**
 * Opt-in (SUITE_CPU_LOG=<file>): appends one line per test file with the CPU seconds its worker spent on it, its
 * own and its reaped child processes' (servers, compilers, fixture apps), read from /proc/self/stat. With
 * `isolate: false` a worker runs one file at a time, so the difference between this setup file's evaluation and the
 * file's last hook is that file's CPU, whatever the load.
 */
function cpuSeconds(): { own: number; children: number } {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  const tick = 100;
  // Fields 14-17 (utime, stime, cutime, cstime) counted from 1; after "comm) " the state is field 3.
  const at = (n: number): number => Number(fields[n - 3]) / tick;
  return { own: at(14) + at(15), children: at(16) + at(17) };
}

const log = process.env.SUITE_CPU_LOG;
if (log) {
  const start = cpuSeconds();
  const wallStart = Date.now();
  afterAll(() => {
    const end = cpuSeconds();
    const file = expect.getState().testPath ?? 'unknown';
    appendFileSync(
      log,
      `${JSON.stringify({
        file: file.replace(process.cwd() + '/', ''),
        own: +(end.own - start.own).toFixed(2),
        children: +(end.children - start.children).toFixed(2),
        wall: (Date.now() - wallStart) / 1000,
        pid: process.pid,
      })}\n`,
    );
  });
}
