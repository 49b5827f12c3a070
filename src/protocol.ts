/**
 * The messages on the `nbagent.frontend` comm, as the kernel's side
 * (nbagent/frontend/channel.py and document.py) sends and reads them.
 *
 * The kernel opens the comm; the extension says `hello` on it, serves the
 * requests addressed to its kernel connection (`to`), says `path` when the
 * notebook is renamed or moved and `bye` when its panel closes.
 */

/** The comm target the extension registers on every notebook's kernel connection. */
export const TARGET = 'nbagent.frontend';

/** The application, its version and this extension's version, for the kernel to check. */
export interface IVersions {
  /** `JupyterLab` or `Notebook` (another application: its own name). */
  app: string;
  /** The application's version, e.g. `4.6.6` or `7.4.7`. */
  version: string;
  /** This extension's version (its package.json's). */
  extension: string;
}

/** The front end shows itself: sent when the kernel opens a comm. */
export interface IHello {
  op: 'hello';
  /** The kernel connection's client id: requests name it in `to`. */
  client: string;
  /** The notebook's path, relative to the server's root. */
  path: string;
  /** The application and its version, e.g. `JupyterLab 4.6.6`. */
  app: string;
  /** Whether the answers come over a subshell (while a cell runs). */
  subshell: boolean;
  /** This extension's version. */
  version: string;
  versions: IVersions;
}

/** The notebook's path changed (renamed, moved). */
export interface IPath {
  op: 'path';
  client: string;
  /** The new path, relative to the server's root. */
  path: string;
}

/** The panel closed: this front end no longer shows the notebook. */
export interface IBye {
  op: 'bye';
  client: string;
}

/** A request from the kernel. */
export interface IRequest {
  op: string;
  id: string;
  /** The client id of the front end that is to answer. */
  to: string;
  light?: boolean;
  edit?: IEdit;
  guard?: IGuard | null;
  /** For `queue`: the runs queued for after the agent's turn. */
  queue?: IQueue;
  /** For `withdrawn`: the message id of the question's input request. */
  request?: string;
  /** For `withdrawn`: why, as a clause ("its call reached its time limit"). */
  reason?: string;
}

/** The answer to a request: its id, `ok`, and the request's fields or an error. */
export interface IAnswer {
  id: string;
  ok: boolean;
  error?: string;
  [field: string]: unknown;
}

/** What a front end sends on the comm. */
export type Message = IHello | IPath | IBye | IAnswer;

/** A cell as the kernel sends it for an insert or a replacement. */
export interface INewCell {
  id: string;
  cell_type: 'code' | 'markdown' | 'raw';
  source: string;
  metadata?: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
}

/** A change to the notebook (nbagent.tools.notebook.frontend.edit_json), or a cell's outputs. */
export interface IEdit {
  action: 'insert' | 'delete' | 'source' | 'cell' | 'outputs';
  index: number;
  source?: string | null;
  cell?: INewCell | null;
  /** For `outputs`: the cell, its outputs, its count and whether it runs now. */
  cell_id?: string;
  outputs?: unknown[];
  execution_count?: number | null;
  running?: boolean;
  /** For `source`: the cell's `nbagent` metadata, the agent's mark ({} removes it). */
  mark?: Record<string, unknown> | null;
}

/** What must still hold for an edit to be made as planned
 * (nbagent.tools.notebook.frontend.guard): the cell count and `[index, id, source]`
 * of the cells it was planned on (`source` null: any). */
export interface IGuard {
  length: number;
  cells: [number, string, string | null][];
}

/** Cells to run after the agent's turn, in order, then maybe an agent cell
 * that goes on (nbagent/jupyter/queued_runs.py). */
export interface IQueue {
  /** The cells' ids. */
  cells: string[];
  /** The `%%agent` cell that queued them (the new cell goes below the lower of it
   * and the last run cell). */
  after: string | null;
  /** Whether to add and run the agent cell that goes on. */
  continue: boolean;
  /** That cell's source (`%%agent --after ...`). */
  source: string;
}
