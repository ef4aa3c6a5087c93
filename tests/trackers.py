"""Tracking servers for the tests: a port where nothing listens, and a local HTTP server that answers as told (a
tracking server up, down behind a proxy, or one that fails MLflow's requests).
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from collections.abc import Iterator


def free_port() -> int:
    """A local TCP port where nothing listens (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def tracking_server(status: int = 404, health: int | None = None) -> Iterator[str]:
    """A local HTTP server answering every request with ``status`` (``/health`` with ``health`` when given): its
    address, as a tracking URI.
    """

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(health if health is not None and self.path == "/health" else status)
            self.end_headers()

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
