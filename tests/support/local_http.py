"""A real HTTP server on a loopback address, served from a background thread, for tool tests.

Handlers reach the test's state (routes, recorded requests) through ``self.server.owner``.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, TypeVar

Owner = TypeVar("Owner")


class LocalHTTPServer(ThreadingHTTPServer, Generic[Owner]):
    daemon_threads = False
    block_on_close = True

    def __init__(self, host: str, handler: type[BaseHTTPRequestHandler], owner: Owner) -> None:
        super().__init__((host, 0), handler)
        self.owner = owner
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join()


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that keeps the test output clean."""

    def log_message(self, format: str, *args: Any) -> None:
        pass
