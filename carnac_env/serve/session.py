"""One game in the browser: a person against an agent, as plain data (no web library here).

A :class:`Session` holds the game (a :class:`~carnac_env.core.game.GameState` and its moves),
the person's seat and the opponent's spec. :meth:`Session.view` is everything the page needs
to draw the position and offer the person's choices: the board as SVG, the legal placements
with the four orientations of each, the tilts and the decline of a pending megalith, the
score as it stands (dolmens, Board Game Arena score, who leads and why), the moves so far.
The web layer (:mod:`carnac_env.serve.handlers`) turns requests into calls of this module and its
answers into JSON; the rules stay in the core, and every check of the person's input is
here, with a :class:`~carnac_env.errors.CarnacError` naming what was wrong.

The agent's move is not chosen here: :meth:`Session.opponent_state` gives the position (a copy
of the game) for the agent to read (in a worker thread), and :meth:`Session.apply_opponent` plays
the answer it returns, if the game has not moved on meanwhile (an undo, a new request).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from carnac_env import _checks
from carnac_env.core.actions import decode, place_number, tilt_colours
from carnac_env.core.boards import DIRECTION_NAMES, Board, board_spec
from carnac_env.core.game import COLOUR_NAMES, OVER, PHASE_NAMES, PLACE, PLAYER_NAMES, RESPOND, GameState
from carnac_env.core.notation import action_to_text, parse_action, square_name
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError
from carnac_env.render.animate import move_squares
from carnac_env.render.score import score_line, standing, tie_break_reason, turn_line
from carnac_env.render.svg import SvgLayout, board_layer, pieces_layer


class ConflictError(CarnacError):
    """A request that does not fit the game's moment: not the person's turn, the game over."""


#: Pixels per square of the page's board.
CELL = 48
#: The longest move text accepted (the notation's moves are short).
MAX_MOVE_TEXT = 32


@dataclass
class Session:
    """A game between the person (``seat``: 0 Red, 1 White) and the agent ``opponent`` (a spec)."""

    id: str
    board: Board
    seat: int
    opponent: str
    seed: int = 0
    state: GameState = field(init=False)
    actions: list[int] = field(default_factory=list)
    #: Counts the changes of the game by the person (moves, undos): an agent's answer to an
    #: older position is dropped.
    generation: int = 0
    #: The agent is choosing a move for this generation (None: it is not).
    thinking: int | None = None
    #: Why the agent could not move, if it failed.
    agent_error: str | None = None

    def __post_init__(self) -> None:
        self.seat = _checks.whole("seat", self.seat, 0, 1)  # 1.0 and True are not seats
        self.state = GameState(self.board)

    # ----------------------------------------------------------------- the person's moves
    @property
    def your_turn(self) -> bool:
        return not self.state.is_over and self.state.to_act == self.seat

    @property
    def opponent_to_act(self) -> bool:
        return not self.state.is_over and self.state.to_act != self.seat

    def parse(self, move: Any) -> int:
        """The action number of the person's ``move``: an action number, or a move in the
        notation (``"c4 Rns"``, ``"tilt N"``, ``"decline"``), checked to be legal now.

        Raises:
            CarnacError: not the person's turn, or a move that is not a legal one now.
        """
        if self.state.is_over:
            raise ConflictError("the game is over; start a new game or undo")
        if not self.your_turn:
            who = f"{PLAYER_NAMES[self.state.to_act]}'s turn ({self.opponent})"
            if self.thinking is not None:
                raise ConflictError(f"it is {who}: {self.opponent} is thinking; wait for its move, or undo")
            raise ConflictError(f"it is {who}, not yours" + (f": {self.agent_error}" if self.agent_error else ""))
        if isinstance(move, str):
            if len(move) > MAX_MOVE_TEXT:
                raise CarnacError(f"move text of {len(move)} characters; a move is short, such as 'c4 Rns'")
            action = parse_action(self.board, move, self.seat)
        else:
            action = _checks.whole("action", move, 0, self.board.num_actions - 1)
        reason = self.state.why_illegal(action)
        if reason is not None:
            raise CarnacError(f"{self.state.describe(action)} is illegal: {reason}")
        return action

    def play(self, move: Any) -> int:
        """Play the person's ``move`` (see :meth:`parse`); returns its action number."""
        action = self.parse(move)
        self._apply(action)
        self.generation += 1
        self.agent_error = None
        return action

    def undo(self) -> int:
        """Take back the person's last decision and every move after it (the agent's answers);
        returns how many moves were taken back. An agent thinking meanwhile is ignored.

        Raises:
            CarnacError: the person has not moved yet.
        """
        players = self._movers()
        mine = [i for i, player in enumerate(players) if player == self.seat]
        if not mine:
            raise ConflictError("nothing to undo: you have not moved yet")
        keep = mine[-1]
        taken = len(self.actions) - keep
        self.actions = self.actions[:keep]
        self.state = GameState(self.board)
        for action in self.actions:
            self.state.apply(action)
        self.generation += 1
        self.thinking = None
        self.agent_error = None
        return taken

    def _apply(self, action: int) -> None:
        self.state.apply(action)
        self.actions.append(int(action))

    def _movers(self) -> list[int]:
        state, movers = GameState(self.board), []
        for action in self.actions:
            movers.append(state.to_act)
            state.apply(action)
        return movers

    # ----------------------------------------------------------------- the agent's moves
    def opponent_state(self) -> GameState:
        """A copy of the current position, for the agent to read (the agent protocol,
        ``act(state)``: :mod:`carnac_env.agents.protocol`)."""
        return self.state.copy()

    def apply_opponent(self, generation: int, action: Any) -> bool:
        """Play the agent's ``action``, chosen for ``generation``; False (nothing played) when
        the game has changed since. An illegal choice is recorded as the agent's error."""
        if generation != self.generation or not self.opponent_to_act:
            return False
        if not _checks.is_whole(action) or self.state.why_illegal(int(action)) is not None:
            why = self.state.why_illegal(int(action)) if _checks.is_whole(action) else "not an action number"
            self.agent_error = f"{self.opponent} chose {action!r}, which is illegal: {why}"
            return False
        self._apply(int(action))
        return True

    # ----------------------------------------------------------------- what the page shows
    def names(self) -> tuple[str, str]:
        return ("you", self.opponent) if self.seat == 0 else (self.opponent, "you")

    def record(self) -> GameRecord:
        """The game so far as a game record (the project's JSON format)."""
        names = self.names()
        return GameRecord.from_actions(
            self.board,
            self.actions,
            meta={"agents": list(names), "seats": {"you": self.seat}, "seed": self.seed, "source": "carnac serve"},
        )

    def preview(self, move: Any) -> dict[str, Any]:
        """The board after the person's placement ``move``, not played: the megalith standing
        ringed, with the tilts the opponent could then choose.

        Raises:
            CarnacError: not a legal placement of the person now.
        """
        action = self.parse(move)
        placed = decode(self.board, action)
        if placed.kind != "place":
            raise CarnacError(f"{self.state.describe(action)} is not a placement; only placements are previewed")
        after = self.state.copy()
        after.apply(action)
        layout = SvgLayout(self.board, CELL)
        tilts = self.state.tilts_after_place(placed.square, placed.orientation)
        return {
            "action": action,
            "text": action_to_text(self.board, action, self.seat),
            "pieces_svg": pieces_layer(after, layout, marks=(placed.square,), outlines=True, status=False),
            "opponent_tilts": [
                {
                    "direction": DIRECTION_NAMES[d],
                    "squares": [square_name(self.board, a), square_name(self.board, b)],
                    "colour": COLOUR_NAMES[c],
                }
                for d, (a, b, c) in tilts.items()
            ],
        }

    def view(self) -> dict[str, Any]:
        """Everything the page draws, as JSON-ready data."""
        state, board = self.state, self.board
        layout = SvgLayout(board, CELL)
        last = ()
        if self.actions:
            before = GameState(board)
            for action in self.actions[:-1]:
                before.apply(action)
            last = move_squares(before, self.actions[-1])
        result = standing(state)
        names = self.names()
        movers = self._movers()
        view: dict[str, Any] = {
            "id": self.id,
            # the board's spec, as /api/options names it ("medium", "12x20:megaliths=28,min_dolmen=3")
            "board": {"name": board_spec(board), "rows": board.rows, "cols": board.cols, "megaliths": board.megaliths},
            "layout": {
                "cell": layout.cell,
                "left": layout.left,
                "top": layout.top,
                "width": layout.left + board.cols * layout.cell + layout.cell // 3,  # the board, no status
                "height": layout.status_top + 4,
            },
            "seat": self.seat,
            "opponent": self.opponent,
            "names": list(names),
            "phase": PHASE_NAMES[state.phase],
            "to_act": None if state.is_over else state.to_act,
            "your_turn": self.your_turn,
            "thinking": self.thinking is not None,
            "agent_error": self.agent_error,
            "supply": state.supply,
            "status": turn_line(state, names),
            "board_svg": board_layer(layout),
            "pieces_svg": pieces_layer(state, layout, marks=last, names=names, outlines=True, status=False),
            "score": {
                "dolmens": [list(result.dolmens[0]), list(result.dolmens[1])],
                "bga": list(result.scores),
                "line": score_line(state, bga=True),
                "leader": result.winner,
                "reason": tie_break_reason(result),
            },
            "result": None,
            "moves": [],
            "can_undo": self.seat in movers,
            "placements": [],
            "answers": [],
        }
        view["moves"] = [
            {
                "number": i + 1,
                "player": PLAYER_NAMES[who],
                "you": who == self.seat,
                "text": action_to_text(board, action, who),
            }
            for i, (who, action) in enumerate(zip(movers, self.actions))
        ]
        if state.phase == OVER:
            final = state.result()
            view["result"] = {
                "winner": final.winner,
                "you_won": final.winner == self.seat,
                "draw": final.winner is None,
                "reason": tie_break_reason(final),
            }
        elif self.your_turn and state.phase == PLACE:
            view["placements"] = self._placements()
        elif self.your_turn and state.phase == RESPOND:
            view["answers"] = self._answers()
        return view

    def _placements(self) -> list[dict[str, Any]]:
        """Every empty square with its four orientations: the move text and what it shows."""
        board, state, me = self.board, self.state, self.seat
        out = []
        for square in range(board.squares):
            if state.kinds[square]:
                continue
            orientations = []
            for orientation in range(4):
                top, north_south, east_west = tilt_colours(me, orientation)
                action = place_number(square, orientation)
                orientations.append(
                    {
                        "action": action,
                        "text": action_to_text(board, action, me),
                        "top": COLOUR_NAMES[top],
                        "north_south": COLOUR_NAMES[north_south],
                        "east_west": COLOUR_NAMES[east_west],
                    }
                )
            out.append({"square": square, "name": square_name(board, square), "orientations": orientations})
        return out

    def _answers(self) -> list[dict[str, Any]]:
        """The tilts of the pending megalith (where each lands, what it shows) and the decline."""
        board, state = self.board, self.state
        out = []
        for action in state.legal_actions():
            move = decode(board, action)
            entry: dict[str, Any] = {"action": action, "text": action_to_text(board, action, self.seat)}
            if move.kind == "tilt":
                first, second, colour = state.tilt_targets()[move.direction]
                entry.update(
                    direction=DIRECTION_NAMES[move.direction],
                    squares=[first, second],
                    names=[square_name(board, first), square_name(board, second)],
                    colour=COLOUR_NAMES[colour],
                )
            out.append(entry)
        return out
