import { consoleApp } from './console-app.js';
import { configEditor } from './config-editor.js';
import { consoleKit } from './console-kit.js';
import { detailPanel } from './detail-panel.js';
import { executionsPanel } from './executions-panel.js';
import { failuresPanel } from './failures-panel.js';
import { jobsPanel } from './jobs-panel.js';
import { serversPanel } from './servers-panel.js';
import { workflowsPanel } from './workflows-panel.js';

/**
 * The page's script, put together from the functions' own sources (each written in TypeScript, type-checked and
 * linted with the library, no build step): the app, given the kit the panels share and each panel's factory. Run
 * once the page is parsed.
 */
export const CONSOLE_SCRIPT =
  `'use strict';\n(${consoleApp.toString()})((${consoleKit.toString()})(), {\n` +
  `  jobs: ${jobsPanel.toString()},\n` +
  `  detail: ${detailPanel.toString()},\n` +
  `  executions: ${executionsPanel.toString()},\n` +
  `  servers: ${serversPanel.toString()},\n` +
  `  editor: ${configEditor.toString()},\n` +
  `  failures: ${failuresPanel.toString()},\n` +
  `  workflows: ${workflowsPanel.toString()},\n` +
  `});\n`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The page's HTML: a shell the script fills. `assets`: the relative prefix of its script and styles ('' or the
 * console path's last segment and a slash), so they resolve wherever the console is mounted.
 */
