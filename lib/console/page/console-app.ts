/// <reference lib="dom" />
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The console page's script: the layout, the filters, the navigation between the panels (one file each: jobs, job
 * detail, executions, servers; what they share is console-kit.ts), and ZooKeeper's changes pushed by the server over
 * one EventSource, a change reloading only what it touches. Every control is a native button, input or select
 * (keyboard-usable as is).
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function consoleApp(
  kit: ConsoleKit,
  panels: Record<
    'jobs' | 'detail' | 'executions' | 'servers' | 'editor' | 'failures' | 'workflows',
    (kit: ConsoleKit) => ConsolePanel
  >,
): void {
  const { base, state, PAGE_SIZE, h, reload } = kit;
  const root = document.getElementById('console')!;
  const jobs = panels.jobs(kit);
  const detail = panels.detail(kit);
  const executions = panels.executions(kit);
  const servers = panels.servers(kit);
  const editor = panels.editor(kit);
  const failures = panels.failures(kit);
  const loadFailures = failures.load;
  const loadWorkflows = panels.workflows(kit).load;
  const [loadJobs, loadDetail, loadServers, loadExecutions] = [jobs.load, detail.load, servers.load, executions.load];

  // ------------------------------------------------------------------ navigation
  kit.navigation.select = (jobName: string): void => {
    state.selected = jobName;
    history.replaceState(null, '', `${base}#${encodeURIComponent(jobName)}`);
    jobs.render();
    editor.render();
    void loadDetail().then(() => document.getElementById('detail-title')?.focus());
    reload([loadExecutions, loadFailures]);
  };
  kit.navigation.reloadDetail = (): void => reload([loadDetail]);
  kit.navigation.executionsChanged = (): void => detail.render();
  kit.navigation.page = (direction: number): void => {
    state.offset = Math.max(0, state.offset + direction * PAGE_SIZE);
    reload([loadJobs]);
  };

  // ------------------------------------------------------------------ the page
  root.replaceChildren(
    h(
      'header',
      {},
      h('h1', {}, document.title),
      h('span', { id: 'registries' }),
      h('span', { id: 'live', class: 'pill', role: 'status' }, 'connecting…'),
      h('span', { id: 'actions-pill', class: 'pill' }, kit.actionsEnabled ? 'actions on' : 'read-only'),
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
      h('section', { 'aria-label': 'Job configuration editor', class: 'panel', id: 'editor', hidden: true }),
      h(
        'section',
        { 'aria-labelledby': 'workflows-title', class: 'panel wide', hidden: true },
        h('h2', { id: 'workflows-title' }, 'Workflows'),
        h('div', { id: 'workflows' }, h('p', { class: 'hint' }, 'Loading…')),
      ),
      h(
        'section',
        { 'aria-labelledby': 'failures-title', class: 'panel wide' },
        h('h2', { id: 'failures-title' }, 'Failures'),
        h('div', { id: 'failures' }),
      ),
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
  detail.render();
  executions.render();
  failures.render();
  reload([loadJobs, loadDetail, loadServers, loadExecutions, loadFailures, loadWorkflows]);

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
  let historyAt = 0;
  let historyPending: number | undefined;
  const historySoon = () => {
    if (historyPending !== undefined) return;
    historyPending = window.setTimeout(
      () => {
        historyPending = undefined;
        historyAt = Date.now();
        soon(loadExecutions, loadFailures);
      },
      Math.max(0, historyAt + 3000 - Date.now()),
    );
  };
  let events: EventSource | undefined;
  const onMessage = (message: MessageEvent<string>) => {
    const change = JSON.parse(message.data) as { type: string; jobNames?: string[]; connected?: boolean };
    if (change.type === 'jobs') {
      // The list's page and its status counts may change with any job; the server reads only the changed ones.
      soon(loadJobs, loadServers);
      // The instances' logs are asked through ZooKeeper: at most every few seconds, on the jobs' changes.
      if (state.registry || kit.historySource === 'cluster') historySoon();
      if (state.selected && (change.jobNames ?? []).includes(state.selected)) soon(loadDetail);
    } else if (change.type === 'resync') {
      soon(loadJobs, loadDetail, loadServers, loadExecutions, loadFailures, loadWorkflows);
    } else if (change.type === 'workflows') {
      soon(loadWorkflows);
    } else if (change.type === 'executions') {
      soon(loadExecutions, loadFailures);
    } else if (change.type === 'connection') {
      setLive(change.connected === true);
    }
  };
  /** One live stream, of the registry shown: a switch closes the old one. */
  const follow = () => {
    events?.close();
    events = new EventSource(kit.api('changes'));
    events.addEventListener('open', () => setLive(true));
    events.addEventListener('error', () => setLive(false));
    events.addEventListener('message', onMessage);
  };
  follow();

  // ------------------------------------------------------------------ registries (ElasticJob-UI's several)
  type Registry = { name: string; namespace: string; own: boolean; actions: boolean };
  void kit.get<Registry[]>('registries').then((registries) => {
    if (registries.length < 2) return;
    const select = h(
      'select',
      { id: 'registry', 'aria-label': 'Registry' },
      ...registries.map((registry) =>
        h('option', { value: registry.own ? '' : registry.name }, `${registry.name} (${registry.namespace})`),
      ),
    ) as HTMLSelectElement;
    select.addEventListener('change', () => {
      const chosen = registries.find((registry) => (registry.own ? '' : registry.name) === select.value)!;
      state.registry = select.value;
      state.actions = chosen.actions;
      state.selected = undefined;
      state.offset = 0;
      state.detail = undefined;
      history.replaceState(null, '', base);
      document.getElementById('actions-pill')!.textContent = chosen.actions ? 'actions on' : 'read-only';
      editor.render();
      detail.render();
      follow();
      reload([loadJobs, loadServers, loadExecutions, loadFailures, loadWorkflows]);
    });
    kit.replace('registries', h('label', { for: 'registry', class: 'visually-hidden' }, 'Registry'), select);
  });
}
