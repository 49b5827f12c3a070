"""Paths as the permission rules see them: patterns, credentials and protected places.

A path a tool touches and a path a rule names are normalised the same way before they are
compared: ``~`` is the home folder, a relative path starts at the policy's root, ``..`` and
``.`` are taken out, and symbolic links are resolved. Both spellings (the path as written,
made absolute, and the path with its links resolved) are kept, and a rule matches when any
spelling of the target matches any spelling of the pattern: a home folder that is a link, a
link inside the project pointing at ``~/.ssh``, or ``data/../secrets`` all reach the rule
written for the real place. On a filesystem that ignores case, so does the comparison.

A pattern ``dir/**`` covers ``dir`` itself as well as everything below it; ``*`` stays
inside one folder, ``?`` is one character.

*Credentials* (:func:`credential_paths`) are refused to every tool in every mode; only an
allow rule whose pattern lies inside the credential's own folder unlocks it. *Protected*
places (:func:`protected_paths`, :func:`shadows_a_module`) are where a write would run code
later (shell and IPython start-up files, Jupyter and git configuration, ``.mcp.json``,
a Python file named like a module the kernel imports): writing them asks in every mode but
``bypassPermissions``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

HOME_CREDENTIALS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".config/git/credentials",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings-security.xml",
    ".claude",
    ".anthropic",
    ".nbagent/credentials*",
    ".nbagent/secret*",
    ".nbagent/*.key",
)
"""Credential files and folders under the home folder (a folder covers what it holds)."""

HOME_PROTECTED = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".config/fish",
    ".inputrc",
    ".ipython",
    ".jupyter",
    ".nbagent",
    ".config/nbagent",
    ".gitconfig",
    ".config/git",
    ".local/share/jupyter/kernels",
    ".config/autostart",
    ".config/environment.d",
    ".local/bin",
    ".local/lib",
    ".config/systemd",
    ".pam_environment",
    ".xprofile",
)
"""Places under the home folder whose contents run code (or steer what runs) later."""

PROJECT_PROTECTED = (
    "**/.git",
    "**/.mcp.json",
    "**/.vscode",
    "**/.idea",
    "**/.github/workflows",
    "**/.ipython",
    "**/.jupyter",
    "**/.nbagent",
    "**/.claude",
    "**/.envrc",
    "**/.pre-commit-config.yaml",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/*.pth",
    "**/ipykernel_launcher.py",
    "**/conftest.py",
    "**/site-packages",
    "**/.venv",
    "**/jupyter_*_config.py",
    "**/jupyter_*_config.json",
    "**/ipython_config.py",
    "**/ipython_kernel_config.py",
    "**/AGENTS.md",
    "**/CLAUDE.md",
    "**/skills/*/SKILL.md",
)
"""Places anywhere whose contents run code later: git's hooks and configuration, the MCP
servers a folder starts, editor tasks, CI workflows, Python's start-up hooks, the kernel's
launcher, Jupyter's and IPython's configuration; and the project instructions and skills
nbagent gives the model as the person's own words (a model must not write its own)."""

_MAGIC = re.compile(r"[*?\[]")


def expand(text: str, root: Path) -> str:
    """Make a path absolute and normal: ``~`` expanded, relative to ``root``, no ``..``.

    Args:
        text: A path as written (by the model, or in a rule).
        root: The folder relative paths start from.

    Returns:
        The absolute path, links not resolved.
    """
    expanded = os.path.expanduser(text.strip())
    if not os.path.isabs(expanded):
        expanded = os.path.join(root, expanded)
    return os.path.normpath(expanded)


def spellings(text: str, root: Path) -> tuple[str, ...]:
    """Every spelling of a path a rule is compared with: as written, and links resolved.

    Args:
        text: The path, as the model gave it.
        root: The folder relative paths start from.

    Returns:
        One or two absolute paths.

    Raises:
        ValueError: The path holds a NUL character (no file can be named so).
    """
    if "\0" in text:
        raise ValueError(f"{text!r} holds a NUL character")
    written = expand(text, root)
    joined = os.path.join(root, os.path.expanduser(text.strip()))
    resolved = os.path.realpath(joined)  # links first, then "..", as the system reads it
    return (written,) if resolved == written else (written, resolved)


