"""Bash's optional sandbox: each command in bubblewrap (``bwrap``), on Linux.

With ``c.NbAgent.sandbox = True`` a Bash command sees the whole filesystem read-only except
the working folder (and ``c.NbAgent.sandbox_write_paths``), a fresh ``/tmp``, no network
unless ``c.NbAgent.sandbox_network``, its own process, IPC, UTS and cgroup namespaces (so
``/proc`` shows only its own processes), none of the kernel's environment variables but a
few harmless ones, and neither the person's credential files (``~/.ssh``, ``~/.aws``,
``~/.netrc``...), nor the Jupyter runtime folder (the kernels' connection files, the servers'
tokens), nor the sockets of the container engines, of the ssh agent and of the person's
session (``$XDG_RUNTIME_DIR``). Inside the writable folders, the files that would let a
command run code later outside the sandbox stay read-only: ``.git/hooks``, ``.git/config``,
``.mcp.json``, ``.vscode``, ``.ipython``, ``.jupyter``, shell start-up files, the project's
``AGENTS.md``, ``CLAUDE.md`` and skills... (see :data:`PROTECTED`), and one that does not exist
cannot be created: bubblewrap mounts an empty read-only placeholder there, for which it makes an
empty file or folder in the real folder, removed when the command ends
(:class:`Placeholder`). Because of all that, the permission policy lets sandboxed commands run
without asking (deny rules still refuse).

A sandbox that is on but cannot run here (not Linux, no ``bwrap``, no user namespaces) never
falls back to running commands unsandboxed: Bash refuses them, saying what to do, until the
problem is fixed or the setting is turned off.

How bubblewrap runs here: ``bwrap`` needs to create a user namespace (``--unshare-all``
includes ``--unshare-user-try``), as an ordinary user as well as root; as root it needs no
extra flag (tested on Debian 12 with bubblewrap 0.8.0, in a VM as root and as ``nobody``).
Where it fails: Docker's default seccomp profile refuses the namespaces (run the container
with ``--security-opt seccomp=unconfined``, or ``--privileged``); Ubuntu 23.10 and newer
restrict unprivileged user namespaces with AppArmor (``sysctl
kernel.apparmor_restrict_unprivileged_userns=0``, or an AppArmor profile for ``bwrap``);
older Debian kernels need ``sysctl kernel.unprivileged_userns_clone=1``.

What it does not cover: RunCode and NotebookRun run in the kernel itself, with the person's
rights (they always ask unless a rule allows them); Read, Write, Edit, the notebook tools,
WebFetch and MCP servers are not sandboxed (the permission policy guards them). Inside the
sandbox, Unix sockets other than those hidden stay reachable (a read-only mount does not stop
``connect``), protected paths are looked for only at the top of each writable folder, nothing
under a ``.git`` folder that does not exist yet is protected (so that ``git init`` works), and
code written into the working folder
(a module the notebook imports, a ``.venv``) runs unsandboxed when the kernel uses it.

The process-wide sandbox (:func:`current`) is set by the session (:func:`use`) from the
settings and read by Bash at each call, as the built-in tools are process-wide too.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nbagent.core.text import collapse_whitespace

PROTECTED = (
    ".git/hooks",
    ".git/config",
    ".gitmodules",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".github/workflows",
    ".ipython",
    ".jupyter",
    ".nbagent",
    ".claude",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitconfig",
    "AGENTS.md",
    "CLAUDE.md",
    "skills",
)
"""Paths kept read-only inside each writable folder: what git, editors, CI, IPython, Jupyter,
nbagent or a shell would later run or obey outside the sandbox (the project's instructions and
skills, which nbagent gives the model as the person's words). One that does not exist gets a
read-only placeholder (:class:`Placeholder`) of the kind in :data:`FOLDERS`."""

FOLDERS = frozenset(
    {".git/hooks", ".vscode", ".idea", ".github/workflows", ".ipython", ".jupyter", ".nbagent"}
    | {".claude", "skills"}
)
"""The entries of :data:`PROTECTED` that are folders (the others are files)."""

HIDDEN_IN_HOME = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".config/gh",
    ".azure",
    ".kube",
    ".docker",
    ".claude",
    ".anthropic",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
)
"""Credential folders (hidden under an empty tmpfs) and files (replaced by ``/dev/null``) in
the home folder, when they exist; ``~/.nbagent/credentials*`` and nbagent's keys
(``~/.nbagent/*.key``, which sign conversations and checkpoints) too."""

HIDDEN_SOCKETS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
)
"""Container engines' sockets (one of them is root on the host), replaced by ``/dev/null``."""

ENVIRONMENT = ("PATH", "HOME", "LANG", "TERM", "USER", "VIRTUAL_ENV")
"""The kernel's environment variables a sandboxed command gets (and every ``LC_*``)."""

INSTALL = "install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`)"
"""How to get ``bwrap``."""

TURN_OFF = "or turn the sandbox off (`%config NbAgent.sandbox = False`)"
"""The other way out of an unusable sandbox."""

_PROBE_SECONDS = 10.0
"""Seconds the probe run of ``bwrap`` may take."""

_works = False
"""Whether a probe run of ``bwrap`` succeeded in this process (a failure is probed again)."""


@dataclass(frozen=True)
class Sandbox:
    """How Bash runs its commands: in bubblewrap or not, with network or not, where it writes.

    Args:
        enabled: Run every command in bubblewrap (``c.NbAgent.sandbox``).
        network: Let commands use the network (``c.NbAgent.sandbox_network``).
        write_paths: Folders writable besides the working folder
            (``c.NbAgent.sandbox_write_paths``).
    """

    enabled: bool = False
    network: bool = False
    write_paths: tuple[Path, ...] = ()

    def argv(
        self,
        command: str,
        root: Path,
        extra: Mapping[str, str] | None = None,
        placeholders: Sequence[Placeholder] | None = None,
    ) -> list[str]:
        """The ``bwrap`` command line that runs ``bash -c command`` in the sandbox.

        The home folder, the environment and the Jupyter runtime folder are read now, so a
        change of ``HOME`` is followed.

        Args:
            command: The command line for ``bash -c``.
            root: The working folder (writable, and the command's working directory).
            extra: Variables set in the sandbox beside the allow-listed ones.
            placeholders: The placeholders to mount (:meth:`placeholders`, read now when not
                given); the caller removes them when the command ends.

        Returns:
            The argument vector, ``bwrap`` first.
        """
        writable = [str(root), *map(str, self.write_paths)]
        args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--tmpfs", "/tmp"]
        for folder in writable:
            args += ["--bind", folder, folder]
        for folder in writable:
            for name in PROTECTED:
                path = Path(folder, name)
                if path.exists():
                    real = os.path.realpath(path)
                    args += ["--ro-bind", real, real]
        if placeholders is None:
            placeholders = self.placeholders(root)
        for placeholder in placeholders:
            where = str(placeholder.path)
            if placeholder.folder:
                args += ["--tmpfs", where, "--remount-ro", where]
            else:
                args += ["--ro-bind", "/dev/null", where]
        for path in _hidden():
            args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        args += ["--unshare-all", *(["--share-net"] if self.network else [])]
        args += ["--die-with-parent", "--new-session", "--clearenv"]
        for name, value in {**_environment(), **(extra or {})}.items():
            args += ["--setenv", name, value]
        args += ["--chdir", str(root), "--", "bash", "-c", command]
        return args

    def placeholders(self, root: Path) -> list[Placeholder]:
        """The protected paths of the writable folders that do not exist now, as
        :meth:`argv` mounts placeholders on them (read at each call).

        A path whose last part is a link to nowhere gets its placeholder where the link
        points, when that is in a writable folder (elsewhere the whole filesystem is
        read-only already). Nothing under a ``.git`` that does not exist.

        Args:
            root: The working folder.

        Returns:
            One placeholder per missing path, each once.
        """
        writable = [os.path.realpath(p) for p in (root, *self.write_paths)]
        found: dict[Path, Placeholder] = {}
        for folder in writable:
            for name in PROTECTED:
                if name.startswith(".git/") and not os.path.isdir(Path(folder, ".git")):
                    continue
                real = Path(os.path.realpath(Path(folder, name)))
                if real.exists() or real in found or not _inside(real, writable):
                    continue
                missing = [real]
                while not missing[-1].parent.exists():
                    missing.append(missing[-1].parent)
                found[real] = Placeholder(real, name in FOLDERS, tuple(missing))
        return list(found.values())


@dataclass(frozen=True)
class Placeholder:
    """A protected path that did not exist when a sandboxed command started.

    bubblewrap mounts an empty read-only file (``/dev/null``) or folder (a read-only tmpfs) on
    it, so that the command can neither create nor replace it; to mount there, bubblewrap
    makes an empty file or folder (and any missing folder above it) in the real folder, which
    :meth:`remove` takes away when the command ends.

    Args:
        path: The protected path (resolved).
        folder: Whether it is a folder.
        made: The paths bubblewrap makes for it, deepest first: the path, then each folder
            above it that did not exist.
    """

    path: Path
    folder: bool
    made: tuple[Path, ...]

    def remove(self) -> None:
        """Remove what bubblewrap made for this placeholder, if it is still empty.

        A file that is not empty, a folder with something in it, or anything else is kept:
        someone else made it meanwhile.
        """
        for path in self.made:
            try:
                info = path.lstat()
                if stat.S_ISDIR(info.st_mode):
                    path.rmdir()
                elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
                    path.unlink()
                else:
                    return
            except OSError:  # gone already, not empty, or not ours to remove
                return


def _inside(path: Path, folders: list[str]) -> bool:
    """Whether ``path`` is in one of the (resolved) folders."""
    return any(path.is_relative_to(folder) for folder in folders)


_current = Sandbox()


def use(sandbox: Sandbox) -> None:
    """Make ``sandbox`` the one Bash uses from its next command on.

    Args:
        sandbox: The sandbox settings.
    """
    global _current
    _current = sandbox


def current() -> Sandbox:
    """The sandbox Bash uses now (off unless a session turned it on)."""
    return _current


def problem() -> str | None:
    """Why bubblewrap cannot run here, with what to do; None when it can.

    A successful probe is remembered for the process; a failed one is tried again at the next
    call, so that installing bubblewrap is enough.
    """
    global _works
    if _works:
        return None
    if sys.platform != "linux":
        return f"The sandbox needs Linux (bubblewrap); this is {sys.platform}: {TURN_OFF}."
    if shutil.which("bwrap") is None:
        return f"`bwrap` is not on the PATH: {INSTALL}, {TURN_OFF}."
    probe = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    probe += ["--unshare-all", "--die-with-parent", "--new-session", "--", "true"]
    try:
        ran = subprocess.run(
            probe, capture_output=True, text=True, timeout=_PROBE_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`bwrap` did not run ({exc}): {TURN_OFF}."
    if ran.returncode != 0:
        said = collapse_whitespace(ran.stderr) or f"exit {ran.returncode}"
        return (
            f"`bwrap` cannot make its namespaces here ({said}). User namespaces are probably "
            "off: in Docker run the container with `--security-opt seccomp=unconfined`; on "
            "Ubuntu 23.10 or newer `sysctl kernel.apparmor_restrict_unprivileged_userns=0`; "
            f"on older Debian `sysctl kernel.unprivileged_userns_clone=1`; {TURN_OFF}."
        )
    _works = True
    return None


def runs_sandboxed() -> bool:
    """Whether Bash's commands run in the sandbox now (it is on and it works here)."""
    return current().enabled and problem() is None


def status() -> str:
    """The sandbox in force, in one Markdown paragraph, for ``%agent status``.

    Returns:
        Whether it is on and working, what it does, and what it does not cover.
    """
    sandbox = current()
    if not sandbox.enabled:
        return "off (`c.NbAgent.sandbox = True` runs Bash in bubblewrap)"
    why = problem()
    if why is not None:
        return f"**on but not working**: Bash refuses every command. {why}"
    extra = ", ".join(f"`{p}`" for p in sandbox.write_paths)
    return (
        "on (bubblewrap): Bash writes only to the working folder"
        + (f" and {extra}" if extra else "")
        + f", network **{'on' if sandbox.network else 'off'}**, credentials and the kernel's "
        "environment hidden; its commands run without asking. Not sandboxed: RunCode and "
        "NotebookRun (they run in the kernel with your rights, and ask unless a rule allows "
        "them), Read, Write, Edit and the other tools, MCP servers."
    )


def _hidden() -> Iterator[str]:
    """The credential and socket paths to hide that exist now, resolved, each once."""
    from jupyter_core.paths import jupyter_runtime_dir

    home = Path.home()
    candidates = [home / name for name in HIDDEN_IN_HOME]
    candidates += sorted(home.glob(".nbagent/credentials*")) + sorted(home.glob(".nbagent/*.key"))
    candidates += [Path(jupyter_runtime_dir())]
    candidates += [Path(os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}")]
    candidates += [Path(p) for p in (*HIDDEN_SOCKETS, os.environ.get("SSH_AUTH_SOCK")) if p]
    seen: set[str] = set()
    for path in candidates:
        real = os.path.realpath(path)
        if real not in seen and os.path.lexists(real):
            seen.add(real)
            yield real


def _environment() -> dict[str, str]:
    """The allow-listed part of the kernel's environment, with the home folder."""
    kept = {n: v for n, v in os.environ.items() if n in ENVIRONMENT or n.startswith("LC_")}
    kept["HOME"] = str(Path.home())
    return kept
