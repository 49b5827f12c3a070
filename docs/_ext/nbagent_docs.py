"""Sphinx helpers of nbagent's documentation, built from the code at build time.

- ``{nbagent-magics}``: every magic that ``%load_ext nbagent`` registers, each with the text
  IPython shows for ``%%agent?`` (the magic's docstring with its argparse usage and options).
- A public object documented by autodoc without a docstring is a warning (so, with ``-W``,
  an error): the reference never shows an object with nothing to say about it.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from IPython.core.magic import Magics
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.ext.napoleon.docstring import GoogleDocstring
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from traitlets import TraitType

logger = logging.getLogger(__name__)


def magic_classes() -> list[type[Magics]]:
    """The Magics classes ``%load_ext nbagent`` registers (those its loader imports)."""
    from nbagent.jupyter import extension

    found = {
        value
        for value in vars(extension).values()
        if isinstance(value, type) and issubclass(value, Magics) and value is not Magics
    }
    return sorted(found, key=lambda kind: kind.__name__)


def magics() -> list[tuple[str, str]]:
    """Each magic as it is typed (``%%agent``, ``%agent``, ``%mcp``...) and its help text.

    A magic that is both a line and a cell magic is one entry, ``%%agent`` / ``%agent``.
    """
    entries = []
    for kind in magic_classes():
        table = kind.magics
        for name, method in sorted(table["line"].items()):
            typed = f"%%{name} / %{name}" if name in table["cell"] else f"%{name}"
            entries.append((typed, inspect.cleandoc(getattr(kind, method).__doc__ or "")))
        for name, method in sorted(table["cell"].items()):
            if name not in table["line"]:
                entries.append((f"%%{name}", inspect.cleandoc(getattr(kind, method).__doc__ or "")))
    return entries


class MagicsDirective(SphinxDirective):
    """``{nbagent-magics}``: a section per magic, its help text as IPython prints it."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """One section per magic: its name as the title, its help text as a literal block."""
        sections: list[nodes.Node] = []
        for typed, text in magics():
            if not text:
                logger.warning("the magic %s has no docstring", typed, location=self.get_location())
            section = nodes.section(ids=[nodes.make_id("magic " + typed)])
            section += nodes.title("", "", nodes.literal(typed, typed))
            block = nodes.literal_block(text, text, language="text")
            section += block
            self.state.document.note_implicit_target(section, section)
            sections.append(section)
        return sections


class SettingsTableDirective(SphinxDirective):
    """``{nbagent-settings}``: a table of every ``c.NbAgent`` setting, its default and the
    first sentence of its help, each linked to its entry in the reference."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """Parse the table, written in Markdown, into the page."""
        from nbagent.jupyter.config import NbAgent

        lines = ["| setting | default | what it does |", "|---|---|---|"]
        for name, trait in sorted(NbAgent.class_traits(config=True).items()):
            default = trait.default_value_repr()
            default = f"`{default}`" if len(default) <= 40 else "(long)"
            first = re.split(r"(?<=\.)\s+(?=[A-Z])", " ".join(trait.help.split()), maxsplit=1)[0]
            first = first.replace("|", "\\|").replace("*", "\\*")
            target = f"nbagent.jupyter.config.NbAgent.{name}"
            lines.append(f"| {{py:attr}}`{name} <{target}>` | {default} | {first} |")
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="nbagent-settings"), 0, container)
        return container.children


def literal_trait_help(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Show a setting's help as written: it is plain text (``'Bash(git status:*)'``), not
    reStructuredText."""
    if isinstance(obj, TraitType):
        lines[:] = [re.sub(r"([\\*`|_])", r"\\\1", line) for line in lines]


def require_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Warn when autodoc documents a public object that has no docstring."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf.startswith("_") or what in ("module",):
        return
    if not any(line.strip() for line in lines):
        logger.warning("%s %s has no docstring", what, name, type="nbagent", subtype="docstring")


def plain_attribute_docstring(self: GoogleDocstring) -> list[str]:
    """An attribute's docstring as written: napoleon would read ``"The hook: given..."`` as a
    type, ``The hook``, and a description (nbagent's attribute docstrings never start with a
    type)."""
    return type(self)(self._consume_to_end(), self._config).lines()


def resolve_short_name(app: Sphinx, env: Any, node: pending_xref, contnode: nodes.Node) -> Any:
    """Resolve a Python reference by its last part when one documented object has that name
    (a docstring's ``Raises: ToolError:`` names the class without its module)."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].rsplit(".", 1)[-1]
    domain = env.get_domain("py")
    found = [name for name in domain.objects if name.rsplit(".", 1)[-1] == target]
    if len(found) != 1:
        return None
    return (
        domain.resolve_xref(
            env, node["refdoc"], app.builder, node["reftype"], found[0], node, contnode
        )
        or domain.resolve_any_xref(env, node["refdoc"], app.builder, found[0], node, contnode)[0][1]
    )


def every_export_documented(app: Sphinx, env: Any) -> None:
    """Warn about each name in the ``__all__`` of a module of ``nbagent_public_modules`` that
    the reference does not document, under that module or the one defining it (autodoc leaves
    out a member without a docstring without a word)."""
    import importlib

    objects = env.get_domain("py").objects
    for module in app.config.nbagent_public_modules:
        imported = importlib.import_module(module)
        for name in getattr(imported, "__all__", ()):
            home = getattr(getattr(imported, name), "__module__", module)
            if f"{module}.{name}" not in objects and f"{home}.{name}" not in objects:
                logger.warning(
                    "%s.%s is public but not in the reference (no docstring?)",
                    module,
                    name,
                    type="nbagent",
                    subtype="docstring",
                )


def settings_only(
    app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """Leave out the methods of ``NbAgent``: its page lists the settings (its traits)."""
    if getattr(obj, "__qualname__", "").startswith("NbAgent.") and not isinstance(obj, TraitType):
        return True
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, the docstring check and the reference resolver."""
    app.add_directive("nbagent-magics", MagicsDirective)
    app.add_directive("nbagent-settings", SettingsTableDirective)
    app.connect("autodoc-process-docstring", literal_trait_help)
    app.connect("autodoc-process-docstring", require_docstring)
    app.connect("missing-reference", resolve_short_name)
    app.connect("autodoc-skip-member", settings_only)
    app.add_config_value("nbagent_public_modules", [], "env")
    app.connect("env-updated", every_export_documented)
    GoogleDocstring._parse_attribute_docstring = plain_attribute_docstring
    return {"parallel_read_safe": True, "parallel_write_safe": True}
