/**
 * Runs the agent queued for after its turn (`queue`): the cells run one after
 * the other as normal cells (their outputs live, Ctrl-C as usual), then, unless
 * one was interrupted or did not run, a new `%%agent --after` cell below them
 * goes on with the conversation (nbagent/jupyter/queued_runs.py).
 */
import { CodeCell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { IQueue } from './protocol';

/** The code cell widget of a cell id, or null when it is gone or not code. */
function codeCell(panel: NotebookPanel, id: string): CodeCell | null {
  const widget = panel.content.widgets.find(w => w.model.id === id);
  return widget instanceof CodeCell ? widget : null;
}

function indexOf(panel: NotebookPanel, id: string | null): number {
  return id === null
    ? -1
    : panel.content.widgets.findIndex(w => w.model.id === id);
}

/** Whether a run ended so that the conversation may go on: it ran (an error
 * included, the agent reads it), and was not interrupted. */
function goesOn(reply: unknown): boolean {
  const content = (reply as { content?: { status?: string; ename?: string } })
    ?.content;
  if (!content) {
    return false;
  }
  return (
    content.status === 'ok' ||
    (content.status === 'error' && content.ename !== 'KeyboardInterrupt')
  );
}

async function runQueue(panel: NotebookPanel, queue: IQueue): Promise<void> {
  const session = panel.sessionContext;
  for (const id of queue.cells) {
    const cell = codeCell(panel, id);
    if (!cell) {
      return;
    }
    const reply = await CodeCell.execute(cell, session);
    if (!goesOn(reply)) {
      return;
    }
  }
  if (!queue.continue || panel.isDisposed) {
    return;
  }
  const last = queue.cells[queue.cells.length - 1];
  const below =
    Math.max(indexOf(panel, queue.after), indexOf(panel, last)) + 1;
  const notebook = panel.content.model!.sharedModel;
  notebook.insertCell(below, {
    cell_type: 'code',
    source: queue.source,
    metadata: {}
  });
  const added = panel.content.widgets[below];
  if (added instanceof CodeCell) {
    await CodeCell.execute(added, session);
  }
}

/** Start the queued runs; the answer says only that they were taken. */
export function queueRuns(
  panel: NotebookPanel,
  queue: IQueue
): Record<string, unknown> {
  const missing = queue.cells.filter(id => !codeCell(panel, id));
  if (missing.length) {
    throw new Error(`no code cell ${missing.join(', ')}`);
  }
  runQueue(panel, queue).catch(error =>
    console.warn('nbagent-frontend: a queued run failed', error)
  );
  return { queued: queue.cells.length };
}
