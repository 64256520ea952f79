/// <reference lib="dom" />
import type { ConsoleExecutions } from '../model/console-model.js';
import type { Wire } from '../../util/wire.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The failures panel of the console's page: the latest failed items across the cluster (of the job chosen, or all),
 * each with its error, its stack a click away, and the actions an operator takes next: run the item again on its
 * owner, or trigger the whole job (bull-board's failed list and retry).
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function failuresPanel(kit: ConsoleKit): ConsolePanel {
  type Executions = Wire<ConsoleExecutions>;
  const { state, latest, h, table, time, replace, get, act } = kit;
  async function loadFailures() {
    const query = new URLSearchParams({ limit: '20' });
    if (state.selected) query.set('job', state.selected);
    const asked = ++latest.failures;
    const answer = await get<Executions>(`failures?${query}`);
    if (asked !== latest.failures) return;
    state.failures = answer.executions;
    renderFailures();
  }
  function renderFailures() {
    const rows = state.failures.map((failure) => {
      const name = encodeURIComponent(failure.jobName);
      const [headline, ...stack] = (failure.failureCause ?? 'no cause recorded').split('\n');
      return h(
        'tr',
        { 'data-job': failure.jobName, 'data-item': String(failure.item) },
        h('td', {}, time(failure.completeTime ?? failure.startTime)),
        h('th', { scope: 'row' }, failure.jobName),
        h('td', { class: 'num' }, failure.item),
        h('td', { class: 'mono' }, failure.instanceId ?? failure.ip),
        h(
          'td',
          { class: 'cause' },
          stack.length
            ? h('details', {}, h('summary', {}, headline), h('pre', {}, failure.failureCause ?? ''))
            : headline,
        ),
        kit.actionsEnabled
          ? h(
              'td',
              { class: 'buttons' },
              act(
                'Run again',
                `Run item ${failure.item} of ${failure.jobName} again now on its owner?`,
                `jobs/${name}/items/${failure.item}/rerun`,
                { 'aria-label': `Run item ${failure.item} of ${failure.jobName} again` },
              ),
              act('Trigger job', `Trigger ${failure.jobName} now on every online instance?`, `jobs/${name}/trigger`, {
                'aria-label': `Trigger ${failure.jobName} (failure)`,
              }),
            )
          : undefined,
      );
    });
    replace(
      'failures',
      table(
        state.selected ? `Latest failures of ${state.selected}` : 'Latest failures',
        ['Failed', 'Job', 'Item', 'Instance', 'Error', ...(kit.actionsEnabled ? ['Actions'] : [])],
        rows,
        'No failure recorded.',
      ),
    );
  }
  return { load: loadFailures, render: renderFailures };
}
