"""How many tools each MCP server may register, so that a request never carries more
deferred tools than the API takes (10,000).

Servers share :data:`DEFAULT_MAX_TOOLS` in the person's order, the order of the
configuration: the first server registers its tools (at most its entry's ``max_tools``),
the next what is left, and so on; the tools past the limit are not registered, and a notice
names the servers cut and by how much, once for each server newly cut. The shares are
worked out again only when a server's listing changes or it connects or goes, never per
cell.
"""

from __future__ import annotations

from collections.abc import Callable

from nbagent.core.markup import code_markdown
from nbagent.core.notices import Notices

DEFAULT_MAX_TOOLS = 9_000
"""Tools all MCP servers together may register: below the API's 10,000 deferred tools, with
room for the other deferred tools."""


class ToolBudget:
    """The shares of the MCP tool limit (used on the manager's event loop only).

    Args:
        total: Tools all servers together may register.
        order: Returns the servers' names in the configuration's order.
        notices: Where servers cut by the limit are told to the user.
    """

    def __init__(self, total: int, order: Callable[[], list[str]], notices: Notices) -> None:
        self.total = total
        self._order = order
        self._notices = notices
        self._wanted: dict[str, int] = {}
        self._shares: dict[str, int] = {}
        self._publishers: dict[str, Callable[[], None]] = {}
        self._told: set[str] = set()

    def share(self, server: str) -> int:
        """Return how many of its tools a server may register now (its first ones)."""
        return self._shares.get(server, 0)

    def want(self, server: str, count: int, limit: int | None, publish: Callable[[], None]) -> None:
        """Set how many tools a server lists, and have every server whose share changed
        publish its tools (those that lose some first, so that the total never passes the
        limit), the server itself too.

        Args:
            server: The server's name.
            count: How many usable tools it lists now.
            limit: Its entry's ``max_tools``, if any.
            publish: Registers its first :meth:`share` tools; called now, and again each
                time another server changes its share.
        """
        self._publishers[server] = publish
        self._wanted[server] = count if limit is None else min(count, limit)
        self._divide(server)

    def leave(self, server: str, publish: Callable[[], None]) -> None:
        """Forget a server that went (its tools are unregistered): the others may get more.

        Args:
            server: The server's name.
            publish: What it gave :meth:`want` (a new run of the same name is not forgotten).
        """
        if self._publishers.get(server) == publish:
            del self._publishers[server], self._wanted[server]
            self._divide(server)

    def _divide(self, changed: str) -> None:
        """Share the limit out again in the configuration's order, and have the servers whose
        share changed publish (and ``changed`` in any case, if it is still there)."""
        left = self.total
        before, self._shares = self._shares, {}
        for name in self._order():
            self._shares[name] = min(self._wanted.get(name, 0), left)
            left -= self._shares[name]
        lose = [n for n in self._publishers if self._shares.get(n, 0) < before.get(n, 0)]
        gain = [n for n in self._publishers if n not in lose]
        for name in lose:
            self._publishers[name]()
        for name in gain:
            if name == changed or self._shares.get(name, 0) > before.get(name, 0):
                self._publishers[name]()
        self._tell()

    def _tell(self) -> None:
        """Tell the user about the servers the limit newly cut (each once while it is cut)."""
        cut = {
            name: self._wanted[name] - self._shares[name]
            for name in self._shares
            if self._wanted.get(name, 0) > self._shares[name]
        }
        new = [name for name in cut if name not in self._told]
        self._told = set(cut)
        if not new:
            return
        names = ", ".join(
            f"{code_markdown(name)} ({cut[name]:,} of {self._wanted[name]:,})" for name in cut
        )
        self._notices.add(
            f"MCP servers list more tools than nbagent registers (at most {self.total:,}, "
            f"below the API's 10,000 deferred tools); tools left out: {names}. Servers come "
            'first in the order of the configuration; `"max_tools": N` in a server\'s entry '
            "keeps its first N tools only."
        )
