"""``carnac serve``: play Carnac against an agent in a web browser, on this machine.

    carnac serve                                   # http://127.0.0.1:8080/, greedy, mcts, az, random
    carnac serve --port 0 --agents greedy,mcts:sims=500,az:sims=100 --open

A student picks a board, an opponent and a colour; the page shows the legal placements
(click a square, then one of its four orientations, with a preview of the tilts it would
allow the opponent), the tilts of a megalith awaiting the student's decision (click where it
would land, or decline), the score as it stands (each side's dolmens, its Board Game Arena
score, who leads and by which tie-break), the moves so far; the student can undo, and
download the game as a record (the JSON format of :mod:`carnac_env.core.record`, which
``carnac replay`` reads).

The server (:mod:`carnac_env.serve.app`, on Tornado: the ``serve`` extra) listens on
127.0.0.1 unless told otherwise, and then answers only requests addressed to this machine.
The agents think in worker threads, never on the server's event loop, so it stays
responsive; the opponents offered are the specs given on the command line (a page cannot
ask for another, so it cannot name code to import or a budget the server did not choose).

>>> from carnac_env.serve import Server          # doctest: +SKIP
>>> with Server(port=0) as server:               # doctest: +SKIP
...     print(server.url)                        # a server in a background thread
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Any

from carnac_env.errors import CarnacError

__all__ = ["DEFAULT_PORT", "Server", "serve"]

#: The port of ``carnac serve`` unless ``--port`` says otherwise (0: any free port).
DEFAULT_PORT = 8080
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _app_module() -> Any:
    try:
        from carnac_env.serve import app
    except ImportError as err:
        raise CarnacError(f"carnac serve needs Tornado: pip install -e '.[serve]' ({err})") from None
    return app


class Server:
    """The web server of ``carnac serve`` on its own event loop, in this thread
    (:meth:`run`) or in a background one (:meth:`start` / :meth:`stop`, or ``with``).

    Args:
        host: the address to listen on; 127.0.0.1 (the default) serves this machine only,
            and then requests naming another host are refused (403).
        port: the port; 0 picks a free one (see :attr:`url` once started).
        agents: the opponents offered (agent specs; built-in names or import paths, which
            run code: only name code you trust); default greedy, mcts, az, random.
        boards: the boards offered; default every built-in board.
        workers: threads the agents think in (games beyond that wait their turn).

    Raises:
        CarnacError: Tornado missing, a bad agent spec or board, a port in use.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        agents: Sequence[str] | None = None,
        boards: Sequence[str] | None = None,
        workers: int = 2,
    ) -> None:
        from carnac_env import _checks
        from carnac_env.core.boards import BOARDS, make_board

        app = _app_module()
        self.host = host
        self.port = _checks.whole("port", port, 0, 65535)
        workers = _checks.whole("workers", workers, 1, 64)
        boards = list(boards) if boards is not None else list(BOARDS)
        for name in boards:
            make_board(name)
        self.games = app.Games(list(agents or app.DEFAULT_AGENTS), boards, workers)
        self.application = app.make_app(self.games, host_check=host in _LOOPBACK)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def _listen(self) -> Any:
        import tornado.httpserver
        import tornado.netutil

        try:
            sockets = tornado.netutil.bind_sockets(self.port, self.host)
        except OSError as err:
            raise CarnacError(f"cannot listen on {self.host}:{self.port}: {err.strerror or err}") from None
        self.port = sockets[0].getsockname()[1]
        server = tornado.httpserver.HTTPServer(self.application, max_body_size=_app_module().MAX_READ)
        server.add_sockets(sockets)
        return server

    async def _main(self, started: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = self._listen()
        started()
        try:
            await self._stopping.wait()
        finally:
            server.stop()
            self.games.pool.shutdown(wait=False, cancel_futures=True)

    def run(self, started: Callable[[], None] = lambda: None) -> None:
        """Serve in this thread until :meth:`stop` (or Ctrl-C); ``started`` is called once
        the server listens."""
        asyncio.run(self._main(started))

    def start(self) -> Server:
        """Serve in a background thread; returns when the server listens."""

        def target() -> None:
            try:
                self.run(self._ready.set)
            except BaseException as err:  # reported to start()'s caller
                self._failure = err
                self._ready.set()

        self._thread = threading.Thread(target=target, name="carnac-serve", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise self._failure
        return self

    def stop(self) -> None:
        """Stop serving (from any thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    agents: Sequence[str] | None = None,
    boards: Sequence[str] | None = None,
    workers: int = 2,
    open_browser: bool = False,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve the page until Ctrl-C (``carnac serve``); see :class:`Server` for the arguments."""
    server = Server(host, port, agents, boards, workers)

    def started() -> None:
        echo(f"carnac serve: play at {server.url} (Ctrl-C stops the server)")
        echo(f"  opponents: {', '.join(server.games.agents)}; boards: {', '.join(server.games.boards)}")
        if host not in _LOOPBACK:
            echo(f"  listening on {host}: anyone who can reach this machine can play here")
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)

    server.run(started)
