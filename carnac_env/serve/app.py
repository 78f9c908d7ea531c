"""The web server of ``carnac serve``: Tornado handlers around :mod:`carnac_env.serve.session`.

Tornado (one pure-Python package with no dependencies of its own, maintained, already pulled
in by Jupyter's kernel) serves the page and a small JSON API on one event loop. The agents
think in a thread pool, never on the event loop, so the server answers other requests (the
page's polls, other games) while a search runs; the numba kernels of the search release
Python's lock while they work. Every answer of the API is JSON; every bad request gets a 4xx
status and ``{"error": "..."}`` naming what was wrong, and leaves the game as it was.

What guards it (each a constant below; docs/security.md states them with their limits): the
search memory ledger (:class:`Games`, :mod:`.budget`); one search per game and a bounded queue
(503 with ``Retry-After``); a Host check (:func:`host_allowed`); JSON and this server's Origin
(or the page's token) for every change (:meth:`ApiHandler.check_same_site`); headers that
forbid framing (:data:`SECURITY_HEADERS`); and a connection limit with header, body and idle
timeouts (:func:`listen`).

    GET  /                               the page
    GET  /api/options                    the boards and the agents offered
    POST /api/games                      {"board", "opponent", "seat", "seed"}: a new game (201)
    GET  /api/games/ID                   the game as the page draws it (poll while the agent thinks)
    POST /api/games/ID/move              {"action": N} or {"move": "c4 Rns"}: the person's move
    GET  /api/games/ID/preview?move=...  the board after a placement, not played, with the tilts it allows
    POST /api/games/ID/undo              take back the person's last decision (and the replies)
    GET  /api/games/ID/record            the game record (carnac_env.core.record's JSON), as a download
    POST /api/games/ID/analysis          {"kind": "position"} or {"kind": "review"}: the learned agent's
                                         view of the position now, or of the game so far (carnac_env.analysis)

The analyses run like the agents' moves: in a worker thread, after the ledger grants their
memory (:func:`~carnac_env.serve.budget.analysis_need`), one per game at a time, counted in the
queue's bound; each game keeps its last few answers, so asking again costs nothing. Where a
position has at most ``analysis_solve`` megaliths left, the analysis carries the exact
solver's verdict (``"solved: win in 3"``), each bounded by :data:`ANALYSIS_SOLVE_NODES` nodes
and a table of :data:`~carnac_env.analysis.solved.SOLVE_TABLE_MB` MiB counted in the need.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import inspect
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import tornado.httpserver
import tornado.httputil
import tornado.log
import tornado.web

from carnac_env import _checks
from carnac_env.analysis.solved import DEFAULT_SOLVE, DEFAULT_SOLVE_NODES
from carnac_env.errors import CarnacError
from carnac_env.serve.budget import (
    DEFAULT_MEMORY_MB,
    Ledger,
    Need,
    analysis_need,
    held_bytes,
    megabytes,
    oversized,
    search_need,
)
from carnac_env.serve.session import CELL, ConflictError, Session

#: The most games kept at once; the least recently used is forgotten to make room.
MAX_GAMES = 100
#: The largest request body accepted, in bytes (a move is a few dozen): a larger one is
#: answered 413; beyond :data:`MAX_READ` the connection is closed unread.
MAX_BODY = 16 * 1024
MAX_READ = 1 << 20
#: The largest request header accepted, in bytes.
MAX_HEADER = 16 * 1024
#: Games whose agent may wait for a worker thread at once; a request that would add one more
#: is answered 503 with ``Retry-After`` (nothing is played).
MAX_QUEUE = 32
#: The seconds a 503 asks the client to wait.
RETRY_AFTER = 2
#: A game not asked about for this many seconds forgets its agent's tree (its agent starts
#: afresh at its next move); a finished game forgets it at once.
IDLE_SECONDS = 300
#: The agents offered when ``carnac serve`` is given none.
DEFAULT_AGENTS = ("greedy", "mcts", "az", "random")
#: The simulations of an analysis unless told otherwise (the ``az`` agent's default).
ANALYSIS_SIMS = 200
#: Positions with at most this many megaliths left get the exact solver's verdict in an
#: analysis (:mod:`carnac_env.analysis.solved`), each within :data:`ANALYSIS_SOLVE_NODES` nodes.
ANALYSIS_SOLVE = DEFAULT_SOLVE
ANALYSIS_SOLVE_NODES = DEFAULT_SOLVE_NODES
#: The kinds of analysis: the position now, or the game so far.
ANALYSIS_KINDS = ("position", "review")
#: The analyses a game keeps (the last asked), so that asking again costs nothing.
KEPT_ANALYSES = 6


@dataclass(eq=False)
class LiveGame:
    """A game of this server: its session, its agent (None until built, or once its tree has
    been forgotten), and the task that lets its agent think (at most one per game)."""

    session: Session
    agent: Any = None
    need: Need | None = None
    task: asyncio.Task | None = None
    running: bool = False
    seen: float = field(default_factory=time.monotonic)
    #: The analysis being made: None, "waiting" (for a worker) or "running".
    analysing: str | None = None
    analyses: OrderedDict = field(default_factory=OrderedDict)


class Games:
    """The games of this server, their agents, the threads the agents think in, and the
    ledger that keeps their search memory under ``memory`` bytes (see :mod:`.budget`).

    Each game has at most one task letting its agent think: it waits for a worker (at most
    ``max_queue`` games wait at once), builds the agent if needed (in a thread of its own, not
    a worker), searches the position as it is when the worker is granted, and plays the
    answer if the person has not moved or undone meanwhile; otherwise it looks again. A
    search already running cannot be stopped, so a stale search ends and is dropped: each game
    has at most one running, whatever its undos. An evicted game's queued move is cancelled.

    Raises:
        CarnacError: no agents or no boards, a bad spec or board, an agent whose memory
            cannot be bounded (a time budget), or no agent that fits any board.
    """

    def __init__(
        self,
        agents: list[str],
        boards: list[str],
        workers: int = 2,
        memory: int = DEFAULT_MEMORY_MB << 20,
        *,
        max_games: int = MAX_GAMES,
        max_queue: int = MAX_QUEUE,
        idle_seconds: float = IDLE_SECONDS,
        analysis_sims: int = ANALYSIS_SIMS,
        analysis_solve: int = ANALYSIS_SOLVE,
    ) -> None:
        from carnac_env.agents import make
        from carnac_env.core.boards import make_board

        agents, boards = list(dict.fromkeys(agents)), list(dict.fromkeys(boards))
        if not agents:
            raise CarnacError("no agents to offer: give at least one agent spec (--agents greedy,mcts)")
        if not boards:
            raise CarnacError("no boards to offer: give at least one board name (--boards small,medium)")
        self.agents = agents
        self.boards = boards
        self.ledger = Ledger(memory, workers, self._forget)
        built = {spec: make(spec) for spec in agents}  # a bad spec fails at start, not at the first game
        self.needs: dict[tuple[str, str], Need | None] = {}
        self.offered: dict[str, list[str]] = {}
        self.refused: list[str] = []
        for name in boards:
            board = make_board(name)
            self.offered[name] = []
            for spec, agent in built.items():
                need = self.needs[spec, name] = search_need(agent, board)
                if need is None or need.peak <= self.ledger.cap:
                    self.offered[name].append(spec)
                else:
                    self.refused.append(f"{spec} on {name} (needs {megabytes(need.peak)})")
        if not any(self.offered.values()):
            raise CarnacError(
                f"no agent fits any board in {megabytes(memory)} of search memory over {workers} worker(s) "
                f"({', '.join(self.refused)}); give more --memory, fewer --workers or smaller sims"
            )
        self.max_games = max_games
        self.max_queue = max_queue
        self.idle_seconds = idle_seconds
        #: Per board, the analysis offered there (its simulations, network and memory need), or
        #: None with the reason in :attr:`analysis_refused`.
        self.analysis: dict[str, dict[str, Any] | None] = {}
        self.analysis_refused: dict[str, str] = {}
        sims = _checks.whole("analysis_sims", analysis_sims, 0, 100_000)
        solve = _checks.whole("analysis_solve", analysis_solve, 0, 64)
        for name in boards:
            self.analysis[name] = self._analysis_offer(make_board(name), sims, solve)
        self.games: OrderedDict[str, LiveGame] = OrderedDict()
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="carnac-agent")
        self.builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="carnac-build")
        #: The token the page sends with every request that changes a game (with its Origin).
        self.token = secrets.token_urlsafe(18)
        self._sweeper: asyncio.TimerHandle | None = None

    def _analysis_offer(self, board: Any, sims: int, solve: int) -> dict[str, Any] | None:
        """The analysis offered on ``board``: ``sims`` simulations and the solver's verdicts at
        ``solve`` megaliths left if its memory fits a game's cap, else the raw network alone
        (0) with the solver, else the raw network alone, else none; None without a network for
        the board."""
        from carnac_env.analysis import default_model

        try:
            _, model = default_model(board)
        except CarnacError as err:
            self.analysis_refused[board.name] = str(err)
            return None
        solve = min(solve, board.megaliths)
        for tried, solved in dict.fromkeys(((sims, solve), (0, solve), (0, 0))):
            need = analysis_need(board, tried, solve=solved)
            if need.peak <= self.ledger.cap:
                return {"sims": tried, "solve": solved, "model": model, "need": need}
        self.analysis_refused[board.name] = (
            f"an analysis there needs {megabytes(analysis_need(board, 0).peak)}, over the "
            f"{megabytes(self.ledger.cap)} a game may take"
        )
        return None

    @property
    def sessions(self) -> dict[str, Session]:
        """The sessions kept, by game id (least recently used first)."""
        return {game_id: live.session for game_id, live in self.games.items()}

    # ------------------------------------------------------------------ the games
    def get(self, game_id: str) -> LiveGame:
        live = self.games.get(game_id)
        if live is None:
            raise NotFoundError(f"no game {game_id!r} here (it keeps its last {self.max_games} games while it runs)")
        self.games.move_to_end(game_id)
        live.seen = time.monotonic()
        self.ledger.touch(game_id)
        return live

    def create(self, body: dict[str, Any]) -> LiveGame:
        """A new game from the page's ``{"board", "opponent", "seat", "seed"}`` (each optional)."""
        from carnac_env.core.boards import make_board

        unknown = sorted(set(body) - {"board", "opponent", "seat", "seed"})
        if unknown:
            raise CarnacError(f"unknown field(s) {', '.join(unknown)}; a new game takes board, opponent, seat, seed")
        playable = [b for b in self.boards if self.offered[b]]
        board_name = body.get("board", "medium" if "medium" in playable else playable[0])
        if not isinstance(board_name, str) or board_name not in self.boards:
            raise CarnacError(f"board {board_name!r} is not one of {', '.join(self.boards)}")
        opponent = body.get("opponent", (self.offered[board_name] or self.agents)[0])
        if not isinstance(opponent, str) or opponent not in self.agents:
            raise CarnacError(f"opponent {opponent!r} is not offered here; the agents: {', '.join(self.agents)}")
        if opponent not in self.offered[board_name]:
            need = self.needs[opponent, board_name]
            raise CarnacError(
                f"{opponent} is not offered on {board_name}: one game of it there needs "
                f"{megabytes(need.peak if need else 0)} of search memory, and this server gives a game at most "
                f"{megabytes(self.ledger.cap)} (--memory {self.ledger.limit >> 20} over {self.ledger.workers} "
                f"worker(s)); the agents on {board_name}: {', '.join(self.offered[board_name]) or 'none'}"
            )
        seat = _checks.whole("seat", body.get("seat", 0), 0, 1)
        seed = _checks.seed(body.get("seed", 0))
        if seat == 1:
            self.check_room(None)  # the agent moves first: it needs a place in the queue
        game_id = secrets.token_urlsafe(9)
        live = LiveGame(Session(game_id, make_board(board_name), seat, opponent, seed))
        live.need = self.needs[opponent, board_name]
        while len(self.games) >= self.max_games:
            old, _ = next(iter(self.games.items()))
            self.evict(old)
        self.games[game_id] = live
        self.think(live)
        return live

    def evict(self, game_id: str) -> None:
        """Forget a game: its tree at once, its queued move cancelled; a search already running
        ends on its own and is dropped."""
        live = self.games.pop(game_id, None)
        if live is None:
            return
        live.agent = None
        self.ledger.drop(game_id)  # a queued move's wait is cancelled here
        self.ledger.drop(_analysis_key(game_id))  # and a queued analysis's

    def check_room(self, live: LiveGame | None) -> None:
        """Refuse (503) a request that would queue one more game's agent when the queue is full."""
        if live is not None and live.task is not None:
            return  # this game is queued or thinking already: no new place needed
        waiting = sum(1 for g in self.games.values() if g.task is not None and not g.running)
        waiting += sum(1 for g in self.games.values() if g.analysing == "waiting")
        if waiting >= self.max_queue:
            raise BusyError(f"the agents are busy ({waiting} games wait for a worker); try again in {RETRY_AFTER} s")

    # ------------------------------------------------------------------ the agents
    def think(self, live: LiveGame) -> None:
        """If the agent is to act, let it think (one task per game; a task already there sees
        the new position when it looks again)."""
        session = live.session
        if not session.opponent_to_act or session.agent_error:
            if session.state.is_over and not live.running:
                self._forget(session.id)  # a finished game needs no tree
            return
        session.thinking = session.generation
        if live.task is None:
            live.task = asyncio.ensure_future(self._think(live))

    async def _think(self, live: LiveGame) -> None:
        session = live.session
        loop = asyncio.get_running_loop()
        try:
            while self.games.get(session.id) is live and session.opponent_to_act and not session.agent_error:
                await self.ledger.acquire(session.id, live.need.peak if live.need else 0)
                kept = 0
                live.running = True
                try:
                    if self.games.get(session.id) is not live or not session.opponent_to_act:
                        continue
                    generation = session.generation  # the position as it is now: never a stale one
                    session.thinking = generation
                    try:
                        if live.agent is None:
                            live.agent = await loop.run_in_executor(
                                self.builder, functools.partial(_make_agent, session.opponent, session.seed)
                            )
                        action = await loop.run_in_executor(self.pool, live.agent.act, session.opponent_state())
                    except Exception as err:  # the agent's own failure: shown on the page, the server goes on
                        if generation == session.generation:
                            session.agent_error = f"{session.opponent} failed: {err}"
                        continue
                    finally:
                        kept = self._kept(live)
                finally:
                    live.running = False
                    self.ledger.release(session.id, kept if self.games.get(session.id) is live else 0)
                if generation == session.generation and session.apply_opponent(generation, action):
                    continue  # played; the agent may be to act again
                # a stale answer (an undo or a move meanwhile) is dropped: look again
        except asyncio.CancelledError:
            pass  # evicted while waiting for a worker
        finally:
            live.task = None  # the loop ended with no await after its test: nothing is left to think about
            session.thinking = None
            if session.state.is_over:
                self._forget(session.id)

    def _kept(self, live: LiveGame) -> int:
        """What the game's agent keeps after its move; a tree grown past one move's room is
        forgotten (see :mod:`.budget`)."""
        if live.agent is None or live.need is None:
            return 0
        if oversized(live.agent, live.need):
            live.agent = None
            return 0
        return held_bytes(live.agent)

    def _forget(self, game_id: str) -> None:
        """Drop the agent (and its tree) of a game that is not thinking."""
        live = self.games.get(game_id)
        if live is not None and not live.running:
            live.agent = None
            self.ledger.keep(game_id, 0)

    def undo(self, live: LiveGame) -> int:
        taken = live.session.undo()
        self.think(live)
        return taken

    # ------------------------------------------------------------------ the analyses
    async def analyse(self, live: LiveGame, kind: str) -> dict[str, Any]:
        """The learned agent's view of ``live``'s position now (``kind="position"``) or of its
        game so far (``"review"``): computed in a worker thread once the ledger grants its
        memory, or the answer kept from the last time it was asked.

        Raises:
            CarnacError: no analysis on this board; ConflictError: one of this game's is being
                made; BusyError: the queue is full; NotFoundError: the game was forgotten while
                its analysis waited.
        """
        session = live.session
        offer = self.analysis.get(session.board.name)
        if offer is None:
            raise CarnacError(
                f"no analysis on {session.board.name}: {self.analysis_refused.get(session.board.name, 'none offered')}"
            )
        key = (kind, tuple(session.actions))
        if key in live.analyses:
            live.analyses.move_to_end(key)
            return live.analyses[key]
        if live.analysing is not None:
            raise ConflictError("an analysis of this game is being made; wait for it, then ask again")
        self.check_room(None)
        live.analysing = "waiting"
        ledger_key = _analysis_key(session.id)
        need = offer["need"].peak
        try:
            try:
                await self.ledger.acquire(ledger_key, need)
            except asyncio.CancelledError:
                raise NotFoundError(f"game {session.id!r} was forgotten while its analysis waited") from None
            live.analysing = "running"
            try:
                loop = asyncio.get_running_loop()
                job = functools.partial(_analyse, session.board, list(key[1]), kind, offer["sims"], offer["solve"])
                result = await loop.run_in_executor(self.pool, job)
            finally:
                self.ledger.release(ledger_key, 0)  # an analysis keeps no tree
        finally:
            live.analysing = None
        live.analyses[key] = result
        while len(live.analyses) > KEPT_ANALYSES:
            live.analyses.popitem(last=False)
        return result

    # ------------------------------------------------------------------ upkeep
    def start(self) -> None:
        """Start forgetting idle games' trees (on the running event loop)."""
        self._sweep()

    def _sweep(self) -> None:
        now = time.monotonic()
        for game_id, live in list(self.games.items()):
            if live.agent is not None and live.task is None and now - live.seen > self.idle_seconds:
                self._forget(game_id)
        loop = asyncio.get_running_loop()
        self._sweeper = loop.call_later(max(1.0, min(30.0, self.idle_seconds / 4)), self._sweep)

    def close(self) -> None:
        """Stop: cancel the sweep and the queued moves, end the threads (a running search is
        left to end in its thread)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        for live in self.games.values():
            if live.task is not None and not live.running:
                live.task.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.builder.shutdown(wait=False, cancel_futures=True)

    def memory(self) -> dict[str, int]:
        """The ledger in bytes: kept by idle games, reserved by moves running, the bound."""
        return {
            "kept": sum(self.ledger.kept.values()),
            "running": sum(self.ledger.running.values()),
            "limit": self.ledger.limit,
            "cap": self.ledger.cap,
        }


def _analysis_key(game_id: str) -> str:
    """The ledger's name for a game's analysis (apart from its agent's moves)."""
    return f"{game_id}/analysis"


def _analyse(board: Any, actions: list[int], kind: str, sims: int, solve: int = 0) -> dict[str, Any]:
    """An analysis as the page shows it (run in a worker thread): see :meth:`Games.analyse`.
    The solver's verdicts (at most ``solve`` megaliths left) are bounded by
    :data:`ANALYSIS_SOLVE_NODES` nodes each."""
    from carnac_env.analysis import Analyst
    from carnac_env.core.game import GameState
    from carnac_env.render.agent_view import policy_layer
    from carnac_env.render.svg import SvgLayout

    analyst = Analyst(board, sims=sims, solve=solve, solve_nodes=ANALYSIS_SOLVE_NODES)
    if kind == "review":
        review = analyst.review(actions)
        return {"kind": kind, "ply": len(actions), "review": review.to_dict(), "curve_svg": review.svg()}
    state = GameState(board)
    for action in actions:
        state.apply(action)
    view = analyst.evaluate(state, ply=len(actions))
    return {
        "kind": kind,
        "ply": len(actions),
        "evaluation": view.to_dict(top=8),
        "layer_svg": policy_layer(view, SvgLayout(board, CELL)),
    }


def _make_agent(spec: str, seed: int) -> Any:
    from carnac_env.agents import make

    return make(spec, seed=seed)


class BusyError(CarnacError):
    """The agents' queue is full (503, with Retry-After)."""


class NotFoundError(CarnacError):
    """No such game or page (404)."""


class RefusedError(CarnacError):
    """A request this server does not answer: another host, a cross-site request (403)."""


class MediaTypeError(CarnacError):
    """A request body that is not declared JSON (415)."""


def _status(err: CarnacError) -> int:
    for kind, status in ((NotFoundError, 404), (ConflictError, 409), (RefusedError, 403), (BusyError, 503)):
        if isinstance(err, kind):
            return status
    return 415 if isinstance(err, MediaTypeError) else 400


def api(method: Callable[..., Any]) -> Callable[..., Any]:
    """A handler method whose CarnacError becomes a 4xx (or 503) JSON answer with its message
    (404 :class:`NotFoundError`, 409 :class:`ConflictError`, 403 :class:`RefusedError`, 415
    :class:`MediaTypeError`, 503 :class:`BusyError` with ``Retry-After``, else 400); the game is
    left as it was."""

    @functools.wraps(method)
    async def answer(self: ApiHandler, *args: Any) -> None:
        try:
            result = method(self, *args)
            if inspect.isawaitable(result):
                await result
        except CarnacError as err:
            self.refuse(err)

    return answer


#: The headers of every answer: never framed (clickjacking), never sniffed, no referrer, and
#: the page may load nothing but itself (its script and styles are inline).
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}
#: The header carrying the page's token (see :meth:`ApiHandler.check_same_site`).
TOKEN_HEADER = "X-Carnac-Token"


