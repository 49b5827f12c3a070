/**
 * nbagent's questions on a cell's stdin: a permission, AskUserQuestion, a plan's
 * approval.
 *
 * JupyterLab shows an input request as a box under the cell's outputs and, once
 * the person answers, records the prompt and the answer in the cell as a `stdin`
 * stream output, saved with the notebook (OutputArea.onInputRequest). The call's
 * card in nbagent's transcript says what was asked and answered, so the answer
 * JupyterLab records for one of nbagent's requests (they carry
 * `metadata.nbagent`) is taken out of the cell as soon as it is recorded. When the
 * kernel withdraws a question (its call was stopped or abandoned at its time
 * limit), it names the request (`withdrawn`): the box is disabled and says why,
 * and goes when the cell's execution ends (./index.ts).
 */
import type { CodeCell } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import type { IRequest } from './protocol';

/** The metadata by which the kernel marks nbagent's input requests. */
const MARK = 'question';

/** How many withdrawals of requests not seen (yet) are kept. */
const KEPT = 64;

type Area = CodeCell['outputArea'];

/** JupyterLab's stdin box (@jupyterlab/outputarea's IStdin), as the output area
 * shows it. */
type Box = Parameters<Parameters<Area['inputRequested']['connect']>[0]>[1];

/** One of nbagent's input requests, from its arrival to its answer or its end. */
interface IQuestion {
  /** The request's message id. */
  id: string;
  prompt: string;
  /** The cell whose execution asks. */
  cell: CodeCell;
  /** The box's input, once JupyterLab shows it. */
  input: HTMLInputElement | null;
  /** Why it was withdrawn (null: it was not). */
  withdrawn: string | null;
}

/** The cell of a notebook in `tracker` whose output area shows the execution
 * `execution` (the message id of its execute request). */
function cellRunning(
  tracker: INotebookTracker,
  execution: string
): CodeCell | null {
  let found: CodeCell | null = null;
  tracker.forEach(panel => {
    for (const cell of panel.content.widgets) {
      const future =
        cell.model.type === 'code' ? (cell as CodeCell).outputArea.future : null;
      if (!found && future && future.msg.header.msg_id === execution) {
        found = cell as CodeCell;
      }
    }
  });
  return found;
}

/** The text of a stream output (nbformat allows a list of lines). */
function streamText(output: nbformat.IOutput): string {
  const text = output.text;
  return Array.isArray(text) ? text.join('') : String(text ?? '');
}

/** Take the `stdin` stream output holding `text` out of a cell (the last one). */
function dropRecorded(cell: CodeCell, text: string): void {
  if (cell.isDisposed || !cell.model) {
    return;
  }
  const outputs = cell.model.outputs;
  for (let i = outputs.length - 1; i >= 0; i--) {
    const output = outputs.get(i).toJSON();
    if (
      output.output_type === 'stream' &&
      output.name === 'stdin' &&
      streamText(output) === text
    ) {
      // The shared model: the output area and the saved notebook follow it.
      cell.model.sharedModel.updateOutputs(i, i + 1, []);
      return;
    }
  }
}

/** Disable a withdrawn question's box and say why on it. */
function showWithdrawn(input: HTMLInputElement, reason: string): void {
  input.disabled = true;
  input.value = '';
  input.placeholder = reason ? `withdrawn: ${reason}` : 'withdrawn';
  input.size = input.placeholder.length + 2; // wide enough to say it all
  input.title = 'nbagent withdrew this question: nothing can be answered here.';
  input.closest('.jp-OutputArea-stdin-item')?.classList.add('nbagent-withdrawn');
}

/** nbagent's questions on the kernels of the notebooks in a tracker. */
export class Questions {
  constructor(tracker: INotebookTracker) {
    this._tracker = tracker;
  }

  /** Follow a kernel connection's input requests (once per connection). */
  watch(kernel: Kernel.IKernelConnection): void {
    // Emitted as each message arrives, before JupyterLab handles it (and shows
    // its box), in the order they arrive.
    kernel.anyMessage.connect((_, { msg, direction }) => {
      if (
        direction === 'recv' &&
        msg.header.msg_type === 'input_request' &&
        msg.metadata?.nbagent === MARK
      ) {
        this._arrived(msg as KernelMessage.IInputRequestMsg);
      }
    });
  }

  /** Show a question withdrawn (the kernel's `withdrawn` request).
   *
   * @returns `shown`: whether this page has (or is about to show) the box.
   */
  withdraw(request: IRequest): Record<string, unknown> {
    const id = String(request.request);
    const reason = String(request.reason ?? '');
    const question = this._questions.get(id);
    if (!question) {
      // The request may still be on its way (stdin and IOPub are two channels).
      this._early.set(id, reason);
      if (this._early.size > KEPT) {
        this._early.delete(this._early.keys().next().value!);
      }
      return { shown: false };
    }
    question.withdrawn = reason;
    if (question.input) {
      showWithdrawn(question.input, reason);
    }
    return { shown: true };
  }

  /** A request of nbagent's arrived: note it for the box its cell will show. */
  private _arrived(msg: KernelMessage.IInputRequestMsg): void {
    const execution = (msg.parent_header as KernelMessage.IHeader).msg_id;
    const cell = cellRunning(this._tracker, execution);
    if (!cell) {
      return;
    }
    const id = msg.header.msg_id;
    const question: IQuestion = {
      id: id,
      prompt: msg.content.prompt,
      cell: cell,
      input: null,
      withdrawn: this._early.get(id) ?? null
    };
    this._early.delete(id);
    this._questions.set(id, question);
    const area = cell.outputArea;
    const waiting = this._waiting.get(area);
    if (waiting) {
      waiting.push(question);
      return;
    }
    this._waiting.set(area, [question]);
    area.inputRequested.connect((_, box) => {
      // The boxes come in the order of their requests; another request's box
      // (the person's own `input()`) shows another prompt.
      const queue = this._waiting.get(area)!;
      const promptNode = box.node.querySelector('.jp-Stdin-prompt');
      const shown = promptNode?.firstChild?.textContent ?? null;
      if (!queue.length || shown !== queue[0].prompt) {
        return;
      }
      this._showing(queue.shift()!, box);
    });
  }

  /** JupyterLab shows a question's box. */
  private _showing(question: IQuestion, box: Box): void {
    question.input = box.node.querySelector('input');
    if (question.input && question.withdrawn !== null) {
      showWithdrawn(question.input, question.withdrawn);
    }
    void box.value.then(text => {
      // The output area records the answer in its own callback of the same
      // promise: after this one, before the microtask queued here.
      queueMicrotask(() => dropRecorded(question.cell, text + '\n'));
    });
    // Answered (the box goes half a second later), or gone unanswered at the
    // execution's end.
    box.disposed.connect(() => this._questions.delete(question.id));
  }

  private _tracker: INotebookTracker;
  /** The questions asked and not answered, by request id. */
  private _questions = new Map<string, IQuestion>();
  /** Each output area's questions whose box it has not shown yet, in order. */
  private _waiting = new WeakMap<Area, IQuestion[]>();
  /** Withdrawals of requests this page has not seen (yet): the reasons, by id. */
  private _early = new Map<string, string>();
}
