/**
 * nbagent's JupyterLab extension (JupyterLab 4.4+, Notebook 7.4+): the notebook
 * the user sees, served to the kernel over the `nbagent.frontend` comm
 * (./connection.ts, ./notebook.ts), the agent's questions on stdin, which leave
 * no answer in the saved notebook and show when they were withdrawn
 * (./questions.ts), and the look of the agent's transcript (style/base.css: the
 * `.nbagent-*` classes of its tool cards, tables and answer, in the theme's
 * variables).
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { Cell, CodeCell } from '@jupyterlab/cells';
import { PageConfig } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';

import { version } from '../package.json';
import { shownBy, Subshells, watch } from './connection';
import { watchMarks } from './marks';
import { Questions } from './questions';

/** Subshell bookkeeping requests (control messages) publish a busy and an idle
 * status like any request, and JupyterLab shows the kernel's status from them:
 * a subshell made while a cell runs (JupyterLab makes one per comm target, e.g.
 * for the agent's widgets) showed the kernel idle for the rest of the cell.
 * JupyterLab leaves out the statuses of the message types in
 * `untracked_message_types`; these join them. */
function untrackSubshellRequests(): void {
  const key = 'untracked_message_types';
  const untracked: string[] = JSON.parse(PageConfig.getOption(key) || '[]');
  for (const type of [
    'create_subshell_request',
    'delete_subshell_request',
    'list_subshell_request'
  ]) {
    if (!untracked.includes(type)) {
      untracked.push(type);
    }
  }
  PageConfig.setOption(key, JSON.stringify(untracked));
}

/** JupyterLab keeps a cell's stdin box after the execution that asked has ended
 * (Stop while `input()` waits, an error): the box still takes an answer, sends
 * it to a kernel that no longer reads it, and records the prompt and the answer
 * in the cell as a `stdin` stream, saved with the notebook. Once the cell's
 * execution has ended, remove the boxes nobody answered (an answered one is
 * already hiding, its answer recorded). */
function dropUnansweredStdin(cell: Cell): void {
  const area = (cell as CodeCell).outputArea;
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

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'nbagent-frontend:plugin',
  description:
    "Shows nbagent's notebook edits and cell runs in the open notebook.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    NotebookActions.executed.connect((_, { cell }) => dropUnansweredStdin(cell));
    untrackSubshellRequests();
    const shown = shownBy(app, version);
    const subshells: Subshells = new WeakMap();
    const questions = new Questions(tracker);
    tracker.forEach(panel => {
      watch(panel, shown, subshells, questions);
      watchMarks(panel);
    });
    tracker.widgetAdded.connect((_, panel) => {
      watch(panel, shown, subshells, questions);
      watchMarks(panel);
    });
  }
};

export default plugin;
