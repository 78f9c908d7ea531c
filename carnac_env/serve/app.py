"""The web server of ``carnac serve``: Tornado handlers around :mod:`carnac_env.serve.session`.

Tornado (one pure-Python package with no dependencies of its own, maintained, already pulled
in by Jupyter's kernel) serves the page and a small JSON API on one event loop. The agents
think in a thread pool, never on the event loop, so the server answers other requests (the
page's polls, other games) while a search runs; the numba kernels of the search release
Python's lock while they work. Every answer of the API is JSON; every bad request gets a 4xx
status and ``{"error": "..."}`` naming what was wrong, and leaves the game as it was.

    GET  /                               the page
    GET  /api/options                    the boards and the agents offered
    POST /api/games                      {"board", "opponent", "seat", "seed"}: a new game (201)
    GET  /api/games/ID                   the game as the page draws it (poll while the agent thinks)
    POST /api/games/ID/move              {"action": N} or {"move": "c4 Rns"}: the person's move
    GET  /api/games/ID/preview?move=...  the board after a placement, not played, with the tilts it allows
    POST /api/games/ID/undo              take back the person's last decision (and the replies)
    GET  /api/games/ID/record            the game record (carnac_env.core.record's JSON), as a download
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any

import tornado.httputil
import tornado.log
import tornado.web

from carnac_env import _checks
from carnac_env.errors import CarnacError
from carnac_env.serve.session import ConflictError, Session

#: The most games kept at once; the least recently used is forgotten to make room.
MAX_GAMES = 100
#: The largest request body accepted, in bytes (a move is a few dozen): a larger one is
#: answered 413; beyond :data:`MAX_READ` the connection is closed unread.
MAX_BODY = 16 * 1024
MAX_READ = 1 << 20
#: Hosts a server bound to this machine answers to (a page elsewhere cannot reach it by
#: pointing its own domain name at 127.0.0.1).
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}
#: The agents offered when ``carnac serve`` is given none.
DEFAULT_AGENTS = ("greedy", "mcts", "az", "random")


class Games:
    """The games of this server, their agents, and the threads the agents think in."""

    def __init__(self, agents: list[str], boards: list[str], workers: int = 2) -> None:
        from carnac_env.agents import make

        for spec in agents:
            make(spec)  # a bad spec fails at start, not at the first game
        self.agents = list(agents)
        self.boards = list(boards)
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.players: dict[str, Any] = {}  # game id -> the agent object playing it
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="carnac-agent")

    def get(self, game_id: str) -> Session:
        session = self.sessions.get(game_id)
        if session is None:
            raise NotFoundError(f"no game {game_id!r} here (it keeps its last {MAX_GAMES} games while it runs)")
        self.sessions.move_to_end(game_id)
        return session

    async def create(self, body: dict[str, Any]) -> Session:
        from carnac_env.agents import make
        from carnac_env.core.boards import make_board

        unknown = sorted(set(body) - {"board", "opponent", "seat", "seed"})
        if unknown:
            raise CarnacError(f"unknown field(s) {', '.join(unknown)}; a new game takes board, opponent, seat, seed")
        board_name = body.get("board", "medium" if "medium" in self.boards else self.boards[0])
        if not isinstance(board_name, str) or board_name not in self.boards:
            raise CarnacError(f"board {board_name!r} is not one of {', '.join(self.boards)}")
        opponent = body.get("opponent", self.agents[0])
        if not isinstance(opponent, str) or opponent not in self.agents:
            raise CarnacError(f"opponent {opponent!r} is not offered here; the agents: {', '.join(self.agents)}")
        seat = _checks.choice("seat", body.get("seat", 0), (0, 1))
        seed = _checks.seed(body.get("seed", 0))
        game_id = secrets.token_urlsafe(9)
        session = Session(game_id, make_board(board_name), seat, opponent, seed)
        # Building an agent may load a model or compile a search: off the event loop.
        agent = await asyncio.get_running_loop().run_in_executor(self.pool, lambda: make(opponent, seed=seed))
        while len(self.sessions) >= MAX_GAMES:
            old, _ = self.sessions.popitem(last=False)
            self.players.pop(old, None)
        self.sessions[game_id] = session
        self.players[game_id] = agent
        self.think(session)
        return session

    def think(self, session: Session) -> None:
        """If the agent is to act (and not already thinking), let it choose in the pool; its
        move is played on the event loop when it comes, and it thinks again if it is still to act."""
        if not session.opponent_to_act or session.thinking == session.generation or session.agent_error:
            return
        generation = session.generation
        session.thinking = generation
        agent = self.players[session.id]
        position = session.opponent_state()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool, agent.act, position)

        def done(result: asyncio.Future) -> None:
            if session.thinking == generation:
                session.thinking = None
            if generation != session.generation:
                return  # the person undid or moved on meanwhile: the answer is for another position
            try:
                action = result.result()
            except Exception as err:  # the agent's own failure: shown on the page, the server goes on
                session.agent_error = f"{session.opponent} failed: {err}"
                return
            if session.apply_opponent(generation, action):
                self.think(session)

        future.add_done_callback(done)

    def undo(self, session: Session) -> int:
        from carnac_env.agents import make

        taken = session.undo()
        # An agent that was thinking may still be busy with the old position: a fresh one.
        self.players[session.id] = make(session.opponent, seed=session.seed)
        return taken


class NotFoundError(CarnacError):
    """No such game or page (404)."""


def api(method: Callable[..., Any]) -> Callable[..., Any]:
    """A handler method whose CarnacError becomes a 4xx JSON answer with its message (404 for
    :class:`NotFoundError`, 409 for :class:`ConflictError`, else 400); the game is left as it was."""

    @functools.wraps(method)
    async def answer(self: ApiHandler, *args: Any) -> None:
        try:
            result = method(self, *args)
            if inspect.isawaitable(result):
                await result
        except CarnacError as err:
            status = 404 if isinstance(err, NotFoundError) else 409 if isinstance(err, ConflictError) else 400
            self.reply({"error": str(err), "status": status}, status)

    return answer


class ApiHandler(tornado.web.RequestHandler):
    """JSON in, JSON out; a CarnacError is a 4xx with its message (:func:`api`), anything else
    a 500 that Tornado logs, and the server goes on."""

    def initialize(self, games: Games, host_check: bool) -> None:
        self.games = games
        self.host_check = host_check

    def prepare(self) -> None:
        self.set_header("Cache-Control", "no-store")
        if self.host_check and self.request.host_name not in LOCAL_HOSTS:
            raise tornado.web.HTTPError(403, reason="this server answers on localhost only")

    def body(self) -> dict[str, Any]:
        if len(self.request.body) > MAX_BODY:
            raise tornado.web.HTTPError(
                413, f"a request body of {len(self.request.body)} bytes; this server takes at most {MAX_BODY}"
            )
        if not self.request.body:
            return {}
        try:
            data = json.loads(self.request.body)
        except (ValueError, UnicodeDecodeError):
            raise CarnacError("the request body is not JSON") from None
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
        """Tornado's own errors (405, a too large body, a 500) as JSON too."""
        reason = tornado.httputil.responses.get(status_code, "error")
        error = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(error, tornado.web.HTTPError) and error.log_message:
            reason = error.log_message
        elif status_code >= 500:
            reason = f"internal error ({type(error).__name__}); the server logged it and goes on"
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps({"error": reason, "status": status_code}))


