/// <reference lib="dom" />
import type { ConsoleJobDetail } from '../model/console-model.js';
import type { Wire } from '../../util/wire.js';
import type { ConsoleKit, ConsolePanel } from './console-kit.js';

/**
 * The configuration editor of the console's page: ElasticJob-UI's editable fields of the chosen job, the cron's next
 * fire times shown as it is typed (asked of the server, which checks it as the job would), and the change confirmed
 * as a diff before it is written. Its own panel, drawn only when opened: the job's panel is redrawn on every change
 * in ZooKeeper and would wipe a half-typed form.
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function configEditor(kit: ConsoleKit): ConsolePanel {
  type Detail = Wire<ConsoleJobDetail>;
  type Value = string | number | boolean | null | undefined;
  const { state, h, button, replace, get, say, send, confirmThen } = kit;
  const TEXT = ['cron', 'timeZone', 'shardingItemParameters', 'jobParameter', 'description'] as const;
  const NUMBERS = ['shardingTotalCount', 'maxTimeDiffSeconds'] as const;
  const FLAGS = ['failover', 'misfire', 'monitorExecution'] as const;
  const LABELS: Record<string, string> = {
    cron: 'Cron',
    timeZone: 'Time zone (IANA; empty: the instances’ own)',
    shardingTotalCount: 'Sharding total count',
    shardingItemParameters: 'Item parameters (0=a,1=b)',
    jobParameter: 'Job parameter',
    description: 'Description',
    maxTimeDiffSeconds: 'Max time diff seconds (-1: not checked)',
    props: 'Properties (one name=value a line: http.uri, script.command.line, …)',
    failover: 'Failover',
    misfire: 'Misfire',
    monitorExecution: 'Monitor execution',
  };
  let editing: { jobName: string; original: Record<string, Value> } | undefined;
  let previewAsked = 0;
  let typing: number | undefined;

  function currentValues(detail: Detail): Record<string, Value> {
    return {
      cron: detail.job.cron ?? '',
      timeZone: detail.job.timeZone ?? '',
      shardingTotalCount: detail.job.shardingTotalCount,
      shardingItemParameters: detail.config.shardingItemParameters,
      jobParameter: detail.config.jobParameter,
      description: detail.job.description ?? '',
      maxTimeDiffSeconds: detail.config.maxTimeDiffSeconds,
      failover: detail.config.failover,
      misfire: detail.config.misfire,
      monitorExecution: detail.config.monitorExecution,
      // A typed job's properties as text lines, compared as text; sent as an object when changed.
      props: Object.entries(detail.props)
        .map(([prop, value]) => `${prop}=${value}`)
        .join('\n'),
    };
  }
  function propsOf(text: string): Record<string, string> {
    const props: Record<string, string> = {};
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const equals = line.indexOf('=');
      // A line without '=' is sent as a name with no value: refused by the server, naming it.
      if (equals < 0) props[line.trim()] = '';
      else props[line.slice(0, equals).trim()] = line.slice(equals + 1);
    }
    return props;
  }
  function field(name: string): HTMLInputElement {
    return document.getElementById(`edit-${name}`) as HTMLInputElement;
  }
  function formValues(): Record<string, Value> {
    const values: Record<string, Value> = {};
    for (const name of TEXT) values[name] = field(name).value.trim();
    // A number left empty or not a number goes to the server as typed, to be refused there with the field named.
    for (const name of NUMBERS) {
      const typed = field(name).value.trim();
      values[name] = typed !== '' && Number.isFinite(Number(typed)) ? Number(typed) : typed;
    }
    for (const name of FLAGS) values[name] = field(name).checked;
    const props = document.getElementById('edit-props') as HTMLTextAreaElement | null;
    if (props) values.props = props.value.trim();
    return values;
  }
  async function preview() {
    const asked = ++previewAsked;
    const cron = field('cron').value.trim();
    const zone = field('timeZone').value.trim();
    const query = new URLSearchParams({ expression: cron });
    if (zone) query.set('timeZone', zone);
    let shown: HTMLElement;
    try {
      const answer = await get<{ shown: string }>(`cron?${query}`);
      shown = h('span', {}, `Next fire times: ${answer.shown}`);
    } catch (error) {
      shown = h('span', { class: 'error' }, (error as Error).message);
    }
    if (asked === previewAsked) replace('cron-preview', shown);
  }
  function open() {
    const detail = state.detail;
    if (!detail) return;
    editing = { jobName: detail.job.jobName, original: currentValues(detail) };
    render();
    field('cron').focus();
    void preview();
  }
  function close() {
    editing = undefined;
    render();
    document.getElementById('edit-config')?.focus();
  }
  function submit(event: Event) {
    event.preventDefault();
    if (!editing) return;
    const { jobName, original } = editing;
    const values = formValues();
    const changes: Record<string, Value> = {};
    for (const [name, value] of Object.entries(values)) {
      if (value === original[name]) continue;
      // An empty zone means none (null: JSON has no undefined): the field is left out of the stored configuration.
      changes[name] = name === 'timeZone' && value === '' ? null : value;
    }
    // Sent as the object the server stores (the text above is only the form's).
    const sent: Record<string, unknown> = { ...changes };
    if ('props' in changes) sent.props = propsOf(String(changes.props ?? ''));
    const names = Object.keys(changes);
    if (names.length === 0) {
      say('Nothing changed.');
      return;
    }
    const diff = h(
      'div',
      {},
      h('p', {}, `Change ${names.length} field(s) of ${jobName}? Every instance picks the change up at once.`),
      h(
        'ul',
        { class: 'diff' },
        ...names.map((name) =>
          h(
            'li',
            {},
            h('span', { class: 'mono' }, name),
            ': ',
            h('del', {}, JSON.stringify(original[name] ?? null)),
            ' → ',
            h('ins', {}, JSON.stringify(changes[name] ?? null)),
          ),
        ),
      ),
    );
    confirmThen(diff, async () => {
      const done = await send<{ done: string }>('PUT', `jobs/${encodeURIComponent(jobName)}/config`, sent);
      editing = undefined;
      render();
      kit.navigation.reloadDetail();
      return done.done;
    });
  }
  function render() {
    const section = document.getElementById('editor')!;
    if (editing && editing.jobName !== state.selected) editing = undefined; // another job was chosen
    if (!editing) {
      section.hidden = true;
      replace('editor');
      return;
    }
    section.hidden = false;
    const { original } = editing;
    const input = (name: string, type: string) =>
      h(
        'div',
        { class: 'field' },
        h('label', { for: `edit-${name}` }, LABELS[name]),
        h('input', {
          id: `edit-${name}`,
          name,
          type,
          value: String(original[name] ?? ''),
          autocomplete: 'off',
          ...(type === 'number' ? { step: '1' } : {}),
        }),
      );
    const flag = (name: string) =>
      h(
        'div',
        { class: 'field field-flag' },
        h('input', { id: `edit-${name}`, name, type: 'checkbox', checked: original[name] === true }),
        h('label', { for: `edit-${name}` }, LABELS[name]),
      );
    const form = h(
      'form',
      { class: 'editor', 'aria-labelledby': 'editor-title' },
      h('h2', { id: 'editor-title' }, `Edit ${editing.jobName}`),
      input('cron', 'text'),
      h('p', { id: 'cron-preview', class: 'hint', 'aria-live': 'polite' }),
      input('timeZone', 'text'),
      ...NUMBERS.map((name) => input(name, 'number')),
      ...TEXT.filter((name) => name !== 'cron' && name !== 'timeZone').map((name) => input(name, 'text')),
      ...FLAGS.map(flag),
      // Only a typed job has properties to edit.
      original.props
        ? h(
            'div',
            { class: 'field' },
            h('label', { for: 'edit-props' }, LABELS.props),
            h('textarea', { id: 'edit-props', name: 'props', rows: '4', class: 'mono' }, String(original.props)),
          )
        : undefined,
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'submit', class: 'primary' }, 'Review changes'),
        button('Cancel', close),
      ),
    );
    form.addEventListener('submit', submit);
    replace('editor', form);
    for (const name of ['cron', 'timeZone']) {
      field(name).addEventListener('input', () => {
        clearTimeout(typing);
        typing = window.setTimeout(() => void preview(), 200);
      });
    }
  }
  kit.navigation.edit = open;
  return { load: async () => undefined, render };
}