def host_allowed(name: str, loopback: bool, names: frozenset[str] = frozenset()) -> bool:
    """Whether a request whose Host header names ``name`` (no port) is for this server.

    A server on a loopback address answers ``localhost`` and any loopback address (all of
    127.0.0.0/8 and ::1): a page elsewhere cannot reach it by pointing its own domain name at
    127.0.0.1 (DNS rebinding). A server on another address answers any IP address, ``localhost``
    and the machine's own names (``names``), which also refuses rebinding, whose Host is
    always the attacker's domain name.
    """
    import ipaddress

    name = name.lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = _legacy_ipv4(name)  # 127.1, 2130706433: numbers still, never a DNS name
        if address is None:
            return not loopback and name in names
    return address.is_loopback or not loopback


def _legacy_ipv4(name: str) -> Any:
    """The IPv4 address that a numeric shorthand such as ``127.1`` names (as ``inet_aton``
    reads it), or None for anything else."""
    import ipaddress
    import socket

    if not name or any(c not in "0123456789abcdefx." for c in name) or not name[0].isdigit():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name))
    except OSError:
        return None


class ApiHandler(tornado.web.RequestHandler):
    """JSON in, JSON out; a CarnacError is a 4xx with its message (:func:`api`), anything else
    a 500 that Tornado logs, and the server goes on."""

    def initialize(self, games: Games, loopback: bool, names: frozenset[str] = frozenset()) -> None:
        self.games = games
        self.loopback = loopback
        self.names = names

    def set_default_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.set_header(name, value)
        self.set_header("Cache-Control", "no-store")

    def prepare(self) -> None:
        if not host_allowed(self.request.host_name, self.loopback, self.names):
            where = "on this machine only (localhost, 127.0.0.0/8, ::1)" if self.loopback else "by its own names"
            raise tornado.web.HTTPError(
                403, f"this server answers requests addressed to it {where}; this one is for {self.request.host!r}"
            )
        if self.request.method not in ("GET", "HEAD", "OPTIONS"):
            try:
                self.check_same_site()
            except CarnacError as err:
                self.refuse(err)
                raise tornado.web.Finish() from None

    def check_same_site(self) -> None:
        """A request that changes a game must be JSON (``Content-Type: application/json``:
        a page elsewhere cannot send that without asking first, and it is never told yes) and
        come from this server's own page: an ``Origin`` of this server, or, without an Origin,
        the page's token in :data:`TOKEN_HEADER`."""
        media = self.request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise MediaTypeError(
                "a request that changes a game must be JSON (Content-Type: application/json), "
                f"not {media or 'untyped'!r}"
            )
        if self.request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            raise RefusedError("a request from another site is refused (Sec-Fetch-Site)")
        origin = self.request.headers.get("Origin")
        own = f"{self.request.protocol}://{self.request.host}"
        if origin is not None:
            if origin.lower() != own.lower():
                raise RefusedError(f"a request from another site is refused: its Origin is {origin[:100]!r}, not {own}")
        elif not secrets.compare_digest(self.request.headers.get(TOKEN_HEADER, ""), self.games.token):
            raise RefusedError(
                f"a request that changes a game needs an Origin header naming this server ({own}), "
                f"or the page's token in {TOKEN_HEADER}"
            )

    def refuse(self, err: CarnacError) -> None:
        status = _status(err)
        if status == 503:
            self.set_header("Retry-After", str(RETRY_AFTER))
        self.reply({"error": str(err), "status": status}, status)

    def body(self) -> dict[str, Any]:
        if len(self.request.body) > MAX_BODY:
            raise tornado.web.HTTPError(
                413, f"a request body of {len(self.request.body)} bytes; this server takes at most {MAX_BODY}"
            )
        if not self.request.body:
            return {}
        try:
            data = json.loads(self.request.body, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):  # not JSON, NaN, a 5000-digit number, too deep
            raise CarnacError("the request body is not JSON (of usual numbers and depth)") from None
        if not isinstance(data, dict):
            raise CarnacError(f"the request body is JSON {type(data).__name__}; expected an object {{...}}")
        return data

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(data))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """The server's own failures are logged; a refused request (a 4xx) is only answered."""
        if isinstance(value, tornado.web.HTTPError) and value.status_code < 500:
            return
        super().log_exception(typ, value, tb)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Tornado's own errors (403, 404, 405, a too large body, a 500) as JSON too, with their text."""
        reason = tornado.httputil.responses.get(status_code, "error")
        error = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(error, tornado.web.HTTPError):
            # get_message() (Tornado 6.5) gives the text as written; log_message doubles a %
            message = error.get_message() if hasattr(error, "get_message") else error.log_message
            reason = message or reason
        elif status_code >= 500:
            reason = f"internal error ({type(error).__name__}); the server logged it and goes on"
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps({"error": reason, "status": status_code}))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number here")


