"""An embedder that runs its model in a child process, indexing at the lowest CPU priority.

Tokenizing and embedding are CPU work, much of it in Python that holds the GIL: done on a
thread of the kernel, they slow every cell the person runs while a catalogue is embedded
(building the multilingual encoder's tokenizer alone took a quarter of the kernel's time
while MCP servers started). :class:`ChildEmbedder` loads the model in a child process
(``python -P -m nbagent.catalogue.rankers.child NAME ...``) and sends it texts over pipes;
the kernel's threads only wait on a pipe, without the GIL. The child serves two channels on
two threads: the index's texts at the lowest priority (nice 19: the person's work gets the
CPU first), a search's at the normal one (a search neither waits for a batch nor starves).

A channel carries frames: a 4-byte big-endian length, then the bytes. The child first sends,
on the index channel, a JSON object naming its model (``model_id``, ``multilingual``,
``dimension``, ``indexing_thread``) or the error that kept it from loading
(``{"error": ..., "configuration": true|false}``); then, for each frame of texts (a JSON list
of strings) it answers a JSON header, ``{"rows": N}`` or ``{"error": ...}``, and for rows the
vectors as ``N × dimension`` float32 (little-endian). The index channel is the child's stdin
and stdout (what a library prints goes nowhere), the query channel two more pipes. The
child's stderr goes nowhere too (ipykernel shows a process's stderr in the running cell), and
it ends when its stdin closes (the kernel exited). It runs in a session of its own: a Ctrl-C,
which Jupyter sends to the kernel's whole process group, does not reach it, and a kernel
shutting down does not wait for it (ipykernel signals the children of its group, and waits
seconds for one that is dead but not reaped).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

from nbagent.core.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np

    from nbagent.catalogue.rankers.embedder import Embedder

NICENESS = 19
"""How much lower than the kernel's the child's CPU priority is (the most there is)."""

_HEADER = struct.Struct(">I")


def _models() -> dict[str, Callable[[], Embedder]]:
    """The embedders a child can run, by name (imported in the child only)."""
    from nbagent.catalogue.rankers.minilm import MiniLMEmbedder
    from nbagent.catalogue.rankers.usem import USEEmbedder

    return {"minilm": MiniLMEmbedder, "usem": USEEmbedder}


MODELS = ("minilm", "usem")
"""The names :class:`ChildEmbedder` takes."""


class ChildEmbedderError(RuntimeError):
    """The child process failed or ended; the message says how."""


def _write(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _read(stream: IO[bytes]) -> bytes:
    """One frame; raises EOFError when the other end closed."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(head)
    payload = stream.read(size)
    if len(payload) < size:
        raise EOFError
    return payload


class _Channel:
    """One pair of pipes to the child, taken by one call at a time."""

    def __init__(self, requests: IO[bytes], answers: IO[bytes]) -> None:
        self.requests, self.answers = requests, answers

    def ask(self, payload: bytes) -> tuple[dict[str, Any], bytes]:
        """Send a frame of texts; the header of the answer and its vectors' bytes."""
        _write(self.requests, payload)
        header = json.loads(_read(self.answers))
        return header, _read(self.answers) if header.get("rows") else b""

    def close(self) -> None:
        """Close both ends."""
        self.requests.close()
        self.answers.close()


