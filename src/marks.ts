/**
 * The agent's mark on the cells it inserted or changed: the cell metadata
 * `nbagent` ({changed, source}) that the kernel sets with its edit
 * (nbagent/tools/checkpoints/marks.py). The cell is drawn with a bar and says
 * "agent: edited" or "agent: inserted" until its source is no longer the one
 * the agent left: then a person edited it, and the mark is removed.
 */
import type { Cell, ICellModel } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';

const KEY = 'nbagent';
const CLASS = 'nbagent-changed';

interface IMark {
  changed?: string;
  source?: string;
}

/** FNV-1a (32 bits) over a source's code points, as the kernel computes it. */
export function sourceMark(source: string): string {
  let value = 0x811c9dc5;
  for (const char of source) {
    value = Math.imul(value ^ (char.codePointAt(0) as number), 0x01000193) >>> 0;
  }
  return value.toString(16).padStart(8, '0');
}

/** Set a cell's mark with an edit (`{}` removes it; null or undefined: left). */
export function setMark(
  shared: ICellModel['sharedModel'],
  mark: Record<string, unknown> | null | undefined
): void {
  if (mark === null || mark === undefined) {
    return;
  }
  if (Object.keys(mark).length) {
    shared.setMetadata(KEY, mark as never);
  } else if (shared.getMetadata(KEY) !== undefined) {
    shared.deleteMetadata(KEY);
  }
}

/** Draw one cell's mark, or remove a mark the cell no longer deserves. */
function refresh(cell: Cell): void {
  const shared = cell.model.sharedModel;
  const mark = shared.getMetadata(KEY) as IMark | undefined;
  const holds =
    !!mark &&
    typeof mark === 'object' &&
    mark.source === sourceMark(shared.getSource());
  if (mark !== undefined && !holds) {
    shared.deleteMetadata(KEY); // a person changed the cell since the agent
  }
  cell.toggleClass(CLASS, holds);
  if (holds) {
    cell.node.dataset.nbagentChanged = String(mark.changed || 'edited');
  } else {
    delete cell.node.dataset.nbagentChanged;
  }
}

/** Keep the marks of a notebook's cells drawn as the notebook changes. */
export function watchMarks(panel: NotebookPanel): void {
  let pending = false;
  const schedule = (): void => {
    if (pending) {
      return;
    }
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (!panel.isDisposed) {
        panel.content.widgets.forEach(refresh);
      }
    });
  };
  void panel.context.ready.then(() => {
    const model = panel.content.model;
    if (!model) {
      return;
    }
    model.contentChanged.connect(schedule);
    model.cells.changed.connect(schedule);
    model.sharedModel.changed.connect(schedule);
    schedule();
  });
}
