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

**The rules are the core's.** The compiled kernel (:mod:`carnac_env.batch.kernel`, numba)
re-expresses :mod:`carnac_env.core.game` once; tests/test_batch.py plays tens of thousands of random games on every
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

**One implementation.** The games are stepped by the compiled functions of
:mod:`carnac_env.batch.kernel` (numba, a dependency of the package). The first use on a
machine compiles them (tens of seconds, once) and caches the machine code on disk;
later processes load it (docs/performance.md gives both times). The pure-numpy path of
earlier versions is gone: ``backend="numpy"`` raises a :class:`CarnacError` that says so.

**Limits.** ``num_envs`` is at most :data:`MAX_ENVS` (checked before anything is allocated).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from carnac_env.batch import kernel
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RED, RESPOND, STANDING, WHITE, GameState
from carnac_env.core.observation import NUM_PLANES
from carnac_env.errors import CarnacError, IllegalActionError

__all__ = ["MAX_ENVS", "BatchGame", "BatchStep", "batch_scores"]

#: The most games one BatchGame holds: at this size the state and one step's outputs take
#: about 3 GB on medium and 8 GB on le_menec.
MAX_ENVS = 2**20
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


def batch_scores(board: Board, cells: np.ndarray) -> np.ndarray:
    """The winner of each of ``K`` finished positions, by the core's scoring rules.

    Args:
        board: the board the positions are on.
        cells: ``(K, squares)`` cell colours (0 empty, 1 red, 2 white).

    Returns:
        ``(K,)`` int8: 0 Red wins, 1 White wins, -1 a draw.

    Raises:
        CarnacError: ``cells`` of the wrong shape or with values outside 0..2.
    """
    array = np.asarray(cells)
    if array.ndim != 2 or array.shape[1] != board.squares or not np.issubdtype(array.dtype, np.integer):
        raise CarnacError(f"cells must be integers of shape (K, {board.squares}), got {array.dtype} {array.shape}")
    if array.size and (array.min() < 0 or array.max() > WHITE):
        raise CarnacError("cells must hold 0 (empty), 1 (red) or 2 (white)")
    out = np.empty(len(array), dtype=np.int8)
    kernel.winners(np.ascontiguousarray(array, dtype=np.uint8), board.arrays.neighbours, board.min_dolmen, out)
    return out


def _check_backend(backend: str) -> None:
    if backend == "numpy":
        raise CarnacError(
            "backend='numpy' was removed: the batched engine is compiled with numba (a dependency "
            "of carnac-env) and has one implementation; use backend='auto' (or 'numba')"
        )
    if backend not in ("auto", "numba"):
        raise CarnacError(f"unknown backend {backend!r}; expected 'auto' or 'numba'")


def _check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or not 1 <= num_envs <= MAX_ENVS:
        raise CarnacError(f"num_envs={num_envs!r} must be an integer in 1..{MAX_ENVS}")
    return int(num_envs)


