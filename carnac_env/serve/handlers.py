"""The web side of ``carnac serve``: Tornado handlers around the scheduler (:mod:`.games`) and
the routes of the page and its small JSON API.

Tornado (one pure-Python package with no dependencies of its own, maintained, already pulled
in by Jupyter's kernel) serves the page and the API on one event loop. Every answer of the API
is JSON; every bad request gets a 4xx status and ``{"error": "..."}`` naming what was wrong
(:func:`api`), and leaves the game as it was. Every request passes the Host check and every
change the same-site check of :mod:`.limits`; the listening side, with its connection bound and
timeouts, is :mod:`.connections`.

    GET  /                               the page
    GET  /api/options                    the boards and the agents offered
    POST /api/boards                     {"board": "7x9:megaliths=30"}: offer one more board, made on the page (201)
    POST /api/games                      {"board", "opponent", "seat", "seed"}: a new game (201)
    GET  /api/games/ID                   the game as the page draws it (poll while the agent thinks)
    POST /api/games/ID/move              {"action": N} or {"move": "c4 Rns"}: the person's move
    GET  /api/games/ID/preview?move=...  the board after a placement, not played, with the tilts it allows
    POST /api/games/ID/undo              take back the person's last decision (and the replies)
    GET  /api/games/ID/record            the game record (carnac_env.core.record's JSON), as a download
    POST /api/games/ID/analysis          {"kind": "position"} or {"kind": "review"}: the learned agent's
                                         view of the position now, or of the game so far (carnac_env.analysis)
"""

from __future__ import annotations

import functools
import html
import inspect
import json
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

import tornado.httputil
import tornado.log
import tornado.web

from carnac_env import _checks
from carnac_env.errors import CarnacError
from carnac_env.serve.games import ANALYSIS_KINDS, BusyError, Games, NotFoundError
from carnac_env.serve.limits import (
    MAX_BODY,
    RETRY_AFTER,
    SECURITY_HEADERS,
    MediaTypeError,
    RefusedError,
    check_same_site,
    host_allowed,
)
from carnac_env.serve.session import ConflictError


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
                check_same_site(self.request, self.games.token)
            except CarnacError as err:
                self.refuse(err)
                raise tornado.web.Finish() from None

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
        self.reply(
            {"boards": [_board_json(self.games, name) for name in self.games.boards], "agents": self.games.agents}
        )


class BoardsHandler(ApiHandler):
    @api
    def post(self) -> None:
        body = self.body()
        unknown = sorted(set(body) - {"board"})
        if unknown or "board" not in body:
            raise CarnacError('a board to make is {"board": "7x9:megaliths=30"}')
        self.reply(_board_json(self.games, self.games.add_board(body["board"])), 201)


def _board_json(games: Games, name: str) -> dict[str, Any]:
    """One offered board as the page reads it: its spec, size, supply, agents and analysis."""
    from carnac_env.core.boards import make_board

    board = make_board(name)
    return {
        "name": name,
        "rows": board.rows,
        "cols": board.cols,
        "megaliths": board.megaliths,
        "agents": games.offered[name],
        "analysis": _offer_json(games.analysis[name]),
    }


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
            (r"/api/boards", BoardsHandler, options),
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
