/// <reference lib="dom" />
import type { ConsoleJobDetail } from '../model/console-model.js';
import type { Wire } from '../../util/wire.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The job panel of the console's page: a job's configuration, its items (with their owners) and its servers, and the actions on them.
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function detailPanel(kit: ConsoleKit): ConsolePanel {
  type Detail = Wire<ConsoleJobDetail>;
  const { state, latest, navigation, h, button, table, badge, replace, get, say, act } = kit;
  async function loadDetail() {
    const asked = ++latest.detail;
    let detail: Detail | undefined;
    if (state.selected) {
      try {
        detail = await get<Detail>(`jobs/${encodeURIComponent(state.selected)}`);
      } catch (error) {
        if (asked === latest.detail) say(String((error as Error).message), 'error');
      }
    }
    if (asked !== latest.detail) return;
    state.detail = detail;
    renderDetail();
  }
  function renderDetail() {
    const detail = state.detail;
    if (!detail) {
      replace('detail', h('p', { class: 'hint' }, 'Choose a job to see its items, servers and executions.'));
      return;
    }
    const { job } = detail;
    const name = encodeURIComponent(job.jobName);
    const configRows: Array<[string, string]> = [
      ['Cron', job.cron ?? 'one-off (runs when triggered)'],
      ['Time zone', job.timeZone ?? 'the instances’ own'],
      [
        'Next fire times',
        detail.nextFireTimes.length
          ? detail.nextFireTimes.map((time) => new Date(time).toLocaleString()).join(' · ')
          : '–',
      ],
      ['Description', job.description || '–'],
      ...Object.entries(detail.config).map(([key, value]): [string, string] => [
        key,
        value === undefined ? '–' : String(value),
      ]),
      ...Object.entries(detail.props).map(([prop, value]): [string, string] => [`props.${prop}`, value]),
    ];
    const sharding = detail.sharding.map((item) =>
      h(
        'tr',
        { 'data-item': String(item.item) },
        h('th', { scope: 'row', class: 'num' }, item.item),
        h('td', {}, badge(item.status)),
        h('td', { class: 'mono' }, item.instanceId ?? '–'),
        h('td', { class: 'mono' }, item.serverIp ?? '–'),
        h('td', {}, item.failover ? 'yes' : 'no'),
        // The running item's latest progress (docs/guide/item-policies.md, "Progress"): a number, or name=value pairs.
        h(
          'td',
          { class: 'progress' },
          item.progress === undefined
            ? '–'
            : typeof item.progress.value === 'number'
              ? String(item.progress.value)
              : Object.entries(item.progress.value)
                  .map(([field, value]) => `${field}=${String(value)}`)
                  .join(' '),
        ),
        kit.actionsEnabled
          ? h(
              'td',
              { class: 'buttons' },
              item.status !== 'DISABLED' && item.instanceId
                ? act(
                    'Run again',
                    `Run item ${item.item} of ${job.jobName} again now on ${item.instanceId}?`,
                    `jobs/${name}/items/${item.item}/rerun`,
                    { 'aria-label': `Run item ${item.item} again` },
                  )
                : undefined,
              item.status === 'DISABLED'
                ? act(
                    'Enable',
                    `Enable item ${item.item} of ${job.jobName}? It runs again from its next firing.`,
                    `jobs/${name}/items/${item.item}/enable`,
                    { 'aria-label': `Enable item ${item.item}` },
                  )
                : act(
                    'Disable',
                    `Disable item ${item.item} of ${job.jobName}? It runs nowhere until enabled.`,
                    `jobs/${name}/items/${item.item}/disable`,
                    { 'aria-label': `Disable item ${item.item}` },
                  ),
            )
          : undefined,
      ),
    );
    const servers = detail.servers.map((server) => {
      const ip = encodeURIComponent(server.serverIp);
      return h(
        'tr',
        {},
        h('th', { scope: 'row', class: 'mono' }, server.serverIp),
        h('td', {}, badge(server.status)),
        h('td', { class: 'mono' }, server.instances.join(', ') || '–'),
        kit.actionsEnabled
          ? h(
              'td',
              { class: 'buttons' },
              server.status === 'DISABLED'
                ? act('Enable', `Enable ${job.jobName} on ${server.serverIp}?`, `jobs/${name}/servers/${ip}/enable`, {
                    'aria-label': `Enable on ${server.serverIp}`,
                  })
                : act(
                    'Disable',
                    `Disable ${job.jobName} on ${server.serverIp}? Its items move to other servers.`,
                    `jobs/${name}/servers/${ip}/disable`,
                    { 'aria-label': `Disable on ${server.serverIp}` },
                  ),
              act(
                'Shut down',
                `Shut down ${job.jobName}'s instances on ${server.serverIp}? They stop the job until restarted; peers take its items.`,
                `jobs/${name}/servers/${ip}/shutdown`,
                { 'aria-label': `Shut down on ${server.serverIp}` },
              ),
            )
          : undefined,
      );
    });
    const actions = [
      'Item',
      'Status',
      'Instance',
      'Server',
      'Failover',
      'Progress',
      ...(kit.actionsEnabled ? ['Action'] : []),
    ];
    /**
     * What ElasticJob's status leaves out (it reads OK): items disabled, and items whose latest run here failed (from
     * the executions the page has of this job).
     */
    function attention() {
      const disabled = detail!.sharding.filter((item) => item.status === 'DISABLED').length;
      const lastResult = new Map<number, boolean>();
      for (const execution of state.executions) {
        if (execution.jobName !== job.jobName || execution.success === undefined) continue;
        if (!lastResult.has(execution.item)) lastResult.set(execution.item, execution.success); // newest first
      }
      const failing = [...lastResult].filter(([, success]) => !success).map(([item]) => item);
      return [
        disabled
          ? h('span', { class: 'badge badge-disabled', id: 'items-disabled' }, `${disabled} ITEM(S) DISABLED`)
          : '',
        failing.length
          ? h('span', { class: 'badge badge-failure', id: 'failing' }, `FAILING: ITEM ${failing.sort().join(', ')}`)
          : '',
      ].flatMap((badgeOrNothing) => (badgeOrNothing ? [' ', badgeOrNothing] : []));
    }
    replace(
      'detail',
      h('h2', { id: 'detail-title', tabindex: '-1' }, job.jobName, ' ', badge(job.status), ...attention()),
      kit.actionsEnabled
        ? h(
            'div',
            { class: 'buttons' },
            act('Trigger', `Trigger ${job.jobName} now on every online instance?`, `jobs/${name}/trigger`, {
              'aria-label': `Trigger ${job.jobName}`,
            }),
            act(
              'Disable job',
              `Disable ${job.jobName} on every server? No item runs until enabled.`,
              `jobs/${name}/disable`,
            ),
            act('Enable job', `Enable ${job.jobName} on every server?`, `jobs/${name}/enable`),
            button('Edit configuration', () => navigation.edit(), { id: 'edit-config' }),
          )
        : h('p', { class: 'hint' }, 'Read-only: actions are off.'),
      h('dl', { class: 'config' }, ...configRows.flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, value)])),
      table(
        'Sharding',
        actions,
        sharding,
        'Not sharded yet: the leader shards it once registered, or at its next firing.',
      ),
      table(
        'Servers',
        ['Server', 'Status', 'Instances', ...(kit.actionsEnabled ? ['Actions'] : [])],
        servers,
        'No server.',
      ),
    );
  }
  return { load: loadDetail, render: renderDetail };
}