export function consoleHtml(page: {
  assets: string;
  title: string;
  csrfToken: string;
  actions: boolean;
  history: 'database' | 'cluster';
}): string {
  const assets = escapeHtml(page.assets);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="elastic-job-csrf" content="${escapeHtml(page.csrfToken)}">
<meta name="elastic-job-actions" content="${page.actions}">
<meta name="elastic-job-history" content="${page.history}">
<title>${escapeHtml(page.title)}</title>
<link rel="stylesheet" href="${assets}console.css">
<script src="${assets}console.js" defer></script>
</head>
<body>
<div id="console"><noscript>The console needs JavaScript.</noscript></div>
<dialog id="confirm" aria-labelledby="confirm-text">
<form method="dialog">
<div id="confirm-text"></div>
<div class="buttons"><button id="confirm-no" value="cancel">Cancel</button><button id="confirm-yes" type="button" class="primary">Confirm</button></div>
</form>
</dialog>
</body>
</html>
`;
}

/**
 * Readable on a laptop and a phone: two columns when there is room, one otherwise; on a phone each table row is a
 * card with its columns named, so nothing scrolls sideways.
 */
export const CONSOLE_STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5b6478; --bg: #f6f7fb; --panel: #fff; --line: #d9dde7;
  --accent: #2457c5; --ok: #1b7f3b; --warn: #a15c00; --bad: #b3261e; font: 15px/1.45 system-ui, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9f0; --muted: #a3abbd; --bg: #14171f; --panel: #1c2029;
  --line: #343a48; --accent: #8fb0ff; --ok: #6fd08c; --warn: #f0b35a; --bad: #ff8a80; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .75rem 1rem;
  border-bottom: 1px solid var(--line); background: var(--panel); }
h1 { font-size: 1.2rem; margin: 0 auto 0 0; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
main { display: grid; gap: 1rem; padding: 1rem; grid-template-columns: minmax(0, 1fr); }
/* Side by side only where the job's tables (items and servers with their action buttons) still fit beside the list. */
@media (min-width: 1600px) { main { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); } .wide { grid-column: 1 / -1; } }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; min-width: 0; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .5rem; }
input, select, button { font: inherit; color: inherit; }
input, select { padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
button { padding: .3rem .7rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.link { border: 0; background: none; padding: 0; color: var(--accent); text-decoration: underline; text-align: left; }
button[disabled] { opacity: .5; cursor: default; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.table-wrap { overflow-x: auto; margin: .5rem 0 1rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.cause { white-space: normal; max-width: 28rem; }
.num { text-align: right; }
.mono { font-family: ui-monospace, monospace; font-size: .9em; }
tr[aria-current="true"] { background: color-mix(in srgb, var(--accent) 12%, transparent); }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .8rem; font-weight: 600;
  border: 1px solid currentColor; }
.badge-ok, .badge-success, .badge-enabled, .badge-pending { color: var(--ok); }
.badge-running { color: var(--accent); }
.badge-sharding_flag { color: var(--warn); }
.badge-crashed, .badge-failure, .badge-disabled { color: var(--bad); }
.pill { padding: .1rem .6rem; border-radius: 999px; border: 1px solid var(--line); font-size: .85rem; }
.pill-live { color: var(--ok); border-color: var(--ok); }
.pill-down { color: var(--bad); border-color: var(--bad); }
.buttons { display: flex; flex-wrap: wrap; gap: .4rem; margin: .25rem 0 .75rem; }
/* A cell of buttons stays a table cell (flex would take it out of the row's columns). */
td.buttons { display: table-cell; margin: 0; }
td.buttons > * + * { margin-left: .4rem; }
td time, td.wrap { white-space: normal; }
/* Narrow screens: each row a card, each cell with its column's name, nothing to scroll sideways. */
@media (max-width: 700px) {
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap th, .table-wrap td { display: block; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  .table-wrap tr { border-bottom: 1px solid var(--line); padding: .35rem 0; }
  .table-wrap th, .table-wrap td { border: 0; padding: .1rem 0; white-space: normal; text-align: left; }
  .table-wrap [data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  td.cause { max-width: none; }
}
.pager { display: flex; align-items: center; gap: .75rem; }
.config { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem 1rem; margin: .5rem 0 1rem; }
.config dt { color: var(--muted); }
.config dd { margin: 0; overflow-wrap: anywhere; }
.hint { color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
#toast:empty { display: none; }
.toast { margin: .75rem 1rem 0; padding: .5rem .75rem; border-radius: 6px; border: 1px solid var(--ok); }
.toast-error { border-color: var(--bad); }
dialog { border: 1px solid var(--line); border-radius: 8px; background: var(--panel); color: var(--fg); max-width: 32rem; }
dialog::backdrop { background: rgb(0 0 0 / .4); }
pre { white-space: pre-wrap; font-size: .8rem; }
.editor { display: grid; gap: .5rem; }
.field { display: grid; gap: .2rem; }
.field-flag { display: flex; gap: .5rem; align-items: center; }
.editor input[type="text"], .editor input[type="number"], .editor textarea { width: 100%; }
.error { color: var(--bad); }
.diff { padding-left: 1.2rem; }
.diff del { color: var(--bad); }
.diff ins { color: var(--ok); text-decoration: none; }
/* The workflows' DAGs: a step's box coloured by its state in the latest run. */
.workflow + .workflow { border-top: 1px solid var(--line); margin-top: 1rem; padding-top: .5rem; }
.workflow h3 { font-size: 1rem; margin: .25rem 0; }
.dag-wrap { overflow-x: auto; margin: .5rem 0; }
.dag .edge { fill: none; stroke: var(--muted); stroke-width: 1.5; }
.dag .arrow { fill: var(--muted); }
.dag .step { cursor: pointer; }
.dag .step rect { fill: var(--bg); stroke: var(--line); stroke-width: 2; }
.dag .step text { fill: var(--fg); font-size: 13px; }
.dag .step .step-state { fill: var(--muted); font-size: 11px; }
.dag .step-completed rect { stroke: var(--ok); }
.dag .step-running rect { stroke: var(--accent); }
.dag .step-failed rect { stroke: var(--bad); }
.dag .step:focus-visible rect, .dag .step:hover rect { stroke-width: 3; }
.badge-completed { color: var(--ok); }
.badge-cancelled { color: var(--muted); }
.badge-failed { color: var(--bad); }
.run-step { white-space: nowrap; }
`;
