/**
 * One notebook panel's side of the `nbagent.frontend` comm.
 *
 * The kernel opens a comm with target `nbagent.frontend` at `%load_ext nbagent`
 * and at the start of each `%%agent` cell. For each notebook whose kernel does,
 * the panel answers `hello` and then serves the requests addressed to its
 * kernel connection (`to`), so several tabs on one kernel never both answer:
 * those of ./notebook.ts, and `withdrawn` (./questions.ts).
 * Its messages go over a kernel subshell of their own, so the kernel receives
 * them while the `%%agent` cell is still running (the main shell is busy then).
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import { type Handler, handlers } from './notebook';
import { IAnswer, IVersions, Message, IRequest, TARGET } from './protocol';
import type { Questions } from './questions';

/** The subshell a kernel connection's messages go on: its id, or null when the
 * kernel has none (made once per connection, again after a restart). */
export type Subshells = WeakMap<
  Kernel.IKernelConnection,
  () => Promise<string | null>
>;

/** The panel's latest comm, the kernel connection it came on, and what the panel
 * said on it. */
interface ICurrent {
  comm: Kernel.IComm | null;
  kernel: Kernel.IKernelConnection | null;
  /** The subshell the panel's messages go on once `hello` went out on `comm`
   * (null: the kernel has none); undefined before. */
  subshellId: string | null | undefined;
  /** The notebook's path as last told to the kernel. */
  path: string | null;
}

const NAME = 'nbagent-frontend';

