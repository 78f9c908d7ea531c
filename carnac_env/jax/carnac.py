"""The rules of Carnac as pure JAX functions: ``init``, ``step`` and ``observe`` on a :class:`State`.

This is a second expression of the rules in :mod:`carnac_env.core`, written for
``jax.jit`` and ``jax.vmap``: every array has a static shape, every rule is a branch-free
``jnp.where``, and nothing loops. ``tests/test_jax_engine.py`` checks it against the core
step by step (masks, observations, players, rewards) on thousands of random games per board.

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
* An illegal action (or one out of range) ends the game at once: -1 for the player who
  chose it, +1 for the other; the board is left as it was.

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
* ``_label[square]`` names the group a final square belongs to (one of its squares, the
  root), -1 for empty or pending squares; ``_size[root]`` is the group's size;
  ``_dolmen_balance[k]`` is Red's number of dolmens of ``k`` squares minus White's.
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

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from carnac_env.core.actions import (
    EAST_WEST_SHOWS_TOP,
    OPPONENT_ON_TOP,
    ORIENTATIONS,
    decline_number,
    place_orientation,
    place_square,
    tilt_base,
)
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import EMPTY, LYING, RED, STANDING, WHITE, GameState
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
    legal_mask,
    observation_planes,
)
from carnac_env.core.scoring import groups
from carnac_env.errors import CarnacError

ENV_ID = "carnac"
VERSION = "v0"

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class State:
    """One game (or, under ``vmap``, a batch of games) as arrays; immutable, a JAX pytree.

    Public attributes, as in ``pgx.State``:
        current_player: int32, the player to act (0 Red, 1 White); after the end, the last to act.
        observation: int8 ``(rows, cols, 9)``, the planes seen by ``current_player``.
        rewards: float32 ``(2,)``, each player's reward for the step that led here.
        terminated: bool, the game is over.
        truncated: bool, always False here (every game ends: each placement uses up the
            supply, and declines alternate with placements); a time limit is the caller's.
        legal_action_mask: bool ``(rows*cols*4 + 5,)``; all True once terminated.

    Private attributes (names start with ``_``; read them for debugging only): the step
    count, ``_cells`` (colour seen from above per square: 0 empty, 1 red, 2 white),
    ``_kinds`` (0 empty, 1 standing, 2 lying), ``_supply``, ``_empty``, ``_pending`` (the
    square awaiting a tilt decision, -1 if none), ``_pending_colours`` (what a tilt
    north/south and east/west would show), and the group bookkeeping used for scoring
    (``_label``, ``_size``, ``_dolmen_balance``; see the module docstring).
    """

    current_player: Array
    observation: Array
    rewards: Array
    terminated: Array
    truncated: Array
    legal_action_mask: Array
    _step_count: Array
    _cells: Array
    _kinds: Array
    _supply: Array
    _empty: Array
    _pending: Array
    _pending_colours: Array
    _label: Array
    _size: Array
    _dolmen_balance: Array

    @property
    def env_id(self) -> str:
        """The environment id, ``"carnac"`` (Pgx's ``State.env_id``)."""
        return ENV_ID

    def replace(self, **changes: Any) -> State:
        """A copy with some fields changed (like ``flax.struct`` / Pgx states)."""
        return dataclasses.replace(self, **changes)

    def to_svg(self, *, scale: float = 1.0) -> str:
        """An SVG picture of the board (of every board, in a grid, for a batch of states).

        Red and white squares show the colour seen from above; a standing megalith is drawn
        as a raised block with a dark rim, a lying one as a flat tile; the megalith awaiting
        a tilt decision has a dashed gold outline.
        """
        rows, cols = self.observation.shape[-3], self.observation.shape[-2]
        cells = np.asarray(self._cells).reshape(-1, rows, cols)
        kinds = np.asarray(self._kinds).reshape(-1, rows, cols)
        pending = np.asarray(self._pending).reshape(-1)
        games = cells.shape[0]
        per_row = int(np.ceil(np.sqrt(games)))
        unit, gap = 24 * scale, 12 * scale
        width_one, height_one = cols * unit, rows * unit
        grid_rows = -(-games // per_row)
        width = per_row * (width_one + gap) + gap
        height = grid_rows * (height_one + gap) + gap
        fills = {1: "#c0392b", 2: "#f4f1ea"}
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
            f'viewBox="0 0 {width:g} {height:g}">',
            f'<rect width="{width:g}" height="{height:g}" fill="#6b8e5a"/>',
        ]
        for g in range(games):
            ox = gap + (g % per_row) * (width_one + gap)
            oy = gap + (g // per_row) * (height_one + gap)
            for r in range(rows):
                for c in range(cols):
                    x, y = ox + c * unit, oy + r * unit
                    square = f'<rect x="{x:g}" y="{y:g}" width="{unit:g}" height="{unit:g}"'
                    parts.append(square + ' fill="#a9b88f" stroke="#55694a"/>')
                    colour, kind = int(cells[g, r, c]), int(kinds[g, r, c])
                    if kind == EMPTY:
                        continue
                    inset = unit * (0.12 if kind == STANDING else 0.04)
                    rim = ' stroke="#222" stroke-width="2"' if kind == STANDING else ' stroke="#555"'
                    if pending[g] == r * cols + c:
                        rim = ' stroke="#d4a017" stroke-width="3" stroke-dasharray="3,2"'
                    parts.append(
                        f'<rect x="{x + inset:g}" y="{y + inset:g}" width="{unit - 2 * inset:g}" '
                        f'height="{unit - 2 * inset:g}" fill="{fills[colour]}"{rim}/>'
                    )
        parts.append("</svg>")
        return "".join(parts)

    def save_svg(self, filename: str, *, scale: float = 1.0) -> None:
        """Write :meth:`to_svg` to ``filename`` (Pgx's ``State.save_svg``), atomically
        (:func:`carnac_env._files.write_text`)."""
        from carnac_env._files import write_text

        write_text(filename, self.to_svg(scale=scale))

    def _repr_html_(self) -> str:
        return self.to_svg()


jax.tree_util.register_dataclass(State, data_fields=[f.name for f in dataclasses.fields(State)], meta_fields=[])


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
        n = self.board.squares
        # The core's tables (Board.arrays), with "off the board" (-1) as square n: an index
        # that jnp.take(mode="fill") reads as occupied and .at[...](mode="drop") skips, where
        # -1 would wrap round to the last square.
        arrays = self.board.arrays
        self._tilt = np.where(arrays.tilt_squares < 0, n, arrays.tilt_squares).astype(np.int32)
        self._neighbours = np.where(arrays.neighbours < 0, n, arrays.neighbours).astype(np.int32)
        self._index_dtype = index_dtype(self.board)

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
        n = self.board.squares
        mask = jnp.concatenate([jnp.ones(tilt_base(n), dtype=jnp.bool_), jnp.zeros(5, dtype=jnp.bool_)])
        state = State(
            current_player=jnp.int32(0),
            observation=jnp.zeros(self.observation_shape, dtype=jnp.int8),
            rewards=jnp.zeros(2, dtype=jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=mask,
            _step_count=jnp.int32(0),
            _cells=jnp.zeros(n, dtype=jnp.int8),
            _kinds=jnp.zeros(n, dtype=jnp.int8),
            _supply=jnp.int32(self.board.megaliths),
            _empty=jnp.int32(n),
            _pending=jnp.int32(-1),
            _pending_colours=jnp.zeros(2, dtype=jnp.int8),
            _label=jnp.full(n, -1, dtype=self._index_dtype),
            _size=jnp.zeros(n, dtype=self._index_dtype),
            _dolmen_balance=jnp.zeros(n + 1, dtype=self._index_dtype),
        )
        return state.replace(observation=self.observe(state))

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
        legal = (action == clipped) & state.legal_action_mask[clipped]
        illegal = ~done & ~legal
        play = ~done & legal
        # _play leaves the board alone unless ``play``; only the turn fields need choosing here
        played = self._play(state, clipped, play)
        penalty = jnp.where(jnp.arange(2) == state.current_player, -1.0, 1.0).astype(jnp.float32)
        terminated = jnp.where(play, played.terminated, state.terminated | illegal)
        state = played.replace(
            current_player=jnp.where(play, played.current_player, state.current_player),
            rewards=jnp.where(illegal, penalty, jnp.where(play, played.rewards, 0.0)).astype(jnp.float32),
            terminated=terminated,
            legal_action_mask=jnp.where(play, played.legal_action_mask, state.legal_action_mask) | terminated,
            _step_count=state._step_count + (~done).astype(jnp.int32),
            _pending=jnp.where(play, played._pending, state._pending),
            _pending_colours=jnp.where(play, played._pending_colours, state._pending_colours),
        )
        return state.replace(observation=self.observe(state))

    def observe(self, state: State, player_id: Array | None = None) -> Array:
        """The ``(rows, cols, 9)`` int8 planes of ``state`` seen by ``player_id``.

        By default the player to act (``state.current_player``). The same planes as
        :func:`carnac_env.core.observation.observation_planes`: 0 own colour, 1 opponent
        colour, 2 standing, 3 lying, 4 megalith awaiting a tilt decision, 5/6 squares a
        legal tilt would cover with own/opponent colour, 7 all ones if ``player_id`` is to
        act, 8 the supply left.
        """
        player = state.current_player if player_id is None else jnp.asarray(player_id, dtype=jnp.int32)
        n = self.board.squares
        squares = jnp.arange(n)
        cells, kinds = state._cells, state._kinds
        own, opponent = (player + RED).astype(jnp.int8), (WHITE - player).astype(jnp.int8)
        active = (state._pending >= 0) & ~state.terminated
        targets = jnp.asarray(self._tilt)[jnp.maximum(state._pending, 0)].reshape(8)  # 2 squares per direction
        base = tilt_base(n)
        open_tilts = jnp.repeat(state.legal_action_mask[base : base + 4] & active, 2)  # legal tilts
        shows = state._pending_colours[jnp.array([0, 0, 1, 1, 0, 0, 1, 1])]  # colour of each target
        no_tilt = jnp.zeros(n, dtype=jnp.int8)
        planes = {
            OWN: cells == own,
            OPPONENT: cells == opponent,
            STANDING_PLANE: kinds == STANDING,
            LYING_PLANE: kinds == LYING,
            AWAITING: active & (squares == state._pending),
            TILT_OWN: no_tilt.at[targets].max((open_tilts & (shows == own)).astype(jnp.int8), mode="drop"),
            TILT_OPPONENT: no_tilt.at[targets].max((open_tilts & (shows == opponent)).astype(jnp.int8), mode="drop"),
            TO_ACT: jnp.broadcast_to(~state.terminated & (state.current_player == player), (n,)),
            SUPPLY: jnp.broadcast_to(state._supply, (n,)),
        }
        obs = jax.lax.stop_gradient(jnp.stack([planes[p].astype(jnp.int8) for p in range(NUM_PLANES)], axis=-1))
        return obs.reshape(self.observation_shape)

    def from_core(self, game: GameState) -> State:
        """:func:`from_core`, checking that ``game`` is played on this env's board and rules."""
        if game.board.rules() != self.board.rules():
            raise CarnacError(
                f"the game is played on {game.board.rules()}, but this env plays {self.board.rules()}; "
                "build the env with Carnac(game.board)"
            )
        return from_core(game)

    # ------------------------------------------------------------------ the rules
    def _play(self, state: State, action: Array, play: Array) -> State:
        """Apply a legal action to a state that is not over (no checks).

        With ``play`` False the board, supply and groups come back unchanged (the turn
        fields do not: :meth:`step` keeps the old ones)."""
        board = self.board
        n = board.squares
        base = tilt_base(n)
        squares = jnp.arange(n)
        tilt = jnp.asarray(self._tilt)
        mover = state.current_player
        is_place = play & (action < base)
        is_tilt = play & (action >= base) & (action < base + 4)
        is_decline = play & (action == decline_number(n))

        # place: the square, and the colours the orientation gives (see core.actions.tilt_colours)
        square = jnp.where(is_place, place_square(action), 0)
        orientation = place_orientation(action)
        own, other = mover + RED, WHITE - mover
        top = jnp.where(orientation & OPPONENT_ON_TOP, other, own)
        under = RED + WHITE - top
        ew_shows_top = (orientation & EAST_WEST_SHOWS_TOP) != 0
        north_south = jnp.where(ew_shows_top, under, top)
        east_west = jnp.where(ew_shows_top, top, under)

        # tilt: the pending megalith leaves its square and covers two
        origin = jnp.maximum(state._pending, 0)
        direction = jnp.clip(action - base, 0, 3)
        first, second = tilt[origin, direction, 0], tilt[origin, direction, 1]
        tilt_colour = state._pending_colours[direction & 1]

        placed_here = is_place & (squares == square)
        origin_here = is_tilt & (squares == origin)
        covered_here = is_tilt & ((squares == first) | (squares == second))
        cells = jnp.where(
            placed_here, top, jnp.where(origin_here, 0, jnp.where(covered_here, tilt_colour, state._cells))
        )
        kinds = jnp.where(
            placed_here, STANDING, jnp.where(origin_here, EMPTY, jnp.where(covered_here, LYING, state._kinds))
        )
        cells, kinds = cells.astype(jnp.int8), kinds.astype(jnp.int8)
        supply = state._supply - is_place.astype(jnp.int32)
        empty = state._empty - is_place.astype(jnp.int32) - is_tilt.astype(jnp.int32)

        # can the megalith just placed be tilted? (off-board squares read as occupied)
        targets = tilt[square]
        open_tilts = (jnp.take(kinds, targets[:, 0], mode="fill", fill_value=LYING) == EMPTY) & (
            jnp.take(kinds, targets[:, 1], mode="fill", fill_value=LYING) == EMPTY
        )
        last = supply == 0
        respond = is_place & (~last | board.last_tilt) & jnp.any(open_tilts)
        ended = (is_place & ~respond & (last | (empty == 0))) | ((is_tilt | is_decline) & last)
        # after a tilt the tilter places; after a decline the placer; a final placement leaves to_act
        next_player = jnp.where(is_tilt | (is_place & ended), mover, 1 - mover)

        label, size, balance = self._make_final(
            state,
            cells,
            do=(is_place & ~respond) | is_tilt | is_decline,
            first=jnp.where(is_place, square, jnp.where(is_tilt, first, origin)),
            second=jnp.where(is_tilt, second, jnp.where(is_place, square, origin)),
            new_squares=1 + is_tilt.astype(jnp.int32),
        )
        outcome = self._outcome(balance)
        rewards = jnp.where(ended, jnp.stack([outcome, -outcome]), 0).astype(jnp.float32)

        place_mask = jnp.repeat(kinds == EMPTY, ORIENTATIONS) & ~respond
        mask = jnp.concatenate([place_mask, open_tilts & respond, respond[None]]) | ended
        return state.replace(
            current_player=next_player.astype(jnp.int32),
            rewards=rewards,
            terminated=ended,
            legal_action_mask=mask,
            _cells=cells,
            _kinds=kinds,
            _supply=supply,
            _empty=empty,
            _pending=jnp.where(respond, square, -1).astype(jnp.int32),
            _pending_colours=jnp.where(respond, jnp.stack([north_south, east_west]), 0).astype(jnp.int8),
            _label=label,
            _size=size,
            _dolmen_balance=balance,
        )

    def _make_final(
        self, state: State, cells: Array, do: Array, first: Array, second: Array, new_squares: Array
    ) -> tuple[Array, Array, Array]:
        """Join squares ``first`` and ``second`` (the same square for a standing megalith)
        to the groups of their same-coloured final neighbours, if ``do``."""
        n = self.board.squares
        squares = jnp.arange(n)
        label, size = state._label, state._size
        colour = cells[first]
        around = jnp.concatenate([jnp.asarray(self._neighbours)[first], jnp.asarray(self._neighbours)[second]])
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
        return label, size, (state._dolmen_balance + change).astype(state._dolmen_balance.dtype)

    def _outcome(self, balance: Array) -> Array:
        """+1 if Red (player 0) wins on this dolmen balance, -1 if White wins, 0 for a draw."""
        sizes = jnp.arange(balance.shape[-1])
        more = jnp.sign(jnp.sum(balance, dtype=jnp.int32))
        largest_differing = jnp.max(jnp.where(balance != 0, sizes, 0))
        return jnp.where(more != 0, more, jnp.sign(balance[largest_differing])).astype(jnp.int32)


def index_dtype(board: Board) -> type:
    """The integer type of the group bookkeeping: int16 unless the board has 2**15 squares or more."""
    return np.int16 if board.squares < 2**15 - 1 else np.int32


def from_core(game: GameState) -> State:
    """A JAX :class:`State` for a core :class:`~carnac_env.core.GameState` (any position,
    including hand-built ones from ``GameState.from_diagram``).

    Step it with ``Carnac(game.board)``. The rewards are zero (they belong to the step that
    led to a position, which a GameState does not record) and so is the step count; a
    finished game gives a terminated state.
    """
    board = game.board
    n = board.squares
    cells = np.frombuffer(bytes(game.cells), dtype=np.uint8).astype(np.int8)
    kinds = np.frombuffer(bytes(game.kinds), dtype=np.uint8).astype(np.int8)
    final = cells.copy()
    if game.pending >= 0:
        final[game.pending] = 0  # the megalith awaiting a decision is not final yet
    dtype = index_dtype(board)
    label = np.full(n, -1, dtype=dtype)
    size = np.zeros(n, dtype=dtype)
    balance = np.zeros(n + 1, dtype=dtype)
    for colour, sign in ((RED, 1), (WHITE, -1)):
        for group in groups(board, final, colour):
            label[group] = group[0]
            size[group[0]] = len(group)
            if len(group) >= board.min_dolmen:
                balance[len(group)] += sign
    mask = np.ones(board.num_actions, dtype=bool) if game.is_over else legal_mask(game).astype(bool)
    return State(
        current_player=jnp.int32(game.to_act),
        observation=jnp.asarray(observation_planes(game, game.to_act)),
        rewards=jnp.zeros(2, dtype=jnp.float32),
        terminated=jnp.bool_(game.is_over),
        truncated=jnp.bool_(False),
        legal_action_mask=jnp.asarray(mask),
        _step_count=jnp.int32(0),
        _cells=jnp.asarray(cells),
        _kinds=jnp.asarray(kinds),
        _supply=jnp.int32(game.supply),
        _empty=jnp.int32(game.empty),
        _pending=jnp.int32(game.pending),
        _pending_colours=jnp.asarray(np.array(game.pending_colours, dtype=np.int8)),
        _label=jnp.asarray(label),
        _size=jnp.asarray(size),
        _dolmen_balance=jnp.asarray(balance),
    )
