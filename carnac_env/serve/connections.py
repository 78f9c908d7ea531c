"""The listening side of ``carnac serve``: Tornado's HTTP server with the connection limits of
:mod:`.limits` (:func:`listen`): a bound on open connections (the oldest closed for a new one),
header, body and idle timeouts, and an accept loop that pauses, with one log line a minute,
when the process runs out of file descriptors.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import tornado.httpserver
import tornado.log

from carnac_env.serve.limits import ACCEPT_PAUSE, MAX_CONNECTIONS, MAX_HEADER, MAX_READ, TIMEOUT, connection_limit


class LimitedHTTPServer(tornado.httpserver.HTTPServer):
    """Tornado's HTTP server with a bound on open connections and an accept loop that never
    floods the log: see :func:`listen`."""

    def setup(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self.open_streams: OrderedDict[Any, float] = OrderedDict()
        self._accepting: list[tuple[Any, Callable[[], None]]] = []
        self._last_warning = -1e9

    # connections
    def handle_stream(self, stream: Any, address: tuple) -> None:
        self.open_streams[stream] = time.monotonic()
        super().handle_stream(stream, address)

    def on_close(self, server_conn: object) -> None:
        self.open_streams.pop(getattr(server_conn, "stream", None), None)
        super().on_close(server_conn)

    def admit(self, connection: Any, address: Any) -> None:
        """Serve a new connection, closing the oldest when the limit is reached."""
        import tornado.iostream

        while len(self.open_streams) >= self.max_connections:
            oldest, _ = self.open_streams.popitem(last=False)
            oldest.close()
        stream = tornado.iostream.IOStream(connection, max_buffer_size=MAX_READ + MAX_HEADER + 4096)
        self.handle_stream(stream, address)

    # accepting
    def accept_on(self, sockets: list[Any]) -> None:
        """Accept connections on ``sockets`` (listening, non-blocking)."""
        import tornado.ioloop

        loop = tornado.ioloop.IOLoop.current()
        for sock in sockets:
            loop.add_handler(sock, functools.partial(self._accept, sock), tornado.ioloop.IOLoop.READ)
            self._accepting.append((sock, functools.partial(loop.remove_handler, sock)))

    def _accept(self, sock: Any, fd: Any, events: int) -> None:
        import errno

        import tornado.ioloop

        for _ in range(128):
            try:
                connection, address = sock.accept()
            except BlockingIOError:
                return
            except ConnectionAbortedError:
                continue
            except OSError as err:  # out of descriptors (EMFILE) or memory: pause, say so once a minute
                loop = tornado.ioloop.IOLoop.current()
                loop.remove_handler(sock)
                loop.call_later(ACCEPT_PAUSE, self._resume, sock)
                now = time.monotonic()
                if now - self._last_warning > 60:
                    self._last_warning = now
                    reason = errno.errorcode.get(err.errno or 0, str(err))
                    tornado.log.app_log.warning(
                        "carnac serve: cannot accept a connection (%s); pausing %.1f s", reason, ACCEPT_PAUSE
                    )
                return
            self.admit(connection, address)

    def _resume(self, sock: Any) -> None:
        import tornado.ioloop

        if any(s is sock for s, _ in self._accepting) and sock.fileno() >= 0:
            tornado.ioloop.IOLoop.current().add_handler(
                sock, functools.partial(self._accept, sock), tornado.ioloop.IOLoop.READ
            )

    def stop_accepting(self) -> None:
        """Stop accepting and close the listening sockets (open connections are closed too)."""
        for sock, remove in self._accepting:
            with contextlib.suppress(KeyError, ValueError):
                remove()
            sock.close()
        self._accepting = []
        for stream in list(self.open_streams):
            stream.close()


def listen(
    application: Any, sockets: list[Any], *, timeout: float = TIMEOUT, max_connections: int = MAX_CONNECTIONS
) -> LimitedHTTPServer:
    """Serve ``application`` on ``sockets``: requests' headers and bodies must arrive within
    ``timeout`` seconds, an idle connection is closed after it, at most
    :func:`connection_limit` connections are open at once (the oldest closed for a new one),
    and running out of file descriptors pauses accepting with one warning a minute."""
    server = LimitedHTTPServer(
        application,
        max_body_size=MAX_READ,
        max_header_size=MAX_HEADER,
        idle_connection_timeout=timeout,
        body_timeout=timeout,
    )
    server.setup(connection_limit(max_connections))
    server.accept_on(sockets)
    return server