function uuid(): string {
  const hex = () =>
    Math.floor(Math.random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return hex() + hex() + hex() + hex();
}

/** A subshell for this connection's messages (null when the kernel has none). */
async function openSubshell(
  kernel: Kernel.IKernelConnection
): Promise<string | null> {
  await kernel.info;
  if (!kernel.supportsSubshells) {
    return null;
  }
  const reply = await kernel.requestCreateSubshell({}).done;
  return reply.content.subshell_id;
}

/** Send a comm message to the kernel on a subshell (the comm API sends on the
 * main shell, which is busy while the `%%agent` cell runs). */
function send(
  kernel: Kernel.IKernelConnection,
  commId: string,
  subshellId: string | null,
  data: Message
): void {
  if (kernel.isDisposed || kernel.status === 'dead') {
    return;
  }
  const message = {
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
  };
  kernel.sendShellMessage(
    message as unknown as KernelMessage.ICommMsgMsg<'shell'>,
    false,
    true
  );
}

/** Serve one comm the kernel opened (it becomes the panel's current one). */
function serve(
  panel: NotebookPanel,
  kernel: Kernel.IKernelConnection,
  subshell: Promise<string | null>,
  shown: IShown,
  ops: Record<string, Handler>,
  comm: Kernel.IComm,
  current: ICurrent
): void {
  current.comm = comm;
  const reply = (data: Message) =>
    subshell.then(id => send(kernel, comm.commId, id, data));
  comm.onMsg = msg => {
    const data = (msg.content.data || {}) as unknown as IRequest;
    if (data.to !== kernel.clientId) {
      return;
    }
    const handler = ops[data.op];
    let answer: IAnswer;
    try {
      if (!handler) {
        throw new Error(`unknown request ${data.op}`);
      }
      answer = Object.assign({ id: data.id, ok: true }, handler(panel, data));
    } catch (error) {
      const message = error instanceof Error ? error.message : error;
      answer = { id: data.id, ok: false, error: String(message) };
    }
    void reply(answer);
  };
  comm.onClose = () => {
    if (current.comm === comm) {
      current.comm = null;
    }
  };
  current.subshellId = undefined;
  void subshell.then(id => {
    const path = panel.context.localPath;
    if (current.comm === comm) {
      current.subshellId = id;
      current.path = path;
    }
    send(kernel, comm.commId, id, {
      op: 'hello',
      client: kernel.clientId,
      path: path,
      app: shown.app,
      subshell: id !== null,
      version: shown.versions.extension,
      versions: shown.versions
    });
  });
}

/** Take in the comms of this target that the kernel opened before this page
 * connected (a reloaded page, a second tab), without opening or answering them:
 * so that when the kernel closes one, JupyterLab knows it ("Comm not found for
 * comm id" otherwise). A comm opened from now on arrives as usual. */
async function adoptOpenComms(kernel: Kernel.IKernelConnection): Promise<void> {
  if (!kernel.handleComms) {
    return;
  }
  const reply = await kernel.requestCommInfo({ target_name: TARGET });
  if (reply.content.status !== 'ok' || kernel.isDisposed) {
    return;
  }
  for (const [commId, info] of Object.entries(reply.content.comms)) {
    if (info.target_name === TARGET && !kernel.hasComm(commId)) {
      kernel.createComm(TARGET, commId);
    }
  }
}

/** Serve a notebook panel's kernel connections, the current one and later ones. */
export function watch(
  panel: NotebookPanel,
  shown: IShown,
  subshells: Subshells,
  questions: Questions
): void {
  const ops: Record<string, Handler> = {
    ...handlers,
    withdrawn: (_, request) => questions.withdraw(request)
  };
  const current: ICurrent = {
    comm: null,
    kernel: null,
    subshellId: undefined,
    path: null
  };
  /** Say something on the comm the kernel opened last, once `hello` went out on it
   * (at once: when the panel closes, the kernel connection goes right after). */
  const say = (data: Message) => {
    const { comm, kernel, subshellId } = current;
    if (comm && kernel && subshellId !== undefined) {
      send(kernel, comm.commId, subshellId, data);
    }
  };
  const attach = () => {
    const kernel = panel.sessionContext.session?.kernel;
    if (!kernel || subshells.has(kernel)) {
      return;
    }
    let subshell: Promise<string | null> | null = null;
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
    questions.watch(kernel);
    kernel.statusChanged.connect(() => {
      if (kernel.status === 'restarting' || kernel.status === 'autorestarting') {
        subshell = null;
      }
    });
    kernel.registerCommTarget(TARGET, comm => {
      current.kernel = kernel;
      serve(panel, kernel, ensure(), shown, ops, comm, current);
    });
    adoptOpenComms(kernel).catch(error =>
      console.warn(`${NAME}: could not list the kernel's comms`, error)
    );
  };
  /** Tell the kernel where the notebook is now (renamed, moved). */
  const tellPath = () => {
    const path = panel.context.localPath;
    if (current.path !== null && path !== current.path) {
      current.path = path;
      say({ op: 'path', client: current.kernel!.clientId, path: path });
    }
  };
  panel.context.pathChanged.connect(tellPath);
  /** Said once per panel. The panel's session goes away before the panel's
   * `disposed` signal comes, its kernel connection with it: `bye` is said as the
   * session starts going (or at the panel's end if it stays, for another view). */
  let said = false;
  const bye = () => {
    if (!said && current.kernel && !current.kernel.isDisposed) {
      said = true;
      say({ op: 'bye', client: current.kernel.clientId });
    }
  };
  panel.sessionContext.disposed.connect(bye);
  panel.disposed.connect(() => {
    panel.context.pathChanged.disconnect(tellPath);
    bye();
  });
  panel.sessionContext.kernelChanged.connect(attach);
  panel.sessionContext.ready.then(attach).catch(() => undefined); // closed first
  attach();
}

/** What `hello` says of the application and of this extension. */
export interface IShown {
  /** The application and its version, e.g. `JupyterLab 4.6.6`. */
  app: string;
  versions: IVersions;
}

/** What `hello` says of an application with this extension (its version given). */
export function shownBy(app: JupyterFrontEnd, extension: string): IShown {
  const name =
    app.name === 'JupyterLab'
      ? 'JupyterLab'
      : /notebook/i.test(app.name)
        ? 'Notebook'
        : app.name;
  return {
    app: `${app.name} ${app.version}`,
    versions: { app: name, version: app.version, extension: extension }
  };
}
