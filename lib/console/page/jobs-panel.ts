/// <reference lib="dom" />
import type { ConsoleStatus as Status } from './console-kit.js';
import type { ConsoleJobsPage } from '../model/console-model.js';
import type { Wire } from '../../util/wire.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The jobs panel of the console's page: the list, filtered and paged by the server, with each job's status, cron and next fire time.
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function jobsPanel(kit: ConsoleKit): ConsolePanel {
  type JobsPage = Wire<ConsoleJobsPage>;
  const { state, latest, navigation, PAGE_SIZE, h, button, table, badge, time, replace, get } = kit;
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
          button(job.jobName, () => navigation.select(job.jobName), {
            class: 'link',
            'aria-label': `Open job ${job.jobName}`,
          }),
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
        button('Previous', () => navigation.page(-1), { disabled: page.offset === 0 ? '' : undefined }),
        h('span', { 'aria-live': 'polite' }, `${first}–${last} of ${page.total}`),
        button('Next', () => navigation.page(1), { disabled: last >= page.total ? '' : undefined }),
      ),
    );
  }
  return { load: loadJobs, render: renderJobs };
}
