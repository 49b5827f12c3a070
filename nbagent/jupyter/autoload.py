"""Turn nbagent on (or off) for every IPython kernel, without ``%load_ext``.

``python -m nbagent enable`` merges ``jupyter-config/ipython/ipython_kernel_config.json``
(``IPKernelApp.extensions += ["nbagent"]``) into ``{sys.prefix}/etc/ipython`` (this
environment's kernels) or, with ``--user``, into the IPython profile
(``$IPYTHONDIR/profile_default``). Other settings in the file are kept; ``disable`` removes
only what ``enable`` added.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CONFIG_FILE = "ipython_kernel_config.json"
"""The kernel configuration file that IPython reads as JSON."""

EXTENSION = "nbagent"
"""The extension that kernels load."""


def config_dir(user: bool, prefix: str | None = None) -> Path:
    """Where the kernel configuration lives.

    Args:
        user: The user's IPython profile instead of the environment.
        prefix: An environment prefix other than ``sys.prefix``.

    Returns:
        The folder of ``ipython_kernel_config.json``.
    """
    if user:
        from IPython.paths import get_ipython_dir

        return Path(get_ipython_dir()) / "profile_default"
    return Path(prefix or sys.prefix) / "etc" / "ipython"


def set_enabled(folder: Path, enabled: bool) -> Path:
    """Add nbagent to (or remove it from) the kernel extensions in a folder's config file.

    Args:
        folder: The folder of ``ipython_kernel_config.json``.
        enabled: Add (True) or remove (False).

    Returns:
        The config file's path.

    Raises:
        ValueError: The existing file is not a JSON object.
    """
    path = folder / CONFIG_FILE
    config: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if not isinstance(config, dict):
        raise ValueError(f"{path} is not a JSON object; fix it by hand.")
    app = config.setdefault("IPKernelApp", {})
    extensions = [e for e in app.get("extensions", []) if e != EXTENSION]
    if enabled:
        extensions.append(EXTENSION)
    if extensions:
        app["extensions"] = extensions
    else:
        app.pop("extensions", None)
        if not app:
            config.pop("IPKernelApp")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as handle:
        json.dump(config, handle, indent=2)
        handle.write("\n")
    os.replace(handle.name, path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """The ``nbagent`` command: ``enable`` or ``disable`` autoloading.

    Args:
        argv: The arguments (``sys.argv[1:]`` by default).

    Returns:
        The exit code.
    """
    parser = argparse.ArgumentParser(prog="nbagent", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["enable", "disable"])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="the user's IPython profile")
    where.add_argument("--prefix", help="an environment prefix (default: sys.prefix)")
    args = parser.parse_args(argv)
    try:
        path = set_enabled(config_dir(args.user, args.prefix), args.action == "enable")
    except (OSError, ValueError) as exc:
        print(f"nbagent: {exc}", file=sys.stderr)
        return 1
    state = "loads" if args.action == "enable" else "no longer loads"
    print(f"Every new IPython kernel {state} nbagent ({path}).")
    return 0
