"""The exceptions nbagent raises.

Every exception is an :class:`NbAgentError`, so ``except NbAgentError`` catches all of
them. Those that are also plain bad arguments derive from ``ValueError`` (or ``KeyError``)
as well, so code that does not know nbagent still handles them sensibly::

    NbAgentError
    ├── ToolError                 an anticipated tool failure; its text goes to the model
    │   └── ToolInputError        the model's input violates the tool's input_schema
    ├── ToolDefinitionError       a bad tool name, schema or handler (also ValueError)
    ├── RegistryError
    │   ├── DuplicateToolError    a name already registered (also ValueError)
    │   └── UnknownToolError      no tool of that name (also KeyError)
    ├── SearchQueryError          a ToolSearch query or limit that cannot be run (also ValueError)
    ├── ConfigurationError        an unusable setting, e.g. an unknown ranker (also ValueError)
    └── ModelAPIError             the model's API refused a request or failed after retries

An exception's text never holds a secret (:func:`nbagent.core.secrets.redact`): it becomes the
one-line error of a cell, a tool's result or a log line.
"""

from __future__ import annotations

from nbagent.core.secrets import redact


class NbAgentError(Exception):
    """Base class of every exception raised by nbagent."""

    def __str__(self) -> str:
        """Return the message, its secrets redacted."""
        return redact(super().__str__())


class ToolError(NbAgentError):
    """An anticipated failure of a tool.

    The agent loop sends the message to the model as an ``is_error`` tool_result, so it
    should say what went wrong and, where it can, what to do instead.
    """


class ToolInputError(ToolError):
    """The input given to a tool does not match the tool's ``input_schema``."""


class ToolDefinitionError(NbAgentError, ValueError):
    """A tool cannot be built: a bad name, a malformed schema or an unusable handler."""


class RegistryError(NbAgentError):
    """Base class of the registry's errors."""


class DuplicateToolError(RegistryError, ValueError):
    """A tool is registered under a name that is already in use."""


class UnknownToolError(RegistryError, KeyError):
    """No tool of the given name is registered."""

    def __str__(self) -> str:
        """Return the message itself (redacted), not ``KeyError``'s quoted repr of it."""
        return redact(str(self.args[0])) if self.args else ""


class SearchQueryError(NbAgentError, ValueError):
    """A ToolSearch query or limit that cannot be run (empty, wrong type, out of range)."""


class ConfigurationError(NbAgentError, ValueError):
    """A setting that cannot be used: an unknown ranker, mode or option value."""


class ModelAPIError(NbAgentError):
    """The model's API refused a request or failed after its retries.

    Attributes:
        status: The HTTP status code, or ``None`` when no response came.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