class OptionsHandler(ApiHandler):
    @api
    def get(self) -> None:
        from carnac_env.core.boards import make_board

        boards = []
        for name in self.games.boards:
            board = make_board(name)
            boards.append({"name": name, "rows": board.rows, "cols": board.cols, "megaliths": board.megaliths})
        self.reply({"boards": boards, "agents": self.games.agents})


class GamesHandler(ApiHandler):
    @api
    async def post(self) -> None:
        session = await self.games.create(self.body())
        self.reply(session.view(), 201)


class GameHandler(ApiHandler):
    @api
    def get(self, game_id: str) -> None:
        self.reply(self.games.get(game_id).view())


class MoveHandler(ApiHandler):
    @api
    def post(self, game_id: str) -> None:
        session = self.games.get(game_id)
        body = self.body()
        if set(body) not in ({"action"}, {"move"}):
            raise CarnacError('a move is {"action": N} (an action number) or {"move": "c4 Rns"} (the notation)')
        if "action" in body:
            move = _checks.whole("action", body["action"], 0, session.board.num_actions - 1)
        elif isinstance(body["move"], str):
            move = body["move"]
        else:
            raise CarnacError(f"move {body['move']!r} is not text; expected the notation, such as 'c4 Rns'")
        session.play(move)
        self.games.think(session)
        self.reply(session.view())


class PreviewHandler(ApiHandler):
    @api
    def get(self, game_id: str) -> None:
        session = self.games.get(game_id)
        move = self.get_query_argument("move", None)
        if move is None:
            raise CarnacError("preview needs ?move=N (an action number) or ?move=c4%20Rns")
        number = move.isascii() and move.isdigit() and len(move) < 8
        self.reply(session.preview(int(move) if number else move))


class UndoHandler(ApiHandler):
    @api
    def post(self, game_id: str) -> None:
        session = self.games.get(game_id)
        self.games.undo(session)
        self.games.think(session)
        self.reply(session.view())


class RecordHandler(ApiHandler):
    @api
    def get(self, game_id: str) -> None:
        session = self.games.get(game_id)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.set_header("Content-Disposition", f'attachment; filename="carnac-{session.board.name}-{stamp}.json"')
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(session.record().to_json() + "\n")


class PageHandler(ApiHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page_html())


class MissingHandler(ApiHandler):
    def prepare(self) -> None:
        super().prepare()
        raise tornado.web.HTTPError(404, f"nothing at {self.request.path}; the page is at /, the API under /api/")


def page_html() -> str:
    """The page of ``carnac serve`` (one file shipped in the package)."""
    return resources.files("carnac_env.serve").joinpath("page.html").read_text(encoding="utf-8")


def make_app(games: Games, *, host_check: bool = True) -> Any:
    """The Tornado application serving ``games``."""
    web = tornado.web
    options = {"games": games, "host_check": host_check}
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
        ],
        default_handler_class=MissingHandler,
        default_handler_args=options,
        compress_response=True,
        log_function=_log_server_errors,
    )


def _log_server_errors(handler: tornado.web.RequestHandler) -> None:
    """Tornado's access log for the server's own failures only (5xx): a person's bad request
    is answered with its reason, not logged."""
    if handler.get_status() >= 500:
        tornado.log.access_log.error(
            "%d %s %s %.0f ms",
            handler.get_status(),
            handler.request.method,
            handler.request.uri,
            1000 * handler.request.request_time(),
        )
