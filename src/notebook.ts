/**
 * The requests the kernel makes of the notebook the user sees: `read`, `edit`
 * and `queue` (./queue.ts).
 */
import type { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

import { setMark } from './marks';
import type { IEdit, IGuard, INewCell, IQueue, IRequest } from './protocol';
import { queueRuns } from './queue';

/** A request's handler: the answer's fields beside `id` and `ok`. */
export type Handler = (
  panel: NotebookPanel,
  request: IRequest
) => Record<string, unknown>;

export const handlers: Record<string, Handler> = {
  read: (panel, request) => read(panel, Boolean(request.light)),
  edit: (panel, request) =>
    applyEdit(panel, request.edit as IEdit, request.guard ?? null),
  queue: (panel, request) => queueRuns(panel, request.queue as IQueue)
};

function cellIndex(model: INotebookModel, id: string | undefined): number {
  for (let i = 0; i < model.cells.length; i++) {
    if (model.cells.get(i).id === id) {
      return i;
    }
  }
  return -1;
}

function sourceOf(cell: ICellModel): string {
  return cell.sharedModel.getSource();
}

/** Replace only the span between the common head and tail: the caret and
 * typing elsewhere in the cell stay where they are. */
function retype(shared: ICellModel['sharedModel'], source: string): void {
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
  shared.updateSource(
    head,
    old.length - tail,
    source.slice(head, source.length - tail)
  );
}

/** Check that the cells the edit was planned on are still as the kernel saw them. */
function guardHolds(model: INotebookModel, guard: IGuard | null): boolean {
  if (!guard) {
    throw new Error('an edit without a guard');
  }
  if (guard.length !== model.cells.length) {
    return false;
  }
  for (const [index, id, source] of guard.cells) {
    const cell = index < model.cells.length ? model.cells.get(index) : null;
    if (
      !cell ||
      cell.id !== id ||
      (source !== null && sourceOf(cell) !== source)
    ) {
      return false;
    }
  }
  return true;
}

function newCell(cell: INewCell): nbformat.ICell {
  const data: Record<string, unknown> = {
    id: cell.id,
    cell_type: cell.cell_type,
    source: cell.source,
    metadata: cell.metadata || {}
  };
  if (cell.cell_type === 'code') {
    data.outputs = cell.outputs || [];
    data.execution_count =
      cell.execution_count === undefined ? null : cell.execution_count;
  }
  return data as unknown as nbformat.ICell;
}

/** Show a code cell's outputs and execution count, or that it is running (`[*]`). */
function setOutputs(
  panel: NotebookPanel,
  cell: ICodeCellModel,
  edit: IEdit
): void {
  cell.outputs.clear();
  for (const output of edit.outputs ?? []) {
    cell.outputs.add(output as nbformat.IOutput);
  }
  const count = edit.execution_count ?? null;
  cell.executionCount = count;
  if (cell.sharedModel.executionState !== undefined) {
    cell.sharedModel.executionState = edit.running ? 'running' : 'idle';
  }
  const widget = panel.content.widgets.find(w => w.model.id === cell.id);
  if (widget) {
    widget.setPrompt(edit.running ? '*' : count === null ? ' ' : String(count));
  }
}

function applyEdit(
  panel: NotebookPanel,
  edit: IEdit,
  guard: IGuard | null
): Record<string, unknown> {
  const model = panel.content.model!;
  if (edit.action === 'outputs') {
    const cell = model.cells.get(cellIndex(model, edit.cell_id));
    if (!cell || cell.type !== 'code') {
      return { missing: true };
    }
    setOutputs(panel, cell as ICodeCellModel, edit);
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
      notebook.insertCell(edit.index, cell!);
    } else if (edit.action === 'delete') {
      notebook.deleteCell(edit.index);
    } else if (edit.action === 'source') {
      const shared = model.cells.get(edit.index).sharedModel;
      retype(shared, edit.source as string);
      setMark(shared, edit.mark);
    } else {
      // The new cell first: if it cannot be made, the old one is still there.
      notebook.insertCell(edit.index, cell!);
      notebook.deleteCell(edit.index + 1);
    }
  });
  return { changed: false };
}

/** A cell without its outputs' data: each output is its type only. */
function lightCell(cell: ICellModel): Record<string, unknown> {
  const data: Record<string, unknown> = {
    id: cell.id,
    cell_type: cell.type,
    source: cell.sharedModel.getSource(),
    metadata: cell.sharedModel.getMetadata()
  };
  if (cell.type === 'code') {
    const code = cell as ICodeCellModel;
    const outputs: { output_type: string }[] = [];
    for (let i = 0; i < code.outputs.length; i++) {
      outputs.push({ output_type: code.outputs.get(i).type });
    }
    data.execution_count = code.executionCount;
    data.outputs = outputs;
  }
  return data;
}

/** The notebook as the user sees it; `light` leaves out the outputs' data,
 * which planning an edit or a run needs no more of (a large notebook's figures
 * stay in the browser). */
function read(panel: NotebookPanel, light: boolean): Record<string, unknown> {
  const context = panel.context;
  const model = context.model;
  let notebook: unknown;
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
  const saved = context.contentsModel
    ? context.contentsModel.last_modified
    : null;
  return { notebook: notebook, dirty: model.dirty, saved: saved };
}
