"""nbagent's log file: where a kernel's log records go, never into a notebook.

In a kernel, a record with no handler of its own ends on ``sys.stderr``, the running cell's
output; ipykernel also forwards what is written to the process's file descriptor 2 into
the running cell, so the kernel process's own stderr is no way out either. A handled error
(a tool that raised, a dropped MCP stream) is shown in its card as one line and told to the
model; its traceback goes to ``~/.nbagent/nbagent.log`` (``$NBAGENT_LOG`` names another
file; tests use it), where ``%agent log`` shows its end on purpose.

The file is of mode 0600 in a folder of mode 0700, rotated at :data:`MAX_BYTES` with
:data:`BACKUPS` older files beside it, and secrets are redacted from every record written
(the MCP SDK's too). A write that fails (a full disk, an unwritable folder) never reaches
the cell: from then on records are dropped, and ``%agent status`` says why.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import IO

from nbagent.core.secrets import RedactingFilter

LOG_ENV = "NBAGENT_LOG"
"""The environment variable naming another log file (tests use it)."""

DEFAULT_PATH = Path("~/.nbagent/nbagent.log")
"""Where the log is written unless ``NBAGENT_LOG`` says otherwise."""

MAX_BYTES = 2 * 1024 * 1024
"""The size at which the file is rotated."""

BACKUPS = 2
"""How many rotated files are kept (``nbagent.log.1``, ``nbagent.log.2``)."""

LOGGERS = ("nbagent", "mcp")
"""Loggers whose records go to the file: nbagent's own, and the MCP SDK's (which logs a
dropped HTTP stream with its traceback)."""

FORMAT = "%(asctime)s pid %(process)d %(levelname)s %(name)s: %(message)s"
"""How a record is written: when, which kernel process, how bad, from where, what."""

DEFAULT_LINES = 40
"""How many of the last lines ``%agent log`` shows unless told."""


def log_path() -> Path:
    """Return the log file: ``$NBAGENT_LOG``, else ``~/.nbagent/nbagent.log``."""
    return Path(os.environ.get(LOG_ENV) or DEFAULT_PATH).expanduser()


class LogFile(RotatingFileHandler):
    """A rotating log file that never raises into the code that logs, nor prints.

    The file is opened at the first record, so a kernel that logs nothing creates nothing.
    The first failure (the folder cannot be made, the disk is full) is kept in
    :attr:`failure`; from then on records are dropped.

    Args:
        path: The file.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, delay=True)
        self.path = path
        """The file written."""
        self.failure: str | None = None
        """Why the log is not written any more (the first error), or None."""
        self.setFormatter(logging.Formatter(FORMAT))
        self.addFilter(RedactingFilter())

    def emit(self, record: logging.LogRecord) -> None:
        """Write the record, unless a write failed before (then drop it)."""
        if self.failure is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        """Remember the first failure and stop writing; print nothing (that would land in
        the running cell)."""
        if self.failure is None:
            error = sys.exc_info()[1]
            self.failure = f"{type(error).__name__}: {error}" if error else "unknown error"
            stream, self.stream = self.stream, None  # type: ignore[assignment]
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def _open(self) -> IO[str]:
        """Open the file for appending, of mode 0600, in a folder of mode 0700 when nbagent
        makes it (``~/.nbagent`` is made so in any case)."""
        folder = self.path.parent
        made = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = folder.stat()
        ours = made or folder == DEFAULT_PATH.expanduser().parent  # never chmod, say, /tmp
        if ours and info.st_uid == os.getuid() and info.st_mode & 0o077:
            folder.chmod(0o700)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.baseFilename, flags, 0o600)
        try:
            info = os.fstat(fd)
            if info.st_uid == os.getuid() and info.st_mode & 0o077:
                os.fchmod(fd, 0o600)
            return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")
        except BaseException:
            os.close(fd)
            raise


def write_to_file(path: Path | None = None) -> LogFile:
    """Send nbagent's and the MCP SDK's log records to the log file, and only there.

    Args:
        path: The file; :func:`log_path` by default.

    Returns:
        The handler (taken down by :func:`stop_writing`).
    """
    handler = LogFile(path or log_path())
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.propagate = False
    return handler


def stop_writing(handler: LogFile) -> None:
    """Take a handler of :func:`write_to_file` down again and close its file.

    Args:
        handler: The handler.
    """
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.removeHandler(handler)
        logger.propagate = True
    handler.close()


def last_lines(path: Path, count: int = DEFAULT_LINES) -> list[str]:
    """Return the last lines of the log, from its rotated file too when it has fewer.

    Args:
        path: The log file.
        count: How many lines at most.

    Returns:
        The lines, oldest first, without their line ends; none if nothing is logged.

    Raises:
        OSError: A file of the log is there but cannot be read.
    """
    lines: deque[str] = deque(maxlen=count)
    for part in (path.with_name(f"{path.name}.1"), path):
        try:
            with part.open(encoding="utf-8", errors="backslashreplace") as file:
                lines.extend(line.rstrip("\n") for line in file)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return list(lines)
