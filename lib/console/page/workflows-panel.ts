/// <reference lib="dom" />
import type { ConsoleWorkflow } from '../model/workflow-model.js';
import type { Wire } from '../../util/wire.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The workflows panel of the console's page (docs/guide/workflows.md, "In the console"): each workflow's DAG drawn
 * in inline SVG, its steps coloured by their state in the latest run (a step opens its job's panel: its items and
 * failures), its latest runs with each step's state, and the operator's actions (trigger a run, re-run a failed
 * step, cancel a run) when the console allows actions. Redrawn when the live stream says a workflow's runs changed.
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function workflowsPanel(kit: ConsoleKit): ConsolePanel {
  type Workflow = Wire<ConsoleWorkflow>;
  type Run = Workflow['runs'][number];
  const { navigation, h, table, badge, time, replace, get, act, confirmThen, send } = kit;
  const SVG = 'http://www.w3.org/2000/svg';
  // A step's box, and the room between layers (for the edges) and between boxes of one layer.
  const [W, H, GAP_X, GAP_Y] = [160, 46, 56, 16];
  let workflows: Workflow[] = [];
  let latest = 0;

  async function loadWorkflows() {
    const asked = ++latest;
    const answer = await get<Workflow[]>('workflows');
    if (asked !== latest) return;
    workflows = answer;
    renderWorkflows();
  }

  function svg(tag: string, attributes: Record<string, string | number>, ...children: Array<Node | string>) {
    const element = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
    element.append(...children);
    return element;
  }

  /** The DAG: a column per layer, an edge from each parent's right side to its child's left side. */
  function dag(workflow: Workflow) {
    const run = workflow.runs[0];
    const at = new Map<string, { x: number; y: number }>();
    workflow.layers.forEach((layer, column) =>
      layer.forEach((step, row) => at.set(step, { x: 1 + column * (W + GAP_X), y: 1 + row * (H + GAP_Y) })),
    );
    const width = Math.max(1, workflow.layers.length) * (W + GAP_X) - GAP_X + 2;
    const height = Math.max(1, ...workflow.layers.map((layer) => layer.length)) * (H + GAP_Y) - GAP_Y + 2;
    const edges = Object.entries(workflow.steps).flatMap(([step, parents]) =>
      parents.flatMap((parent) => {
        const [from, to] = [at.get(parent), at.get(step)];
        if (!from || !to) return [];
        const [x1, y1, x2, y2] = [from.x + W, from.y + H / 2, to.x - 4, to.y + H / 2];
        const middle = (x1 + x2) / 2;
        return [
          svg('path', {
            class: 'edge',
            'data-from': parent,
            'data-to': step,
            d: `M${x1},${y1} C${middle},${y1} ${middle},${y2} ${x2},${y2}`,
          }),
          svg('path', { class: 'arrow', d: `M${x2 - 6},${y2 - 5} L${x2 + 2},${y2} L${x2 - 6},${y2 + 5} Z` }),
        ];
      }),
    );
    const nodes = [...at].map(([step, { x, y }]) => {
      const stepRun = run?.steps[step];
      const stepState = stepRun?.state ?? 'NO RUN';
      const detail = stepRun?.failedItems?.length
        ? `${stepState} · items ${stepRun.failedItems.join(',')}`
        : stepRun && stepRun.attempts > 1
          ? `${stepState} · attempt ${stepRun.attempts}`
          : stepState;
      const node = svg(
        'g',
        {
          class: `step step-${stepState.toLowerCase().replace(' ', '-')}`,
          'data-step': step,
          'data-state': stepState,
          // Its label changes with the state: the key a live redraw gives the keyboard focus back by.
          'data-focus-key': `step ${workflow.name}/${step}`,
          role: 'button',
          tabindex: 0,
          'aria-label': `Open job ${step} (${detail})`,
        },
        svg('title', {}, `${step}: ${detail}. Open its job: its items and failures.`),
        svg('rect', { x, y, width: W, height: H, rx: 6 }),
        svg('text', { x: x + 10, y: y + 19, class: 'step-name' }, step.length > 20 ? `${step.slice(0, 19)}…` : step),
        svg('text', { x: x + 10, y: y + 37, class: 'step-state' }, detail),
      );
      node.addEventListener('click', () => navigation.select(step));
      node.addEventListener('keydown', (event) => {
        const key = (event as KeyboardEvent).key;
        if (key !== 'Enter' && key !== ' ') return;
        event.preventDefault();
        navigation.select(step);
      });
      return node;
    });
    return svg(
      'svg',
      {
        class: 'dag',
        role: 'group',
        'aria-label': `Steps of ${workflow.name}`,
        width,
        height,
        viewBox: `0 0 ${width} ${height}`,
      },
      ...edges,
      ...nodes,
    );
  }

  /** The actions on a run: cancel it while it can go on; re-run each failed step (its failed items, or all). */
  function runActions(workflow: Workflow, run: Run) {
    if (!kit.actionsEnabled) return undefined;
    const path = `workflows/${encodeURIComponent(workflow.name)}/runs/${encodeURIComponent(run.id)}`;
    const failed = Object.entries(run.steps).filter(([, step]) => step.state === 'FAILED');
    return h(
      'td',
      { class: 'buttons' },
      ...failed.flatMap(([step, stepRun]) => [
        act(
          `Re-run ${step}`,
          `Run the failed items (${(stepRun.failedItems ?? []).join(', ')}) of ${step} again in run ${run.id}?`,
          `${path}/steps/${encodeURIComponent(step)}/rerun`,
          { 'aria-label': `Re-run failed items of ${step} in run ${run.id}` },
        ),
        kit.button(
          `Re-run all of ${step}`,
          () =>
            confirmThen(
              `Run every item of ${step} again in run ${run.id}?`,
              async () =>
                (
                  await send<{ done: string }>('POST', `${path}/steps/${encodeURIComponent(step)}/rerun`, {
                    items: 'all',
                  })
                ).done,
            ),
          { 'aria-label': `Re-run every item of ${step} in run ${run.id}` },
        ),
      ]),
      run.state === 'RUNNING' || run.state === 'FAILED'
        ? act('Cancel', `Cancel run ${run.id} of ${workflow.name}? Nothing more starts in it.`, `${path}/cancel`, {
            'aria-label': `Cancel run ${run.id}`,
          })
        : undefined,
    );
  }

  function renderWorkflow(workflow: Workflow) {
    const name = encodeURIComponent(workflow.name);
    const rows = workflow.runs.map((run) =>
      h(
        'tr',
        { 'data-run': run.id, 'data-state': run.state },
        h('th', { scope: 'row', class: 'mono' }, run.id),
        h('td', {}, badge(run.state)),
        h('td', {}, run.trigger),
        h('td', {}, time(run.createdAt)),
        h('td', {}, time(run.endedAt)),
        h(
          'td',
          { class: 'wrap' },
          ...Object.entries(run.steps).flatMap(([step, stepRun]) => [
            h('span', { class: 'run-step', 'data-step': step }, `${step} `, badge(stepRun.state)),
            ' ',
          ]),
        ),
        runActions(workflow, run) ?? false,
      ),
    );
    return h(
      'article',
      { class: 'workflow', 'data-workflow': workflow.name },
      h(
        'h3',
        {},
        workflow.name,
        ' ',
        h('span', { class: 'hint mono' }, workflow.cron ? `cron ${workflow.cron}` : 'manual triggers only'),
      ),
      h(
        'div',
        { class: 'buttons' },
        act('Trigger run', `Start a run of ${workflow.name} now?`, `workflows/${name}/trigger`, {
          'aria-label': `Trigger workflow ${workflow.name}`,
        }),
      ),
      h('div', { class: 'dag-wrap' }, dag(workflow)),
      table(
        `Latest runs of ${workflow.name}`,
        ['Run', 'State', 'Trigger', 'Created', 'Ended', 'Steps', ...(kit.actionsEnabled ? ['Actions'] : [])],
        rows,
        'No run kept yet.',
      ),
    );
  }

  function renderWorkflows() {
    // A namespace without workflows shows no such section (most apps have none).
    const section = document.getElementById('workflows')?.parentElement;
    if (section) section.hidden = workflows.length === 0;
    replace('workflows', ...workflows.map(renderWorkflow));
  }

  return { load: loadWorkflows, render: renderWorkflows };
}
