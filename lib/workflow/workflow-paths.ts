/**
 * The workflows' nodes, namespace-relative, under one namespace child that is no job: `/.workflows`. Java ElasticJob
 * lists a namespace's jobs as its children that have a `config` node (its JobStatisticsAPIImpl.getAllJobsBriefInfo
 * skips a child whose config reads null; its console lists jobs through it), so it ignores this one; only its
 * getJobsTotalCount, which counts the children, counts it (docs/design/zookeeper-tree.md, "Workflows").
 */
export const WORKFLOWS_NODE = '.workflows';

export class WorkflowNodePath {
  /** `/.workflows/{name}`: the workflow's definition (JSON), written by its instances at start. */
  readonly root: string;
  /** The coordinator's election: Curator's LeaderLatch protocol, as a job's `leader/election/latch`. */
  readonly latch: string;
  /** The run under way (its id), while there is one: its creation is what refuses a second run. */
  readonly active: string;
  readonly runs: string;

  constructor(readonly workflow: string) {
    this.root = `/${WORKFLOWS_NODE}/${workflow}`;
    this.latch = `${this.root}/leader/latch`;
    this.active = `${this.root}/active`;
    this.runs = `${this.root}/runs`;
  }

  /** `runs/{runId}`: the run's state (JSON, workflow-run.ts). */
  run(runId: string): string {
    return `${this.runs}/${runId}`;
  }

  /** `runs/{runId}/{step}`: the step's item outcomes, one child per item. */
  stepItems(runId: string, step: string): string {
    return `${this.run(runId)}/${step}`;
  }

  /** `runs/{runId}/{step}/{item}`: what the item did (JSON), written by the instance that ran it. */
  item(runId: string, step: string, item: number): string {
    return `${this.stepItems(runId, step)}/${item}`;
  }
}
