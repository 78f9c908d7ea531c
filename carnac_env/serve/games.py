"""The game scheduler of ``carnac serve``: the games kept, their agents, the worker threads the
agents think in, and the memory ledger (:mod:`.budget`) every move and analysis goes through.

The agents think in a thread pool, never on the event loop, so the server answers other
requests (the page's polls, other games) while a search runs; the numba kernels of the search
release Python's lock while they work. Each game has at most one task letting its agent think,
and at most :data:`~carnac_env.serve.limits.MAX_QUEUE` games wait for a worker (then
:class:`BusyError`, a 503). Before the server listens, :meth:`Games.warm_up` compiles what the
games and the analyses run.

The analyses run like the agents' moves: in a worker thread, after the ledger grants their
memory (:func:`~carnac_env.serve.budget.analysis_need`), one per game at a time, counted in the
queue's bound; each game keeps its last few answers, so asking again costs nothing. Where a
position has at most ``analysis_solve`` megaliths left, the analysis carries the exact
solver's verdict (``"solved: win in 3"``), each bounded by :data:`ANALYSIS_SOLVE_NODES` nodes
and a table of :data:`~carnac_env.analysis.solved.SOLVE_TABLE_MB` MiB counted in the need.

This module needs no Tornado: the web side (:mod:`.handlers`) turns requests into its calls.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from carnac_env import _checks
from carnac_env.agents.memory import Need
from carnac_env.analysis.solved import DEFAULT_SOLVE, DEFAULT_SOLVE_NODES
from carnac_env.errors import CarnacError
from carnac_env.serve.budget import Ledger, analysis_need, held_bytes, megabytes, oversized, search_need
from carnac_env.serve.limits import DEFAULT_MEMORY_MB, MAX_QUEUE, RETRY_AFTER
from carnac_env.serve.session import CELL, ConflictError, Session

#: The most games kept at once; the least recently used is forgotten to make room.
MAX_GAMES = 100
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


class BusyError(CarnacError):
    """The agents' queue is full (503, with Retry-After)."""


class NotFoundError(CarnacError):
    """No such game or page (404)."""


