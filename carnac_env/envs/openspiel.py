"""Carnac as an OpenSpiel game: ``python_carnac``, a thin adapter over the rules core.

>>> import pyspiel
>>> import carnac_env.envs.openspiel                 # registers python_carnac with OpenSpiel
>>> game = pyspiel.load_game("python_carnac", {"board": "small"})
>>> game = pyspiel.load_game("python_carnac(board=small,last_tilt=False)")  # the string form
>>> state = game.new_initial_state()

Everything OpenSpiel offers for a Python game then works on Carnac: its ``MCTSBot`` and
``evaluate_bots``, ``random_sim_test``, observers, and (through Shimmy's
``OpenSpielCompatibilityV0``) PettingZoo. The rules are :class:`carnac_env.core.GameState`'s;
this module only answers OpenSpiel's questions from it. docs/openspiel.md is the page.

Parameters: ``board``, one of :data:`carnac_env.core.BOARDS` (default ``"medium"``), and
``last_tilt`` (default ``True``: the final megalith may still be tilted or declined).

What OpenSpiel is told:

* two players, sequential moves, deterministic, perfect information, zero-sum, a terminal
  reward of +1 / -1 (0 for a draw); actions are carnac_env's action numbers
  (``rows*cols*4 + 5`` of them), ``max_game_length`` is two per megalith (each placement is
  followed by at most one tilt or decline).
* **Turns do not strictly alternate.** ``current_player()`` is whoever the rules say acts:
  after a tilt the tilter places next, after a decline the placer places again, so the same
  player often acts twice in a row. OpenSpiel's algorithms read ``current_player()`` at every
  node (its MCTS backs each node's value up for the player who acted there), so they need
  nothing more; code of your own must not assume that players take turns.
* The observation tensor is carnac_env's observation planes
  (:func:`carnac_env.core.observation_planes`), float32, shape ``(rows, cols, 9)``, seen by
  the player asked for: the same numbers the PettingZoo and Gymnasium envs give. The
  observation string and ``str(state)`` are the text board of :mod:`carnac_env.render.ansi`.
  The information state is the history (a perfect-information game).

States clone cheaply (the core state is two bytearrays and a list). OpenSpiel serialises a
Python game's state (``state.serialize()``, ``pyspiel.serialize_game_and_state``, ``pickle``)
as a pickled dict, so reading one back unpickles it: only read strings you wrote. For a state
that travels, ``state.to_json()`` gives a carnac game record (JSON, the moves in notation)
and ``game.new_initial_state(json.loads(text))`` replays it through the rules, refusing a
malformed or illegal record with :class:`~carnac_env.errors.RecordError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import pyspiel
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ImportError as err:  # pragma: no cover - depends on the install
    raise ImportError(
        f"carnac_env.envs.openspiel needs OpenSpiel: pip install 'carnac-env[openspiel]' ({err})", name=err.name
    ) from err

from carnac_env import _checks
from carnac_env.core.boards import BOARDS, Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text
from carnac_env.core.observation import NUM_PLANES, observation_planes
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, IllegalActionError, RecordError
from carnac_env.render.ansi import render_text

__all__ = ["GAME_TYPE", "SHORT_NAME", "CarnacGame", "CarnacState", "SpielIllegalActionError", "load_game"]

SHORT_NAME = "python_carnac"
#: The parameters OpenSpiel passes (with their defaults).
PARAMETERS = {"board": "medium", "last_tilt": True}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Carnac",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


class SpielIllegalActionError(IllegalActionError, pyspiel.SpielError):
    """An illegal action through ``python_carnac``: both carnac_env's :class:`IllegalActionError`
    (a ``ValueError``) and ``pyspiel.SpielError``, which OpenSpiel's own tools catch for an illegal
    move (RLlib's ``OpenSpielEnv`` plays a random legal move instead, with a penalty). It exists
    only where pyspiel imports: this module is the one that needs it."""


def board_from_parameters(params: dict[str, Any]) -> Board:
    """The board that OpenSpiel's ``board`` and ``last_tilt`` parameters name.

    Raises:
        CarnacError: an unknown parameter, a board that is not one of :data:`BOARDS`, or a
            ``last_tilt`` that is not a bool.
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise CarnacError(f"unknown {SHORT_NAME} parameter(s) {names}; expected any of {', '.join(PARAMETERS)}")
    name = _checks.choice(f"{SHORT_NAME} parameter board", params.get("board", PARAMETERS["board"]), BOARDS)
    last_tilt = _checks.flag(f"{SHORT_NAME} parameter last_tilt", params.get("last_tilt", PARAMETERS["last_tilt"]))
    return make_board(name, last_tilt=last_tilt)


class CarnacGame(pyspiel.Game):
    """The OpenSpiel game: one board and its rules. Build it with ``pyspiel.load_game``
    (or :func:`load_game`); ``game.board`` is the :class:`~carnac_env.core.Board`."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        board = board_from_parameters(params)
        info = pyspiel.GameInfo(
            num_distinct_actions=board.num_actions,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=2 * board.megaliths,
        )
        super().__init__(GAME_TYPE, info, params)
        self.board = board

    def new_initial_state(self, state: Any = None) -> CarnacState:
        """A new game; or, given a game record (a dict from ``state.to_dict()`` or a
        ``StateStruct``), the position after its moves, replayed through the rules.

        Raises:
            RecordError: the record is malformed, is for another board, or a move is illegal.
        """
        return CarnacState(self, state)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The observation planes for OpenSpiel's default observation; the history for an
        information state (perfect recall)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return PlanesObserver(self.board, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class CarnacState(pyspiel.State):
    """A position; ``state.game_state`` is the rules core's :class:`~carnac_env.core.GameState`.

    Read ``game_state`` freely, but move only through OpenSpiel (``apply_action``), which
    keeps the history that serialisation and the information state rely on.
    """

    def __init__(self, game: CarnacGame, state: Any = None) -> None:
        super().__init__(game)
        self.game_state = GameState(game.board)
        if state is not None:
            for action in _record_actions(game.board, state):
                self.apply_action(action)

    def __setattr__(self, name: str, value: Any) -> None:
        """Every ``game_state`` set (by ``__init__``, or by OpenSpiel's deserialisation, which
        sets each attribute of the pickled dict) is checked against this state's game: the same
        board and rules. An edited state string (another board named in its ``[Game]`` line)
        raises RecordError instead of giving a state that does not fit its game."""
        if name == "game_state":
            _check_game_state(self, value)
        super().__setattr__(name, value)

    # OpenSpiel's State API, answered from the rules core
    def current_player(self) -> int:
        """The player to act (0 Red, 1 White): not strictly alternating; TERMINAL at the end."""
        return pyspiel.PlayerId.TERMINAL if self.game_state.is_over else self.game_state.to_act

    def _legal_actions(self, player: int) -> list[int]:
        return self.game_state.legal_actions()

    def _apply_action(self, action: int) -> None:
        try:
            self.game_state.apply(action)  # an illegal action changes nothing
        except IllegalActionError as error:
            raise SpielIllegalActionError(str(error)) from None

    def _action_to_string(self, player: int, action: int) -> str:
        board = self.game_state.board
        if 0 <= action < board.num_actions:
            return action_to_text(board, action, player)
        return f"action {action}"

    def is_terminal(self) -> bool:
        return self.game_state.is_over

    def returns(self) -> list[float]:
        """+1 for the winner and -1 for the loser once the game is over; zeros before and for a draw."""
        if not self.game_state.is_over:
            return [0.0, 0.0]
        winner = self.game_state.result().winner
        if winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if winner == 0 else [-1.0, 1.0]

    def __str__(self) -> str:
        return render_text(self.game_state)

    # The struct API (OpenSpiel 2.0): a game record, JSON, that replays through the rules
    def _to_struct(self) -> dict[str, Any]:
        return GameRecord.from_actions(self.game_state.board, self.history()).to_dict()

    def _to_observation_struct(self, player: int) -> dict[str, Any]:
        return self._to_struct()


def _check_game_state(state: CarnacState, value: Any) -> None:
    """Raise RecordError unless ``value`` is a GameState on ``state``'s board and rules.

    (The history is not compared here: ``clone()`` sets the attributes before it copies the
    history, so at this moment the history may still be empty.)"""
    board = state.get_game().board
    if not isinstance(value, GameState):
        raise RecordError(f"a {SHORT_NAME} state holds a carnac GameState, not {type(value).__name__}")
    if value.board is not board and value.board != board:
        raise RecordError(
            f"the state is on board {value.board.name!r} {value.board.rules()}; its game is "
            f"{board.name!r} {board.rules()} (an edited state string?)"
        )


def _record_actions(board: Board, state: Any) -> list[int]:
    """The action numbers of a game record given as a dict or a ``StateStruct``, checked."""
    if isinstance(state, pyspiel.StateStruct):
        state = state.to_dict()
    record = GameRecord.from_dict(state)
    if record.board != board:
        raise RecordError(f"the record is for board {record.board.rules()}; this game is {board.rules()}")
    actions = record.actions()
    if record.result is not None:
        record.replay()  # checks the stored result against the replayed one
    return actions


class PlanesObserver:
    """OpenSpiel's observer interface (``tensor``, ``dict``, ``set_from``, ``string_from``)
    over :func:`carnac_env.core.observation_planes`."""

    def __init__(self, board: Board, params: Any = None) -> None:
        if params:
            raise CarnacError(f"{SHORT_NAME} observations take no parameters; got {params!r}")
        shape = (board.rows, board.cols, NUM_PLANES)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: CarnacState, player: int) -> None:
        """Write ``player``'s view of ``state`` into ``tensor`` (in place)."""
        self.dict["observation"][...] = observation_planes(state.game_state, player)

    def string_from(self, state: CarnacState, player: int) -> str:
        """The text board (the same for both players: the game has no hidden information)."""
        return render_text(state.game_state)


def load_game(board: str = "medium", last_tilt: bool = True) -> CarnacGame:
    """``pyspiel.load_game("python_carnac", {"board": board, "last_tilt": last_tilt})``."""
    return pyspiel.load_game(SHORT_NAME, {"board": board, "last_tilt": last_tilt})


pyspiel.register_game(GAME_TYPE, CarnacGame)
