"""The JupyterLab extension as the repository keeps it: its sources' declarations and the bundle
built from them (``nbagent/frontend/labextension``), which the package installs.

``.ci/run`` rebuilds the bundle from ``src/`` and fails when it differs; these checks need no
Node.js: the bundle was built from this package.json, with the supported versions as the
ranges of the modules it takes from JupyterLab, under a content-hashed name, and the Python
package installs it where JupyterLab and Notebook look, with ``install.json``.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from nbagent.core.version import __version__
from nbagent.frontend.channel import TARGET

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = json.loads((ROOT / "package.json").read_text())
BUILT = ROOT / "nbagent" / "frontend" / "labextension"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

SUPPORTED = {
    "@jupyterlab/application": "^4.4.0",
    "@jupyterlab/cells": "^4.4.0",
    "@jupyterlab/coreutils": "^6.4.0",
    "@jupyterlab/docregistry": "^4.4.0",
    "@jupyterlab/nbformat": "^4.4.0",
    "@jupyterlab/notebook": "^4.4.0",
    "@jupyterlab/services": "^7.4.0",
}
"""JupyterLab 4.4's packages and later 4.x: kernel subshells came in 4.4 (Notebook 7.4)."""


def test_the_extension_declares_the_supported_jupyterlab_and_shares_it() -> None:
    assert PACKAGE["dependencies"] == SUPPORTED
    shared = PACKAGE["jupyterlab"]["sharedPackages"]
    assert {name: config["requiredVersion"] for name, config in shared.items()} == SUPPORTED
    assert all(config["bundled"] is False for config in shared.values())
    # The build tools are pinned (package-lock.json holds the rest).
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in PACKAGE["devDependencies"].values())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == PACKAGE["dependencies"]
    assert lock["packages"][""]["devDependencies"] == PACKAGE["devDependencies"]


def test_the_bundle_is_built_from_this_package_json_under_a_content_hash() -> None:
    built = json.loads((BUILT / "package.json").read_text())
    build = built["jupyterlab"].pop("_build")
    assert built == PACKAGE
    assert build == {
        "load": build["load"],
        "extension": "./extension",
        "style": "./style",
    }
    assert re.fullmatch(r"static/remoteEntry\.[0-9a-f]{16}\.js", build["load"])
    entry = (BUILT / build["load"]).read_text()
    # Every chunk the entry loads is there, named by its content hash, and nothing else.
    chunks = re.search(r"\(\{(\d+:\"[0-9a-f]{16}\"(?:,\d+:\"[0-9a-f]{16}\")*)\}\)\[\w+\]", entry)
    assert chunks, "the entry names its chunks"
    names = {f"{n}.{h}.js" for n, h in re.findall(r"(\d+):\"([0-9a-f]{16})\"", chunks.group(1))}
    static = {path.name for path in (BUILT / "static").iterdir()}
    assert static == {Path(build["load"]).name, *names, "style.js", "third-party-licenses.json"}
    # The modules it takes from JupyterLab, with the supported versions.
    for name in ("@jupyterlab/notebook", "@jupyterlab/coreutils"):
        assert f'"{name}",import:null,requiredVersion:"{SUPPORTED[name]}"' in entry


def test_the_package_installs_the_bundle_where_jupyterlab_looks() -> None:
    name = PACKAGE["name"]
    shared_data = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    target = f"share/jupyter/labextensions/{name}"
    assert shared_data["nbagent/frontend/labextension"] == target
    assert shared_data["install.json"] == f"{target}/install.json"
    install = json.loads((ROOT / "install.json").read_text())
    assert install["packageManager"] == "python"
    assert install["packageName"] == PYPROJECT["project"]["name"]
    hook = PYPROJECT["tool"]["hatch"]["build"]["hooks"]["jupyter-builder"]
    assert hook["build-function"] == "hatch_jupyter_builder.npm_builder"
    assert hook["skip-if-exists"] == ["nbagent/frontend/labextension/static/style.js"]
    assert all((ROOT / path).exists() for path in hook["ensured-targets"])


def test_the_extension_and_the_kernel_agree() -> None:
    """One version for both halves (hello says the extension's), one comm target."""
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "nbagent/core/version.py"
    assert PACKAGE["version"] == __version__
    protocol = (ROOT / "src" / "protocol.ts").read_text()
    assert f"export const TARGET = '{TARGET}';" in protocol


def test_the_readme_states_the_supported_versions() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "JupyterLab ≥ 4.4 or Notebook ≥ 7.4" in readme