class ChildEmbedder:
    """An :class:`~nbagent.catalogue.rankers.embedder.Embedder` whose model runs in a child
    process (see the module).

    The child has two channels: :meth:`embed` (filling the index) is served by a thread of
    the child at the lowest priority, :meth:`embed_query` (a search) by another at the normal
    priority, so that a search neither waits for a batch of tools nor starves behind the
    person's work. The child is started here; one that ends (killed, out of memory) is
    started again at the next call. Calls from several threads take turns on each channel.

    Args:
        name: The model: ``minilm`` or ``usem``.

    Attributes:
        model_id: The model's id, as the child's embedder gives it.
        multilingual: Whether texts in different languages are comparable.
        dimension: The length of every vector.
        indexing_thread: The native id of the child's thread that serves :meth:`embed`.

    Raises:
        ConfigurationError: The model's package is not installed (the message says how to
            install it), or the name is none of :data:`MODELS`.
        ChildEmbedderError: The child could not be started or did not answer.
    """

    def __init__(self, name: str) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._channels: dict[str, _Channel] = {}
        if name not in MODELS:
            raise ConfigurationError(f"No embedder is named {name!r}: use one of {MODELS}.")
        self.name = name
        self._started = threading.Lock()
        self._turns = {"index": threading.Lock(), "query": threading.Lock()}
        with self._started:
            hello = self._start()
        self.model_id: str = hello["model_id"]
        self.multilingual: bool = hello["multilingual"]
        self.dimension: int = hello["dimension"]

    @property
    def pid(self) -> int | None:
        """The child's process id (None when it is not running)."""
        return self._process.pid if self._process is not None else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts in the child, at the lowest priority (to fill the index).

        Args:
            texts: The texts.

        Returns:
            An array of shape ``(len(texts), dimension)``, float32.

        Raises:
            ChildEmbedderError: The model failed on these texts (the child's message), or
                the child ended and could not be started again.
        """
        return self._ask("index", texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a search's texts in the child, at the normal priority.

        Args:
            texts: The texts.

        Returns:
            As :meth:`embed`.

        Raises:
            ChildEmbedderError: As :meth:`embed`.
        """
        return self._ask("query", texts)

    def close(self) -> None:
        """End the child (it is also ended when this process exits)."""
        with self._started:
            self._stop()

    def _ask(self, kind: str, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        request = json.dumps(list(texts), ensure_ascii=False).encode("utf-8", "surrogatepass")
        with self._turns[kind]:
            with self._started:
                if self._process is None or self._process.poll() is not None:
                    self._start()
                channel = self._channels[kind]
            try:
                header, data = channel.ask(request)
            except (OSError, EOFError, ValueError):
                with self._started:
                    if self._channels.get(kind) is channel:
                        self._stop()
                raise ChildEmbedderError(
                    f"the {self.name} embedder's process ended; it is started again at the "
                    "next search"
                ) from None
        if "error" in header:
            raise ChildEmbedderError(header["error"])
        vectors = np.frombuffer(data, dtype="<f4").reshape(header["rows"], self.dimension)
        return vectors.astype(np.float32)

    def _start(self) -> dict[str, Any]:
        """Start the child and read its hello (with :attr:`_started` held)."""
        self._stop()
        query_requests, query_in = os.pipe()
        query_out, query_answers = os.pipe()
        try:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-P",
                    "-m",
                    __name__,
                    self.name,
                    str(query_requests),
                    str(query_answers),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=(query_requests, query_answers),
                start_new_session=True,
            )
        finally:
            os.close(query_requests)
            os.close(query_answers)
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._channels = {
            "index": _Channel(process.stdin, process.stdout),
            "query": _Channel(os.fdopen(query_in, "wb"), os.fdopen(query_out, "rb")),
        }
        try:
            hello = json.loads(_read(process.stdout))
        except (OSError, EOFError, ValueError):
            self._stop()
            raise ChildEmbedderError(
                f"the {self.name} embedder's process ended before it loaded its model "
                f"(exit {process.wait()}); run `{sys.executable} -m {__name__} {self.name}` "
                "to see why"
            ) from None
        if "error" in hello:
            self._stop()
            error = ConfigurationError if hello.get("configuration") else ChildEmbedderError
            raise error(hello["error"])
        self.indexing_thread: int = hello["indexing_thread"]
        return hello

    def _stop(self) -> None:
        process, self._process = self._process, None
        channels, self._channels = self._channels, {}
        for channel in channels.values():
            channel.close()
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()

    def __del__(self) -> None:
        self._stop()


def _serve_texts(embedder: Embedder, requests: IO[bytes], answers: IO[bytes]) -> None:
    """Answer each frame of texts with their vectors (or the error), until the requests end."""
    while True:
        try:
            texts = json.loads(_read(requests))
        except (EOFError, OSError):
            return
        try:
            data = embedder.embed(texts).astype("<f4", copy=False).tobytes()
        except Exception as exc:
            _write(answers, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            continue
        _write(answers, json.dumps({"rows": len(texts)}).encode())
        if texts:
            _write(answers, data)


def _index_thread(embedder: Embedder, requests: IO[bytes], answers: IO[bytes]) -> None:
    """The child's indexing thread: at the lowest priority, then serving its channel."""
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    _serve_texts(embedder, requests, answers)


def serve(
    name: str,
    index: tuple[IO[bytes], IO[bytes]],
    query: tuple[IO[bytes], IO[bytes]],
) -> None:
    """The child's side: load the model, say hello on the index channel, then serve both
    channels (the index one on a thread at the lowest priority) until the index one ends.

    Args:
        name: One of :data:`MODELS`.
        index: The index channel's requests and answers.
        query: The query channel's requests and answers.
    """
    try:
        embedder = _models()[name]()
    except Exception as exc:
        configuration = isinstance(exc, ConfigurationError)
        message = str(exc) if configuration else f"{type(exc).__name__}: {exc}"
        _write(index[1], json.dumps({"error": message, "configuration": configuration}).encode())
        return
    ready, hello_sent = threading.Event(), threading.Event()
    native: list[int] = []

    def indexing() -> None:
        native.append(threading.get_native_id())
        ready.set()
        hello_sent.wait()
        _index_thread(embedder, *index)

    thread = threading.Thread(target=indexing, name="nbagent-embed-index", daemon=True)
    thread.start()
    ready.wait()
    hello = {
        "model_id": embedder.model_id,
        "multilingual": embedder.multilingual,
        "dimension": embedder.dimension,
        "indexing_thread": native[0],
    }
    _write(index[1], json.dumps(hello).encode())
    hello_sent.set()
    threading.Thread(target=_serve_texts, args=(embedder, *query), daemon=True).start()
    thread.join()


def main() -> None:
    """``python -P -m nbagent.catalogue.rankers.child NAME QUERY_IN QUERY_OUT``: run as an
    embedder's child (what a library prints goes nowhere: the frames have stdout to
    themselves)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    index = (sys.stdin.buffer, os.fdopen(os.dup(sys.stdout.fileno()), "wb"))
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    query = (os.fdopen(int(sys.argv[2]), "rb"), os.fdopen(int(sys.argv[3]), "wb"))
    serve(sys.argv[1], index, query)


if __name__ == "__main__":
    main()
