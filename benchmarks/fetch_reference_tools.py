"""Write ``benchmarks/data/reference_servers.json``: the tool lists of the MCP reference servers.

Each server is started over stdio with the ``mcp`` client and asked ``tools/list``; the
answer is written as it came (``server``, ``name``, ``description``, ``input_schema``), with
the package version that produced it. The servers are the ones the MCP integration installs
under ``~/.cache/nbagent/mcp-servers`` (npm: ``@modelcontextprotocol/server-everything``,
``-filesystem``, ``-memory``; PyPI: ``mcp-server-time``, ``mcp-server-git``); pass
``--root`` to read them from elsewhere.

Run ``python benchmarks/fetch_reference_tools.py`` from the repo root; the JSON is committed,
so the benchmarks do not need the servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
from collections.abc import Sequence
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from catalogue import list_tools

DEFAULT_ROOT = Path.home() / ".cache" / "nbagent" / "mcp-servers"
"""Where the reference servers are installed (node_modules and a Python venv)."""

OUTPUT = Path(__file__).resolve().parent / "data" / "reference_servers.json"
"""The JSON file written."""


def server_commands(root: Path, workdir: Path) -> dict[str, tuple[list[str], str]]:
    """Return how to start each server and which package version it is.

    Args:
        root: The install directory of the servers.
        workdir: A scratch directory the filesystem and git servers may serve.

    Returns:
        ``{server: (argv, package@version)}``.
    """
    bin_dir, venv_bin = root / "node_modules" / ".bin", root / "venv" / "bin"

    def npm_version(package: str) -> str:
        manifest = root / "node_modules" / "@modelcontextprotocol" / package / "package.json"
        return f"@modelcontextprotocol/{package}@{json.loads(manifest.read_text())['version']}"

    def pypi_version(package: str) -> str:
        site = next((root / "venv" / "lib").glob("python*/site-packages"))
        [dist] = metadata.distributions(name=package, path=[str(site)])
        return f"{package}=={dist.version}"

    return {
        "everything": (
            [str(bin_dir / "mcp-server-everything"), "stdio"],
            npm_version("server-everything"),
        ),
        "filesystem": (
            [str(bin_dir / "mcp-server-filesystem"), str(workdir)],
            npm_version("server-filesystem"),
        ),
        "memory": ([str(bin_dir / "mcp-server-memory")], npm_version("server-memory")),
        "time": ([str(venv_bin / "mcp-server-time")], pypi_version("mcp-server-time")),
        "git": (
            [str(venv_bin / "mcp-server-git"), "--repository", str(workdir)],
            pypi_version("mcp-server-git"),
        ),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Query every server and write the JSON file.

    Args:
        argv: Command-line arguments (``--root``); ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = parser.parse_args(argv)
    tools: list[dict[str, Any]] = []
    versions: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as workdir:
        subprocess.run(["git", "init", "-q", workdir], check=True)
        for server, (command, version) in server_commands(args.root, Path(workdir)).items():
            params = StdioServerParameters(command=command[0], args=list(command[1:]))
            listed = asyncio.run(list_tools(partial(stdio_client, params)))
            versions[server] = version
            tools += [{"server": server, **tool} for tool in listed]
            print(f"{server}: {len(listed)} tools ({version})")
    payload = {"source": "tools/list of each server over stdio", "versions": versions}
    OUTPUT.write_text(
        json.dumps({**payload, "tools": tools}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {len(tools)} tools to {OUTPUT}")


if __name__ == "__main__":
    main()
