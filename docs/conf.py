"""Sphinx configuration of nbagent's documentation: MyST pages, the example notebooks
executed offline (the scripted model of ``nbagent.testing``), the reference generated from
the code, the pydata theme. Build: ``sphinx-build -W --keep-going docs docs/_build/html``."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

# The notebooks run offline, whatever the machine has: without ANTHROPIC_API_KEY the example
# notebooks start FakeAnthropicServer and answer from their script (their kernels inherit this).
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
# Their conversations and log go to a temporary folder, never to ~/.nbagent, and every request
# body is checked against a whole encoding, as in the tests.
_scratch = Path(tempfile.mkdtemp(prefix="nbagent-docs-"))
atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
os.environ["NBAGENT_CONVERSATIONS"] = str(_scratch / "conversations")
os.environ["NBAGENT_LOG"] = str(_scratch / "nbagent.log")
os.environ["NBAGENT_CHECK_BODIES"] = "1"

from nbagent import __version__  # noqa: E402

project = "nbagent"
author = "the nbagent authors"
copyright = "the nbagent authors"
version = release = __version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_copybutton",
    "autodoc_traits",
    "nbagent_docs",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "_ext"]
nitpicky = True

# MyST: fenced directives, ``{name}`` roles, heading anchors for #links between pages.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# The example notebooks, executed in a temporary folder (notebook 02 writes a server script).
nb_execution_mode = "cache"
# Markdown outputs (the cards, tables of %tools and %agent status) with GFM tables.
nb_render_markdown_format = "myst"
nb_execution_in_temp = True
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_ipywidgets_js = {}
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.jupyter.widget-state+json", None),
]

# The Python API from the docstrings (Google style), types in the description.
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"
autodoc_typehints_format = "short"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# Every name in these modules' __all__ must be in the reference (nbagent_docs checks it).
nbagent_public_modules = ["nbagent", "nbagent.testing"]

# A fence without a language is a prompt or a table, not code.
highlight_language = "none"

html_theme = "pydata_sphinx_theme"
html_title = f"nbagent {release}"
html_static_path = ["_static"]
html_css_files = ["nbagent.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_context = {"default_mode": "auto"}

# References into the standard library and other packages are not checked (the build is
# offline: no intersphinx inventories); every reference into nbagent's own pages and API is.
nitpick_ignore_regex = [
    (
        "py:.*",
        r"(collections\.abc|typing|t|types|pathlib|datetime|enum|os|re|io|threading|"
        r"concurrent|asyncio|anyio|anthropic|httpx|httpx2|traitlets|IPython|ipywidgets|mcp|"
        r"pydantic|json|sqlite3|subprocess|socketserver|http)\..*",
    ),
    (
        "py:class",
        r"Any|Path|Callable|Iterable|Iterator|Mapping|Sequence|Collection|Generator|"
        r"Self|TypeVar|ParamSpec|Exception|BaseException|int|str|float|bool|bytes|dict|list|"
        r"tuple|set|frozenset|None|object|type",
    ),
    # Internals a public docstring mentions, which the reference does not document: modules,
    # their constants and helpers, and the classes of the layers above the public API.
    ("py:mod", r"nbagent\..*"),
    ("py:data", r"(nbagent\.[\w.]+\.)?[A-Z_]+"),
    ("py:func", r"nbagent\.[\w.]+"),
    ("py:exc", r"StateError"),
    ("py:class", r"(nbagent\.[\w.]+\.)?(Style|Policy|Mode|Compaction|Asker|UsageStore|Term)"),
]
