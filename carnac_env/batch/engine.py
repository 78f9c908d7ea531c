"""Thousands of Carnac games at once, as numpy arrays: :class:`BatchGame`.

>>> from carnac_env.batch import BatchGame
>>> games = BatchGame(board="medium", num_envs=1024, seed=0)
>>> step = games.reset()                       # a BatchStep
>>> step = games.step(games.sample_actions())  # random legal actions, one per game

Every call plays one action in each of the ``num_envs`` games. A :class:`BatchStep` holds

* ``observation`` ``(N, rows, cols, 9)`` int8: the planes of
  :func:`carnac_env.core.observation.observation_planes`, seen by the player to act
  (so plane 7, "to act", is all ones);
* ``action_mask`` ``(N, rows*cols*4 + 5)`` bool: the legal actions of the player to act;
* ``current_player`` ``(N,)`` int8: 0 (Red) or 1 (White), the player to act;
* ``rewards`` ``(N, 2)`` float32: +1/-1/0 per player for the games that ended on this step;
* ``terminated`` ``(N,)`` bool: which games ended on this step.

**Auto-reset.** A game that ends on a step is replaced at once by a fresh game: that step's
``terminated[i]`` is True and ``rewards[i]`` holds the finished game's result, while
``observation[i]``, ``action_mask[i]`` and ``current_player[i]`` already belong to the new
game (Red to place on an empty board). :meth:`BatchGame.step` with ``final_observer`` also
returns the finished games' last observations.

**The rules are the core's.** This module re-expresses :mod:`carnac_env.core.game` with
array operations; tests/test_batch.py plays tens of thousands of random games on every
board step by step against the core and compares masks, observations, players and rewards.
:meth:`BatchGame.get_state` and :meth:`BatchGame.set_state` convert one game to and from a
core :class:`~carnac_env.core.game.GameState` (hand-built positions, analysis).

**Illegal actions** raise :class:`~carnac_env.errors.IllegalActionError` naming the env
indices, the actions and why; no game changes.

**What ``seed`` does.** Carnac has no chance element: the games themselves never use
randomness. ``seed`` only seeds :attr:`BatchGame.np_random`, the generator behind
:meth:`BatchGame.sample_actions` (uniform random legal actions, for random opponents,
rollouts and benchmarks). Two BatchGames with the same seed, fed the same actions (or their
own samples), produce identical steps.

**Backends.** The engine runs on numpy alone. With numba installed (``pip install
carnac-env[accel]``) the same state arrays are stepped by compiled loops
(:mod:`carnac_env.batch._numba`), about 3-10x faster; ``backend="auto"`` (the default)
picks numba when it imports, ``"numpy"``/``"numba"`` force one. Both paths give identical
results, samples included, and are both checked against the core. docs/performance.md has
the numbers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import LYING, OVER, PLACE, RESPOND, STANDING, GameState
from carnac_env.core.observation import NUM_PLANES, SUPPLY, TILT_OPPONENT, TILT_OWN, TO_ACT
from carnac_env.errors import CarnacError, IllegalActionError

__all__ = ["BatchGame", "BatchStep", "batch_scores"]

AWAITING = 4
#: How many illegal actions an error message lists before summarising the rest.
_ERRORS_SHOWN = 5


class BatchStep(NamedTuple):
    """What :meth:`BatchGame.reset` and :meth:`BatchGame.step` return (fresh arrays every call).

    Attributes:
        observation: ``(N, rows, cols, 9)`` int8, the planes seen by the player to act
            (``None`` only from ``step(..., observe=False)``).
        action_mask: ``(N, rows*cols*4 + 5)`` bool, the legal actions of the player to act
            (``None`` only from ``step(..., observe=False)``).
        current_player: ``(N,)`` int8, the player to act (0 Red, 1 White).
        rewards: ``(N, 2)`` float32, each player's result (+1 win, -1 loss, 0 draw) in the
            games that ended on this step, 0 elsewhere.
        terminated: ``(N,)`` bool, the games that ended on this step (and were replaced by
            fresh games; see the module docstring).
        final_observation: only when :meth:`BatchGame.step` is given ``final_observer``:
            ``(N, rows, cols, 9)`` int8 holding, in the rows of the terminated games, the
            final position seen by that observer (zeros elsewhere); otherwise ``None``.
    """

    observation: np.ndarray | None
    action_mask: np.ndarray | None
    current_player: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    final_observation: np.ndarray | None = None


def _board_tables(board: Board) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per square and direction, the two squares a tilt covers (``board.squares``, an
    always-blocked padding square, where that runs off the board); and the board's edges
    (pairs of orthogonally adjacent squares) as a ``(2, E)`` array."""
    off = board.squares
    first = np.full((board.squares, 4), off, dtype=np.intp)
    second = np.full((board.squares, 4), off, dtype=np.intp)
    edges = []
    for square, pairs in enumerate(board.tilt_squares):
        for direction, pair in enumerate(pairs):
            if pair is not None:
                first[square, direction], second[square, direction] = pair
        edges.extend((square, other) for other in board.neighbours[square] if other > square)
    return first, second, np.asarray(edges, dtype=np.intp).reshape(-1, 2).T.copy()


