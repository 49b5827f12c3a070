"""A server that never answers ``initialize`` (nor anything else).

Over stdio it reads its input and says nothing; over HTTP (``--transport http
--port-file F``) it accepts connections on 127.0.0.1 and never responds.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
parser.add_argument("--port-file")
opts = parser.parse_args()

print("hanging server started", file=sys.stderr, flush=True)
if opts.transport == "stdio":
    while sys.stdin.buffer.read(1):
        pass
    sys.exit(0)

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(64)
with open(f"{opts.port_file}.tmp", "w") as handle:
    handle.write(str(sock.getsockname()[1]))
os.replace(f"{opts.port_file}.tmp", opts.port_file)
accepted = []
while True:
    connection, _ = sock.accept()
    accepted.append(connection)  # keep it open, answer nothing
    time.sleep(0.01)
