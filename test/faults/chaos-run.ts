import { afterEach, describe, expect, it } from 'vitest';
import { LocalZookeeper } from '../../lib/devtools/local-zookeeper.js';
import { TcpProxy } from '../../tools/zookeeper/tcp-proxy.js';
import { ClusterInstance } from '../support/cluster.js';
import { eventually, uniqueNamespace } from '../support/zk.js';

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** Small seeded PRNG (mulberry32), so a failing run can be replayed with CHAOS_SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Slot {
  proxy: TcpProxy;
  instance: ClusterInstance;
  diedAt?: number;
}

interface Execution {
  pid: number;
  item: number;
  start: number;
  /** When it stopped owning the item: its end, its signal's abort, or its process's death. */
  end: number;
  completed: boolean;
}

const SESSION_TIMEOUT_MS = 3000;
const TICK_MS = 200;
const DURATION_MS = Number(process.env.CHAOS_DURATION_MS ?? 60_000);
/** The item starts a run must have seen under faults for its checks to mean something. */
const MIN_EXECUTIONS = 50;

/**
 * The seeds run: a fixed list by default, one file each (chaos-seed-*.spec.ts) so that they run in parallel, and CI
 * replays the same schedules of faults every time; `CHAOS_SEED=n` replays one, `CHAOS_SEED=random` draws one from
 * the clock (and prints it), in the first file only.
 */
export const FIXED_SEEDS = [262196, 345329];

function seedsFor(fixedSeed: number): number[] {
  const wanted = process.env.CHAOS_SEED;
  if (!wanted) return [fixedSeed];
  if (fixedSeed !== FIXED_SEEDS[0]) return [];
  return [wanted === 'random' ? Date.now() % 1_000_000 : Number(wanted)];
}