def batch_scores(board: Board, cells: np.ndarray) -> np.ndarray:
    """The winner of each of ``K`` finished positions, by the core's scoring rules.

    Args:
        board: the board the positions are on.
        cells: ``(K, squares)`` cell colours (0 empty, 1 red, 2 white).

    Returns:
        ``(K,)`` int8: 0 Red wins, 1 White wins, -1 a draw.
    """
    _, _, edges = _board_tables(board)
    return _winners(np.asarray(cells, dtype=np.int8), edges, board.min_dolmen)


def _winners(cells: np.ndarray, edges: np.ndarray, min_dolmen: int) -> np.ndarray:
    """Dolmens by union-find over same-coloured edges (hook the larger root under the
    smaller, then compress paths fully, until every such edge joins one root), then the
    tie-break chain of :func:`carnac_env.core.scoring.compare_dolmens`: more dolmens wins,
    then the sizes from largest down; identical lists draw."""
    count, squares = cells.shape
    if count == 0:
        return np.zeros(0, dtype=np.int8)
    flat = cells.reshape(-1)
    offset = (np.arange(count) * squares)[:, None]
    u = (offset + edges[0]).reshape(-1)
    v = (offset + edges[1]).reshape(-1)
    colour_u = flat[u]
    joined = (colour_u == flat[v]) & (colour_u > 0)
    u, v = u[joined], v[joined]
    parent = np.arange(count * squares)
    while len(u):
        root_u, root_v = parent[u], parent[v]
        apart = root_u != root_v
        if not apart.any():
            break
        u, v, root_u, root_v = u[apart], v[apart], root_u[apart], root_v[apart]
        np.minimum.at(parent, np.maximum(root_u, root_v), np.minimum(root_u, root_v))
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    sizes = np.bincount(parent[flat > 0], minlength=count * squares)
    root = parent == np.arange(count * squares)
    keys = []
    for colour in (1, 2):
        dolmens = np.where(root & (flat == colour) & (sizes >= min_dolmen), sizes, 0).reshape(count, squares)
        dolmens = -np.sort(-dolmens, axis=1)
        keys.append(np.concatenate([(dolmens > 0).sum(axis=1, keepdims=True), dolmens], axis=1))
    diff = keys[0] - keys[1]
    decisive = diff[np.arange(count), np.argmax(diff != 0, axis=1)]
    return np.where(decisive > 0, 0, np.where(decisive < 0, 1, -1)).astype(np.int8)


def _load_backend(backend: str) -> Any:
    """The compiled kernels for ``backend``, or None for the numpy path."""
    if backend == "numpy":
        return None
    if backend not in ("auto", "numba"):
        raise CarnacError(f"unknown backend {backend!r}; expected 'auto', 'numpy' or 'numba'")
    try:
        from carnac_env.batch import _numba
    except ImportError:
        if backend == "numba":
            raise CarnacError(
                "backend='numba' needs numba: pip install 'carnac-env[accel]' (or use backend='numpy')"
            ) from None
        return None
    return _numba


