"""Carnac as a Pgx-style JAX environment: the protocol around the pure :class:`~carnac_env.jax.game.Game`.

:class:`Carnac` writes once what every game shares, as Pgx's ``core.Env.step`` does: an
illegal (or out-of-range) action ends the game at once, -1 for the player who chose it and
+1 for the other, with the board left as it was; a finished game comes back unchanged with
zero rewards; the step count; and the observation and the mask, built when read. The rules
themselves are the game's (:mod:`carnac_env.jax.game`).

Conventions (those of Pgx, so that Pgx users and tools such as mctx feel at home):

* ``state.current_player`` is the player to act, 0 (Red, moves first) or 1 (White), as in
  the core's ``to_act``. Unlike most Pgx games the seat is not drawn at random from the key:
  the observation is relative to the observer, so one policy plays both seats anyway.
* ``state.observation`` is :func:`carnac_env.core.observation.observation_planes` seen by
  ``current_player``; :meth:`Carnac.observe` gives any player's view.
* ``state.rewards`` (2,) float32 is +1/-1/0 for each player on the step that ends the game
  and zero otherwise.
* Once ``terminated``, ``legal_action_mask`` is all True (any action is a no-op, so a policy
  can normalise over the mask) and stepping returns the same state with zero rewards.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState as CoreState
from carnac_env.core.observation import NUM_PLANES
from carnac_env.core.scoring import groups
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError
from carnac_env.jax.game import Game, GameState, index_dtype

__all__ = ["ENV_ID", "VERSION", "Carnac", "State", "from_core"]

ENV_ID = "carnac"
VERSION = "v0"

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class State:
    """One game (or, under ``vmap``, a batch of games) as arrays; immutable, a JAX pytree.

    Public attributes, as in ``pgx.State``:
        current_player: int32, the player to act (0 Red, 1 White); after the end, the last to act.
        observation: int8 ``(rows, cols, 9)``, the planes seen by ``current_player`` (a
            property: built from the game state when read).
        rewards: float32 ``(2,)``, each player's reward for the step that led here.
        terminated: bool, the game is over.
        truncated: bool, always False here (every game ends: each placement uses up the
            supply, and declines alternate with placements); a time limit is the caller's.
        legal_action_mask: bool ``(rows*cols*4 + 5,)``; all True once terminated (a
            property: built from the game state when read).

    Both properties work on one state and on a batch (outside ``vmap`` they are vmapped over
    the batch's dimensions). Reading them inside ``jit`` costs what computing them costs;
    not reading them costs nothing, so the state a batch carries from step to step is only
    the game's own arrays (Pgx computes both on every step and carries them).

    Private attributes (read them for debugging only): ``_step_count``; ``_x``, the game's
    own :class:`~carnac_env.jax.game.GameState` (cells, kinds, supply, pending megalith,
    group bookkeeping); and ``_board``, the :class:`~carnac_env.core.boards.Board` (static
    metadata of the pytree, not an array).
    """

    current_player: Array
    rewards: Array
    terminated: Array
    truncated: Array
    _step_count: Array
    _x: GameState
    _board: Board  # static (not an array): the board and rules, for drawing

    @property
    def observation(self) -> Array:
        """int8 ``(rows, cols, 9)`` (a batch of them for a batched state): the planes seen by
        ``current_player``, built from the game state when read, so a step that nobody
        observes (a random rollout, a search that reads only the mask) does not pay for them."""
        observe = _batched(self._board, _observation, self._x.cells.ndim - 1)
        return observe(self._x, self.current_player, self.terminated)

    @property
    def legal_action_mask(self) -> Array:
        """bool ``(rows*cols*4 + 5,)`` (a batch of them for a batched state): the legal actions
        of ``current_player``, all True once terminated; built from the game state when read."""
        return _batched(self._board, _mask, self._x.cells.ndim - 1)(self._x, self.terminated)

    @property
    def env_id(self) -> str:
        """The environment id, ``"carnac"`` (Pgx's ``State.env_id``)."""
        return ENV_ID

    def replace(self, **changes: Any) -> State:
        """A copy with some fields changed (like ``flax.struct`` / Pgx states)."""
        return dataclasses.replace(self, **changes)

    def to_svg(self, *, scale: float = 1.0) -> str:
        """An SVG picture of the board (of every board, in a grid, for a batch of states),
        drawn by :mod:`carnac_env.render.svg` in the package's one style."""
        from carnac_env.render.svg import states_svg  # drawing only when asked

        return states_svg(_core_positions(self), scale=scale)

    def save_svg(self, filename: str, *, scale: float = 1.0) -> None:
        """Write :meth:`to_svg` to ``filename`` (Pgx's ``State.save_svg``), atomically
        (:func:`carnac_env._files.write_text`)."""
        from carnac_env._files import write_text

        write_text(filename, self.to_svg(scale=scale))

    def _repr_html_(self) -> str:
        return self.to_svg()


jax.tree_util.register_dataclass(
    State, data_fields=[f.name for f in dataclasses.fields(State) if f.name != "_board"], meta_fields=["_board"]
)


class Carnac:
    """Carnac as a Pgx-style JAX environment: pure ``init``, ``step`` and ``observe``.

    Args:
        board: a board name (``small``, ``medium``, ``large``, ``kermario``, ``kerlescan``,
            ``le_menec``, ``petit_menec``), ``"custom"``, or a :class:`~carnac_env.core.Board`.
        **rules: rules options ``rows``, ``cols``, ``megaliths``, ``min_dolmen``, ``last_tilt``
            (see :func:`carnac_env.core.make_board`).

    Raises:
        CarnacError: an unknown board or option, or an impossible board.

    The board's size is static: every board gets its own compiled functions. The methods
    are pure and may be wrapped in ``jax.jit`` and ``jax.vmap`` freely.
    """

    def __init__(self, board: str | Board = "medium", **rules: Any) -> None:
        self.board = make_board(board, **rules)
        self.game = Game(self.board)

    # ------------------------------------------------------------------ Pgx's Env surface
    @property
    def id(self) -> str:
        """``"carnac"``."""
        return ENV_ID

    @property
    def version(self) -> str:
        """Bumped whenever behaviour changes (not for speed-ups)."""
        return VERSION

    @property
    def num_players(self) -> int:
        """2."""
        return 2

    @property
    def num_actions(self) -> int:
        """``rows*cols*4 + 5`` (the action encoding of carnac-rules.md)."""
        return self.board.num_actions

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        """``(rows, cols, 9)``."""
        return (self.board.rows, self.board.cols, NUM_PLANES)

    def __repr__(self) -> str:
        return f"Carnac(board={self.board.name!r}, **{self.board.rules()!r})"

    def init(self, key: Array | None = None) -> State:
        """The start of a game: empty board, full supply, Red (player 0) to place.

        ``key`` is accepted for Pgx compatibility and unused (the start is deterministic).
        """
        return self._state(self.game.init(), jnp.zeros(2, dtype=jnp.float32), jnp.bool_(False), jnp.int32(0))

    def step(self, state: State, action: Array, key: Array | None = None) -> State:
        """Play ``action`` for ``state.current_player`` and return the next state.

        A terminated state comes back unchanged with zero rewards. An illegal or
        out-of-range action ends the game with -1 for the player who chose it and +1 for
        the other (Pgx's convention). ``key`` is accepted for Pgx compatibility and unused
        (Carnac has no chance).
        """
        action = jnp.asarray(action, dtype=jnp.int32)
        clipped = jnp.clip(action, 0, self.num_actions - 1)
        done = state.terminated | state.truncated
        legal = (action == clipped) & self.game.legal_action_mask(state._x)[clipped]
        play, illegal = ~done & legal, ~done & ~legal
        x = self.game.play(state._x, clipped, play)  # unchanged unless play
        penalty = jnp.where(jnp.arange(2) == state.current_player, -1.0, 1.0).astype(jnp.float32)
        rewards = jnp.where(illegal, penalty, jnp.where(play, self.game.returns(x), 0.0)).astype(jnp.float32)
        return self._state(x, rewards, state.terminated | illegal, state._step_count + (~done).astype(jnp.int32))

    def observe(self, state: State, player_id: Array | None = None) -> Array:
        """The ``(rows, cols, 9)`` int8 planes of ``state`` seen by ``player_id``.

        By default the player to act (``state.current_player``). The same planes as
        :func:`carnac_env.core.observation.observation_planes`: 0 own colour, 1 opponent
        colour, 2 standing, 3 lying, 4 megalith awaiting a tilt decision, 5/6 squares a
        legal tilt would cover with own/opponent colour, 7 all ones if ``player_id`` is to
        act (and the game not over), 8 the supply left.
        """
        player = state.current_player if player_id is None else jnp.asarray(player_id, dtype=jnp.int32)
        return self.game.observe(state._x, player, state.terminated)

    def from_core(self, game: CoreState) -> State:
        """:func:`from_core`, checking that ``game`` is played on this env's board and rules."""
        validate(game, name="the game")
        if game.board.rules() != self.board.rules():
            raise CarnacError(
                f"the game is played on {game.board.rules()}, but this env plays {self.board.rules()}; "
                "build the env with Carnac(game.board)"
            )
        return from_core(game)

    # ------------------------------------------------------------------ the shared frame
    def _state(self, x: GameState, rewards: Array, forfeited: Array, step_count: Array) -> State:
        """The public state for game state ``x``: the player to act and the end (the game's, or
        a forfeit); the mask and the observation are read from ``x`` when asked."""
        terminated = forfeited | self.game.is_terminal(x)
        return State(
            current_player=x.to_act,
            rewards=rewards,
            terminated=terminated,
            truncated=jnp.bool_(False),
            _step_count=step_count,
            _x=x,
            _board=self.board,
        )


def _observation(game: Game, x: GameState, player: Array, terminated: Array) -> Array:
    """The observation of a state (:attr:`State.observation`)."""
    return game.observe(x, player, terminated)


def _mask(game: Game, x: GameState, terminated: Array) -> Array:
    """The legal-action mask of a state (:attr:`State.legal_action_mask`): all True once over."""
    return game.legal_action_mask(x) | terminated


@functools.cache
def _batched(board: Board, function: Any, batch_dims: int) -> Any:
    """``function`` for ``Game(board)`` under ``batch_dims`` vmaps (0 inside ``vmap``), jitted;
    cached per board, function and depth."""
    batched = functools.partial(function, Game(board))
    for _ in range(batch_dims):
        batched = jax.vmap(batched)
    return jax.jit(batched)


def from_core(game: CoreState) -> State:
    """A JAX :class:`State` for a core :class:`~carnac_env.core.GameState` (any position,
    including hand-built ones from ``GameState.from_diagram``), checked first by
    :func:`carnac_env.core.validate.validate`.

    Step it with ``Carnac(game.board)``. The rewards are zero (they belong to the step that
    led to a position, which a GameState does not record) and so is the step count; a
    finished game gives a terminated state.

    Raises:
        CarnacError: ``game`` is not a consistent GameState (the message says what is wrong).
    """
    validate(game, name="the game")
    board = game.board
    n = board.squares
    cells = np.frombuffer(game.cells, dtype=np.uint8).astype(np.int8)
    kinds = np.frombuffer(game.kinds, dtype=np.uint8).astype(np.int8)
    final = cells.copy()
    if game.pending >= 0:
        final[game.pending] = 0  # the megalith awaiting a decision is not final yet
    dtype = index_dtype(board)
    label = np.full(n, -1, dtype=dtype)
    size = np.zeros(n, dtype=dtype)
    balance = np.zeros(n + 1, dtype=dtype)
    for colour, sign in ((1, 1), (2, -1)):
        for group in groups(board, final, colour):
            label[group] = group[0]
            size[group[0]] = len(group)
            if len(group) >= board.min_dolmen:
                balance[len(group)] += sign
    x = GameState(
        cells=jnp.asarray(cells),
        kinds=jnp.asarray(kinds),
        supply=jnp.int32(game.supply),
        empty=jnp.int32(game.empty),
        to_act=jnp.int32(game.to_act),
        pending=jnp.int32(game.pending),
        pending_colour=jnp.int8(game.pending_colour),
        label=jnp.asarray(label),
        size=jnp.asarray(size),
        dolmen_balance=jnp.asarray(balance),
    )
    return Carnac(board)._state(x, jnp.zeros(2, dtype=jnp.float32), jnp.bool_(False), jnp.int32(0))


def _core_positions(state: State) -> list[CoreState]:
    """The positions of a state (one, or every lane of a batch) as core GameStates, for drawing.

    A JAX state keeps no list of lying megaliths; they are paired again the way diagrams are
    (:func:`carnac_env.core.diagram.pair_lying_squares`), which draws the same picture.
    """
    from carnac_env.core.diagram import pair_lying_squares

    x, board = state._x, state._board
    supply = np.asarray(x.supply).reshape(-1)
    fields = [np.asarray(getattr(x, name)).reshape(len(supply), -1) for name in ("cells", "kinds")]
    scalars = {name: np.asarray(getattr(x, name)).reshape(-1) for name in ("to_act", "pending", "pending_colour")}
    over = np.asarray(state.terminated).reshape(-1)
    positions = []
    for lane in range(len(supply)):
        core = CoreState(board)
        core.cells, core.kinds = (
            bytearray(fields[0][lane].astype(np.uint8)),
            bytearray(fields[1][lane].astype(np.uint8)),
        )
        core.lying = pair_lying_squares(board, core.cells, core.kinds) or []
        core.supply, core.empty = int(supply[lane]), core.kinds.count(0)
        core.to_act, core.pending = int(scalars["to_act"][lane]), int(scalars["pending"][lane])
        core.pending_colour = int(scalars["pending_colour"][lane])
        core.phase = 2 if over[lane] else (1 if core.pending >= 0 else 0)
        positions.append(core)
    return positions
