"""The exceptions of the MCP bridge, in nbagent's tree (see :mod:`nbagent.core.errors`).

Both derive from nbagent's own classes, so ``except NbAgentError`` catches them::

    ConfigurationError
    └── McpConfigError        a bad server entry: names the server and the field
    NbAgentError
    ├── UnknownServerError    no MCP server of that name (also KeyError)
    └── ApprovalsError        the file of approved project servers cannot be used
"""

from __future__ import annotations

from nbagent.core.errors import ConfigurationError, NbAgentError


class McpConfigError(ConfigurationError):
    """An MCP server configuration that cannot be used.

    The message names the server and the field, e.g.
    ``MCP server 'github' (in .mcp.json): field 'args' must be a list of strings, not str.``

    Attributes:
        server: The server's name (``None`` for a fault of the file as a whole).
        field: The field at fault, dotted for nested ones (``env.TOKEN``), or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        field: str | None = None,
        source: str | None = None,
    ) -> None:
        where = f" (in {source})" if source else ""
        if server is not None and field is not None:
            prefix = f"MCP server {server!r}{where}: field {field!r} "
        elif server is not None:
            prefix = f"MCP server {server!r}{where}: "
        else:
            prefix = f"MCP configuration{where}: "
        super().__init__(prefix + message)
        self.server = server
        self.field = field


class UnknownServerError(NbAgentError, KeyError):
    """No MCP server of the given name is configured."""

    def __str__(self) -> str:
        """Return the message itself, not ``KeyError``'s quoted repr of it."""
        return str(self.args[0]) if self.args else ""


class ApprovalsError(NbAgentError):
    """The file of the person's decisions on project servers cannot be read or written.

    The message names the file and says what to do, e.g. ``The MCP approvals file
    /home/ada/.nbagent/mcp-approvals.json is not valid JSON (line 1 column 1: ...): fix it or
    move it away.``
    """
