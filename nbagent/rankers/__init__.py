"""ToolSearch rankers: one module each, registered by name in ``nbagent.search.RANKERS``."""