#: The most boards the page may make on one server (each keeps a few small tables).
MAX_MADE_BOARDS = 16


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
        from carnac_env.core.boards import board_spec, make_board

        # each board by its spec ("medium", "7x9:megaliths=28,min_dolmen=3"): two custom boards
        # never share a key, and the same board given twice is offered once
        agents = list(dict.fromkeys(agents))
        by_spec: dict[str, Any] = {}  # each board built once, under its spec
        for given in boards:
            board = make_board(given)
            by_spec.setdefault(board_spec(board), board)
        boards = list(by_spec)
        if not agents:
            raise CarnacError("no agents to offer: give at least one agent spec (--agents greedy,mcts)")
        if not boards:
            raise CarnacError("no boards to offer: give at least one board name (--boards small,medium)")
        self.agents = agents
        self.boards = boards
        self.ledger = Ledger(memory, workers, self._forget)
        self._built = {spec: make(spec) for spec in agents}  # a bad spec fails at start, not at the first game
        self.needs: dict[tuple[str, str], Need | None] = {}
        self.offered: dict[str, list[str]] = {}
        self.refused: list[str] = []
        for name, board in by_spec.items():
            self._offer_agents(name, board)
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
        self._analysis_budget = (
            _checks.whole("analysis_sims", analysis_sims, 0, 100_000),
            _checks.whole("analysis_solve", analysis_solve, 0, 64),
        )
        for name, board in by_spec.items():
            self.analysis[name] = self._analysis_offer(name, board, *self._analysis_budget)
        #: The boards made on the page (:meth:`add_board`), at most :data:`MAX_MADE_BOARDS`.
        self.made: list[str] = []
        self.games: OrderedDict[str, LiveGame] = OrderedDict()
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="carnac-agent")
        self.builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="carnac-build")
        #: The token the page sends with every request that changes a game (with its Origin).
        self.token = secrets.token_urlsafe(18)
        self._sweeper: asyncio.TimerHandle | None = None

    def _offer_agents(self, name: str, board: Any) -> list[str]:
        """Offer on ``board`` (by its spec ``name``) every agent whose memory need fits a game's
        share of the ledger; the others are refused, with their need. Returns the offered ones."""
        self.offered[name] = []
        for spec, agent in self._built.items():
            need = self.needs[spec, name] = search_need(agent, board)
            if need is None or need.peak <= self.ledger.cap:
                self.offered[name].append(spec)
            else:
                self.refused.append(f"{spec} on {name} (needs {megabytes(need.peak)})")
        return self.offered[name]

    def add_board(self, spec: Any) -> str:
        """Offer one more board, made on the page (``"7x9:megaliths=30"``; the syntax of
        :func:`carnac_env.core.boards.parse_board`), and return its spec as the games name it.
        A board offered already is returned as it is. The agents and the analysis are offered
        there as on every board: only where their memory need fits a game's share of the ledger.

        Raises:
            CarnacError: a bad spec (naming the bad part and the limit), no agent that fits the
                board, or :data:`MAX_MADE_BOARDS` boards made already.
        """
        from carnac_env.core.boards import board_spec, make_board

        if not isinstance(spec, str):
            raise CarnacError(f"a board is a text such as 7x9:megaliths=30, got {type(spec).__name__}")
        board = make_board(spec)
        name = board_spec(board)
        if name in self.boards:
            return name
        if len(self.made) >= MAX_MADE_BOARDS:
            raise CarnacError(
                f"{MAX_MADE_BOARDS} boards have been made on this server already; choose one of them, or "
                "restart it with the boards you need (carnac serve --boards)"
            )
        if not self._offer_agents(name, board):
            del self.offered[name]
            raise CarnacError(
                f"no agent fits board {name} in the {megabytes(self.ledger.cap)} of search memory a game may take: "
                "make it smaller, or restart the server with more --memory"
            )
        self.analysis[name] = self._analysis_offer(name, board, *self._analysis_budget)
        self.boards.append(name)
        self.made.append(name)
        return name

    def _analysis_offer(self, name: str, board: Any, sims: int, solve: int) -> dict[str, Any] | None:
        """The analysis offered on ``board``: ``sims`` simulations and the solver's verdicts at
        ``solve`` megaliths left if its memory fits a game's cap, else the raw network alone
        (0) with the solver, else the raw network alone, else none; None without a network for
        the board."""
        from carnac_env.analysis import default_model

        try:
            _, model = default_model(board)
        except CarnacError as err:
            self.analysis_refused[name] = str(err)
            return None
        solve = min(solve, board.megaliths)
        for tried, solved in dict.fromkeys(((sims, solve), (0, solve), (0, 0))):
            need = analysis_need(board, tried, solve=solved)
            if need.peak <= self.ledger.cap:
                return {"sims": tried, "solve": solved, "model": model, "need": need}
        self.analysis_refused[name] = (
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
                        action = await loop.run_in_executor(
                            self.pool, _then_free, live.agent.act, session.opponent_state()
                        )
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
        if not live.need.nodes:
            return live.need.kept  # no tree to measure: what the agent declares (0 for az:sims=0)
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
                result = await loop.run_in_executor(self.pool, _then_free, job)
            finally:
                self.ledger.release(ledger_key, 0)  # an analysis keeps no tree
        finally:
            live.analysing = None
        live.analyses[key] = result
        while len(live.analyses) > KEPT_ANALYSES:
            live.analyses.popitem(last=False)
        return result

    # ------------------------------------------------------------------ upkeep
    def warm_up(self, say: Callable[[str], None] | None = None) -> float:
        """Compile what the games and the analyses run, before the server accepts games: a
        game of each built-in agent offered, on tiny budgets, on the smallest board
        (:func:`carnac_env.agents.warmup.warm_up`), then an analysis of each kind of a random
        game on the smallest board with an analysis, its solver included. ``say`` (stderr by
        default; None: silent) is told ``compiling the game engine...`` when that takes a while
        (a cold numba cache) and then how long it took; returns the seconds. The solver's tables
        it made are freed."""
        from carnac_env.agents.warmup import _say, warm_up
        from carnac_env.core.boards import make_board
        from carnac_env.solve.alphabeta import free_tables

        named = sorted(((make_board(name), name) for name in self.boards), key=lambda pair: pair[0].squares)
        boards = [board for board, _ in named]
        analysed = [(board, name) for board, name in named if self.analysis[name] is not None]

        def analyses() -> None:
            if not analysed:
                return
            board, offer = analysed[0][0], self.analysis[analysed[0][1]]
            actions = _random_game(board)
            sims, solve = min(offer["sims"], 8), min(offer["solve"], 2)
            _analyse(board, actions[:-1], "position", sims, solve)
            _analyse(board, actions, "review", sims, solve)

        try:
            return warm_up(self.agents, boards[0], _say if say is None else say, also=analyses)
        finally:
            free_tables()

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


def _random_game(board: Any) -> list[int]:
    """The actions of a game of uniformly random moves on ``board`` (seed 0), to its end."""
    import random

    from carnac_env.core.game import GameState

    state, rng, actions = GameState(board), random.Random(0), []
    while not state.is_over:
        actions.append(state.legal_action_at(rng.random()))
        state.apply(actions[-1])
    return actions


def _then_free(work: Callable[..., Any], *args: Any) -> Any:
    """``work(*args)`` in a worker thread, then free the solver's tables that it left in the
    thread (:func:`~carnac_env.solve.alphabeta.free_tables`): what the ledger counted for the
    work is given back with its place, and no idle worker holds a table."""
    from carnac_env.solve.alphabeta import free_tables

    try:
        return work(*args)
    finally:
        free_tables()


def _make_agent(spec: str, seed: int) -> Any:
    from carnac_env.agents import make

    return make(spec, seed=seed)
