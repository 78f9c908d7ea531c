"""The rules of Carnac as a pure JAX game, in Pgx's shape: :class:`Game` on a :class:`GameState`.

``Game(board)`` has ``init``, ``step``, ``observe``, ``legal_action_mask``, ``is_terminal``
and ``returns``, each a few lines of branch-free ``jax.numpy`` with static shapes, so every
one may be wrapped in ``jax.jit`` and ``jax.vmap``. ``step`` plays a *legal* action of a game
that is not over; what every game shares (illegal actions, the finished game, step counts,
the observation after the move) is the environment's job, :class:`carnac_env.jax.env.Carnac`,
as in Pgx's ``core.Env``. This is a second expression of the rules in
:mod:`carnac_env.core`: the tables come from :attr:`Board.arrays
<carnac_env.core.boards.Board.arrays>`, the colours, the response and the end of the game
from :mod:`carnac_env.core.arithmetic` (the very functions the core and the batched engine
call), and ``tests/jax_engine/test_jax_engine.py`` checks the whole engine against the core step by step.

Dolmen scoring without connected components at the end
------------------------------------------------------
The winner depends on the dolmens, the connected groups of one colour. Finding connected
components inside a traced function needs an iterative method (label propagation under
``lax.while_loop``, or pointer jumping); under ``vmap`` such a loop runs until the slowest
lane of the batch has converged, and a ``lax.cond`` that would skip it on steps that do not
end the game turns into a ``select`` that runs both sides. With a large batch some game ends
on almost every step, so the batch would pay for a full propagation (16-17 rounds for the
slowest of 1,024 random finished games on medium and le_menec) on nearly every step.

This engine keeps the groups up to date instead, as a union of labels, which costs a fixed
handful of vector operations per step and no loop at all (measured: one propagation pass
over 1,024 finished games costs 3-9x a whole step of this engine on a CPU; see
``benchmarks/jax_throughput.py --label-propagation`` and docs/jax.md). The facts that make
it cheap:

* A square's colour only changes when a megalith is placed or tilted, and only the megalith
  placed last can be tilted. So a square joins the scored picture once, when its megalith
  becomes *final* (placed with no tilt possible, declined, or tilted onto it), and never
  leaves it. The megalith awaiting a decision is not labelled until that decision.
* ``label[square]`` names the group a final square belongs to (one of its squares, the
  root), -1 for empty or pending squares; ``size[root]`` is the group's size;
  ``dolmen_balance[k]`` is Red's number of dolmens of ``k`` squares minus White's.
* Making one or two squares final (a tilt covers two adjacent squares of one colour) merges
  the groups of their at most 8 same-coloured final neighbours: the distinct neighbour
  labels are relabelled to the new root in one comparison against the board, their sizes
  are summed, and the dolmen balance updated.
* The winner follows from the balance alone: more dolmens (groups of at least
  ``min_dolmen`` squares) wins, the sign of the balance's sum; on equal counts the largest
  size at which the players' counts differ decides, in favour of the player with more
  dolmens of that size, which is exactly the core's comparison of the sorted size lists
  position by position (the lists agree above that size, and there the other list has a
  smaller entry where this one still has one of that size).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from carnac_env.core.actions import ORIENTATIONS, decline_number, place_orientation, place_square, tilt_base
from carnac_env.core.arithmetic import (
    RED,
    game_ends,
    gets_response,
    opponent_colour,
    own_colour,
    tilt_colour,
    tilt_colours,
)
from carnac_env.core.boards import Board
from carnac_env.core.game import EMPTY, LYING, STANDING
from carnac_env.core.observation import (
    AWAITING,
    LYING_PLANE,
    NUM_PLANES,
    OPPONENT,
    OWN,
    STANDING_PLANE,
    SUPPLY,
    TILT_OPPONENT,
    TILT_OWN,
    TO_ACT,
)

Array = jax.Array

#: The four directions, and the direction of each of the 8 tilt landing squares (2 per direction).
_DIRECTIONS = np.arange(4)
_LANDING_DIRECTIONS = np.repeat(_DIRECTIONS, 2)


class GameState(NamedTuple):
    """One game as arrays (under ``vmap``, a batch of them); what :class:`Game` reads and writes.

    Attributes:
        cells: ``(S,)`` int8, the colour seen from above (0 empty, 1 red, 2 white).
        kinds: ``(S,)`` int8, 0 empty, 1 standing, 2 lying.
        supply: int32, megaliths not yet placed.
        empty: int32, empty squares.
        to_act: int32, the player to act (0 Red, 1 White); after the end, the last to act.
        pending: int32, the square of the megalith awaiting a tilt decision, -1 if none.
        pending_colour: int8, the colour a north/south tilt of it shows (east/west shows the
            other), 0 if none.
        label, size, dolmen_balance: the group bookkeeping of the module docstring.
    """

    cells: Array
    kinds: Array
    supply: Array
    empty: Array
    to_act: Array
    pending: Array
    pending_colour: Array
    label: Array
    size: Array
    dolmen_balance: Array


def index_dtype(board: Board) -> type:
    """The integer type of the group bookkeeping (labels -1..squares-1, sizes up to squares): the
    smallest that holds them, int8 below 127 squares (every official board), so the state a
    batch carries from step to step stays small."""
    if board.squares < 2**7 - 1:
        return np.int8
    return np.int16 if board.squares < 2**15 - 1 else np.int32


class Game:
    """The rules of one board as pure functions of a :class:`GameState`.

    Args:
        board: the (validated) board; its size is static, so every board gets its own
            compiled functions.
    """

    def __init__(self, board: Board) -> None:
        self.board = board
        n = board.squares
        # The core's tables (Board.arrays), with "off the board" (-1) as square n: an index
        # that jnp.take(mode="fill") reads as occupied and .at[...](mode="drop") skips, where
        # -1 would wrap round to the last square.
        arrays = board.arrays
        self.tilt_squares = np.where(arrays.tilt_squares < 0, n, arrays.tilt_squares).astype(np.int32)
        self.neighbours = np.where(arrays.neighbours < 0, n, arrays.neighbours).astype(np.int32)
        self.index_dtype = index_dtype(board)
        self.observation_shape = (board.rows, board.cols, NUM_PLANES)

    # ------------------------------------------------------------------ Pgx's Game surface
    def init(self) -> GameState:
        """The start: empty board, full supply, Red to place."""
        n = self.board.squares
        return GameState(
            cells=jnp.zeros(n, dtype=jnp.int8),
            kinds=jnp.zeros(n, dtype=jnp.int8),
            supply=jnp.int32(self.board.megaliths),
            empty=jnp.int32(n),
            to_act=jnp.int32(0),
            pending=jnp.int32(-1),
            pending_colour=jnp.int8(0),
            label=jnp.full(n, -1, dtype=self.index_dtype),
            size=jnp.zeros(n, dtype=self.index_dtype),
            dolmen_balance=jnp.zeros(n + 1, dtype=self.index_dtype),
        )

    def step(self, state: GameState, action: Array) -> GameState:
        """Play ``action``, a legal action of a game that is not over (unchecked)."""
        return self.play(state, action, jnp.bool_(True))

    def play(self, state: GameState, action: Array, apply: Array) -> GameState:
        """:meth:`step` if ``apply``, else ``state`` unchanged: what the environment calls,
        so that a forfeit or a finished game costs no second pass over the state.

        Every field is written once, by a select between the place, the tilt and the
        decline (Pgx's ``lax.select`` over branches): the squares a move changes are found
        by comparison with ``arange``, not by scatters, and the tables are indexed only at
        a handful of squares, so the cost is the same for every action and every lane.
        """
        n = self.board.squares
        base, decline = tilt_base(n), decline_number(n)
        squares = jnp.arange(n, dtype=jnp.int32)
        # computed once here: without the barrier XLA may fuse whatever produced the action (a
        # sampler's reduction over the mask) into every board-wide loop below, once per square
        action, apply = jax.lax.optimization_barrier((jnp.asarray(action, dtype=jnp.int32), apply))
        is_place = apply & (action < base)
        is_tilt = apply & (action >= base) & (action < decline)
        is_decline = apply & (action >= decline)
        mover = state.to_act
        # the place: its square, colours, and whether it awaits a response
        square = place_square(jnp.minimum(action, base - 1))
        top, north_south, _ = tilt_colours(mover, place_orientation(action))
        supply = state.supply - is_place.astype(jnp.int32)
        respond = gets_response(jnp.any(self._fits(state.kinds, square)), supply, self.board.last_tilt)
        # (the landing squares are never the placed square, so the kinds before it are the same there)
        # the tilt (or decline) of the pending megalith
        origin = jnp.maximum(state.pending, 0)
        landing = jnp.asarray(self.tilt_squares)[origin, jnp.clip(action - base, 0, 3)]
        tilted = tilt_colour(state.pending_colour, jnp.clip(action - base, 0, 3))
        # the board: one square set (the placed one, or the tilted one emptied), two covered by a tilt
        here = squares == jnp.where(is_place, square, jnp.where(is_tilt, origin, -1))
        covered = is_tilt & ((squares == landing[0]) | (squares == landing[1]))
        cells = jnp.where(covered, tilted, jnp.where(here, jnp.where(is_place, top, 0), state.cells))
        kinds = jnp.where(covered, LYING, jnp.where(here, jnp.where(is_place, STANDING, EMPTY), state.kinds))
        empty = state.empty - (is_place | is_tilt).astype(jnp.int32)
        placed_pending = jnp.where(respond, square, -1)
        pending = jnp.where(is_place, placed_pending, jnp.where(is_tilt | is_decline, -1, state.pending))
        pending_colour = jnp.where(
            is_place, jnp.where(respond, north_south, 0), jnp.where(is_tilt | is_decline, 0, state.pending_colour)
        )
        ended = game_ends(placed_pending, supply, empty)  # a final placement keeps its placer
        switch = (is_place & ~ended) | is_decline
        after = state._replace(
            cells=cells.astype(jnp.int8),
            kinds=kinds.astype(jnp.int8),
            supply=supply,
            empty=empty,
            to_act=jnp.where(switch, 1 - mover, mover).astype(jnp.int32),
            pending=pending.astype(jnp.int32),
            pending_colour=pending_colour.astype(jnp.int8),
        )
        # the squares that became final: the placed one (no response), the two covered, the declined one
        do = (is_place & ~respond) | is_tilt | is_decline
        first = jnp.where(is_place, square, jnp.where(is_tilt, landing[0], origin))
        second = jnp.where(is_tilt, landing[1], first)
        colour = jnp.where(is_place, top, jnp.where(is_tilt, tilted, state.cells[origin]))
        label, size, balance = self._join_groups(after, do, first, second, colour, 1 + is_tilt.astype(jnp.int32))
        return after._replace(label=label, size=size, dolmen_balance=balance)

    def observe(self, state: GameState, player: Array, over: Array | None = None) -> Array:
        """The ``(rows, cols, 9)`` int8 planes of ``state`` seen by ``player``: those of
        :func:`carnac_env.core.observation.observation_planes`. ``over`` (by default
        :meth:`is_terminal`) says whether the game has ended, for an environment that ends
        games for other reasons too (a forfeit): then no one is to act and nothing pending."""
        n = self.board.squares
        squares = jnp.arange(n)
        cells, kinds = state.cells, state.kinds
        own, opponent = own_colour(player).astype(jnp.int8), opponent_colour(player).astype(jnp.int8)
        over = self.is_terminal(state) if over is None else over
        responding = (state.pending >= 0) & ~over
        landing = jnp.asarray(self.tilt_squares)[jnp.maximum(state.pending, 0)].reshape(8)  # 2 squares per direction
        open_tilts = jnp.repeat(self._open_tilts(state) & responding, 2)
        shows = tilt_colour(state.pending_colour, _LANDING_DIRECTIONS)
        no_tilt = jnp.zeros(n, dtype=jnp.int8)
        planes = {
            OWN: cells == own,
            OPPONENT: cells == opponent,
            STANDING_PLANE: kinds == STANDING,
            LYING_PLANE: kinds == LYING,
            AWAITING: responding & (squares == state.pending),
            TILT_OWN: no_tilt.at[landing].max((open_tilts & (shows == own)).astype(jnp.int8), mode="drop"),
            TILT_OPPONENT: no_tilt.at[landing].max((open_tilts & (shows == opponent)).astype(jnp.int8), mode="drop"),
            TO_ACT: jnp.broadcast_to(~over & (state.to_act == player), (n,)),
            SUPPLY: jnp.broadcast_to(state.supply, (n,)),
        }
        obs = jnp.stack([planes[p].astype(jnp.int8) for p in range(NUM_PLANES)], axis=-1)
        return jax.lax.stop_gradient(obs).reshape(self.observation_shape)

    def legal_action_mask(self, state: GameState) -> Array:
        """The legal actions of the player to act (all False once the game is over): the
        core's :meth:`~carnac_env.core.game.GameState.moves`."""
        responding = state.pending >= 0
        placing = ~responding & ~self.is_terminal(state)
        places = jnp.repeat(state.kinds == EMPTY, ORIENTATIONS) & placing
        return jnp.concatenate([places, self._open_tilts(state) & responding, responding[None]])

    def is_terminal(self, state: GameState) -> Array:
        """Whether the game is over: the core's one end-of-game rule."""
        return game_ends(state.pending, state.supply, state.empty)

    def returns(self, state: GameState) -> Array:
        """``(2,)`` float32: +1/-1/0 for Red and White once the game is over, zeros before."""
        outcome = self._outcome(state.dolmen_balance)
        return jnp.where(self.is_terminal(state), jnp.stack([outcome, -outcome]), 0).astype(jnp.float32)

    # ------------------------------------------------------------------ the moves
    def _open_tilts(self, state: GameState) -> Array:
        """``(4,)``: the tilt rule for the pending megalith (both landing squares on the board
        and empty; off-board squares read as occupied)."""
        return self._fits(state.kinds, jnp.maximum(state.pending, 0))

    def _fits(self, kinds: Array, square: Array) -> Array:
        landing = jnp.asarray(self.tilt_squares)[square]
        first = jnp.take(kinds, landing[:, 0], mode="fill", fill_value=LYING)
        second = jnp.take(kinds, landing[:, 1], mode="fill", fill_value=LYING)
        return (first == EMPTY) & (second == EMPTY)

    # ------------------------------------------------------------------ dolmens
    def _join_groups(
        self, state: GameState, do: Array, first: Array, second: Array, colour: Array, new_squares: Array
    ) -> tuple[Array, Array, Array]:
        """Join squares ``first`` and ``second`` (the same square for a standing megalith) of
        ``colour`` to the groups of their same-coloured final neighbours, if ``do``."""
        n = self.board.squares
        squares = jnp.arange(n)
        label, size, cells = state.label, state.size, state.cells
        neighbours = jnp.asarray(self.neighbours)
        around = jnp.concatenate([neighbours[first], neighbours[second]])
        around_label = jnp.take(label, around, mode="fill", fill_value=-1)
        joins = (around_label >= 0) & (jnp.take(cells, around, mode="fill", fill_value=0) == colour)
        # count each neighbouring group once: drop a label already seen earlier in the list
        earlier = jnp.tril(jnp.ones((8, 8), dtype=jnp.bool_), k=-1)
        repeated = jnp.any(earlier & joins[None, :] & (around_label[:, None] == around_label[None, :]), axis=1)
        joins = joins & ~repeated & do
        joined_size = jnp.where(joins, jnp.take(size, jnp.maximum(around_label, 0)), 0).astype(jnp.int32)
        new_size = new_squares + jnp.sum(joined_size)
        relabel = jnp.any(joins[None, :] & (label[:, None] == around_label[None, :]), axis=1)
        members = relabel | (do & ((squares == first) | (squares == second)))
        label = jnp.where(members, first, label).astype(label.dtype)
        size = jnp.where(do & (squares == first), new_size, size).astype(size.dtype)
        # the dolmens (groups of at least min_dolmen) that disappear into the new group, and the new one
        sizes = jnp.arange(n + 1)
        change = (do & (sizes == new_size)).astype(jnp.int32) - jnp.sum(
            joins[:, None] & (sizes[None, :] == joined_size[:, None]), axis=0, dtype=jnp.int32
        )
        change = jnp.where(sizes >= self.board.min_dolmen, change * jnp.where(colour == RED, 1, -1), 0)
        return label, size, (state.dolmen_balance + change).astype(state.dolmen_balance.dtype)

    @staticmethod
    def _outcome(balance: Array) -> Array:
        """+1 if Red (player 0) wins on this dolmen balance, -1 if White wins, 0 for a draw."""
        sizes = jnp.arange(balance.shape[-1])
        more = jnp.sign(jnp.sum(balance, dtype=jnp.int32))
        largest_differing = jnp.max(jnp.where(balance != 0, sizes, 0))
        return jnp.where(more != 0, more, jnp.sign(balance[largest_differing])).astype(jnp.int32)