class OptionsHandler(ApiHandler):
    @api
    def get(self) -> None:
        from carnac_env.core.boards import make_board

        boards = []
        for name in self.games.boards:
            board = make_board(name)
            boards.append(
                {
                    "name": name,
                    "rows": board.rows,
                    "cols": board.cols,
                    "megaliths": board.megaliths,
                    "agents": self.games.offered[name],
                    "analysis": _offer_json(self.games.analysis[name]),
                }
            )
        self.reply({"boards": boards, "agents": self.games.agents})


def _offer_json(offer: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if offer is None else {"sims": offer["sims"], "solve": offer["solve"], "model": offer["model"]}


class GamesHandler(ApiHandler):
    @api
    def post(self) -> None:
        live = self.games.create(self.body())
        self.reply(live.session.view(), 201)


class GameHandler(ApiHandler):
    @api
    def get(self, game_id: str) -> None:
        self.reply(self.games.get(game_id).session.view())


class MoveHandler(ApiHandler):
    @api
    def post(self, game_id: str) -> None:
        live = self.games.get(game_id)
        session = live.session
        body = self.body()
        if set(body) not in ({"action"}, {"move"}):
            raise CarnacError('a move is {"action": N} (an action number) or {"move": "c4 Rns"} (the notation)')
        if "action" in body:
            move = _checks.whole("action", body["action"], 0, session.board.num_actions - 1)
        elif isinstance(body["move"], str):
            move = body["move"]
        else:
            raise CarnacError(f"move {body['move']!r} is not text; expected the notation, such as 'c4 Rns'")
        after = session.state.copy()
        after.apply(session.parse(move))  # a bad move is refused before the queue is asked
        if not after.is_over and after.to_act != session.seat:
            self.games.check_room(live)  # the agent will think: a place in the queue, or 503
        session.play(move)
        self.games.think(live)
        self.reply(session.view())


class PreviewHandler(ApiHandler):
    @api
    def get(self, game_id: str) -> None:
        session = self.games.get(game_id).session
        move = self.get_query_argument("move", None)
        if move is None:
            raise CarnacError("preview needs ?move=N (an action number) or ?move=c4%20Rns")
        number = move.isascii() and move.isdigit() and len(move) < 8
        self.reply(session.preview(int(move) if number else move))


class UndoHandler(ApiHandler):
    @api
    def post(self, game_id: str) -> None:
        live = self.games.get(game_id)
        self.body()  # nothing expected, but a body must be JSON (an object) if there is one
        self.games.undo(live)  # back to the person's turn: the agent needs no place in the queue
        self.reply(live.session.view())


class AnalysisHandler(ApiHandler):
    @api
    async def post(self, game_id: str) -> None:
        live = self.games.get(game_id)
        body = self.body()
        if set(body) - {"kind"}:
            raise CarnacError('an analysis is {"kind": "position"} or {"kind": "review"}')
        kind = body.get("kind", "position")
        if kind not in ANALYSIS_KINDS:
            raise CarnacError(f"analysis kind {kind!r}; expected one of {', '.join(ANALYSIS_KINDS)}")
        self.reply(await self.games.analyse(live, kind))


class RecordHandler(ApiHandler):
    @api
    def get(self, game_id: str) -> None:
        session = self.games.get(game_id).session
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.set_header("Content-Disposition", f'attachment; filename="carnac-{session.board.name}-{stamp}.json"')
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(session.record().to_json() + "\n")


class PageHandler(ApiHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page_html(self.games.token))


class MissingHandler(ApiHandler):
    def prepare(self) -> None:
        super().prepare()
        raise tornado.web.HTTPError(404, f"nothing at {self.request.path}; the page is at /, the API under /api/")


def page_html(token: str = "") -> str:
    """The page of ``carnac serve`` (one file shipped in the package), carrying ``token``."""
    page = resources.files("carnac_env.serve").joinpath("page.html").read_text(encoding="utf-8")
    return page.replace("{{token}}", html.escape(token, quote=True))


def make_app(games: Games, *, loopback: bool = True, names: frozenset[str] = frozenset()) -> Any:
    """The Tornado application serving ``games``; see :func:`host_allowed` for ``loopback``
    and ``names``."""
    web = tornado.web
    options = {"games": games, "loopback": loopback, "names": names}
    game = r"/api/games/([A-Za-z0-9_-]{1,32})"
    return web.Application(
        [
            (r"/", PageHandler, options),
            (r"/api/options", OptionsHandler, options),
            (r"/api/games", GamesHandler, options),
            (game, GameHandler, options),
            (game + r"/move", MoveHandler, options),
            (game + r"/preview", PreviewHandler, options),
            (game + r"/undo", UndoHandler, options),
            (game + r"/record", RecordHandler, options),
            (game + r"/analysis", AnalysisHandler, options),
        ],
        default_handler_class=MissingHandler,
        default_handler_args=options,
        compress_response=True,
        log_function=_log_server_errors,
    )


def _log_server_errors(handler: tornado.web.RequestHandler) -> None:
    """Tornado's access log for the server's own failures only (500s): a person's bad request
    is answered with its reason, and a 503 (busy) is the server's answer, not a failure."""
    if handler.get_status() >= 500 and handler.get_status() != 503:
        tornado.log.access_log.error(
            "%d %s %s %.0f ms",
            handler.get_status(),
            handler.request.method,
            handler.request.uri,
            1000 * handler.request.request_time(),
        )


# ----------------------------------------------------------------------------- connections
#: The most connections open at once (at most half the process's file limit): when one more
#: comes, the oldest is closed, so connections left half-open cannot shut others out.
MAX_CONNECTIONS = 128
#: Seconds a connection may take to send a request's headers, or its body, or stay idle
#: between two requests; then it is closed (Tornado's default is an hour).
TIMEOUT = 10.0
#: Seconds the server stops accepting when the process runs out of file descriptors.
ACCEPT_PAUSE = 0.5


def connection_limit(wanted: int = MAX_CONNECTIONS) -> int:
    """``wanted``, or less where the process's file limit is low: at most half the limit,
    less a reserve for the files and pipes the server itself opens (at least 8)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return wanted
    if soft == getattr(resource, "RLIM_INFINITY", -1) or soft <= 0:
        return wanted
    return max(8, min(wanted, (soft - 32) // 2))


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