class BatchGame:
    """``num_envs`` games of Carnac on one board, stored as arrays and played in lockstep.

    Args:
        board: a board name, ``"custom"``, or a :class:`~carnac_env.core.boards.Board`.
        num_envs: how many games, 1..:data:`MAX_ENVS` (a Python or numpy integer).
        seed: seeds :attr:`np_random`, used only by :meth:`sample_actions` (the rules have
            no randomness); ``None`` for fresh entropy.
        backend: ``"auto"`` (the default) or ``"numba"``, the same thing: the compiled
            kernel. ``"numpy"`` (the removed pure-numpy path) raises.
        **rules: rules options, as for :func:`carnac_env.core.make_board`.

    Attributes:
        board: the :class:`~carnac_env.core.boards.Board`.
        num_envs: the number of games.
        num_actions: ``rows*cols*4 + 5``.
        observation_shape: ``(rows, cols, 9)`` of one game's observation.
        np_random: the generator behind :meth:`sample_actions`.
        backend: ``"numba"``.

    Raises:
        CarnacError: an unknown board or rules option, an impossible board, a bad
            ``num_envs``, ``seed`` or ``backend``.
    """

    def __init__(
        self,
        board: str | Board = "medium",
        num_envs: int = 1,
        seed: int | None = 0,
        backend: str = "auto",
        **rules: Any,
    ) -> None:
        _check_backend(backend)
        self.num_envs = _check_num_envs(num_envs)
        self.board = make_board(board, **rules)
        self.backend = "numba"
        self.num_actions = self.board.num_actions
        self.observation_shape = (self.board.rows, self.board.cols, NUM_PLANES)
        self.np_random = self._make_rng(seed)
        self._width = self.board.squares * NUM_PLANES
        self._all = np.ones(self.num_envs, dtype=bool)
        self._no_final = np.zeros((0, self._width), dtype=np.int8)
        self._no_observer = np.zeros(1, dtype=np.int64)
        # The games: one KernelState for the kernels, and the same memory as numpy arrays.
        self._state, self._arrays = kernel.new_state(self.board, self.num_envs)

    @staticmethod
    def _make_rng(seed: int | None) -> np.random.Generator:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
            raise CarnacError(f"seed={seed!r} must be a non-negative integer or None")
        return np.random.default_rng(seed)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_state"]  # a numba structref over _arrays; rebuilt on load
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._state = kernel.state_from_arrays(self._arrays)

    def __repr__(self) -> str:
        return f"BatchGame(board={self.board.name!r}, num_envs={self.num_envs})"

    # ----------------------------------------------------------------- starting games
    def reset(self, seed: int | None = None) -> BatchStep:
        """Start ``num_envs`` fresh games (Red to place); with ``seed``, re-seed :attr:`np_random`."""
        if seed is not None:
            self.np_random = self._make_rng(seed)
        kernel.reset_all(self._state)
        return self.observe()

    # ----------------------------------------------------------------- reading
    def observe(self) -> BatchStep:
        """The current observations, masks and players (rewards zero, nothing terminated)."""
        n = self.num_envs
        obs, mask = self._outputs()
        return BatchStep(obs, mask, self.current_player, np.zeros((n, 2), dtype=np.float32), np.zeros(n, dtype=bool))

    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        obs = np.empty((self.num_envs, self._width), dtype=np.int8)
        mask = np.empty((self.num_envs, self.num_actions), dtype=bool)
        kernel.observe_all(self._state, obs, mask)
        return obs.reshape((self.num_envs, *self.observation_shape)), mask

    @property
    def current_player(self) -> np.ndarray:
        """``(N,)`` int8: the player to act in each game (a copy)."""
        return self._arrays.to_act.copy()

    def legal_mask(self) -> np.ndarray:
        """``(N, num_actions)`` bool: the legal actions now (a fresh array)."""
        mask = np.empty((self.num_envs, self.num_actions), dtype=bool)
        kernel.masks_all(self._state, mask)
        return mask

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
        n = self.num_envs
        actions = self._check_actions(actions)
        moving = self._check_active(active)
        observer = None if final_observer is None else self._check_observer(final_observer)
        if kernel.count_illegal(self._state, actions, moving):
            self._raise_illegal(actions, moving)
        rewards = np.zeros((n, 2), dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        if observer is None:
            final, seen_by = self._no_final, self._no_observer
        else:
            final, seen_by = np.zeros((n, self._width), dtype=np.int8), observer
        kernel.step_all(self._state, actions, moving, rewards, terminated, final, seen_by)
        obs, mask = self._outputs() if observe else (None, None)
        final_obs = None if observer is None else final.reshape((n, *self.observation_shape))
        return BatchStep(obs, mask, self.current_player, rewards, terminated, final_obs)

    # ----------------------------------------------------------------- checking inputs
    def _check_actions(self, actions: Any) -> np.ndarray:
        array = np.asarray(actions)
        if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
            raise CarnacError(f"actions must be integers, got an array of dtype {array.dtype}")
        if array.shape != (self.num_envs,):
            raise CarnacError(f"actions must have shape ({self.num_envs},), one per game, got shape {array.shape}")
        if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
            raise CarnacError(f"actions run from 0 to {self.num_actions - 1}, got {array.max()}")
        return np.ascontiguousarray(array, dtype=np.int64)

    def _check_active(self, active: Any) -> np.ndarray:
        if active is None:
            return self._all
        array = np.asarray(active)
        if array.dtype != bool or array.shape != (self.num_envs,):
            raise CarnacError(
                f"active must be a bool array of shape ({self.num_envs},), got dtype {array.dtype} shape {array.shape}"
            )
        return np.ascontiguousarray(array)

    def _check_observer(self, observer: Any) -> np.ndarray:
        array = np.asarray(observer)
        if not np.issubdtype(array.dtype, np.integer) or array.dtype == bool or not ((array == 0) | (array == 1)).all():
            raise CarnacError(f"final_observer must be a player 0 or 1 (or one per game), got {observer!r}")
        try:
            return np.broadcast_to(array, (self.num_envs,)).astype(np.int64)
        except ValueError:
            raise CarnacError(
                f"final_observer must be a player or have shape ({self.num_envs},), got shape {array.shape}"
            ) from None

    def _raise_illegal(self, actions: np.ndarray, moving: np.ndarray) -> None:
        bad = np.zeros(self.num_envs, dtype=bool)
        kernel.find_illegal(self._state, actions, moving, bad)
        envs = np.flatnonzero(bad)
        parts = []
        for i in envs[:_ERRORS_SHOWN]:
            action = int(actions[i])
            state = self.get_state(int(i))
            parts.append(f"env {int(i)}: {state.describe(action)}: {state.why_illegal(action)}")
        more = f"; and {len(envs) - _ERRORS_SHOWN} more" if len(envs) > _ERRORS_SHOWN else ""
        raise IllegalActionError(
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
        responses: the legal tilts, then decline).
        """
        uniform = self.np_random.random(self.num_envs)
        actions = np.empty(self.num_envs, dtype=np.int64)
        kernel.sample_all(self._state, uniform, actions)
        return actions

    # ----------------------------------------------------------------- core conversion
    def get_state(self, index: int) -> GameState:
        """Game ``index`` as a core :class:`~carnac_env.core.game.GameState` (a new object)."""
        i = self._check_index(index)
        st = self._arrays
        state = GameState(self.board)
        state.cells = bytearray(st.cells[i].tobytes())
        state.kinds = bytearray(st.kinds[i].tobytes())
        state.lying = [(int(a), int(b)) for a, b in st.lying[i, : st.num_lying[i]]]
        state.supply = int(st.supply[i])
        state.phase = int(st.phase[i])
        state.to_act = int(st.to_act[i])
        state.empty = int(st.empty[i])
        if state.phase == RESPOND:
            ns = int(st.pending_ns[i])
            state.pending = int(st.pending[i])
            state.pending_colours = (ns, RED + WHITE - ns)
        return state

    def set_state(self, index: int, state: GameState) -> None:
        """Put a copy of a core :class:`~carnac_env.core.game.GameState` (a game in progress on
        this board, e.g. from ``GameState.from_diagram``) into slot ``index``.

        Every field is checked first (see :func:`_slot_from_state`); the slot is written only
        when all are consistent, so a rejected state leaves the batch exactly as it was.

        Raises:
            CarnacError: a bad index, not a GameState, another board, a finished game, or a
                field out of range or inconsistent with the others (the message names it).
        """
        i = self._check_index(index)
        slot = _slot_from_state(self.board, state)
        for name, value in slot.items():
            getattr(self._arrays, name)[i] = value
        kernel.refresh_views(self._state, i)  # the planes and place bits, from cells and kinds


def _slot_from_state(board: Board, state: Any) -> dict[str, Any]:
    """The kernel's fields for one game in progress, from a core GameState, checked in full.

    Checks: the board; ``phase`` PLACE or RESPOND; ``to_act`` 0 or 1; ``cells`` and ``kinds``
    of one byte per square with values 0..2, empty exactly where no colour shows; ``empty``
    the number of empty squares (>= 1 when placing); ``supply`` in 1..megaliths when placing
    (0 allowed while the final megalith awaits a response under ``last_tilt``); the lying
    pairs adjacent, of one colour, covering every lying square once; no more megaliths on
    the board than have left the supply; in RESPOND a standing ``pending`` square and
    ``pending_colours`` of the form ``(c, 3 - c)``; outside it ``pending == -1``.
    """
    if not isinstance(state, GameState):
        raise CarnacError(f"set_state needs a GameState, got {type(state).__name__}")
    if not isinstance(state.board, Board) or state.board.rules() != board.rules():
        theirs = state.board.rules() if isinstance(state.board, Board) else state.board
        raise CarnacError(f"the state is on board {theirs}, this BatchGame plays {board.rules()}")
    if state.phase == OVER:
        raise CarnacError("the state is a finished game; a BatchGame slot holds a game in progress")
    _expect_int("phase", state.phase, (PLACE, RESPOND), "PLACE (0) or RESPOND (1)")
    _expect_int("to_act", state.to_act, (0, 1), "0 (Red) or 1 (White)")
    cells = _square_bytes("cells", state.cells, board.squares)
    kinds = _square_bytes("kinds", state.kinds, board.squares)
    if ((cells == 0) != (kinds == EMPTY)).any():
        square = int(np.flatnonzero((cells == 0) != (kinds == EMPTY))[0])
        raise CarnacError(
            f"square {square} has colour {cells[square]} and kind {kinds[square]}: "
            "a square is empty (0) in both or in neither"
        )
    empty = int((kinds == EMPTY).sum())
    if state.empty != empty or isinstance(state.empty, bool):
        raise CarnacError(f"empty={state.empty!r} but {empty} squares are empty")
    placing = state.phase == PLACE
    lowest = 1 if placing or not board.last_tilt else 0
    _expect_int("supply", state.supply, range(lowest, board.megaliths + 1), f"{lowest}..{board.megaliths}")
    if placing and empty == 0:
        raise CarnacError("no square is empty: a game in the place phase needs an empty square")
    lying = _lying_pairs(board, state.lying, cells, kinds)
    on_board = int((kinds == STANDING).sum()) + len(lying)
    if on_board > board.megaliths - state.supply:
        raise CarnacError(
            f"{on_board} megaliths on the board but only {board.megaliths - state.supply} left a supply of "
            f"{board.megaliths} (supply={state.supply})"
        )
    pending, pending_ns, tilt_ok = _pending_fields(board, state, kinds)
    slot: dict[str, Any] = {
        "cells": cells,
        "kinds": kinds,
        "lying": np.zeros((board.megaliths, 2), dtype=np.int16),
        "num_lying": len(lying),
        "supply": state.supply,
        "empty": empty,
        "phase": state.phase,
        "to_act": state.to_act,
        "pending": pending,
        "pending_ns": pending_ns,
        "tilt_ok": tilt_ok,
    }
    if lying:
        slot["lying"][: len(lying)] = lying
    return slot


def _expect_int(name: str, value: Any, allowed: Any, expected: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value not in allowed:
        raise CarnacError(f"{name}={value!r}; expected {expected}")


def _square_bytes(name: str, value: Any, squares: int) -> np.ndarray:
    if not isinstance(value, bytearray) or len(value) != squares:
        size = f"{len(value)} bytes" if isinstance(value, bytes | bytearray) else type(value).__name__
        raise CarnacError(f"{name} must be a bytearray of {squares} squares, got {size}")
    array = np.frombuffer(bytes(value), dtype=np.uint8).copy()
    if array.max(initial=0) > 2:
        square = int(np.argmax(array > 2))
        raise CarnacError(f"{name}[{square}]={array[square]}; expected 0, 1 or 2")
    return array


def _lying_pairs(board: Board, pairs: Any, cells: np.ndarray, kinds: np.ndarray) -> list[tuple[int, int]]:
    if not isinstance(pairs, list | tuple) or len(pairs) > board.megaliths:
        raise CarnacError(f"lying must be a list of at most {board.megaliths} square pairs")
    covered = np.zeros(board.squares, dtype=np.int32)
    checked = []
    for pair in pairs:
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not all(isinstance(s, int | np.integer) and not isinstance(s, bool) for s in pair)
            or not all(0 <= s < board.squares for s in pair)
        ):
            raise CarnacError(f"lying pair {pair!r} is not two squares of the board")
        first, second = int(pair[0]), int(pair[1])
        if second not in board.neighbours[first]:
            raise CarnacError(f"lying pair {pair!r}: the squares are not orthogonally adjacent")
        if kinds[first] != LYING or kinds[second] != LYING or cells[first] != cells[second]:
            raise CarnacError(f"lying pair {pair!r}: both squares must be lying and show one colour")
        covered[[first, second]] += 1
        checked.append((first, second))
    if not np.array_equal(covered, (kinds == LYING).astype(np.int32)):
        square = int(np.flatnonzero(covered != (kinds == LYING))[0])
        raise CarnacError(f"square {square}: every lying square must belong to exactly one lying pair")
    return checked


def _pending_fields(board: Board, state: GameState, kinds: np.ndarray) -> tuple[int, int, np.ndarray]:
    tilt_ok = np.zeros(4, dtype=bool)
    if state.phase != RESPOND:
        if (
            isinstance(state.pending, bool)
            or state.pending != -1
            or not isinstance(state.pending_colours, tuple)
            or state.pending_colours != (0, 0)
        ):
            raise CarnacError(
                f"pending={state.pending!r}, pending_colours={state.pending_colours!r} outside the respond "
                "phase; expected -1 and (0, 0)"
            )
        return -1, 0, tilt_ok
    _expect_int("pending", state.pending, range(board.squares), f"a square 0..{board.squares - 1}")
    if kinds[state.pending] != STANDING:
        raise CarnacError(f"pending={state.pending}: the megalith awaiting a tilt must be standing there")
    colours = state.pending_colours
    if (
        not isinstance(colours, tuple)
        or len(colours) != 2
        or colours[0] not in (RED, WHITE)
        or colours[1] != RED + WHITE - colours[0]
        or isinstance(colours[0], bool)
    ):
        raise CarnacError(f"pending_colours={colours!r}; expected (1, 2) or (2, 1)")
    for direction in state.tilt_targets():  # the core's rule, on fields checked above
        tilt_ok[direction] = True
    return int(state.pending), int(colours[0]), tilt_ok
