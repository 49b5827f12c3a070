"""A Jupyter server extension: kernel websockets without Nagle's algorithm.

Each answer the JupyterLab extension sends makes the kernel publish two small status
messages; the server writes them to the browser's websocket, and with Nagle's algorithm on
(tornado turns it back on after the websocket upgrade) the next message waits until the
browser acknowledges them, which a browser delays by 40 ms. So every request the kernel sends
to the notebook while the browser has just answered one took 40 ms instead of 2. This
extension sets ``TCP_NODELAY`` on every kernel websocket of the server it is loaded in: all
kernel traffic (outputs, widgets) gets there sooner, for a few more packets.

The package enables it in the server's environment
(``etc/jupyter/jupyter_server_config.d/nbagent.json``); ``jupyter server extension disable
nbagent.frontend.server`` turns it off.
"""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing: the server imports this module at its start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Name this module as the extension (jupyter_server's entry point)."""
    return [{"module": "nbagent.frontend.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Make the server's kernel websocket connections set ``TCP_NODELAY`` as they connect.

    Args:
        serverapp: The running ``ServerApp``.
    """
    settings = serverapp.web_app.settings
    base = settings["kernel_websocket_connection_class"]

    class NoDelayConnection(base):  # type: ignore[misc, valid-type]
        """The server's kernel websocket connection, with Nagle's algorithm off."""

        def connect(self) -> Any:
            """Turn Nagle's algorithm off, then connect as the server's own class does."""
            self.websocket_handler.set_nodelay(True)
            return super().connect()

    NoDelayConnection.__name__ = f"NoDelay{base.__name__}"
    settings["kernel_websocket_connection_class"] = NoDelayConnection
    serverapp.log.info("nbagent: kernel websockets send without Nagle's delay")
