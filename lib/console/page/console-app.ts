/// <reference lib="dom" />
import type { ExecutionRecord } from '../../interfaces/execution-history.interface.js';
import type { JobBriefStatus, ServerBriefInfo } from '../../lifecycle/lifecycle.types.js';
import type { ConsoleJobDetail, ConsoleJobsPage } from '../console-state.service.js';
import type { Wire } from '../../util/wire.js';
/**
 * The console page's script. It runs in the browser: it is served as this function's source text (see
 * console-page.ts), so it must not use anything outside its own body (no module-level names, no imports but of types,
 * which compile to nothing). Written
 * here, it is type-checked and linted with the library and needs no build step of its own.
 *
 * The page shows a jobs list (filtered and paged by the server), a job's detail (sharding, servers, executions)
 * and the servers, and follows ZooKeeper's changes pushed by the server over one EventSource: a change reloads only
 * what it touches. Every element is built with textContent (never HTML from data), every control is a native
 * button, input or select (keyboard-usable as is), and actions are confirmed in a modal <dialog>.
 */
export function consoleApp(): void {
  // The server's own types, as JSON carries them (util/wire.ts): none re-declared here.
  type Status = JobBriefStatus;
  type JobsPage = Wire<ConsoleJobsPage>;
  type Detail = Wire<ConsoleJobDetail>;
  type Server = Wire<ServerBriefInfo>;
  type Execution = Wire<ExecutionRecord>;
  type Child = Node | string | number | undefined | null | false;

  const root = document.getElementById('console')!;
  const base = location.pathname.replace(/\/+$/, '');
  const meta = (name: string): string => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
  const token = meta('elastic-job-csrf');
  const actionsEnabled = meta('elastic-job-actions') === 'true';
  const historyEnabled = meta('elastic-job-history') === 'true';
  const PAGE_SIZE = 50;

  const state = {
    name: '',
    status: '',
    offset: 0,
    page: undefined as JobsPage | undefined,
    selected: undefined as string | undefined,
    detail: undefined as Detail | undefined,
    servers: [] as Server[],
    executions: [] as Execution[],
    live: false,
  };

  // ------------------------------------------------------------------ DOM helpers
  function h(tag: string, attributes: Record<string, string | boolean | undefined> = {}, ...children: Child[]) {
    const element = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === false) continue;
      element.setAttribute(key, value === true ? '' : value);
    }
    for (const child of children) {
      if (child === undefined || child === null || child === false) continue;
      element.append(typeof child === 'number' ? String(child) : child);
    }
    return element;
  }
  function button(label: string, onClick: () => void, attributes: Record<string, string | undefined> = {}) {
    const element = h('button', { type: 'button', ...attributes }, label);
    element.addEventListener('click', onClick);
    return element;
  }
  /** `caption` is read out by screen readers; shown too unless the section's heading already says it. */
  function table(caption: string, headers: string[], rows: HTMLElement[], empty: string, showCaption = true) {
    return h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h('caption', { class: showCaption ? undefined : 'visually-hidden' }, caption),
        h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
        h('tbody', {}, ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: String(headers.length) }, empty))])),
      ),
    );
  }
  function badge(status: string) {
    return h('span', { class: `badge badge-${status.toLowerCase()}` }, status);
  }
  function time(iso: string | undefined) {
    if (!iso) return '–';
    const date = new Date(iso);
    return h('time', { datetime: iso, title: iso }, date.toLocaleString());
  }
  function replace(id: string, ...children: Child[]) {
    const element = document.getElementById(id);
    if (element)
      element.replaceChildren(...children.filter((child): child is Node | string => !!child || child === ''));
  }

  // ------------------------------------------------------------------ data
  async function get<T>(path: string): Promise<T> {
    const response = await fetch(`${base}/api/${path}`, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(await problem(response));
    return (await response.json()) as T;
  }
  async function post(path: string, body: unknown = {}): Promise<string> {
    const response = await fetch(`${base}/api/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-elastic-job-csrf': token },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(await problem(response));
    return ((await response.json()) as { done: string }).done;
  }
  async function problem(response: Response): Promise<string> {
    try {
      const body = (await response.json()) as { message?: string | string[] };
      return Array.isArray(body.message) ? body.message.join('; ') : (body.message ?? response.statusText);
    } catch {
      return `${response.status} ${response.statusText}`;
    }
  }
  function say(message: string, kind: 'ok' | 'error' = 'ok') {
    replace('toast', h('p', { class: `toast toast-${kind}` }, message));
  }

  // Answers can come back out of order (a filter typed while a pushed reload is under way): only the answer to the
  // latest request of each kind is shown.
  const latest = { jobs: 0, detail: 0, executions: 0 };
  async function loadJobs() {
    const query = new URLSearchParams({ offset: String(state.offset), limit: String(PAGE_SIZE) });
    if (state.name) query.set('name', state.name);
    if (state.status) query.set('status', state.status);
    const asked = ++latest.jobs;
    const page = await get<JobsPage>(`jobs?${query}`);
    if (asked !== latest.jobs) return;
    state.page = page;
    renderJobs();
  }
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
  async function loadServers() {
    state.servers = await get<Server[]>('servers');
    renderServers();
  }
  async function loadExecutions() {
    if (!historyEnabled) return;
    const query = new URLSearchParams({ limit: '50' });
    if (state.selected) query.set('job', state.selected);
    const asked = ++latest.executions;
    const { executions } = await get<{ executions: Execution[] }>(`executions?${query}`);
    if (asked !== latest.executions) return;
    state.executions = executions;
    renderExecutions();
  }
  function reload(what: Array<() => Promise<void>>) {
    for (const load of what) load().catch((error: Error) => say(error.message, 'error'));
  }

  // ------------------------------------------------------------------ actions
  const dialog = document.getElementById('confirm') as HTMLDialogElement;
  function confirmThen(question: string, action: () => Promise<string>) {
    replace('confirm-text', question);
    const yes = document.getElementById('confirm-yes')!;
    const fresh = yes.cloneNode(true) as HTMLButtonElement; // drops the previous question's listener
    yes.replaceWith(fresh);
    fresh.addEventListener('click', () => {
      dialog.close();
      void (async () => {
        try {
          say(await action());
        } catch (error) {
          say((error as Error).message, 'error');
        }
      })();
    });
    dialog.showModal();
    (document.getElementById('confirm-no') as HTMLButtonElement).focus();
  }
  function act(label: string, question: string, path: string, attributes: Record<string, string | undefined> = {}) {
    if (!actionsEnabled) return undefined;
    return button(label, () => confirmThen(question, () => post(path)), attributes);
  }

  // ------------------------------------------------------------------ rendering
  function renderJobs() {
    const page = state.page;
    if (!page) return;
    const select = document.getElementById('status-filter') as HTMLSelectElement;
    for (const option of Array.from(select.options)) {
      const status = option.value as Status | '';
      const all = Object.values(page.counts).reduce((sum, n) => sum + n, 0);
      option.textContent = status ? `${status} (${page.counts[status]})` : `All statuses (${all})`;
    }
    const rows = page.jobs.map((job) =>
      h(
        'tr',
        { 'aria-current': job.jobName === state.selected ? 'true' : undefined },
        h(
          'th',
          { scope: 'row' },
          button(job.jobName, () => select_(job.jobName), { class: 'link', 'aria-label': `Open job ${job.jobName}` }),
        ),
        h('td', {}, badge(job.status)),
        h('td', { class: 'mono' }, job.cron ?? 'one-off'),
        h('td', {}, time(job.nextFireTime)),
        h('td', { class: 'num' }, job.instanceCount),
        h('td', { class: 'num' }, job.shardingTotalCount),
      ),
    );
    const first = page.total === 0 ? 0 : page.offset + 1;
    const last = Math.min(page.offset + page.limit, page.total);
    replace(
      'jobs-list',
      table('Jobs', ['Job', 'Status', 'Cron', 'Next fire time', 'Instances', 'Items'], rows, 'No job matches.', false),
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Jobs pages' },
        button('Previous', () => page_(-1), { disabled: page.offset === 0 ? '' : undefined }),
        h('span', { 'aria-live': 'polite' }, `${first}–${last} of ${page.total}`),
        button('Next', () => page_(1), { disabled: last >= page.total ? '' : undefined }),
      ),
    );
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
      ['Next fire time', job.nextFireTime ? new Date(job.nextFireTime).toLocaleString() : '–'],
      ['Description', job.description || '–'],
      ...Object.entries(detail.config).map(([key, value]): [string, string] => [
        key,
        value === undefined ? '–' : String(value),
      ]),
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
        actionsEnabled
          ? h(
              'td',
              {},
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
        actionsEnabled
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
    const actions = ['Item', 'Status', 'Instance', 'Server', 'Failover', ...(actionsEnabled ? ['Action'] : [])];
    replace(
      'detail',
      h('h2', { id: 'detail-title', tabindex: '-1' }, job.jobName, ' ', badge(job.status)),
      actionsEnabled
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
          )
        : h('p', { class: 'hint' }, 'Read-only: actions are off.'),
      h('dl', { class: 'config' }, ...configRows.flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, value)])),
      table('Sharding', actions, sharding, 'Not sharded yet: the leader shards at the first firing.'),
      table(
        'Servers',
        ['Server', 'Status', 'Instances', ...(actionsEnabled ? ['Actions'] : [])],
        servers,
        'No server.',
      ),
    );
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
        actionsEnabled
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
        ['Server', 'Instances', 'Jobs', 'Disabled in', ...(actionsEnabled ? ['Actions'] : [])],
        rows,
        'No server.',
        false,
      ),
    );
  }
  function renderExecutions() {
    if (!historyEnabled) {
      replace(
        'executions',
        h(
          'p',
          { class: 'hint' },
          'No execution history: configure tracing (postgresTracing) and the console’s executionHistory.',
        ),
      );
      return;
    }
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
      );
    });
    replace(
      'executions',
      table(
        state.selected ? `Recent executions of ${state.selected}` : 'Recent executions',
        ['Started', 'Job', 'Item', 'Source', 'Result', 'Duration', 'Server', 'Failure cause'],
        rows,
        'No execution recorded yet.',
      ),
    );
  }

  // ------------------------------------------------------------------ navigation
  function select_(jobName: string) {
    state.selected = jobName;
    history.replaceState(null, '', `${base}#${encodeURIComponent(jobName)}`);
    renderJobs();
    void loadDetail().then(() => document.getElementById('detail-title')?.focus());
    reload([loadExecutions]);
  }
  function page_(direction: number) {
    state.offset = Math.max(0, state.offset + direction * PAGE_SIZE);
    reload([loadJobs]);
  }

  // ------------------------------------------------------------------ the page
  root.replaceChildren(
    h(
      'header',
      {},
      h('h1', {}, document.title),
      h('span', { id: 'live', class: 'pill', role: 'status' }, 'connecting…'),
      h('span', { class: 'pill' }, actionsEnabled ? 'actions on' : 'read-only'),
    ),
    h('div', { id: 'toast', role: 'status', 'aria-live': 'polite' }),
    h(
      'main',
      {},
      h(
        'section',
        { 'aria-labelledby': 'jobs-title', class: 'panel' },
        h('h2', { id: 'jobs-title' }, 'Jobs'),
        h(
          'form',
          { class: 'filters', role: 'search' },
          h('label', { for: 'name-filter' }, 'Name'),
          h('input', { id: 'name-filter', type: 'search', placeholder: 'Filter by name', autocomplete: 'off' }),
          h('label', { for: 'status-filter' }, 'Status'),
          h(
            'select',
            { id: 'status-filter' },
            ...['', 'OK', 'CRASHED', 'DISABLED', 'SHARDING_FLAG'].map((status) =>
              h('option', { value: status }, status || 'All statuses'),
            ),
          ),
        ),
        h('div', { id: 'jobs-list' }, h('p', { class: 'hint' }, 'Loading…')),
      ),
      h('section', { 'aria-label': 'Job detail', class: 'panel', id: 'detail' }),
      h(
        'section',
        { 'aria-labelledby': 'executions-title', class: 'panel wide' },
        h('h2', { id: 'executions-title' }, 'Executions'),
        h('div', { id: 'executions' }),
      ),
      h(
        'section',
        { 'aria-labelledby': 'servers-title', class: 'panel wide' },
        h('h2', { id: 'servers-title' }, 'Servers'),
        h('div', { id: 'servers' }),
      ),
    ),
  );
  const nameFilter = document.getElementById('name-filter') as HTMLInputElement;
  let typing: number | undefined;
  nameFilter.addEventListener('input', () => {
    clearTimeout(typing);
    typing = window.setTimeout(() => {
      state.name = nameFilter.value;
      state.offset = 0;
      reload([loadJobs]);
    }, 150);
  });
  document.querySelector('form.filters')!.addEventListener('submit', (event) => event.preventDefault());
  (document.getElementById('status-filter') as HTMLSelectElement).addEventListener('change', (event) => {
    state.status = (event.target as HTMLSelectElement).value;
    state.offset = 0;
    reload([loadJobs]);
  });
  try {
    const fromHash = decodeURIComponent(location.hash.slice(1));
    if (fromHash) state.selected = fromHash;
  } catch {
    // a malformed #fragment: no job selected
  }
  renderDetail();
  renderExecutions();
  reload([loadJobs, loadDetail, loadServers, loadExecutions]);

  // ------------------------------------------------------------------ live changes (pushed, not polled)
  const setLive = (live: boolean) => {
    state.live = live;
    const pill = document.getElementById('live')!;
    pill.textContent = live ? 'live' : 'reconnecting…';
    pill.className = `pill ${live ? 'pill-live' : 'pill-down'}`;
  };
  let pending: number | undefined;
  const wanted = new Set<() => Promise<void>>();
  const soon = (...loads: Array<() => Promise<void>>) => {
    for (const load of loads) wanted.add(load);
    pending ??= window.setTimeout(() => {
      pending = undefined;
      const loads_ = [...wanted];
      wanted.clear();
      reload(loads_);
    }, 100);
  };
  const events = new EventSource(`${base}/api/changes`);
  events.addEventListener('open', () => setLive(true));
  events.addEventListener('error', () => setLive(false));
  events.addEventListener('message', (message: MessageEvent<string>) => {
    const change = JSON.parse(message.data) as { type: string; jobNames?: string[]; connected?: boolean };
    if (change.type === 'jobs') {
      // The list's page and its status counts may change with any job; the server reads only the changed ones.
      soon(loadJobs, loadServers);
      if (state.selected && (change.jobNames ?? []).includes(state.selected)) soon(loadDetail);
    } else if (change.type === 'resync') {
      soon(loadJobs, loadDetail, loadServers, loadExecutions);
    } else if (change.type === 'executions') {
      soon(loadExecutions);
    } else if (change.type === 'connection') {
      setLive(change.connected === true);
    }
  });
}
