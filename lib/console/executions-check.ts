import type { Logger } from '@nestjs/common';
import { describeError } from '../errors/elastic-job.errors.js';
import type { ExecutionHistory } from '../interfaces/execution-history.interface.js';

/** While someone watches, how often the executions store is asked whether there is something new. */
const EXECUTIONS_CHECK_MS = 2_000;

/** Stopped, or asking every EXECUTIONS_CHECK_MS (one question at a time), with the last answer seen. */
type CheckState = { kind: 'stopped' } | { kind: 'running'; timer: NodeJS.Timeout; asking: boolean };

/**
 * ZooKeeper says nothing about the tracing store: while a page listens, the newest 20 executions are read every
 * 2 s and a change (a new one, one completed) told (one small query, only with a listener).
 */
export class ExecutionsCheck {
  private state: CheckState = { kind: 'stopped' };
  private lastSeen: string | undefined;

  constructor(
    private readonly history: ExecutionHistory,
    private readonly onNew: () => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.state.kind === 'running') return;
    const timer = setInterval(() => void this.ask(), EXECUTIONS_CHECK_MS);
    timer.unref();
    this.state = { kind: 'running', timer, asking: false };
  }

  stop(): void {
    if (this.state.kind === 'running') clearInterval(this.state.timer);
    this.state = { kind: 'stopped' };
  }

  private async ask(): Promise<void> {
    const state = this.state;
    if (state.kind !== 'running' || state.asking) return;
    state.asking = true;
    try {
      const newest = await this.history.recentExecutions({ limit: 20 });
      const seen = newest.map((execution) => `${execution.id}:${String(execution.success)}`).join(',');
      if (seen !== this.lastSeen) {
        this.lastSeen = seen;
        this.onNew();
      }
    } catch (error) {
      this.logger.debug(`executions check failed: ${describeError(error)}`);
    } finally {
      state.asking = false;
    }
  }
}
