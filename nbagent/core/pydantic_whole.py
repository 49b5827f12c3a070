"""Importing this module imports pydantic's model machinery whole, one thread at a time.

pydantic's modules import one another in cycles, and it imports most of them when one of its
names is first used. Two threads importing it for the first time from different modules can
each hold one module's import lock and wait for the other's; Python breaks that deadlock by
handing one of them a module half made ("cannot import name ..."). nbagent imports pydantic
only when it is needed, and from several threads: a tool's input model at its first call
(:mod:`nbagent.core.tool_inputs`), the store's records on the cell's thread at the first saved
conversation, the SDKs on the start-up and MCP threads. Each imports this module first: its
body runs once, and Python's lock on it makes every other thread wait until it is done.
"""

from __future__ import annotations

import pydantic

for _name in ("BaseModel", "ConfigDict", "Field", "TypeAdapter", "ValidationError", "create_model"):
    getattr(pydantic, _name)  # each name's module imported now, under this module's lock
