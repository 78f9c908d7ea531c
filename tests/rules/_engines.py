"""One adapter over the three rules engines, so that every hand-built rules test runs on each.

The package states the rules three times: the core (:mod:`carnac_env.core`, the reference),
the batched engine (:mod:`carnac_env.batch`, compiled with numba) and the JAX engine
(:mod:`carnac_env.jax`, whose dolmens are a union of labels kept up to date move by move
instead of a flood fill at the end). The random lockstep games of tests/batch/test_batch.py and
tests/jax_engine/test_jax_engine.py rarely meet a given hand-built case; the tests under tests/rules/
meet each on purpose, through :class:`Position`:

* :meth:`Engine.load` puts a core position (e.g. from ``GameState.from_diagram``) into the
  engine through its own public door (``BatchGame.set_state``, ``carnac_env.jax.from_core``);
* :meth:`Engine.replay` reaches a position by playing moves from the start through the
  engine's own steps, so that the JAX engine's group bookkeeping is built by its own merges;
* :class:`Position` mirrors the part of :class:`~carnac_env.core.GameState` the rules tests
  read (``apply``, ``legal_actions``, ``cells``, ``kinds``, ``phase``, ``to_act``, ...),
  every value read back from the engine under test, and adds :meth:`Position.dolmens`,
  :meth:`Position.winner` and :meth:`Position.reward` from the engine's own scorer.

The engines differ only in conventions the rules leave open, and :func:`assert_rejected`
checks each engine's own: the core and the batched engine raise ``IllegalActionError`` and
change nothing; the JAX engine ends the game with -1 for the player who chose the illegal
action (Pgx's convention). A batched game that ends is replaced at once by a fresh one (its
auto-reset); :class:`Position` keeps the finished position by playing the last move again
with the engine's compiled ``play`` on a copy, the function its ``step`` calls.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from carnac_env.core import GameState
from carnac_env.core.arithmetic import orientation_for, own_colour
from carnac_env.core.boards import Board
from carnac_env.core.diagram import pair_lying_squares
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RESPOND, STANDING
from carnac_env.errors import IllegalActionError

ENGINES = ("core", "batch", "jax")
Dolmens = tuple[tuple[int, ...], tuple[int, ...]]


# ------------------------------------------------------------------------------ positions
class Position:
    """A game on one engine, read through the names of the core's ``GameState``.

    Subclasses fill :meth:`_read` (the engine's fields), :meth:`_step`, :meth:`_mask`,
    :meth:`dolmens`, :meth:`winner` and :meth:`copy`.
    """

    engine: ClassVar[str]

    def __init__(self, board: Board) -> None:
        self.board = board
        self.last_rewards = (0.0, 0.0)  # what the step that ended the game reported

    # the fields, read from the engine every time
    def _read(self) -> GameState:
        raise NotImplementedError

    @property
    def cells(self) -> bytearray:
        return self._read().cells

    @property
    def kinds(self) -> bytearray:
        return self._read().kinds

    @property
    def phase(self) -> int:
        return self._read().phase

    @property
    def to_act(self) -> int:
        return self._read().to_act

    @property
    def pending(self) -> int:
        return self._read().pending

    @property
    def supply(self) -> int:
        return self._read().supply

    @property
    def empty(self) -> int:
        return self._read().empty

    @property
    def lying(self) -> list[tuple[int, int]]:
        return self._read().lying

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def diagram(self) -> str:
        return self._read().diagram()

    # moves
    def legal_actions(self) -> list[int]:
        """The legal actions in increasing order, from the engine's mask ([] once over)."""
        if self.is_over:
            return []
        return [int(a) for a in np.flatnonzero(self._mask())]

    def _mask(self) -> np.ndarray:
        raise NotImplementedError

    def apply(self, action: int) -> None:
        """Play a legal ``action`` (a test that plays an illegal one fails here)."""
        if action not in self.legal_actions():
            raise IllegalActionError(f"{self.engine}: action {action} is not legal here:\n{self.diagram()}")
        self._step(int(action))

    def _step(self, action: int) -> None:
        raise NotImplementedError

    def copy(self) -> Position:
        raise NotImplementedError

    def tilt_targets(self) -> dict[int, tuple[int, int, int]]:
        """``{direction: (first square, second square, colour shown)}`` for each legal tilt,
        found by playing the tilt on a copy and reading what it covered."""
        targets = {}
        base = self.board.squares * 4
        for action in self.legal_actions():
            if base <= action < base + 4:
                after = self.copy()
                after._step(action)
                first, second = (int(s) for s in self.board.arrays.tilt_squares[self.pending, action - base])
                shown = {after.cells[first], after.cells[second]}
                assert after.kinds[first] == after.kinds[second] == LYING, (self.engine, action)
                assert len(shown) == 1, (self.engine, action, shown)
                targets[action - base] = (first, second, shown.pop())
        return targets

    # the result, by the engine's own scorer
    def dolmens(self) -> Dolmens:
        """Each player's dolmen sizes, largest first (Red's, White's)."""
        raise NotImplementedError

    def winner(self) -> int | None:
        """The player the tie-break chain favours in this position (None: a draw)."""
        raise NotImplementedError

    def reward(self, player: int) -> float:
        """``player``'s reward, as the step that ended the game reported it."""
        assert self.is_over, "the game is not over"
        return float(self.last_rewards[player])


class CorePosition(Position):
    engine = "core"

    def __init__(self, game: GameState) -> None:
        super().__init__(game.board)
        self.game = game.copy()

    def _read(self) -> GameState:
        return self.game

    def legal_actions(self) -> list[int]:
        return self.game.legal_actions()

    def _mask(self) -> np.ndarray:  # pragma: no cover - legal_actions is the core's own
        raise AssertionError

    def _step(self, action: int) -> None:
        self.game.apply(action)
        if self.game.is_over:
            result = self.game.result()
            self.last_rewards = (result.reward(0), result.reward(1))

    def copy(self) -> CorePosition:
        clone = CorePosition(self.game)
        clone.last_rewards = self.last_rewards
        return clone

    def tilt_targets(self) -> dict[int, tuple[int, int, int]]:
        return self.game.tilt_targets()

    def dolmens(self) -> Dolmens:
        return self.game.score_now().dolmens

    def winner(self) -> int | None:
        return self.game.score_now().winner


class BatchPosition(Position):
    """Slot 0 of a one-game ``BatchGame``, stepped by its public ``step``."""

    engine = "batch"

    def __init__(self, game: GameState) -> None:
        from carnac_env.batch import BatchGame

        super().__init__(game.board)
        self.games = BatchGame(game.board, num_envs=1, seed=0)
        self.final: GameState | None = None  # the finished position (the slot restarted)
        self.restarted: GameState | None = None  # what the slot held after the game ended
        if game.is_over:
            self.final = game.copy()
        else:
            self.games.set_state(0, game)

    def _read(self) -> GameState:
        return self.final if self.final is not None else self.games.get_state(0)

    def _mask(self) -> np.ndarray:
        return self.games.observe().action_mask[0]

    def _step(self, action: int) -> None:
        from carnac_env.batch import BatchGame
        from carnac_env.batch import rules as batch_rules

        assert self.final is None, "the batched game already ended"
        before = self.games.get_state(0)
        step = self.games.step(np.array([action], dtype=np.int64))
        if step.terminated[0]:
            self.last_rewards = tuple(float(r) for r in step.rewards[0])
            self.restarted = self.games.get_state(0)
            # the slot holds a fresh game now: play the last move again, with the compiled
            # play() that step() calls, on a copy that keeps the finished position
            ended = BatchGame(self.board, num_envs=1, seed=0)
            ended.set_state(0, before)
            assert batch_rules.play(ended.kernel, 0, action), "step() said the game ended, play() did not"
            self.final = ended.get_state(0)
            assert self.final.phase == OVER
            assert batch_rules.winner_of(ended.kernel, 0) == _winner_number(self.last_rewards)

    def copy(self) -> BatchPosition:
        clone = BatchPosition(self._read())
        clone.last_rewards, clone.restarted = self.last_rewards, self.restarted
        return clone

    def _cells(self) -> np.ndarray:
        return np.frombuffer(bytes(self.cells), dtype=np.uint8)

    def dolmens(self) -> Dolmens:
        from carnac_env.batch.scoring import dolmens_of

        board = self.board
        out = np.zeros((1, 2, board.squares // board.min_dolmen + 1), dtype=np.int64)
        dolmens_of(self._cells()[None, :].copy(), board.arrays.neighbours, board.min_dolmen, out)
        red, white = (tuple(int(s) for s in row if s) for row in out[0])
        return red, white

    def winner(self) -> int | None:
        from carnac_env.batch import dolmen_winner

        board = self.board
        found = int(dolmen_winner(self._cells().copy(), board.arrays.neighbours, board.min_dolmen))
        return None if found < 0 else found


_JAX_STEPS: dict[tuple, Any] = {}


class JaxPosition(Position):
    """One (unbatched) ``carnac_env.jax`` state, stepped by ``jax.jit(Carnac.step)``."""

    engine = "jax"

    def __init__(self, game: GameState | None = None, *, board: Board | None = None, state: Any = None) -> None:
        from carnac_env.jax import Carnac

        super().__init__(game.board if game is not None else board)
        self.env = Carnac(self.board)
        self.state = self.env.from_core(game) if state is None else state

    def _read(self) -> GameState:
        x, over = self.state._x, bool(self.state.terminated)
        game = GameState(self.board)
        game.cells = bytearray(np.asarray(x.cells).astype(np.uint8).tobytes())
        game.kinds = bytearray(np.asarray(x.kinds).astype(np.uint8).tobytes())
        # a JAX state keeps no list of lying megaliths: pair them as diagrams do
        game.lying = pair_lying_squares(self.board, game.cells, game.kinds) or []
        game.supply, game.empty = int(x.supply), int(x.empty)
        game.to_act, game.pending = int(self.state.current_player), int(x.pending)
        game.pending_colour = int(x.pending_colour)
        game.phase = OVER if over else (RESPOND if game.pending >= 0 else PLACE)
        return game

    def _mask(self) -> np.ndarray:
        return np.asarray(self.state.legal_action_mask)

    def _raw_step(self, action: int) -> Any:
        import jax

        key = tuple(sorted(self.board.rules().items()))
        if key not in _JAX_STEPS:
            _JAX_STEPS[key] = jax.jit(self.env.step)
        return _JAX_STEPS[key](self.state, np.int32(action))

    def _step(self, action: int) -> None:
        self.state = self._raw_step(action)
        if bool(self.state.terminated):
            self.last_rewards = tuple(float(r) for r in np.asarray(self.state.rewards))

    def copy(self) -> JaxPosition:
        clone = JaxPosition(board=self.board, state=self.state)  # states are immutable
        clone.last_rewards = self.last_rewards
        return clone

    def dolmens(self) -> Dolmens:
        """From the engine's group bookkeeping (``label``, ``size``): the groups of final
        squares. The megalith awaiting a decision is not final, so ask with none pending."""
        x = self.state._x
        assert int(x.pending) < 0, "the JAX engine scores no megalith that awaits a tilt decision"
        label, size, cells = (np.asarray(v).astype(np.int64) for v in (x.label, x.size, x.cells))
        roots = np.flatnonzero(label == np.arange(self.board.squares))
        found: tuple[list[int], list[int]] = ([], [])
        for root in roots:
            if size[root] >= self.board.min_dolmen:
                found[int(cells[root]) - 1].append(int(size[root]))
        red, white = (tuple(sorted(sizes, reverse=True)) for sizes in found)
        return red, white

    def winner(self) -> int | None:
        from carnac_env.jax import Game

        outcome = int(Game._outcome(self.state._x.dolmen_balance))
        return {1: 0, -1: 1, 0: None}[outcome]


def _winner_number(rewards: tuple[float, ...]) -> int:
    return 0 if rewards[0] > 0 else (1 if rewards[1] > 0 else -1)


# ------------------------------------------------------------------------------ engines
class Engine:
    """One of :data:`ENGINES`: builds :class:`Position` objects on it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._position = {"core": CorePosition, "batch": BatchPosition, "jax": JaxPosition}[name]

    def __repr__(self) -> str:
        return f"Engine({self.name!r})"

    def load(self, game: GameState) -> Position:
        """The core position ``game`` (not changed) on this engine, through its public door."""
        return self._position(game)

    def new(self, board: str | Board = "medium", **rules: object) -> Position:
        """A new game (Red to place on an empty board)."""
        return self.load(GameState(board, **rules))

    def from_diagram(self, board: str | Board, diagram: Any, **options: object) -> Position:
        """``GameState.from_diagram(board, diagram, **options)`` loaded on this engine."""
        return self.load(GameState.from_diagram(board, diagram, **options))

    def replay(self, board: str | Board, actions: list[int], **rules: object) -> Position:
        """A new game on ``board`` with ``actions`` played on this engine, one step each."""
        position = self.new(board, **rules)
        for action in actions:
            position.apply(action)
        return position


def moves_to(target: GameState, board: Board | None = None) -> list[int]:
    """Actions that build ``target``'s megaliths from an empty board of the same rules (or of
    ``board``, of the same size: e.g. with just enough megaliths for the last to end the game).

    The lying megaliths come first: each is placed next to its squares and tilted onto them
    (by the opponent, who then places). Then every standing one is placed with the right
    colour on top and declined whenever it could be tilted. Planned on the core; the players
    to act and the supply at the end are whatever the moves give. Raises AssertionError when
    a lying megalith has no empty square to fall from.
    """
    board = target.board if board is None else board
    game = GameState(board)
    actions: list[int] = []

    def play(action: int) -> None:
        actions.append(action)
        game.apply(action)

    todo = list(target.lying)
    while todo:
        for pair in todo:
            plan = _tilt_onto(game, board, pair, target.cells[pair[0]])
            if plan is not None:
                todo.remove(pair)
                for action in plan:
                    play(action)
                break
        else:
            raise AssertionError(f"no move order builds the lying megaliths {todo} of\n{target.diagram()}")
    for square in range(board.squares):
        if target.kinds[square] == STANDING:
            colour = target.cells[square]
            top_is_own = colour == own_colour(game.to_act)
            play(square * 4 + (0 if top_is_own else 1))
            if game.phase == RESPOND:
                play(board.squares * 4 + 4)  # decline: it stays standing
    assert [game.cells[s] for s in range(board.squares)] == list(target.cells), "replay missed the target"
    return actions


def _tilt_onto(game: GameState, board: Board, pair: tuple[int, int], colour: int) -> list[int] | None:
    """A placement and the tilt that lay a megalith showing ``colour`` on ``pair``, if one fits now."""
    cols = board.cols
    a, b = sorted(pair)
    # (origin, direction): from the west going east, from the east going west, or from the
    # north going south, from the south going north
    options = [(a - 1, 1), (b + 1, 3)] if b == a + 1 else [(a - cols, 2), (b + cols, 0)]
    for origin, direction in options:
        if not 0 <= origin < board.squares or game.kinds[origin] != EMPTY:
            continue
        if (direction in (1, 3)) and origin // cols != a // cols:
            continue  # would wrap round a row
        targets = game.tilts_after_place(origin, 0)
        if direction not in targets:
            continue
        mover = game.to_act
        north_south = colour if direction in (0, 2) else 3 - colour
        orientation = orientation_for(mover, colour, north_south)  # top colour: any
        return [origin * 4 + orientation, board.squares * 4 + direction]
    return None


def engine_param(name: str) -> Engine:
    """The :class:`Engine` of ``name``; the JAX one skips (with the reason) where JAX is absent."""
    if name == "jax":
        from _frameworks import require

        require("jax", "the JAX engine's rules tests need the jax extra")
    return Engine(name)
