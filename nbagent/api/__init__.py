"""The Messages API: the SDK backend, the tools the API runs itself (api_tools) and their
blocks (api_tool_blocks), and prices."""
