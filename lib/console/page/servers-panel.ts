/// <reference lib="dom" />
import type { ServerBriefInfo } from '../../lifecycle/lifecycle.types.js';
import type { Wire } from '../../util/wire.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The servers panel of the console's page: every server with its instances, jobs and the jobs it is disabled in, and the actions on a server.
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function serversPanel(kit: ConsoleKit): ConsolePanel {
  type Server = Wire<ServerBriefInfo>;
  const { state, h, table, replace, get, act } = kit;
  async function loadServers() {
    state.servers = await get<Server[]>('servers');
    renderServers();
  }
  function renderServers() {
    const rows = state.servers.map((server) => {
      const ip = encodeURIComponent(server.serverIp);
      return h(
        'tr',
        {},
        h('th', { scope: 'row', class: 'mono' }, server.serverIp),
        h('td', { class: 'num' }, server.instancesNum),
        h('td', { class: 'num' }, server.jobsNum),
        h('td', { class: 'num' }, server.disabledJobsNum),
        kit.actionsEnabled
          ? h(
              'td',
              { class: 'buttons' },
              act('Disable', `Disable server ${server.serverIp} in every job?`, `servers/${ip}/disable`, {
                'aria-label': `Disable server ${server.serverIp}`,
              }),
              act('Enable', `Enable server ${server.serverIp} in every job?`, `servers/${ip}/enable`, {
                'aria-label': `Enable server ${server.serverIp}`,
              }),
            )
          : undefined,
      );
    });
    replace(
      'servers',
      table(
        'Servers',
        ['Server', 'Instances', 'Jobs', 'Disabled in', ...(kit.actionsEnabled ? ['Actions'] : [])],
        rows,
        'No server.',
        false,
      ),
    );
  }
  return { load: loadServers, render: renderServers };
}
