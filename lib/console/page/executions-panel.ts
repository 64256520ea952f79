/// <reference lib="dom" />
import type { ConsoleExecutions } from '../model/console-model.js';
import type { Wire } from '../../util/wire.js';
import type { ExecutionLinesAnswer } from '../../lifecycle/item-state.api.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The executions panel of the console's page: the recent item executions (of the job chosen, or all), with their results and failure causes.
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function executionsPanel(kit: ConsoleKit): ConsolePanel {
  type Executions = Wire<ConsoleExecutions>;
  type Execution = Executions['executions'][number];
  const { state, latest, historySource, h, table, badge, time, replace, get } = kit;
  async function loadExecutions() {
    const query = new URLSearchParams({ limit: '50' });
    if (state.selected) query.set('job', state.selected);
    const asked = ++latest.executions;
    const answer = await get<Executions>(`executions?${query}`);
    if (asked !== latest.executions) return;
    state.executions = answer.executions;
    state.answered = answer.source === 'cluster' ? answer.answered : [];
    state.missing = answer.source === 'cluster' ? answer.missing : [];
    renderExecutions();
    kit.navigation.executionsChanged();
  }
  /**
   * The execution's log lines (docs/guide/item-policies.md, "Item logs"), fetched from the instance that ran it when
   * opened, never with the history; while the item runs and the cell stays open, asked again every 3 s (XXL-JOB's
   * rolling log: one question a cell, its answer at most the kept 32 KB).
   */
  function linesOf(execution: Execution) {
    const body = h('pre', { class: 'item-log' }, '…');
    const details = h('details', { 'data-execution': execution.id }, h('summary', {}, 'Log'), body);
    let following: ReturnType<typeof setInterval> | undefined;
    const stop = () => {
      clearInterval(following);
      following = undefined;
    };
    details.addEventListener('toggle', () => {
      if (!(details as HTMLDetailsElement).open) return stop();
      load();
      if (execution.success === undefined && following === undefined)
        following = setInterval(() => {
          // Closed, or redrawn away (the list is replaced on each change): no more questions.
          if (!details.isConnected || !(details as HTMLDetailsElement).open) stop();
          else load();
        }, 3000);
    });
    return details;
    function load() {
      const query = execution.instanceId ? `?instance=${encodeURIComponent(execution.instanceId)}` : '';
      const path = `jobs/${encodeURIComponent(execution.jobName)}/executions/${encodeURIComponent(execution.id)}/lines`;
      get<Wire<ExecutionLinesAnswer>>(`${path}${query}`).then(
        (answer) => {
          const kept = answer.lines;
          body.textContent = !kept
            ? 'No lines kept for this execution (none logged, pushed out, or its instance left).'
            : kept.lines
                .map((line) => `${new Date(line.at).toISOString()} ${line.level.toUpperCase()} ${line.message}`)
                .join('\n') + (kept.dropped > 0 ? `\n… ${kept.dropped} more lines not kept` : '');
        },
        (error: unknown) => {
          body.textContent = `Could not read the lines: ${error instanceof Error ? error.message : String(error)}`;
        },
      );
    }
  }
  function renderExecutions() {
    const from =
      historySource === 'database'
        ? 'From the tracing database.'
        : `From the in-memory logs of ${state.answered.length} instance(s)` +
          (state.missing.length ? `; not answering: ${state.missing.join(', ')}.` : '.');
    const rows = state.executions.map((execution) => {
      const started = execution.startTime ? new Date(execution.startTime).getTime() : undefined;
      const ended = execution.completeTime ? new Date(execution.completeTime).getTime() : undefined;
      const result = execution.success === undefined ? 'RUNNING' : execution.success ? 'SUCCESS' : 'FAILURE';
      return h(
        'tr',
        { 'data-job': execution.jobName, 'data-item': String(execution.item) },
        h('td', {}, time(execution.startTime)),
        h('th', { scope: 'row' }, execution.jobName),
        h('td', { class: 'num' }, execution.item),
        h('td', {}, execution.source),
        h('td', {}, badge(result)),
        h('td', { class: 'num' }, started !== undefined && ended !== undefined ? `${ended - started} ms` : '–'),
        h('td', { class: 'mono' }, execution.ip),
        h(
          'td',
          { class: 'cause' },
          execution.failureCause
            ? h(
                'details',
                {},
                h('summary', {}, execution.failureCause.split('\n')[0]),
                h('pre', {}, execution.failureCause),
              )
            : '–',
        ),
        h('td', { class: 'lines' }, linesOf(execution)),
      );
    });
    replace(
      'executions',
      h('p', { class: 'hint', id: 'executions-source' }, from),
      table(
        state.selected ? `Recent executions of ${state.selected}` : 'Recent executions',
        ['Started', 'Job', 'Item', 'Source', 'Result', 'Duration', 'Server', 'Failure cause', 'Log'],
        rows,
        'No execution recorded yet.',
      ),
    );
  }

  return { load: loadExecutions, render: renderExecutions };
}