@functools.lru_cache(maxsize=64)
def ignores_case(folder: str) -> bool:
    """Tell whether the filesystem holding ``folder`` ignores the case of names.

    Args:
        folder: An existing folder (its nearest existing parent is probed otherwise).

    Returns:
        True when the same folder is reached with its name's case swapped.
    """
    probe = Path(folder)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    while probe != probe.parent and probe.name.swapcase() == probe.name:
        probe = probe.parent
    if probe == probe.parent:
        return False
    swapped = probe.with_name(probe.name.swapcase())
    try:
        return os.path.samefile(probe, swapped)
    except OSError:
        return False


@dataclass(frozen=True)
class PathPattern:
    """A path glob, normalised like the paths it is matched against.

    Args:
        text: The pattern as written: ``./data/**``, ``~/.ssh``, ``/etc/*.conf``,
            ``**/.git``.
        root: The folder a relative pattern starts from.
    """

    text: str
    """The pattern as written."""
    root: Path
    """The folder a relative pattern starts from."""
    forms: tuple[str, ...] = field(init=False)
    """The absolute pattern, and the same with its fixed part's links resolved."""
    _regexes: tuple[re.Pattern[str], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        """Normalise the pattern and compile it."""
        written = self.text.strip()
        if written.startswith("**"):
            written = os.path.join(self.root, written)
        absolute = expand(written, self.root)
        fixed, rest = _split_fixed(absolute)
        resolved = os.path.join(os.path.realpath(fixed), rest) if rest else os.path.realpath(fixed)
        forms = (absolute,) if resolved == absolute else (absolute, resolved)
        flags = re.IGNORECASE if ignores_case(fixed) else 0
        object.__setattr__(self, "forms", forms)
        object.__setattr__(self, "_regexes", tuple(_compile(f, flags) for f in forms))

    @property
    def fixed(self) -> tuple[str, ...]:
        """The pattern's folders before its first wildcard, in each form."""
        return tuple(_split_fixed(form)[0] for form in self.forms)

    def matches(self, paths: Iterable[str]) -> bool:
        """Tell whether any spelling of a path matches any form of the pattern.

        Args:
            paths: The spellings of one path (see :func:`spellings`).
        """
        return any(regex.fullmatch(path) for path in paths for regex in self._regexes)

    def within(self, folder: PathPattern) -> bool:
        """Tell whether everything this pattern can match lies inside ``folder``'s place.

        Used to tell a rule that names a credential (``Read(~/.ssh/config)``) from a wide one
        that merely covers it (``Read(~/**)``).

        Args:
            folder: A pattern naming a file or folder.
        """
        return any(folder.matches([prefix]) for prefix in self.fixed) and not any(
            prefix in ("/", "") for prefix in self.fixed
        )


def _split_fixed(path: str) -> tuple[str, str]:
    """Split an absolute pattern into the folders before its first wildcard and the rest."""
    parts = path.split("/")
    for index, part in enumerate(parts):
        if _MAGIC.search(part):
            return "/".join(parts[:index]) or "/", "/".join(parts[index:])
    return path, ""


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    """Turn an absolute glob into a regex; a trailing ``/**`` also matches the folder."""
    body = pattern.removesuffix("/**")
    regex = ""
    for token in re.split(r"(/\*\*/|\*\*|\*|\?)", body):
        if token == "/**/":
            regex += "/(?:.*/)?"
        elif token == "**":
            regex += ".*"
        elif token == "*":
            regex += "[^/]*"
        elif token == "?":
            regex += "[^/]"
        else:
            regex += re.escape(token)
    if pattern.endswith("/**") or not _MAGIC.search(os.path.basename(pattern)):
        regex += "(?:/.*)?"  # a folder covers what it holds
    return re.compile(regex, flags)


def _home_patterns(names: Iterable[str], root: Path, home: str) -> list[PathPattern]:
    return [PathPattern(os.path.join(home, name), root) for name in names]


def credential_paths(root: Path) -> tuple[PathPattern, ...]:
    """The credentials no tool touches without a rule that names them.

    The home folder's key and token files, and the Jupyter runtime folder (kernel connection
    files and server tokens); a changed ``HOME`` or ``JUPYTER_RUNTIME_DIR`` applies at once
    (the patterns are kept per home and runtime folder).

    Args:
        root: The policy's root (for pattern normalisation).

    Returns:
        The patterns.
    """
    runtime = _jupyter_runtime_dir()
    return _credential_paths(root, os.path.expanduser("~"), runtime)


@functools.lru_cache(maxsize=16)
def _credential_paths(root: Path, home: str, runtime: str | None) -> tuple[PathPattern, ...]:
    patterns = _home_patterns(HOME_CREDENTIALS, root, home)
    return (*patterns, PathPattern(runtime, root)) if runtime else tuple(patterns)


def protected_paths(root: Path) -> tuple[PathPattern, ...]:
    """Places whose contents run code later: writing them asks in every mode but bypass.

    Args:
        root: The policy's root: ``**/`` patterns are taken below it.

    Returns:
        The patterns (home start-up files, configuration folders, the project's own).
    """
    return _protected_paths(root, os.path.expanduser("~"), tuple(_jupyter_config_dirs()))


@functools.lru_cache(maxsize=16)
def _protected_paths(root: Path, home: str, config: tuple[str, ...]) -> tuple[PathPattern, ...]:
    patterns = _home_patterns(HOME_PROTECTED, root, home)
    patterns += [PathPattern(text, root) for text in PROJECT_PROTECTED]
    patterns += [PathPattern(folder, root) for folder in config]
    return tuple(patterns)


def shadows_a_module(path: str, folders: Iterable[Path]) -> str | None:
    """Tell whether writing ``path`` would shadow a module the kernel imports.

    A kernel puts the notebook's folder (and the working folder) first on ``sys.path``, and
    Jupyter starts kernels there with ``python -m ipykernel_launcher``: a ``pandas.py``, a
    ``json.py`` or a ``pandas/__init__.py`` written there runs at the next ``import``.

    Args:
        path: The absolute path about to be written.
        folders: The folders a kernel puts first on ``sys.path``.

    Returns:
        The module's name when the write would shadow one, else None.
    """
    target = Path(path)
    top = next((Path(f) for f in folders if target.is_relative_to(f) and target != Path(f)), None)
    if top is None:
        return None
    first = target.relative_to(top).parts[0]
    package = first != target.name  # a file inside a folder named like a package
    name = first if package else target.stem
    if package and not (target.name == "__init__.py" or (top / first / "__init__.py").exists()):
        return None  # a plain folder is a namespace package: it never wins over a module
    if (not package and target.suffix != ".py") or not name.isidentifier():
        return None
    target = top / first if package else target
    if name in sys.stdlib_module_names or name in ("ipykernel_launcher", "__main__"):
        return name
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return name if spec is not None else None
    origin = Path(spec.origin)
    return None if origin.parent in (target.parent, target) else name


def _jupyter_runtime_dir() -> str | None:
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return None
    return jupyter_runtime_dir()


def _jupyter_config_dirs() -> list[str]:
    try:
        from jupyter_core.paths import jupyter_config_path, jupyter_data_dir
    except ImportError:
        return []
    return [*jupyter_config_path(), os.path.join(jupyter_data_dir(), "kernels")]


def inside(path: str, root: Path) -> bool:
    """Tell whether a path is a folder or lies inside it.

    Args:
        path: An absolute path.
        root: The folder.
    """
    return path == str(root) or path.startswith(str(root).rstrip("/") + "/")


def protected_reason(target: str, root: Path) -> str:
    """Say why writing a path asks in every mode but bypass (empty: it does not).

    Args:
        target: The path written, absolute or relative to ``root``.
        root: The working folder.
    """
    names = spellings(target, root)
    if any(p.matches(names) for p in protected_paths(root)):
        return f"{target} is a protected place (start-up, configuration or git files)"
    module = shadows_a_module(names[-1], [root])
    if module is not None:
        return f"{target} would be imported instead of the module {module!r}"
    return ""
