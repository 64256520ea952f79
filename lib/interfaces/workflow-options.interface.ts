/**
 * A workflow: one-off jobs of this app run as a graph, each step starting once every item of the steps it waits for
 * has succeeded across the cluster (docs/guide/workflows.md). @publicApi
 */
export interface WorkflowOptions {
  /** One ZooKeeper node name (the workflow's node is `/.workflows/{name}`). */
  name: string;
  /** Six fields with seconds (`0 0 2 * * *`) or five; without it the workflow runs only when triggered. */
  cron?: string;
  /** The cron's time zone (an IANA name); default the process's. */
  timeZone?: string;
  /**
   * Each step (the name of a one-off job of this app) with the steps it waits for: `{ extract: [], transform:
   * ['extract'], load: ['transform'] }`. A step runs once per run; a job may be a step of one workflow only.
   */
  steps: Readonly<Record<string, readonly string[]>>;
  /** How many runs are kept in ZooKeeper, the newest; older ended runs are deleted. Default 20, at most 1000. */
  keepRuns?: number;
}
