"""The Messages API: the SDK backend, the server tools the API runs itself and their
blocks, and prices."""
