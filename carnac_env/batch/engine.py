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

**The rules are the core's.** The compiled rules (:mod:`carnac_env.batch.rules`, numba)
re-express :mod:`carnac_env.core.game` once, on the state declared in
:mod:`carnac_env.batch.state`, with the views of :mod:`carnac_env.batch.views`;
tests/batch/test_batch.py plays tens of thousands of random games on every board step by step
against the core and compares masks, observations, players and rewards.
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
:mod:`carnac_env.batch.rules` (numba, a dependency of the package); one call plays every
game's action and writes every game's next observation and mask in the same pass. The
first use on a machine compiles them (tens of seconds, once) and caches the machine code on
disk; later processes load it (docs/performance.md gives both times). The pure-numpy path of
earlier versions is gone: ``backend="numpy"`` raises a :class:`CarnacError` that says so.

**Limits.** ``num_envs`` is at most :data:`MAX_ENVS` (checked before anything is allocated).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from carnac_env import _checks
from carnac_env.batch import rules as _rules
from carnac_env.batch import scoring as _scoring
from carnac_env.batch import views as _views
from carnac_env.batch.state import KernelState, StateArrays, game_fields, new_state, state_from_arrays
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import OVER, RESPOND, WHITE, GameState
from carnac_env.core.observation import NUM_PLANES
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError, IllegalActionError

__all__ = ["MAX_ENVS", "BatchGame", "BatchStep", "batch_scores", "game_state"]

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
    _scoring.winners(np.ascontiguousarray(array, dtype=np.uint8), board.arrays.neighbours, board.min_dolmen, out)
    return out


def game_state(board: Board, arrays: StateArrays, i: int) -> GameState:
    """Slot ``i`` of the engine state ``arrays`` (on ``board``) as a core
    :class:`~carnac_env.core.game.GameState` (a new object). The slot must hold a whole game,
    its lying pairs included (:func:`~carnac_env.batch.rules.copy_game` copies them,
    :func:`~carnac_env.batch.rules.copy_rules_state` does not)."""
    st = arrays
    state = GameState(board)
    state.cells = bytearray(st.cells[i].tobytes())
    state.kinds = bytearray(st.kinds[i].tobytes())
    state.lying = [(int(a), int(b)) for a, b in st.lying[i, : st.num_lying[i]]]
    state.supply = int(st.supply[i])
    state.phase = int(st.phase[i])
    state.to_act = int(st.to_act[i])
    state.empty = int(st.empty[i])
    if state.phase == RESPOND:
        state.pending = int(st.pending[i])
        state.pending_colour = int(st.pending_colour[i])
    return state


def _check_backend(backend: str) -> None:
    if backend == "numpy":
        raise CarnacError(
            "backend='numpy' was removed: the batched engine is compiled with numba (a dependency "
            "of carnac-env) and has one implementation; use backend='auto' (or 'numba')"
        )
    if backend not in ("auto", "numba"):
        raise CarnacError(f"unknown backend {backend!r}; expected 'auto' or 'numba'")


def _check_num_envs(num_envs: Any) -> int:
    return _checks.whole("num_envs", num_envs, 1, MAX_ENVS)


