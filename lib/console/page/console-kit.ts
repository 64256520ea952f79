/// <reference lib="dom" />
import type { ExecutionRecord } from '../../interfaces/execution-history.interface.js';
import type { JobBriefStatus, ServerBriefInfo } from '../../lifecycle/lifecycle.types.js';
import type { ConsoleJobDetail, ConsoleJobsPage } from '../model/console-model.js';
import type { Wire } from '../../util/wire.js';

/**
 * What every panel of the console's page shares: the page's settings (from its meta tags), the state the panels show,
 * the DOM helpers (every element built with textContent, never HTML from data), the server's API, the toast, and
 * the actions (each confirmed in the modal <dialog>).
 * Served as its function's source text (console-page.ts puts the page's script together): it must not use anything
 * outside its own body but its parameters (no module-level names; imports of types only, which compile to nothing).
 */
export function consoleKit() {
  // The server's own types, as JSON carries them (util/wire.ts): none re-declared here.
  type JobsPage = Wire<ConsoleJobsPage>;
  type Detail = Wire<ConsoleJobDetail>;
  type Server = Wire<ServerBriefInfo>;
  type Execution = Wire<ExecutionRecord>;
  type Child = Node | string | number | undefined | null | false;

  const base = location.pathname.replace(/\/+$/, '');
  const meta = (name: string): string => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
  const token = meta('elastic-job-csrf');
  /** The app's own registry's: another registry's come from GET api/registries when the page switches to it. */
  const appActions = meta('elastic-job-actions') === 'true';
  /** Where executions come from: the app's tracing store, or every instance's in-memory log. */
  const historySource = meta('elastic-job-history') === 'database' ? 'database' : 'cluster';
  const PAGE_SIZE = 50;

  const state = {
    /** The registry shown, by name: '' for the app's own. */
    registry: '',
    /** Whether the page may act on the registry shown. */
    actions: appActions,
    name: '',
    status: '',
    offset: 0,
    page: undefined as JobsPage | undefined,
    selected: undefined as string | undefined,
    detail: undefined as Detail | undefined,
    servers: [] as Server[],
    executions: [] as Execution[],
    /** The instances whose logs answered the last executions query, and those that did not (cluster history). */
    answered: [] as string[],
    missing: [] as string[],
    failures: [] as Execution[],
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
    // Each cell names its column: narrow screens show rows as cards, a label before each value.
    for (const row of rows)
      Array.from(row.children).forEach((cell, index) => {
        if (headers[index] && index > 0) cell.setAttribute('data-label', headers[index]);
      });
    return h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h('caption', { class: showCaption ? undefined : 'visually-hidden' }, caption),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            // A column of numbers has its heading over them, on the right.
            ...headers.map((header, index) =>
              h(
                'th',
                { scope: 'col', class: rows[0]?.children[index]?.classList.contains('num') ? 'num' : undefined },
                header,
              ),
            ),
          ),
        ),
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
    if (!element) return;
    // A live update redraws a panel while a keyboard user may be on one of its controls: give the focus back to the
    // control with the same key, or it falls to the page's body and the next key press does nothing. The key is
    // `data-focus-key` where a control's name changes with its state (a DAG step's label carries the step's state),
    // else its name.
    const focused = document.activeElement;
    const key = focused && element.contains(focused) ? focusKey(focused) : null;
    element.replaceChildren(...children.filter((child): child is Node | string => !!child || child === ''));
    if (key === null) return;
    const again = Array.from(
      element.querySelectorAll<HTMLElement | SVGElement>('button, a, input, select, [tabindex]'),
    ).find((control) => focusKey(control) === key);
    again?.focus();
  }

  function focusKey(control: Element) {
    return control.getAttribute('data-focus-key') || control.getAttribute('aria-label') || control.textContent;
  }

  // ------------------------------------------------------------------ data
  /** A route of the console's API, on the registry shown. */
  function api(path: string): string {
    if (!state.registry) return `${base}/api/${path}`;
    return `${base}/api/${path}${path.includes('?') ? '&' : '?'}registry=${encodeURIComponent(state.registry)}`;
  }
  async function get<T>(path: string): Promise<T> {
    const response = await fetch(api(path), { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(await problem(response));
    return (await response.json()) as T;
  }
  async function send<T>(method: 'POST' | 'PUT', path: string, body: unknown = {}): Promise<T> {
    const response = await fetch(api(path), {
      method,
      headers: { 'content-type': 'application/json', 'x-elastic-job-csrf': token },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(await problem(response));
    return (await response.json()) as T;
  }
  async function post(path: string, body: unknown = {}): Promise<string> {
    return (await send<{ done: string }>('POST', path, body)).done;
  }
  async function problem(response: Response): Promise<string> {
    try {
      const body = (await response.json()) as { message?: string | string[] };
      return Array.isArray(body.message) ? body.message.join('; ') : (body.message ?? response.statusText);
    } catch {
      return `${response.status} ${response.statusText}`;
    }
  }
  let toastTimer: number | undefined;
  /** A banner that goes by itself after a few seconds (an error stays longer), or at its close button. */
  function say(message: string, kind: 'ok' | 'error' = 'ok') {
    clearTimeout(toastTimer);
    const close = () => {
      clearTimeout(toastTimer);
      replace('toast');
    };
    replace(
      'toast',
      h(
        'p',
        { class: `toast toast-${kind}` },
        message,
        ' ',
        button('×', close, { class: 'link', 'aria-label': 'Dismiss message' }),
      ),
    );
    toastTimer = window.setTimeout(close, kind === 'error' ? 10_000 : 4_000);
  }

  // Answers can come back out of order (a filter typed while a pushed reload is under way): only the answer to the
  // latest request of each kind is shown.
  const latest = { jobs: 0, detail: 0, executions: 0, failures: 0 };
  function reload(what: Array<() => Promise<void>>) {
    for (const load of what) load().catch((error: Error) => say(error.message, 'error'));
  }

  // ------------------------------------------------------------------ actions
  const dialog = document.getElementById('confirm') as HTMLDialogElement;
  function confirmThen(question: string | Node, action: () => Promise<string>) {
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
    if (!state.actions) return undefined;
    return button(label, () => confirmThen(question, () => post(path)), attributes);
  }

  /** What choosing a job and turning the jobs' page do: set by the app once its panels exist. */
  const navigation = {
    select: (jobName: string): void => void jobName,
    page: (direction: number): void => void direction,
    edit: (): void => undefined,
    reloadDetail: (): void => undefined,
    executionsChanged: (): void => undefined,
  };

  return {
    base,
    api,
    /** Whether the page may act on the registry shown (read at each drawing: the registry can change). */
    get actionsEnabled(): boolean {
      return state.actions;
    },
    historySource,
    PAGE_SIZE,
    state,
    latest,
    navigation,
    h,
    button,
    table,
    badge,
    time,
    replace,
    get,
    send,
    say,
    reload,
    act,
    confirmThen,
  };
}

export type ConsoleKit = ReturnType<typeof consoleKit>;

/** A panel of the page: reads its data from the server, and draws it. */
export interface ConsolePanel {
  load(): Promise<void>;
  render(): void;
}

/** Which job statuses there are, as the filter lists them. */
export type ConsoleStatus = JobBriefStatus;