/** The chaos run of one fixed seed (or of CHAOS_SEED): the body of a chaos-seed-*.spec.ts file. */
export function chaosSuite(fixedSeed: number): void {
  describe('chaos', () => {
    const seeds = seedsFor(fixedSeed);
    // While CHAOS_SEED is set, this file's own seed is shown skipped (the first file runs the one asked for).
    (seeds.length > 0 ? it : it.skip).each(seeds.length > 0 ? seeds : [fixedSeed])(
      'seed %i: random SIGKILL, SIGTERM, ZooKeeper restarts and proxy cuts: never two live owners of an item at once, ' +
        'no started item lost',
      async (seed) => {
        const random = prng(seed);
        process.stdout.write(`chaos seed ${seed} (replay with CHAOS_SEED=${seed})\n`);
        const zk = await LocalZookeeper.start({ tickTimeMs: TICK_MS });
        cleanups.push(() => zk.stop());
        const namespace = uniqueNamespace('chaos');
        const retired: Slot[] = [];
        const slots: Slot[] = [];
        const log: string[] = [];
        const note = (what: string): void => {
          log.push(`${new Date().toISOString()} ${what}`);
        };

        const launch = async (): Promise<Slot> => {
          const proxy = new TcpProxy(zk.port);
          await proxy.start();
          const instance = new ClusterInstance({
            zkConnect: proxy.connectString,
            namespace,
            total: 4,
            workMs: 300,
            failover: true,
            sessionTimeoutMs: SESSION_TIMEOUT_MS,
          });
          const slot: Slot = { proxy, instance };
          instance.child.once('exit', () => (slot.diedAt ??= Date.now()));
          slots.push(slot);
          note(`launched ${instance.pid}`);
          return slot;
        };
        cleanups.push(async () => {
          for (const slot of [...slots, ...retired]) {
            slot.instance.kill('SIGKILL');
            await slot.proxy.stop();
          }
        });

        for (let i = 0; i < 3; i++) await launch();
        await Promise.all(slots.map((s) => s.instance.waitForLine(/^READY$/, 60_000)));
        const started = Date.now();
        let restartedServer = false;

        // Faults go on for DURATION_MS and until the processes have started MIN_EXECUTIONS items between them: on a
        // loaded host (CI's two cores at load 20+) a fixed time saw 9 executions, too few to judge anything by.
        const executed = (): number =>
          [...slots, ...retired].reduce((sum, slot) => sum + slot.instance.starts().length, 0);
        while (Date.now() - started < DURATION_MS || executed() <= MIN_EXECUTIONS) {
          await new Promise((r) => setTimeout(r, 1500 + random() * 2500));
          const live = slots.filter((s) => s.instance.child.exitCode === null && s.instance.child.signalCode === null);
          const roll = random();
          const victim = live[Math.floor(random() * live.length)];
          if (roll < 0.25 && victim && live.length > 1) {
            note(`SIGKILL ${victim.instance.pid}`);
            victim.instance.kill('SIGKILL');
            slots.splice(slots.indexOf(victim), 1);
            retired.push(victim);
            await launch();
          } else if (roll < 0.45 && victim && live.length > 1) {
            note(`SIGTERM ${victim.instance.pid}`);
            victim.instance.kill('SIGTERM');
            slots.splice(slots.indexOf(victim), 1);
            retired.push(victim);
            await launch();
          } else if (roll < 0.85 && victim) {
            const cutMs = 500 + Math.floor(random() * 5000); // some past the session timeout
            note(`cut ${victim.instance.pid} for ${cutMs} ms`);
            victim.proxy.cut();
            setTimeout(() => {
              note(`restore ${victim.instance.pid}`);
              victim.proxy.restore();
            }, cutMs);
          } else if (!restartedServer) {
            restartedServer = true;
            note('restart ZooKeeper');
            await zk.restart();
          }
        }
        // Let everything settle: restores done, sessions of killed instances expired, takeovers run.
        const settledFrom = Date.now();
        await new Promise((r) => setTimeout(r, 3 * SESSION_TIMEOUT_MS + 6000));
        // 2b. Healing: once the faults stop, every item runs again, firing after firing: each starts three times after
        //     the settling (waited for, not counted in a window of wall time, which a loaded host stretches).
        const healedFrom = Date.now();
        const live = (): ClusterInstance[] =>
          slots.map((slot) => slot.instance).filter((instance) => instance.child.exitCode === null);
        const startsSince = (): number[] =>
          [0, 1, 2, 3].map(
            (item) =>
              live()
                .flatMap((instance) => instance.starts())
                .filter((start) => start.item === item && start.start >= healedFrom).length,
          );
        await eventually(startsSince, (starts) => starts.every((n) => n >= 3), 60_000, 'every item started 3 times');
        const endedAt = Date.now();

        // ------------------------------------------------------------------ the execution log
        const executions: Execution[] = [];
        for (const slot of [...slots, ...retired]) {
          const runs = slot.instance.runs();
          for (const start of slot.instance.starts()) {
            const run = runs.find((r) => r.item === start.item && r.start === start.start);
            const death = slot.diedAt ?? endedAt;
            const end = run ? Math.min(run.end, run.abortedAt ?? run.end) : Math.min(death, endedAt);
            executions.push({
              pid: start.pid,
              item: start.item,
              start: start.start,
              end,
              completed: run !== undefined && !run.aborted,
            });
          }
        }
        process.stdout.write(`chaos: ${executions.length} executions, ${log.length} events\n${log.join('\n')}\n`);
        expect(executions.length).toBeGreaterThan(MIN_EXECUTIONS);

        // 1. Never two owners at once: for one item, executions by different processes do not overlap, beyond the
        //    documented window of one ZooKeeper tick (an execution counts until its signal aborts).
        const overlaps: string[] = [];
        for (const a of executions) {
          for (const b of executions) {
            if (a === b || a.item !== b.item || a.pid === b.pid || a.start > b.start) continue;
            const overlap = Math.min(a.end, b.end) - b.start;
            if (overlap > TICK_MS)
              overlaps.push(
                `item ${a.item}: ${a.pid} [${a.start}, ${a.end}] and ${b.pid} [${b.start}, ${b.end}] overlap ` +
                  `${overlap} ms`,
              );
          }
        }
        expect(overlaps).toEqual([]);

        // 2. Failover: an item whose execution was cut short (its process killed, or its session lost) starts again
        //    on some process. Faults chain (the taker may be killed in turn, each SIGKILL holds its items for a
        //    session timeout), so no bound is put on when, only that it happens before the cluster has healed.
        const lost: string[] = [];
        for (const cut of executions.filter((e) => !e.completed && e.end < settledFrom)) {
          const again = executions.some((e) => e.item === cut.item && e !== cut && e.start >= cut.start);
          if (!again) lost.push(`item ${cut.item} cut short on ${cut.pid} at ${cut.end} never started again`);
        }
        expect(lost).toEqual([]);

        // 3. Nothing shut itself down: every process that exited was one we killed or terminated.
        for (const slot of slots) {
          const { instance } = slot;
          const said = () => `instance ${instance.pid}: ${instance.lines.slice(-30).join('\n')}\n${instance.stderr}`;
          expect(instance.child.exitCode, said()).toBeNull();
        }
      },
      // A bound for a hung run only: the faults last until MIN_EXECUTIONS items started, however slow the host.
      4 * DURATION_MS + 120_000,
    );
  });
}
