/*
 * nbagent's JupyterLab extension: the notebook JupyterLab shows, served to the kernel.
 *
 * Written directly as the module-federation container that JupyterLab (and Notebook 7)
 * load for a prebuilt extension, so it needs no build step: `init(shareScope)` receives the
 * application's shared packages, `get('./extension')` returns the plugin.
 *
 * The kernel opens a comm with target `nbagent.frontend` at the start of each `%%agent`
 * cell. For each notebook whose kernel does, this plugin answers `hello` and then serves
 * requests (read, edit) against the notebook model the user sees, unsaved
 * typing included. Its replies go over a kernel subshell of their own, so the kernel receives
 * them while the `%%agent` cell is still running (the main shell is busy then). Every request
 * names the front end it is for (`to`), so several tabs on one kernel never both answer.
 *
 * It also styles the agent's transcript (live and saved): the `.nbagent-*` classes of its
 * tool cards, tables and answer, in JupyterLab's theme variables (light and dark). Without it
 * the transcript still reads: status marks are text, cards are plain `<details>`.
 */
var _JUPYTERLAB;
(function () {
  'use strict';

  const NAME = 'nbagent-frontend';
  const VERSION = '0.1.0';
  const TARGET = 'nbagent.frontend';
  const STYLE_ID = 'nbagent-styles';
  let shareScope = null;

  /** The transcript's look: a card per tool call, its state in colour (running, waiting for
   * you, ok, error, denied, interrupted), the ToolSearch table, the answer set apart. Only
   * theme variables, so light and dark themes both fit. */
  const STYLES = `
.nbagent-live .widget-html-content { line-height: 1.5; width: 100%; }
details.nbagent-call {
  --nbagent-state: var(--jp-ui-font-color2);
  margin: 3px 0;
  border: 1px solid var(--jp-border-color2);
  border-left: 3px solid var(--nbagent-state);
  border-radius: 3px;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.5;
}
details.nbagent-call > summary {
  padding: 2px 8px;
  cursor: pointer;
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}
details.nbagent-call > summary::marker { color: var(--jp-ui-font-color3); }
details.nbagent-call .nbagent-mark {
  display: inline-block;
  min-width: 1.1em;
  color: var(--nbagent-state);
  font-weight: bold;
  text-align: center;
}
details.nbagent-call .nbagent-name { font-weight: 600; }
details.nbagent-call code.nbagent-arg {
  padding: 0;
  white-space: nowrap;
  background: none;
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}
details.nbagent-call .nbagent-result,
details.nbagent-call .nbagent-notes { color: var(--jp-ui-font-color2); }
details.nbagent-ok { --nbagent-state: var(--jp-success-color1); }
details.nbagent-error { --nbagent-state: var(--jp-error-color1); }
details.nbagent-error > summary .nbagent-result { color: var(--jp-error-color1); }
details.nbagent-denied { --nbagent-state: var(--jp-warn-color1); }
details.nbagent-denied > summary .nbagent-result { color: var(--jp-warn-color1); }
details.nbagent-interrupted { --nbagent-state: var(--jp-ui-font-color3); }
details.nbagent-running { --nbagent-state: var(--jp-brand-color1); }
details.nbagent-running > summary .nbagent-mark { animation: nbagent-pulse 1.2s ease-in-out infinite; }
@keyframes nbagent-pulse { 50% { opacity: 0.3; } }
details.nbagent-waiting {
  --nbagent-state: var(--jp-warn-color1);
  border-color: var(--jp-warn-color1);
  background: color-mix(in srgb, var(--jp-warn-color1) 10%, var(--jp-layout-color1));
}
details.nbagent-waiting > summary .nbagent-result { color: var(--jp-warn-color1); font-weight: 600; }
details.nbagent-call .nbagent-body { padding: 2px 8px 6px 26px; }
details.nbagent-call pre {
  margin: 4px 0;
  padding: 4px 8px;
  max-height: 24em;
  overflow: auto;
  border: none;
  border-radius: 3px;
  background: var(--jp-layout-color2);
  color: var(--jp-content-font-color1);
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  line-height: var(--jp-code-line-height);
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
details.nbagent-call pre code { padding: 0; background: none; }
details.nbagent-call .nbagent-asked,
details.nbagent-call .nbagent-reason { color: var(--jp-ui-font-color2); }
details.nbagent-call .nbagent-ask pre {
  border-left: 3px solid var(--jp-warn-color1);
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
}
details.nbagent-call .nbagent-choices kbd {
  padding: 0 5px;
  border: 1px solid var(--jp-border-color1);
  border-radius: 3px;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-code-font-family);
  font-weight: bold;
}
details.nbagent-call details > summary { color: var(--jp-ui-font-color2); cursor: pointer; }
table.nbagent-search {
  margin: 4px 0;
  border-collapse: collapse;
  border: none;
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.4;
  table-layout: auto;
}
table.nbagent-search caption { padding: 2px 0; text-align: left; color: var(--jp-ui-font-color2); }
table.nbagent-search th,
table.nbagent-search td {
  padding: 2px 10px 2px 0;
  border: none;
  border-bottom: 1px solid var(--jp-border-color2);
  background: none;
  text-align: left;
  vertical-align: top;
  white-space: normal;
}
table.nbagent-search th { color: var(--jp-ui-font-color2); font-weight: 600; }
table.nbagent-search .nbagent-score { text-align: right; font-variant-numeric: tabular-nums; }
table.nbagent-search code { padding: 0; background: none; font-family: var(--jp-code-font-family); }
table.nbagent-search tbody tr:nth-child(odd),
table.nbagent-search tbody tr:hover { background: none; }
ol.nbagent-web {
  margin: 4px 0;
  padding-left: 1.8em;
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.5;
}
ol.nbagent-web .nbagent-site { color: var(--jp-ui-font-color2); }
hr.nbagent-rule { display: none; }
.nbagent-answer {
  margin: 8px 0 4px;
  padding: 2px 12px;
  border-left: 3px solid var(--jp-brand-color1);
  border-radius: 3px;
  background: var(--jp-layout-color2);
}
.nbagent-narration { color: var(--jp-content-font-color2); }
.nbagent-meter { color: var(--jp-ui-font-color2); font-size: var(--jp-ui-font-size0); }
.nbagent-delta { color: var(--jp-ui-font-color2); }
`;

  /** A module JupyterLab shares: the application's own instance (its tokens and state). */
  function shared(pkg) {
    const versions = shareScope && shareScope[pkg];
    if (!versions) {
      return Promise.reject(new Error(`${NAME}: JupyterLab shares no ${pkg}`));
    }
    const entries = Object.values(versions);
    const entry =
      entries.find(e => e.from === '@jupyterlab/application-top') ||
      entries.find(e => e.loaded) ||
      entries[0];
    return Promise.resolve(entry.get()).then(factory => {
      entry.loaded = 1;
      return factory();
    });
  }

  function uuid() {
    const hex = () => Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0');
    return hex() + hex() + hex() + hex();
  }

  /** A subshell for this connection's replies (null when the kernel has none). */
  async function openSubshell(kernel) {
    await kernel.info;
    if (!kernel.supportsSubshells) {
      return null;
    }
    const reply = await kernel.requestCreateSubshell({}).done;
    return reply.content.subshell_id;
  }

  /** Send a comm message to the kernel on a subshell (the comm API sends on the main one). */
  function send(kernel, commId, subshellId, data) {
    if (kernel.isDisposed || kernel.status === 'dead') {
      return;
    }
    kernel.sendShellMessage(
      {
        header: {
          msg_id: uuid(),
          msg_type: 'comm_msg',
          session: kernel.clientId,
          username: kernel.username,
          date: new Date().toISOString(),
          version: '5.3',
          subshell_id: subshellId
        },
        parent_header: {},
        metadata: {},
        content: { comm_id: commId, data: data },
        channel: 'shell',
        buffers: []
      },
      false,
      true
    );
  }

  function cellIndex(model, id) {
    for (let i = 0; i < model.cells.length; i++) {
      if (model.cells.get(i).id === id) {
        return i;
      }
    }
    return -1;
  }

  function sourceOf(cell) {
    return cell.sharedModel.getSource();
  }

  /** Replace only the span between the common head and tail: the caret and typing elsewhere
   * in the cell stay where they are. */
  function retype(shared, source) {
    const old = shared.getSource();
    if (old === source) {
      return;
    }
    let head = 0;
    const room = Math.min(old.length, source.length);
    while (head < room && old[head] === source[head]) {
      head++;
    }
    let tail = 0;
    while (
      tail < room - head &&
      old[old.length - 1 - tail] === source[source.length - 1 - tail]
    ) {
      tail++;
    }
    shared.updateSource(head, old.length - tail, source.slice(head, source.length - tail));
  }

  /** Check that the cells the edit was planned on are still as the kernel saw them. */
  function guardHolds(model, guard) {
    if (guard.length !== model.cells.length) {
      return false;
    }
    for (const [index, id, source] of guard.cells) {
      const cell = index < model.cells.length ? model.cells.get(index) : null;
      if (!cell || cell.id !== id || (source !== null && sourceOf(cell) !== source)) {
        return false;
      }
    }
    return true;
  }

  function newCell(cell) {
    const data = {
      id: cell.id,
      cell_type: cell.cell_type,
      source: cell.source,
      metadata: cell.metadata || {}
    };
    if (cell.cell_type === 'code') {
      data.outputs = cell.outputs || [];
      data.execution_count = cell.execution_count === undefined ? null : cell.execution_count;
    }
    return data;
  }

  function cellWidget(panel, id) {
    return panel.content.widgets.find(widget => widget.model.id === id) || null;
  }

  /** Show a code cell's outputs and execution count, or that it is running (`[*]`). */
  function setOutputs(panel, cell, edit) {
    cell.outputs.clear();
    for (const output of edit.outputs) {
      cell.outputs.add(output);
    }
    cell.executionCount = edit.execution_count;
    if (cell.sharedModel.executionState !== undefined) {
      cell.sharedModel.executionState = edit.running ? 'running' : 'idle';
    }
    const widget = cellWidget(panel, cell.id);
    if (widget && widget.setPrompt) {
      const count = edit.execution_count === null ? ' ' : String(edit.execution_count);
      widget.setPrompt(edit.running ? '*' : count);
    }
  }

  function applyEdit(panel, edit, guard) {
    const model = panel.content.model;
    if (edit.action === 'outputs') {
      const cell = model.cells.get(cellIndex(model, edit.cell_id));
      if (!cell || cell.type !== 'code') {
        return { missing: true };
      }
      setOutputs(panel, cell, edit);
      return { missing: false };
    }
    if (!guardHolds(model, guard)) {
      return { changed: true };
    }
    if (!['insert', 'delete', 'source', 'cell'].includes(edit.action)) {
      throw new Error(`unknown edit ${edit.action}`);
    }
    const notebook = model.sharedModel;
    const cell = edit.cell ? newCell(edit.cell) : null; // built before anything changes
    notebook.transact(() => {
      if (edit.action === 'insert') {
        notebook.insertCell(edit.index, cell);
      } else if (edit.action === 'delete') {
        notebook.deleteCell(edit.index);
      } else if (edit.action === 'source') {
        retype(model.cells.get(edit.index).sharedModel, edit.source);
      } else {
        // The new cell first: if it cannot be made, the old one is still there.
        notebook.insertCell(edit.index, cell);
        notebook.deleteCell(edit.index + 1);
      }
    });
    return { changed: false };
  }

  /** A cell without its outputs' data: each output is its type only. */
  function lightCell(cell) {
    const data = {
      id: cell.id,
      cell_type: cell.type,
      source: cell.sharedModel.getSource(),
      metadata: cell.sharedModel.getMetadata()
    };
    if (cell.type === 'code') {
      data.execution_count = cell.executionCount;
      data.outputs = [];
      for (let i = 0; i < cell.outputs.length; i++) {
        data.outputs.push({ output_type: cell.outputs.get(i).type });
      }
    }
    return data;
  }

  /** The notebook as the user sees it; `light` leaves out the outputs' data, which planning
   * an edit or a run needs no more of (a large notebook's figures stay in the browser). */
  function read(panel, light) {
    const context = panel.context;
    const model = context.model;
    let notebook;
    if (light) {
      const cells = [];
      for (let i = 0; i < model.cells.length; i++) {
        cells.push(lightCell(model.cells.get(i)));
      }
      notebook = {
        nbformat: model.nbformat,
        nbformat_minor: model.nbformatMinor,
        metadata: model.sharedModel.getMetadata(),
        cells: cells
      };
    } else {
      notebook = model.toJSON();
    }
    const saved = context.contentsModel ? context.contentsModel.last_modified : null;
    return { notebook: notebook, dirty: model.dirty, saved: saved };
  }

  const handlers = {
    read: (panel, data) => read(panel, Boolean(data.light)),
    edit: (panel, data) => applyEdit(panel, data.edit, data.guard)
  };

  /** Serve one comm the kernel opened, for one notebook panel (the latest comm of the panel's
   * kernel connection is `current.comm`). */
  function serve(panel, kernel, subshell, app, comm, current) {
    current.comm = comm;
    const reply = data => subshell.then(id => send(kernel, comm.commId, id, data));
    comm.onMsg = msg => {
      const data = msg.content.data || {};
      if (data.to !== kernel.clientId) {
        return;
      }
      const handler = handlers[data.op];
      let answer;
      try {
        if (!handler) {
          throw new Error(`unknown request ${data.op}`);
        }
        answer = Object.assign({ id: data.id, ok: true }, handler(panel, data));
      } catch (error) {
        answer = { id: data.id, ok: false, error: String((error && error.message) || error) };
      }
      reply(answer);
    };
    comm.onClose = () => {
      if (current.comm === comm) {
        current.comm = null;
      }
    };
    subshell.then(id =>
      send(kernel, comm.commId, id, {
        op: 'hello',
        client: kernel.clientId,
        path: panel.context.localPath,
        app: `${app.name} ${app.version}`,
        subshell: id !== null,
        version: VERSION
      })
    );
  }

  function watch(panel, app, subshells) {
    const current = { comm: null, kernel: null, subshell: null };
    const attach = () => {
      const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
      if (!kernel || subshells.has(kernel)) {
        return;
      }
      let subshell = null;
      const ensure = () => {
        if (subshell === null) {
          subshell = openSubshell(kernel).catch(error => {
            console.warn(`${NAME}: no subshell, replies wait for the kernel`, error);
            return null;
          });
        }
        return subshell;
      };
      subshells.set(kernel, ensure);
      kernel.statusChanged.connect(() => {
        if (kernel.status === 'restarting' || kernel.status === 'autorestarting') {
          subshell = null;
        }
      });
      kernel.registerCommTarget(TARGET, comm => {
        current.kernel = kernel;
        current.subshell = ensure();
        serve(panel, kernel, current.subshell, app, comm, current);
      });
    };
    // Said once per panel, on the comm the kernel opened last.
    panel.disposed.connect(() => {
      const { comm, kernel, subshell } = current;
      if (comm && kernel) {
        subshell.then(id => send(kernel, comm.commId, id, { op: 'bye', client: kernel.clientId }));
      }
    });
    panel.sessionContext.kernelChanged.connect(attach);
    panel.sessionContext.ready.then(attach);
    attach();
  }

  /** Subshell bookkeeping requests (control messages) publish a busy and an idle status like
   * any request, and JupyterLab shows the kernel's status from them: a subshell made while a
   * cell runs (JupyterLab makes one per comm target, e.g. for the agent's widgets) showed the
   * kernel idle for the rest of the cell. JupyterLab leaves out the statuses of the message
   * types in `untracked_message_types`; these join them. */
  function untrackSubshellRequests(coreutils) {
    const key = 'untracked_message_types';
    const untracked = JSON.parse(coreutils.PageConfig.getOption(key) || '[]');
    for (const type of [
      'create_subshell_request',
      'delete_subshell_request',
      'list_subshell_request'
    ]) {
      if (!untracked.includes(type)) {
        untracked.push(type);
      }
    }
    coreutils.PageConfig.setOption(key, JSON.stringify(untracked));
  }

  /** Add the transcript's styles to the page, once. */
  function injectStyles() {
    if (document.getElementById(STYLE_ID)) {
      return;
    }
    const style = document.createElement('style');
    style.id = STYLE_ID;
    style.textContent = STYLES;
    document.head.appendChild(style);
  }

  /** JupyterLab keeps a cell's stdin box after the execution that asked has ended (Stop
   * while `input()` waits, an error): the box still takes an answer, sends it to a kernel
   * that no longer reads it, and records the prompt and the answer in the cell as a `stdin`
   * stream, saved with the notebook. Once the cell's execution has ended, remove the boxes
   * nobody answered (an answered one is already hiding, its answer recorded). */
  function dropUnansweredStdin(cell) {
    const area = cell && cell.outputArea;
    if (!area || area.isDisposed) {
      return;
    }
    for (const item of Array.from(area.widgets)) {
      if (
        item.hasClass('jp-OutputArea-stdin-item') &&
        !item.hasClass('jp-OutputArea-stdin-hiding')
      ) {
        item.dispose();
      }
    }
  }

  function plugin(notebook, coreutils) {
    return {
      id: `${NAME}:plugin`,
      description: "Shows nbagent's notebook edits and cell runs in the open notebook.",
      autoStart: true,
      requires: [notebook.INotebookTracker],
      activate: (app, tracker) => {
        injectStyles();
        notebook.NotebookActions.executed.connect((_, { cell }) => dropUnansweredStdin(cell));
        untrackSubshellRequests(coreutils);
        const subshells = new WeakMap();
        tracker.forEach(panel => watch(panel, app, subshells));
        tracker.widgetAdded.connect((_, panel) => watch(panel, app, subshells));
      }
    };
  }

  _JUPYTERLAB = window._JUPYTERLAB = window._JUPYTERLAB || {};
  _JUPYTERLAB[NAME] = {
    init: scope => {
      shareScope = scope;
    },
    get: module => {
      if (module !== './extension') {
        return Promise.reject(new Error(`${NAME} has no module ${module}`));
      }
      return Promise.all([shared('@jupyterlab/notebook'), shared('@jupyterlab/coreutils')]).then(
        ([notebook, coreutils]) => {
          const exports = { __esModule: true, default: plugin(notebook, coreutils) };
          return () => exports;
        }
      );
    }
  };
})();