class BatchGame:
    """``num_envs`` games of Carnac on one board, stored as arrays and played in lockstep.

    Args:
        board: a board name, ``"custom"``, or a :class:`~carnac_env.core.boards.Board`.
        num_envs: how many games (>= 1).
        seed: seeds :attr:`np_random`, used only by :meth:`sample_actions` (the rules have
            no randomness); ``None`` for fresh entropy.
        backend: ``"numpy"``, ``"numba"`` (the compiled accelerator; needs the ``accel``
            extra) or ``"auto"`` (numba when it is installed, numpy otherwise). Both play
            the same rules and, for the same seed, the same samples.
        **rules: rules options, as for :func:`carnac_env.core.make_board`.

    Attributes:
        board: the :class:`~carnac_env.core.boards.Board`.
        num_envs: the number of games.
        num_actions: ``rows*cols*4 + 5``.
        observation_shape: ``(rows, cols, 9)`` of one game's observation.
        np_random: the generator behind :meth:`sample_actions`.
        backend: ``"numpy"`` or ``"numba"``, the path in use.

    Raises:
        CarnacError: an unknown board or rules option, an impossible board, a bad
            ``num_envs`` or ``seed``.
    """

    def __init__(
        self,
        board: str | Board = "medium",
        num_envs: int = 1,
        seed: int | None = 0,
        backend: str = "auto",
        **rules: Any,
    ) -> None:
        self.board = make_board(board, **rules)
        self._kernels = _load_backend(backend)
        self.backend = "numpy" if self._kernels is None else "numba"
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise CarnacError(f"num_envs={num_envs!r} must be an integer >= 1")
        self.num_envs = int(num_envs)
        self.num_actions = self.board.num_actions
        self.observation_shape = (self.board.rows, self.board.cols, NUM_PLANES)
        self.np_random = self._make_rng(seed)
        b, n = self.board, self.num_envs
        squares = b.squares
        self._squares = squares
        self._tilt_first, self._tilt_second, self._edges = _board_tables(b)
        self._neighbours = np.full((squares, 4), -1, dtype=np.intp)
        for square, adjacent in enumerate(b.neighbours):
            self._neighbours[square, : len(adjacent)] = adjacent
        self._arange = np.arange(n)
        # Game state. ``kinds`` has one padding column (always blocked) for off-board tilts.
        self._cells = np.zeros((n, squares), dtype=np.int8)
        self._kinds = np.zeros((n, squares + 1), dtype=np.int8)
        self._kinds[:, squares] = 3
        self._supply = np.zeros(n, dtype=np.int16)
        self._empty = np.zeros(n, dtype=np.int16)
        self._phase = np.zeros(n, dtype=np.int8)
        self._to_act = np.zeros(n, dtype=np.int8)
        self._pending = np.full(n, -1, dtype=np.intp)
        self._pending_ns = np.zeros(n, dtype=np.int8)  # colour a north/south tilt shows; east/west shows 3 - it
        self._tilt_ok = np.zeros((n, 4), dtype=bool)  # legal tilt directions of the pending megalith
        self._lying = np.zeros((n, b.megaliths, 2), dtype=np.int16)
        self._num_lying = np.zeros(n, dtype=np.intp)
        # Planes 0-3 and 7 of both players' observations, kept up to date square by square:
        # _planes[p, i] is game i seen by player p. Planes 4-6 and 8 are added on output.
        self._planes = np.zeros((2, n, squares, NUM_PLANES), dtype=np.int8)
        # The place bits of the mask (4 per empty square); the respond bits are added on output.
        self._place_bits = np.zeros((n, self.num_actions), dtype=bool)
        self._reset_games(self._arange)

    @staticmethod
    def _make_rng(seed: int | None) -> np.random.Generator:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
            raise CarnacError(f"seed={seed!r} must be a non-negative integer or None")
        return np.random.default_rng(seed)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_kernels"] = None  # a module; reloaded from the backend name
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._kernels = _load_backend(self.backend)
        if self._kernels is None:
            self.backend = "numpy"

    def __repr__(self) -> str:
        return f"BatchGame(board={self.board.name!r}, num_envs={self.num_envs})"

    # ----------------------------------------------------------------- starting games
    def reset(self, seed: int | None = None) -> BatchStep:
        """Start ``num_envs`` fresh games (Red to place); with ``seed``, re-seed :attr:`np_random`."""
        if seed is not None:
            self.np_random = self._make_rng(seed)
        self._reset_games(self._arange)
        return self.observe()

    def _reset_games(self, envs: np.ndarray) -> None:
        if len(envs) == 0:
            return
        b = self.board
        self._cells[envs] = 0
        self._kinds[envs, : self._squares] = 0
        self._supply[envs] = b.megaliths
        self._empty[envs] = self._squares
        self._phase[envs] = PLACE
        self._to_act[envs] = 0
        self._pending[envs] = -1
        self._pending_ns[envs] = 0
        self._tilt_ok[envs] = False
        self._num_lying[envs] = 0
        self._planes[:, envs] = 0
        self._planes[:, envs, :, TO_ACT] = 1
        self._place_bits[envs, : 4 * self._squares] = True

    # ----------------------------------------------------------------- reading
    def observe(self) -> BatchStep:
        """The current observations, masks and players (rewards zero, nothing terminated)."""
        n = self.num_envs
        obs, mask = self._outputs()
        return BatchStep(obs, mask, self._to_act.copy(), np.zeros((n, 2), dtype=np.float32), np.zeros(n, dtype=bool))

    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        if self._kernels is None:
            return self._observations(), self._masks()
        n, width = self.num_envs, self._squares * NUM_PLANES
        obs = np.empty((n, width), dtype=np.int8)
        mask = np.empty((n, self.num_actions), dtype=bool)
        self._kernels.observe(
            self._to_act,
            self._supply,
            self._phase,
            self._pending,
            self._pending_ns,
            self._tilt_ok,
            self._tilt_first,
            self._tilt_second,
            self._planes.reshape(2 * n, width),
            self._place_bits,
            obs,
            mask,
        )
        return obs.reshape((self.num_envs, *self.observation_shape)), mask

    def _observations(self) -> np.ndarray:
        n, squares = self.num_envs, self._squares
        obs = self._planes[self._to_act, self._arange]  # (N, S, 9), a fresh array
        obs[:, :, SUPPLY] = self._supply[:, None]
        respond = np.flatnonzero(self._phase == RESPOND)
        if len(respond):
            flat = obs.reshape(-1)
            origin = self._pending[respond]
            flat[(respond * squares + origin) * NUM_PLANES + AWAITING] = 1
            ok = self._tilt_ok[respond]
            env_rows, direction = np.nonzero(ok)
            envs = respond[env_rows]
            origin = origin[env_rows]
            ns = self._pending_ns[envs]
            colour = np.where(direction & 1, 3 - ns, ns)
            plane = np.where(colour == self._to_act[envs] + 1, TILT_OWN, TILT_OPPONENT)
            for table in (self._tilt_first, self._tilt_second):
                flat[(envs * squares + table[origin, direction]) * NUM_PLANES + plane] = 1
        return obs.reshape((n, *self.observation_shape))

    def _masks(self) -> np.ndarray:
        mask = self._place_bits.copy()
        respond = np.flatnonzero(self._phase == RESPOND)
        if len(respond):
            base = 4 * self._squares
            mask[respond, :base] = False
            mask[respond, base : base + 4] = self._tilt_ok[respond]
            mask[respond, base + 4] = True
        return mask

    @property
    def current_player(self) -> np.ndarray:
        """``(N,)`` int8: the player to act in each game (a copy)."""
        return self._to_act.copy()

    def legal_mask(self) -> np.ndarray:
        """``(N, num_actions)`` bool: the legal actions now (a fresh array)."""
        return self._masks()

    # ----------------------------------------------------------------- playing
    def step(
        self,
        actions: Any,
        active: Any = None,
        final_observer: Any = None,
        observe: bool = True,
    ) -> BatchStep:
        """Play one action in every game (or in the ``active`` ones).

        Args:
            actions: ``(N,)`` integer action numbers, one per game, for the player to act.
            active: optional ``(N,)`` bool: only these games move; the others keep their
                position and report no reward and no termination (their actions are ignored).
            final_observer: optional player (0/1) or ``(N,)`` players: also return, for the
                games that end, their final position seen by that player
                (``BatchStep.final_observation``).
            observe: with False, skip building the observations and masks
                (``BatchStep.observation`` and ``action_mask`` are ``None``); for callers that
                step several times before looking, e.g. a random opponent. :meth:`observe`
                gives them later.

        Returns:
            A :class:`BatchStep`; finished games are already replaced by fresh ones.

        Raises:
            IllegalActionError: some actions are illegal; the message names the env indices,
                the actions and why; no game changes.
            CarnacError: ``actions``, ``active`` or ``final_observer`` of the wrong shape or type.
        """
        n, squares = self.num_envs, self._squares
        base = 4 * squares
        actions = self._check_actions(actions)
        moving = self._check_active(active)
        observer = None if final_observer is None else self._check_observer(final_observer)
        if self._kernels is not None:
            return self._step_compiled(actions, moving, observer, observe)
        self._check_legal(actions, moving)

        if moving is None:
            envs = self._arange
            acting = actions
        else:
            envs = np.flatnonzero(moving)
            acting = actions[envs]
        is_place = acting < base
        place = envs[is_place]
        tilt = envs[(acting >= base) & (acting < base + 4)]
        decline = envs[acting == base + 4]
        ended: list[np.ndarray] = []
        if len(place):
            ended.append(self._place(place, actions[place]))
        if len(tilt):
            ended.append(self._tilt(tilt, actions[tilt] - base))
        if len(decline):
            ended.append(self._decline(decline))

        rewards = np.zeros((n, 2), dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        final = None if observer is None else np.zeros((n, *self.observation_shape), dtype=np.int8)
        over = np.concatenate(ended) if ended else np.zeros(0, dtype=np.intp)
        if len(over):
            winner = _winners(self._cells[over], self._edges, self.board.min_dolmen)
            rewards[over, 0] = np.where(winner == 0, 1.0, np.where(winner == 1, -1.0, 0.0))
            rewards[over, 1] = -rewards[over, 0]
            terminated[over] = True
            if final is not None:
                final[over] = self._final_observations(over, observer[over])
            self._reset_games(over)
        obs, mask = (self._observations(), self._masks()) if observe else (None, None)
        return BatchStep(obs, mask, self._to_act.copy(), rewards, terminated, final)

    def _step_compiled(
        self, actions: np.ndarray, moving: np.ndarray | None, observer: np.ndarray | None, observe: bool
    ) -> BatchStep:
        n, k = self.num_envs, self._kernels
        active = np.ones(n, dtype=bool) if moving is None else moving
        if k.check_legal(actions, active, self.num_actions, self._squares, self._phase, self._kinds, self._tilt_ok):
            self._check_legal(actions, moving)  # raises with the full message
            raise AssertionError("the compiled and numpy legality checks disagree")  # pragma: no cover
        rewards = np.zeros((n, 2), dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        want_final = observer is not None
        final = np.zeros((n, self._squares, NUM_PLANES), dtype=np.int8) if want_final else np.zeros((1, 1, 1), np.int8)
        k.step(
            actions,
            active,
            self.board.megaliths,
            self.board.min_dolmen,
            self.board.last_tilt,
            self._tilt_first,
            self._tilt_second,
            self._neighbours,
            self._cells,
            self._kinds,
            self._supply,
            self._empty,
            self._phase,
            self._to_act,
            self._pending,
            self._pending_ns,
            self._tilt_ok,
            self._lying,
            self._num_lying,
            self._planes,
            self._place_bits,
            rewards,
            terminated,
            final,
            observer if want_final else np.zeros(1, dtype=np.intp),
            want_final,
        )
        obs, mask = self._outputs() if observe else (None, None)
        final_obs = final.reshape((n, *self.observation_shape)) if want_final else None
        return BatchStep(obs, mask, self._to_act.copy(), rewards, terminated, final_obs)

    def _place(self, envs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Place in ``envs``; returns the games that ended."""
        squares, n = self._squares, self.num_envs
        square = actions >> 2
        orientation = actions & 3
        mover = self._to_act[envs].astype(np.intp)
        own = mover + 1
        top = np.where(orientation & 1, 2 - mover, own)
        north_south = np.where(orientation & 2, 3 - top, top)
        self._cells.reshape(-1)[envs * squares + square] = top
        self._kinds.reshape(-1)[envs * (squares + 1) + square] = STANDING
        planes = self._planes.reshape(-1)
        at = (envs * squares + square) * NUM_PLANES
        red_view = at + top - 1  # seen by Red: own plane 0 shows red (1)
        white_view = (n * squares + envs * squares + square) * NUM_PLANES + 2 - top
        planes[red_view] = 1
        planes[white_view] = 1
        planes[at + 2] = 1
        planes[at + n * squares * NUM_PLANES + 2] = 1
        row = envs * self.num_actions + 4 * square
        bits = self._place_bits.reshape(-1)
        for k in range(4):
            bits[row + k] = False
        self._supply[envs] -= 1
        self._empty[envs] -= 1
        # Which tilts would be legal: both squares on the board and empty.
        kinds = self._kinds.reshape(-1)
        offset = (envs * (squares + 1))[:, None]
        ok = (kinds[offset + self._tilt_first[square]] == 0) & (kinds[offset + self._tilt_second[square]] == 0)
        last = self._supply[envs] == 0
        respond = ok.any(axis=1)
        if not self.board.last_tilt:
            respond &= ~last
        waiting = envs[respond]
        self._phase[waiting] = RESPOND
        self._pending[waiting] = square[respond]
        self._pending_ns[waiting] = north_south[respond]
        self._tilt_ok[waiting] = ok[respond]
        self._to_act[envs] = 1 - mover  # the responder, or the next placer
        ends = ~respond & (last | (self._empty[envs] == 0))
        over = envs[ends]
        self._phase[over] = OVER
        self._to_act[over] = mover[ends]  # as the core: the last to act
        return over

    def _tilt(self, envs: np.ndarray, direction: np.ndarray) -> np.ndarray:
        squares, n = self._squares, self.num_envs
        origin = self._pending[envs]
        first = self._tilt_first[origin, direction]
        second = self._tilt_second[origin, direction]
        ns = self._pending_ns[envs]
        colour = np.where(direction & 1, 3 - ns, ns).astype(np.intp)
        cells = self._cells.reshape(-1)
        kinds = self._kinds.reshape(-1)
        row = envs * squares
        krow = envs * (squares + 1)
        cells[row + origin] = 0
        kinds[krow + origin] = 0
        planes = self._planes.reshape(-1)
        white = n * squares * NUM_PLANES
        at = (row + origin) * NUM_PLANES
        for plane in range(4):
            planes[at + plane] = 0
            planes[at + white + plane] = 0
        bits = self._place_bits.reshape(-1)
        brow = envs * self.num_actions
        for k in range(4):
            bits[brow + 4 * origin + k] = True
        for square in (first, second):
            cells[row + square] = colour
            kinds[krow + square] = LYING
            at = (row + square) * NUM_PLANES
            planes[at + colour - 1] = 1
            planes[at + white + 2 - colour] = 1
            planes[at + 3] = 1
            planes[at + white + 3] = 1
            for k in range(4):
                bits[brow + 4 * square + k] = False
        count = self._num_lying[envs]
        self._lying[envs, count, 0] = first
        self._lying[envs, count, 1] = second
        self._num_lying[envs] = count + 1
        self._empty[envs] -= 1
        return self._after_response(envs)

    def _decline(self, envs: np.ndarray) -> np.ndarray:
        self._to_act[envs] = 1 - self._to_act[envs]
        return self._after_response(envs)

    def _after_response(self, envs: np.ndarray) -> np.ndarray:
        self._pending[envs] = -1
        self._pending_ns[envs] = 0
        self._tilt_ok[envs] = False
        over = self._supply[envs] == 0
        self._phase[envs] = np.where(over, OVER, PLACE)
        return envs[over]

    def _final_observations(self, envs: np.ndarray, observer: np.ndarray) -> np.ndarray:
        """Finished games seen by ``observer``: planes 0-3 and the supply; no one to act."""
        obs = self._planes[observer, envs]
        obs[:, :, TO_ACT] = 0
        obs[:, :, SUPPLY] = self._supply[envs][:, None]
        return obs.reshape((len(envs), *self.observation_shape))

    # ----------------------------------------------------------------- checking inputs
    def _check_actions(self, actions: Any) -> np.ndarray:
        array = np.asarray(actions)
        if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
            raise CarnacError(f"actions must be integers, got an array of dtype {array.dtype}")
        if array.shape != (self.num_envs,):
            raise CarnacError(f"actions must have shape ({self.num_envs},), one per game, got shape {array.shape}")
        return array.astype(np.intp, copy=False)

    def _check_active(self, active: Any) -> np.ndarray | None:
        if active is None:
            return None
        array = np.asarray(active)
        if array.dtype != bool or array.shape != (self.num_envs,):
            raise CarnacError(
                f"active must be a bool array of shape ({self.num_envs},), got dtype {array.dtype} shape {array.shape}"
            )
        return array

    def _check_observer(self, observer: Any) -> np.ndarray:
        array = np.asarray(observer)
        if not np.issubdtype(array.dtype, np.integer) or array.dtype == bool or not ((array == 0) | (array == 1)).all():
            raise CarnacError(f"final_observer must be a player 0 or 1 (or one per game), got {observer!r}")
        try:
            return np.broadcast_to(array, (self.num_envs,)).astype(np.intp)
        except ValueError:
            raise CarnacError(
                f"final_observer must be a player or have shape ({self.num_envs},), got shape {array.shape}"
            ) from None

    def _check_legal(self, actions: np.ndarray, moving: np.ndarray | None) -> None:
        squares = self._squares
        base = 4 * squares
        in_range = (actions >= 0) & (actions < self.num_actions)
        safe = np.where(in_range, actions, 0)
        place = safe < base
        square = np.minimum(safe >> 2, squares - 1)
        direction = np.clip(safe - base, 0, 3)
        placing = self._phase == PLACE
        legal = np.where(
            place,
            placing & (self._kinds[self._arange, square] == 0),
            (self._phase == RESPOND) & ((safe == base + 4) | self._tilt_ok[self._arange, direction]),
        )
        bad = ~(legal & in_range)
        if moving is not None:
            bad &= moving
        if bad.any():
            raise IllegalActionError(self._describe_illegal(np.flatnonzero(bad), actions))

    def _describe_illegal(self, envs: np.ndarray, actions: np.ndarray) -> str:
        parts = []
        for i in envs[:_ERRORS_SHOWN]:
            action = int(actions[i])
            state = self.get_state(int(i))
            parts.append(f"env {int(i)}: {state.describe(action)}: {state.why_illegal(action)}")
        more = f"; and {len(envs) - _ERRORS_SHOWN} more" if len(envs) > _ERRORS_SHOWN else ""
        return (
            f"{len(envs)} illegal action(s) in the batch, no game changed: envs {envs[:20].tolist()} "
            f"got actions {actions[envs[:20]].tolist()}. " + "; ".join(parts) + more
        )

    def _check_index(self, index: Any) -> int:
        if isinstance(index, bool) or not isinstance(index, int | np.integer) or not 0 <= index < self.num_envs:
            raise CarnacError(f"env index {index!r} is not in 0..{self.num_envs - 1}")
        return int(index)

    # ----------------------------------------------------------------- random legal actions
    def sample_actions(self) -> np.ndarray:
        """``(N,)`` int64: a uniformly random legal action in every game, from :attr:`np_random`.

        One uniform number ``u`` per game picks option ``floor(u * count)`` of the legal
        actions in increasing order (placements: the empty squares times the 4 orientations;
        responses: the legal tilts, then decline), the same in both backends.
        """
        uniform = self.np_random.random(self.num_envs)
        actions = np.empty(self.num_envs, dtype=np.int64)
        if self._kernels is not None:
            self._kernels.sample(uniform, self._phase, self._empty, self._kinds, self._tilt_ok, actions)
            return actions
        squares = self._squares
        placing = self._phase == PLACE
        place = np.flatnonzero(placing)
        if len(place):
            pick = (uniform[place] * (4 * self._empty[place])).astype(np.intp)
            empty = self._kinds[place, :squares] == 0
            square = np.argmax(np.cumsum(empty, axis=1) > (pick >> 2)[:, None], axis=1)
            actions[place] = 4 * square + (pick & 3)
        respond = np.flatnonzero(~placing)
        if len(respond):
            options = np.ones((len(respond), 5), dtype=bool)
            options[:, :4] = self._tilt_ok[respond]
            pick = (uniform[respond] * options.sum(axis=1)).astype(np.intp)
            actions[respond] = 4 * squares + np.argmax(np.cumsum(options, axis=1) > pick[:, None], axis=1)
        return actions

    # ----------------------------------------------------------------- core conversion
    def get_state(self, index: int) -> GameState:
        """Game ``index`` as a core :class:`~carnac_env.core.game.GameState` (a new object)."""
        i = self._check_index(index)
        squares = self._squares
        state = GameState(self.board)
        state.cells = bytearray(self._cells[i].astype(np.uint8).tobytes())
        state.kinds = bytearray(self._kinds[i, :squares].astype(np.uint8).tobytes())
        state.lying = [(int(a), int(b)) for a, b in self._lying[i, : self._num_lying[i]]]
        state.supply = int(self._supply[i])
        state.phase = int(self._phase[i])
        state.to_act = int(self._to_act[i])
        state.empty = int(self._empty[i])
        if state.phase == RESPOND:
            ns = int(self._pending_ns[i])
            state.pending = int(self._pending[i])
            state.pending_colours = (ns, 3 - ns)
        return state

    def set_state(self, index: int, state: GameState) -> None:
        """Put a copy of a core :class:`~carnac_env.core.game.GameState` (a game in progress on
        this board, e.g. from ``GameState.from_diagram``) into slot ``index``.

        Raises:
            CarnacError: a bad index, not a GameState, another board, or a finished game.
        """
        i = self._check_index(index)
        if not isinstance(state, GameState):
            raise CarnacError(f"set_state needs a GameState, got {type(state).__name__}")
        if state.board.rules() != self.board.rules():
            raise CarnacError(f"the state is on board {state.board.rules()}, this BatchGame plays {self.board.rules()}")
        if state.phase == OVER:
            raise CarnacError("the state is a finished game; a BatchGame slot holds a game in progress")
        squares = self._squares
        cells = np.frombuffer(bytes(state.cells), dtype=np.uint8).astype(np.int8)
        kinds = np.frombuffer(bytes(state.kinds), dtype=np.uint8).astype(np.int8)
        self._cells[i] = cells
        self._kinds[i, :squares] = kinds
        self._supply[i] = state.supply
        self._empty[i] = state.empty
        self._phase[i] = state.phase
        self._to_act[i] = state.to_act
        self._num_lying[i] = len(state.lying)
        self._lying[i] = 0
        if state.lying:
            self._lying[i, : len(state.lying)] = np.asarray(state.lying, dtype=np.int16)
        self._pending[i] = -1
        self._pending_ns[i] = 0
        self._tilt_ok[i] = False
        if state.phase == RESPOND:
            self._pending[i] = state.pending
            self._pending_ns[i] = state.pending_colours[0]
            for direction in state.tilt_targets():
                self._tilt_ok[i, direction] = True
        for player in (0, 1):
            planes = self._planes[player, i]
            planes[:] = 0
            planes[:, 0] = cells == player + 1
            planes[:, 1] = cells == 2 - player
            planes[:, 2] = kinds == STANDING
            planes[:, 3] = kinds == LYING
            planes[:, TO_ACT] = 1
        self._place_bits[i] = False
        self._place_bits[i, : 4 * squares] = np.repeat(kinds == 0, 4)
