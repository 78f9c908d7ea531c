"""``carnac serve``: play Carnac against an agent in a web browser, on this machine.

    carnac serve                                   # http://127.0.0.1:8080/, greedy, mcts, az, random
    carnac serve --port 0 --agents greedy,mcts:sims=500,az:sims=100 --open

A student picks a board, an opponent and a colour; the page shows the legal placements
(click a square, then one of its four orientations, with a preview of the tilts it would
allow the opponent), the tilts of a megalith awaiting the student's decision (click where it
would land, or decline), the score as it stands (each side's dolmens, its Board Game Arena
score, who leads and by which tie-break), the moves so far; the student can undo, and
download the game as a record (the JSON format of :mod:`carnac_env.core.record`, which
``carnac replay`` reads). On demand the page shows what the learned agent thinks
(:mod:`carnac_env.analysis`): each side's expected score from the value head of the ``az``
agent's network for the board, its favourite moves as a heat map on the board (the search's
visit share after ``analysis_sims`` simulations, default 200), and, for the game so far, a
review: Red's expected score move by move with the moves where it dropped most, each with the
move the agent preferred. Near the end (at most ``analysis_solve`` megaliths left, default 7)
both carry the exact solver's verdict ("solved: win in 3") and the review the moves that threw
a solved result away.

The server (:mod:`carnac_env.serve.app`, on Tornado: the ``serve`` extra) listens on
127.0.0.1 unless told otherwise, and then answers only requests addressed to this machine
(``localhost``, 127.0.0.0/8, ::1: no DNS rebinding). The agents think in worker threads, never
on the server's event loop, so it stays responsive; the opponents offered are the specs given
on the command line (a page cannot ask for another, so it cannot name code to import or a
budget the server did not choose). What it promises, with its limits (docs/security.md):

* **Memory.** The search trees of all games together stay under ``memory`` (``--memory``,
  default 1024 MB): the trees idle games keep and those of the moves being searched. A tree
  is forgotten when its game is evicted, finished or idle for five minutes, or when a move
  needs the room; an agent that would need more than the bound over the workers on a board
  is not offered there (:mod:`carnac_env.serve.budget`).
* **Connections.** Headers and bodies must arrive within 10 s, an idle connection is closed
  after 10 s, and at most 128 connections (at most half the file limit) are open at once:
  the oldest is closed for a new one. Running out of descriptors pauses accepting, with one
  log line a minute.
* **Cross-site requests.** A request that changes a game must be JSON and carry this
  server's Origin (or the page's token); nothing may frame the page.
* **Work.** At most one search per game runs or waits; a queued search of a stale position
  never starts; at most 32 games wait for a worker, beyond which requests get 503 with
  ``Retry-After``.

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
from carnac_env.serve.budget import DEFAULT_MEMORY_MB

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_PORT", "MEMORY_HELP", "Server", "is_loopback", "serve"]

#: The port of ``carnac serve`` unless ``--port`` says otherwise (0: any free port).
DEFAULT_PORT = 8080
#: What ``carnac serve --help`` says of the memory bound.
MEMORY_HELP = (
    "the most memory, in MB, that the agents' search trees take together (default {default}): the trees "
    "idle games keep plus those of the moves being searched; an agent that would need more than "
    "MEMORY / WORKERS for one game on a board is not offered there (mcts at 5000 sims on le_menec "
    "needs about 475 MB). The rest of the server (Python, numba, Tornado, 100 games) takes about 200 MB more"
)


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (127.0.0.0/8, ::1): ``localhost``,
    ``127.0.0.2``, ``127.1``, ``::1``. An unresolvable host is not."""
    import ipaddress
    import socket

    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0].split("%")[0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def _own_names(host: str) -> frozenset[str]:
    """The names a server on ``host`` answers to besides IP addresses and localhost: the host
    given (if a name) and this machine's names."""
    import socket

    names = {host.lower().strip("[]")}
    for name in (socket.gethostname(), socket.getfqdn()):
        if name:
            names.add(name.lower().rstrip("."))
    return frozenset(names)


def _app_module() -> Any:
    try:
        from carnac_env.serve import app
    except ImportError as err:
        raise CarnacError(f"carnac serve needs Tornado: pip install 'carnac-env[serve]' ({err})") from None
    return app


class Server:
    """The web server of ``carnac serve`` on its own event loop, in this thread
    (:meth:`run`) or in a background one (:meth:`start` / :meth:`stop`, or ``with``).

    Args:
        host: the address to listen on; 127.0.0.1 (the default) serves this machine only,
            and then requests naming another host are refused (403); so does any loopback
            address (``localhost``, 127.0.0.0/8, ::1).
        port: the port; 0 picks a free one (see :attr:`url` once started).
        agents: the opponents offered (agent specs; built-in names or import paths, which
            run code: only name code you trust); default greedy, mcts, az, random.
        boards: the boards offered; default every built-in board.
        workers: threads the agents think in (games beyond that wait their turn).
        memory: the bound on the agents' search memory, in MB (see :mod:`.budget`).
        timeout: seconds a connection may take to send its headers or body, or stay idle.
        max_connections: the most connections open at once (fewer if the file limit is low).
        max_queue: the most games whose agents may wait for a worker (then 503).
        idle_seconds: a game not asked about for this long forgets its agent's tree.
        analysis_sims: simulations of the learned agent's analysis (0: its raw network only);
            a board where that would need more memory than a game may take gets the raw
            network, or no analysis.
        analysis_solve: positions with at most this many megaliths left also get the exact
            solver's verdict in an analysis (0: never; default 7), within a node limit.

    Raises:
        CarnacError: Tornado missing, a bad agent spec or board, no agents or boards, an
            agent whose memory cannot be bounded (``mcts:seconds=...``), a port in use.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        agents: Sequence[str] | None = None,
        boards: Sequence[str] | None = None,
        workers: int = 2,
        memory: int = DEFAULT_MEMORY_MB,
        *,
        timeout: float | None = None,
        max_connections: int | None = None,
        max_queue: int | None = None,
        idle_seconds: float | None = None,
        analysis_sims: int | None = None,
        analysis_solve: int | None = None,
    ) -> None:
        from carnac_env import _checks
        from carnac_env.core.boards import BOARDS, make_board

        app = _app_module()
        if not isinstance(host, str) or not host:
            raise CarnacError(f"host {host!r}; expected an address or a name such as 127.0.0.1")
        self.host = host
        self.port = _checks.whole("port", port, 0, 65535)
        workers = _checks.whole("workers", workers, 1, 64)
        memory = _checks.whole("memory (MB)", memory, 1, 1 << 20)
        self.timeout = app.TIMEOUT if timeout is None else _checks.number("timeout", timeout, 0.1, 3600.0)
        connections = app.MAX_CONNECTIONS if max_connections is None else max_connections
        self.max_connections = _checks.whole("max_connections", connections, 1, 65536)
        boards = list(boards) if boards is not None else list(BOARDS)
        for name in boards:
            make_board(name)
        if agents is not None and not list(agents):
            raise CarnacError("no agents to offer: give at least one agent spec (--agents greedy,mcts)")
        options: dict[str, Any] = {}
        if max_queue is not None:
            options["max_queue"] = _checks.whole("max_queue", max_queue, 1, 10_000)
        if idle_seconds is not None:
            options["idle_seconds"] = _checks.number("idle_seconds", idle_seconds, 0.0)
        if analysis_sims is not None:
            options["analysis_sims"] = _checks.whole("analysis_sims", analysis_sims, 0, 100_000)
        if analysis_solve is not None:
            options["analysis_solve"] = _checks.whole("analysis_solve", analysis_solve, 0, 64)
        self.games = app.Games(list(agents or app.DEFAULT_AGENTS), boards, workers, memory << 20, **options)
        self.loopback = is_loopback(host)
        self.application = app.make_app(self.games, loopback=self.loopback, names=_own_names(host))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self.http: Any = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def _listen(self) -> Any:
        import tornado.netutil

        try:
            sockets = tornado.netutil.bind_sockets(self.port, self.host)
        except (OSError, UnicodeError) as err:
            reason = getattr(err, "strerror", None) or err
            raise CarnacError(f"cannot listen on {self.host}:{self.port}: {reason}") from None
        self.port = sockets[0].getsockname()[1]
        self.http = _app_module().listen(
            self.application, sockets, timeout=self.timeout, max_connections=self.max_connections
        )
        return self.http

    async def _main(self, started: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = self._listen()
        self.games.start()
        started()
        try:
            await self._stopping.wait()
        finally:
            server.stop_accepting()
            self.games.close()

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
    memory: int = DEFAULT_MEMORY_MB,
) -> None:
    """Serve the page until Ctrl-C (``carnac serve``); see :class:`Server` for the arguments."""
    from carnac_env.serve.budget import megabytes

    server = Server(host, port, agents, boards, workers, memory)

    def started() -> None:
        games = server.games
        echo(f"carnac serve: play at {server.url} (Ctrl-C stops the server)")
        echo(f"  opponents: {', '.join(games.agents)}; boards: {', '.join(games.boards)}")
        echo(
            f"  search memory: at most {megabytes(games.ledger.limit)} in all, {megabytes(games.ledger.cap)} "
            f"per game ({games.ledger.workers} worker(s))"
        )
        if games.refused:
            echo(f"  not offered (over the memory per game; see --memory): {'; '.join(games.refused)}")
        offered = sorted({offer["sims"] for offer in games.analysis.values() if offer is not None})
        if offered:
            searches = " or ".join(f"{n} simulations" if n else "the raw network" for n in offered)
            solved = sorted({offer["solve"] for offer in games.analysis.values() if offer is not None})
            exact = " or ".join(str(n) for n in solved if n)
            exact = f"; the exact solver at {exact} megaliths left or fewer" if exact else ""
            echo(f"  the agent's view (the analysis): the az network of each board, {searches}{exact}")
        if games.analysis_refused:
            echo(f"  no analysis on: {'; '.join(f'{b} ({why})' for b, why in games.analysis_refused.items())}")
        if not server.loopback:
            echo(f"  listening on {host}: anyone who can reach this machine can play here")
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)

    server.run(started)