def check_actions(actions: Any, num_envs: int, num_actions: int) -> np.ndarray:
    """``actions`` as a contiguous int64 array of ``(num_envs,)``, one per game (the values'
    range is the caller's to check): ``actions`` itself when it already is one (the kernels
    only read it), else a converted copy.

    Raises:
        CarnacError: not integers (booleans included), another shape, or uint64 values past
            int64 (named as outside ``0..num_actions - 1``).
    """
    if (
        type(actions) is np.ndarray
        and actions.dtype == np.int64
        and actions.shape == (num_envs,)
        and actions.flags.c_contiguous
    ):
        return actions  # already what the kernels take (e.g. from sample_actions): no copy
    array = np.asarray(actions)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise CarnacError(f"actions must be integers, got an array of dtype {array.dtype}")
    if array.shape != (num_envs,):
        raise CarnacError(f"actions must have shape ({num_envs},), one per game, got shape {array.shape}")
    if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        raise CarnacError(f"actions run from 0 to {num_actions - 1}, got {array.max()}")
    return np.ascontiguousarray(array, dtype=np.int64)


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
        self._no_mask = np.zeros((0, self.num_actions), dtype=bool)
        # The games: one KernelState for the kernels, and the same memory as numpy arrays.
        self._state, self._arrays = new_state(self.board, self.num_envs)
        _rules.reset_all(self._state)

    @property
    def kernel(self) -> KernelState:
        """The games as the compiled functions take them: the
        :class:`~carnac_env.batch.state.KernelState` that every step changes in place (game
        ``i`` in slot ``i``), e.g. for :meth:`Search.set_roots
        <carnac_env.search.Search.set_roots>` or :func:`~carnac_env.search.playouts.playout_value`.
        Read it between steps; a compiled function that changes it changes the games."""
        return self._state

    @staticmethod
    def _make_rng(seed: int | None) -> np.random.Generator:
        return np.random.default_rng(_checks.seed(seed, optional=True))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_state"]  # a numba structref over _arrays; rebuilt on load
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._state = state_from_arrays(self._arrays)

    def __repr__(self) -> str:
        return f"BatchGame(board={self.board.name!r}, num_envs={self.num_envs})"

    # ----------------------------------------------------------------- starting games
    def reset(self, seed: int | None = None) -> BatchStep:
        """Start ``num_envs`` fresh games (Red to place); with ``seed``, re-seed :attr:`np_random`."""
        if seed is not None:
            self.np_random = self._make_rng(seed)
        _rules.reset_all(self._state)
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
        _views.observe_all(self._state, obs, mask)
        return obs.reshape((self.num_envs, *self.observation_shape)), mask

    @property
    def current_player(self) -> np.ndarray:
        """``(N,)`` int8: the player to act in each game (a copy)."""
        return self._arrays.to_act.copy()

    def legal_mask(self) -> np.ndarray:
        """``(N, num_actions)`` bool: the legal actions now (a fresh array)."""
        mask = np.empty((self.num_envs, self.num_actions), dtype=bool)
        _views.masks_all(self._state, mask)
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
        rewards = np.zeros((n, 2), dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        if observer is None:
            final, seen_by = self._no_final, self._no_observer
        else:
            final, seen_by = np.zeros((n, self._width), dtype=np.int8), observer
        if observe:
            obs = np.empty((n, self._width), dtype=np.int8)
            mask = np.empty((n, self.num_actions), dtype=bool)
        else:
            obs, mask = self._no_final, self._no_mask
        if _rules.step_all(self._state, actions, moving, rewards, terminated, final, seen_by, obs, mask):
            self._raise_illegal(actions, moving)  # nothing was played
        shown = obs.reshape((n, *self.observation_shape)) if observe else None
        final_obs = None if observer is None else final.reshape((n, *self.observation_shape))
        return BatchStep(shown, mask if observe else None, self.current_player, rewards, terminated, final_obs)

    # ----------------------------------------------------------------- checking inputs
    def _check_actions(self, actions: Any) -> np.ndarray:
        return check_actions(actions, self.num_envs, self.num_actions)

    def _check_active(self, active: Any) -> np.ndarray:
        if active is None:
            return self._all
        array = np.asarray(active)
        if array.dtype != bool or array.shape != (self.num_envs,):
            raise CarnacError(
                f"active (a mask of games) must be a bool array of shape ({self.num_envs},), got dtype "
                f"{array.dtype} shape {array.shape}"
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
        _rules.find_illegal(self._state, actions, moving, bad)
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
        return _checks.whole("env index", index, 0, self.num_envs - 1)

    def restart(self, envs: Any) -> None:
        """A fresh game (an empty board, Red to place) in every slot ``envs`` marks, a bool
        array of shape ``(N,)``; the other games are not touched.

        Raises:
            CarnacError: ``envs`` is not a bool array of shape ``(N,)``.
        """
        _rules.restart(self._state, self._check_active(envs))

    # ----------------------------------------------------------------- random legal actions
    def sample_actions(self) -> np.ndarray:
        """``(N,)`` int64: a uniformly random legal action in every game, from :attr:`np_random`.

        One uniform number ``u`` per game picks option ``floor(u * count)`` of the legal
        actions (placements: the empty squares, in the engine's own order, times the 4
        orientations, found without a search; responses: the legal tilts, then decline).
        """
        uniform = self.np_random.random(self.num_envs)
        actions = np.empty(self.num_envs, dtype=np.int64)
        _rules.sample_all(self._state, uniform, actions)
        return actions

    # ----------------------------------------------------------------- core conversion
    def get_state(self, index: int) -> GameState:
        """Game ``index`` as a core :class:`~carnac_env.core.game.GameState` (a new object)."""
        return game_state(self.board, self._arrays, self._check_index(index))

    def set_state(self, index: int, state: GameState) -> None:
        """Put a copy of a core :class:`~carnac_env.core.game.GameState` (a game in progress on
        this board, e.g. from ``GameState.from_diagram``) into slot ``index``.

        The state is checked in full first, by the core's
        :func:`~carnac_env.core.validate.validate`; the slot is written only when it passes,
        so a rejected state leaves the batch exactly as it was.

        Raises:
            CarnacError: a bad index, not a GameState, another board, a finished game, or a
                field out of range or inconsistent with the others (the message names it).
        """
        i = self._check_index(index)
        validate(state, name="the state")
        if state.board.rules() != self.board.rules():
            raise CarnacError(f"the state is on board {state.board.rules()}, this BatchGame plays {self.board.rules()}")
        if state.phase == OVER:
            raise CarnacError("the state is a finished game; a BatchGame slot holds a game in progress")
        _rules.load_game(self._state, i, *game_fields(state))
        _views.refresh_views(self._state, i)  # the planes and place bits, from cells and kinds
