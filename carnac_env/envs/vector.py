"""A Gymnasium ``VectorEnv`` of Carnac games for single-agent training, on the batched engine.

>>> import gymnasium as gym
>>> envs = gym.make_vec("carnac_env/Carnac-v0", num_envs=1024, board="medium")
>>> obs, infos = envs.reset(seed=0)
>>> obs, rewards, terminations, truncations, infos = envs.step(actions)  # (1024,) ints

or ``carnac_env.envs.vector.CarnacVectorEnv(num_envs=1024, board="medium")``.

**One env behind every vectorization mode.** This env is what ``gymnasium.make_vec`` builds by
default (``vectorization_mode="vector_entry_point"``); ``"sync"`` and ``"async"`` build
Gymnasium's ``SyncVectorEnv`` / ``AsyncVectorEnv`` over ``gymnasium.make``'s single env. All
three take the same options and give the learner the same thing: the observations (in the
same layout), rewards (float64), terminations, truncations and infos with the same keys,
shapes and dtypes, step by step (``tests/envs/test_vector_env.py`` plays one seeded episode set
through all three and compares). The options are the single env's (see
:mod:`carnac_env.envs.gym`): ``board`` and the rules options, ``opponent``, ``seat``,
``illegal_action``, ``observation``, ``image_scale``, ``mask_in_observation``, and
``max_episode_steps`` (a truncation after that many learner steps, as ``gymnasium.make``'s
``TimeLimit``), plus ``autoreset_mode``. Gymnasium's own rules for the modes still apply:
``wrappers=[...]`` is only taken in the ``"sync"`` and ``"async"`` modes (Gymnasium refuses it
for a vector entry point before this env is built), and there the autoreset mode is set with
``vector_kwargs={"autoreset_mode": ...}``.

**Autoreset.** ``metadata["autoreset_mode"]`` says which, as Gymnasium 1.x expects:
``AutoresetMode.NEXT_STEP`` by default (Gymnasium's default for its own vector envs), or
``AutoresetMode.SAME_STEP`` with ``autoreset_mode=AutoresetMode.SAME_STEP``.

* Next step: when a game ends (or is truncated, or forfeited), that step's observation, mask
  and info are those of the end (the mask all True once the game is over, the package's
  convention, so a policy fed that observation never meets an empty mask); on the next step
  that env's action is ignored and it starts a new game: reward 0, not terminated, the new
  game's observation and info.
* Same step: the step that ends a game returns the next game's observation and info at
  once, with the end in ``infos["final_obs"]`` (the learner's last observation) and
  ``infos["final_info"]`` (its info), each with its ``_`` mask of the envs that ended.

**Opponents.** Each game pits the learner (seat 0, 1 or ``"random"``, drawn for every game)
against an opponent, given as for the single env: an agent spec (``"random"``, the default,
played by the batched engine's own sampler; ``"greedy"``, ``"mcts:sims=200"``, an import path)
or an agent, an object with ``act(state) -> int``, called with that game (a
:class:`~carnac_env.core.game.GameState` from :meth:`~carnac_env.batch.BatchGame.get_state`)
at the opponent's turn (the one agent protocol, :mod:`carnac_env.agents.protocol`). On
top of it, a batched policy: any callable without ``act``, ``policy(observation, action_mask)
-> actions``, taking the ``(K, rows, cols, 9)`` int8 observations and ``(K, num_actions)`` bool
masks of the K games where the opponent is to act (seen by the opponent) and returning K legal
actions. After the learner's actions the opponent moves, as many times as the rules give it
the turn, until the learner acts again in every game.

**Infos** (:class:`~carnac_env.envs.infos.VectorInfo`): the single env's keys, stacked, each
with its ``_key`` mask (all True): ``action_mask`` ``(N, num_actions)`` int8 0/1, the single
env's dtype (also
:meth:`CarnacVectorEnv.action_masks`, sb3-contrib's convention), ``seat``, ``dolmens``,
``score``, ``winner``, ``opponent_dolmens``, ``opponent_score`` (filled in at a game's end) and
``illegal_action``.

**Illegal actions.** An action outside the action space raises
:class:`~carnac_env.errors.CarnacError`, naming the envs; an illegal one is handled as
``illegal_action`` says: ``"lose"`` (the default, as the single env) ends that game with -1
for the learner, ``info["illegal_action"]`` True; ``"raise"`` raises
:class:`~carnac_env.errors.IllegalActionError` naming the envs and actions, and changes
nothing. If an opponent policy or agent raises or returns bad or illegal actions, the
learner's actions are taken back before the error propagates: every game, the seats and the
masks are as they were before ``step``.

``seed`` seeds the seat draws and the random opponent; the rules themselves have no
randomness. All games share one generator: ``reset(seed=s)`` seeds it with ``s``, and
``reset(seed=[s0, ..., s(n-1)])`` (one seed per env, as Gymnasium's vector envs take) seeds it
with the whole list (a list of another length is refused), so the same list replays the same
batch (but not the games of a ``SyncVectorEnv`` given the same seeds, whose envs each draw
from their own generator). The vector env has no render modes (render one game with the
single env).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from carnac_env import _checks
from carnac_env.batch import BatchGame, BatchStep
from carnac_env.batch.engine import check_actions
from carnac_env.batch.scoring import dolmens_of
from carnac_env.core.arithmetic import opponent_colour, own_colour
from carnac_env.core.boards import Board, make_board
from carnac_env.core.observation import OPPONENT, OWN
from carnac_env.core.scoring import bga_score
from carnac_env.envs.infos import VectorInfo, info_dolmen_slots
from carnac_env.envs.opponents import make_opponent
from carnac_env.envs.options import ILLEGAL_ACTION_MODES, VECTOR_OPTIONS, check_options, check_seat, check_seed
from carnac_env.envs.spaces import OBSERVATION_LAYOUTS, default_image_scale, learner_observation, learner_space
from carnac_env.errors import CarnacError, IllegalActionError

__all__ = ["AUTORESET_MODES", "CarnacVectorEnv"]

#: The autoreset modes this env plays (Gymnasium's ``DISABLED`` is not one).
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)

Policy = Callable[[np.ndarray, np.ndarray], Any]


class CarnacVectorEnv(VectorEnv):
    """``num_envs`` Carnac games against an opponent; see the module docstring.

    Args:
        num_envs: how many games (>= 1).
        board: a board name, ``"custom"`` or a :class:`~carnac_env.core.boards.Board`.
        opponent: an agent spec (``"random"``, the default), an agent (``act(state)``),
            or a batched policy ``policy(observation, action_mask) -> actions``.
        seat: the learner's seat: 0, 1 or ``"random"`` (drawn for every game).
        render_mode: must be ``None``: the vector env has no render modes.
        illegal_action: ``"lose"`` (default) or ``"raise"``, as the single env.
        observation: ``"planes"`` (default) or ``"image"``, as the single env.
        image_scale: pixels per square for ``observation="image"``, as the single env.
        mask_in_observation: ``True`` for ``Dict(observation, action_mask)`` observations.
        max_episode_steps: truncate a game after this many learner steps (``None`` or -1:
            never), as ``gymnasium.make``'s ``TimeLimit``.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``AutoresetMode.SAME_STEP``
            (or their values, ``"NextStep"`` and ``"SameStep"``).
        **rules: rules options (``rows``, ``cols``, ``megaliths``, ``min_dolmen``, ``last_tilt``).

    Raises:
        UnknownOptionError: a keyword argument that is neither an option above nor a rules option.
        CarnacError: a bad board, rules option, ``num_envs``, seat, opponent or any option above.
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        board: str | Board = "medium",
        opponent: Any = "random",
        seat: int | str = 0,
        render_mode: str | None = None,
        illegal_action: str = "lose",
        observation: str = "planes",
        image_scale: int | None = None,
        mask_in_observation: bool = False,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **rules: Any,
    ) -> None:
        check_options(rules, VECTOR_OPTIONS, "CarnacVectorEnv")
        if render_mode is not None:
            raise CarnacError(
                f"render_mode={render_mode!r}: CarnacVectorEnv has no render modes (metadata['render_modes'] is "
                "empty); render one game with gymnasium.make('carnac_env/Carnac-v0', render_mode=...) instead"
            )
        self.board = make_board(board, **rules)
        self.seat_option = check_seat(seat)
        self.illegal_action = _checks.choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.observation_layout = _checks.choice("observation", observation, OBSERVATION_LAYOUTS)
        self.mask_in_observation = _checks.flag("mask_in_observation", mask_in_observation)
        self.image_scale = (
            default_image_scale(self.board) if image_scale is None else _checks.whole("image_scale", image_scale, 1, 64)
        )
        if max_episode_steps is not None and max_episode_steps != -1:
            max_episode_steps = _checks.whole("max_episode_steps", max_episode_steps, 1)
        self.max_episode_steps = None if max_episode_steps in (None, -1) else max_episode_steps
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.games = BatchGame(self.board, num_envs=num_envs, seed=None)
        self.num_envs = n = self.games.num_envs
        self.opponent = opponent
        self._random = isinstance(opponent, str) and opponent == "random"
        self._agent: Any = None  # the batched sampler, or a batched policy...
        if not self._random and not (callable(opponent) and not hasattr(opponent, "act")):
            self._agent = make_opponent(opponent, seed=0)  # ... or an agent, act(state) per game
        self.render_mode = None
        self.single_observation_space = learner_space(
            self.board, self.observation_layout, self.image_scale, self.mask_in_observation
        )
        self.single_action_space = spaces.Discrete(self.board.num_actions)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self._np_random, _ = seeding.np_random(None)
        self._seats = np.zeros(n, dtype=np.int8)
        self._steps = np.zeros(n, dtype=np.int64)  # learner steps in each game, for max_episode_steps
        self._autoreset = np.zeros(n, dtype=bool)  # next-step autoreset: these envs start anew next step
        self._planes = np.zeros((n, *self.games.observation_shape), dtype=np.int8)  # the learner's view now
        self._mask = np.zeros((n, self.board.num_actions), dtype=bool)  # what the last call returned
        self._slots = info_dolmen_slots(self.board)
        self._needs_reset = True

    @property
    def seats(self) -> np.ndarray:
        """``(num_envs,)`` int8: the learner's seat in each current game (a copy)."""
        return self._seats.copy()

    # ----------------------------------------------------------------- reset
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, VectorInfo]:
        """Start ``num_envs`` fresh games and play the opponent's opening moves where the learner is White.

        ``seed``: ``None``, a non-negative int, or a list of ``num_envs`` of them (see the module docstring).

        Raises:
            CarnacError: a bad seed or any option (nothing changes).
        """
        if options:
            raise CarnacError(f"CarnacVectorEnv.reset takes no options, got {options!r}")
        if isinstance(seed, list | tuple | np.ndarray):
            if len(seed) != self.num_envs:
                raise CarnacError(
                    f"seed is a list of {len(seed)} seeds; expected one seed per env ({self.num_envs}), "
                    "a single int or None"
                )
            seeds = [check_seed(s) for s in seed]
            if any(s is None for s in seeds):
                raise CarnacError(f"seed={list(seed)!r}; a list of seeds must hold non-negative integers only")
            sequence = np.random.SeedSequence(seeds)
            self._np_random = np.random.Generator(np.random.PCG64(sequence))
            self.action_space.seed(int(sequence.generate_state(1)[0]))
        else:
            seed = check_seed(seed)
            if seed is not None:
                self._np_random, _ = seeding.np_random(seed)
                self.action_space.seed(seed)
        self._needs_reset = True  # until the opponent's opening moves are played
        self.games.np_random = np.random.default_rng(self._np_random.integers(2**63))
        if self._agent is not None and hasattr(self._agent, "reset"):
            self._agent.reset(int(self._np_random.integers(2**31)))
        self._seats[:] = self._draw_seats(self.num_envs)
        self._steps[:] = 0
        self._autoreset[:] = False
        self._reply(self.games.reset(), self._new_ends())
        self._needs_reset = False
        return self._shown(self._planes, self._mask), self._infos(self._ongoing_info())

    def _draw_seats(self, count: int) -> np.ndarray:
        if self.seat_option == "random":
            return self._np_random.integers(0, 2, count).astype(np.int8)
        return np.full(count, self.seat_option, dtype=np.int8)

    # ----------------------------------------------------------------- step
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, VectorInfo]:
        """Play the learner's action in every game, then the opponent until the learner acts again.

        Raises:
            IllegalActionError: some learner actions are illegal and ``illegal_action="raise"``
                (nothing changes).
            CarnacError: ``actions`` of the wrong shape or type, outside the action space, or
                ``step`` before ``reset``.
        """
        if self._needs_reset:
            raise CarnacError("call reset() before step()")
        actions = check_actions(actions, self.num_envs, self.board.num_actions)
        playing = ~self._autoreset  # an env that ended on the last step only starts anew (next-step autoreset)
        outside = playing & ((actions < 0) | (actions >= self.board.num_actions))
        if outside.any():
            envs = np.flatnonzero(outside)
            raise CarnacError(
                f"actions {actions[envs[:20]].tolist()} of envs {envs[:20].tolist()} are not in the action space "
                f"Discrete({self.board.num_actions})"
            )
        chosen = np.where(playing, actions, 0)
        forfeit = playing & ~self._mask[np.arange(self.num_envs), chosen]
        if forfeit.any() and self.illegal_action == "raise":
            self.games.step(chosen, active=playing)  # raises IllegalActionError naming them; nothing changes
        # An opponent may fail after the learner's moves are played: keep what is needed to take them back.
        saved = None if self._random else self._save()
        try:
            return self._advance(chosen, playing, forfeit)
        except BaseException as error:
            if saved is None:
                raise
            self._restore(saved)
            if isinstance(error, CarnacError):
                kind = IllegalActionError if isinstance(error, IllegalActionError) else CarnacError
                raise kind(f"the opponent policy failed: {error} (the learner's actions were taken back)") from error
            raise

    def _advance(
        self, chosen: np.ndarray, playing: np.ndarray, forfeit: np.ndarray
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, VectorInfo]:
        n = self.num_envs
        ends = self._new_ends()
        ends.seat[:] = self._seats
        ends.terminated |= forfeit
        ends.rewards[forfeit] = -1.0
        ends.planes[forfeit] = self._planes[forfeit]  # a forfeit leaves the game as it was
        ends.mask[forfeit] = True
        moving = playing & ~forfeit
        step = self.games.step(chosen, active=moving, final_observer=self._seats, observe=self._batched_policy)
        self._steps[playing] += 1
        self._collect(step, ends)
        self._reply(step, ends)
        truncated = np.zeros(n, dtype=bool)
        if self.max_episode_steps is not None:
            truncated = playing & (self._steps >= self.max_episode_steps)
        cut = truncated & ~ends.terminated  # the game goes on where it is: its last view is the end
        ends.planes[cut] = self._planes[cut]
        ends.mask[cut] = self._mask[cut]
        restart = forfeit | cut  # the engine restarted the games that ended by the rules
        if restart.any():
            self.games.restart(restart)
            self._seats[restart] = self._draw_seats(int(restart.sum()))
            again = self._new_ends()
            self._reply(self.games.observe(), again)
            if again.terminated.any():
                raise CarnacError(
                    "a new game ended before the learner could act: this board is too small for the learner's "
                    f"seat ({self.board.rules()})"
                )
        done = ends.terminated | truncated
        self._steps[done] = 0
        ends.illegal = forfeit
        ongoing = self._ongoing_info()
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            planes, masks = self._planes, self._mask
            if done.any():  # these envs show their game's end now, and start anew on the next step
                planes, masks = planes.copy(), masks.copy()
                planes[done] = ends.planes[done]
                masks[done] = ends.mask[done]
                for key, value in self._end_info(ends, done).items():
                    ongoing[key][done] = value[done]
            self._autoreset = done
            self._mask = masks
            infos = self._infos(ongoing)
        else:
            planes, masks = self._planes, self._mask
            infos = self._infos(ongoing)
            if done.any():
                final_obs = np.full(n, None, dtype=object)
                for i in np.flatnonzero(done):
                    final_obs[i] = self._shown(ends.planes[i], ends.mask[i])
                infos["final_obs"] = final_obs
                infos["_final_obs"] = done.copy()
                infos["final_info"] = self._infos(self._end_info(ends, done), present=done)
                infos["_final_info"] = done.copy()
        rewards = np.where(playing, ends.rewards, 0.0)
        terminated = playing & ends.terminated
        return self._shown(planes, masks), rewards, terminated, truncated & playing, infos

    def _new_ends(self) -> _Ends:
        return _Ends(self.num_envs, self.games.observation_shape, self.board.num_actions)

    @property
    def _batched_policy(self) -> bool:
        return self._agent is None and not self._random

    def _collect(self, step: BatchStep, ends: _Ends) -> None:
        """Record the games that ``step`` ended (the engine has already restarted them) and
        draw their next seats."""
        ended = step.terminated
        if not ended.any():
            return
        if (ended & ends.terminated).any():
            raise CarnacError(
                "a game ended twice in one step before the learner could act: this board is too small "
                f"for the learner's seat ({self.board.rules()})"
            )
        rows = np.flatnonzero(ended)
        seats = self._seats[rows]
        ends.rewards[rows] = step.rewards[rows, seats]
        ends.planes[rows] = step.final_observation[rows]
        ends.mask[rows] = True  # the game is over: all True, the package's convention
        ends.terminated[rows] = True
        ends.by_rules[rows] = True
        self._seats[rows] = self._draw_seats(len(rows))

    def _reply(self, step: BatchStep, ends: _Ends) -> None:
        """Play the opponent's moves in every game where it is to act, until the learner acts
        again everywhere (recording the games that end meanwhile); keep the learner's view."""
        n = self.num_envs
        obs, mask, player = step.observation, step.action_mask, step.current_player
        waiting = player != self._seats
        while waiting.any():
            actions = np.zeros(n, dtype=np.int64)
            if self._random:
                actions[waiting] = self.games.sample_actions()[waiting]
            elif self._agent is not None:
                actions[waiting] = [self._agent_move(int(i)) for i in np.flatnonzero(waiting)]
            else:
                chosen = np.asarray(self.opponent(obs[waiting], mask[waiting]))
                if chosen.shape != (int(waiting.sum()),) or not np.issubdtype(chosen.dtype, np.integer):
                    raise CarnacError(
                        f"the opponent policy must return {int(waiting.sum())} integer actions, one per game "
                        f"it was given; got dtype {chosen.dtype} shape {chosen.shape}"
                    )
                actions[waiting] = chosen
            step = self.games.step(actions, active=waiting, final_observer=self._seats, observe=self._batched_policy)
            self._collect(step, ends)
            obs, mask, player = step.observation, step.action_mask, step.current_player
            waiting = player != self._seats
        if obs is None:
            now = self.games.observe()
            obs, mask = now.observation, now.action_mask
        self._planes = obs
        self._mask = mask

    def _agent_move(self, index: int) -> int:
        """The opponent agent's action in game ``index``: the agent protocol, ``act(state)``, on
        that game as a core :class:`~carnac_env.core.game.GameState`."""
        return self._agent.act(self.games.get_state(index))

    # ----------------------------------------------------------------- what the learner sees
    def _shown(self, planes: np.ndarray, masks: np.ndarray) -> Any:
        return learner_observation(
            planes, masks, self.board, self.observation_layout, self.image_scale, self.mask_in_observation
        )

    def _ongoing_info(self) -> dict[str, np.ndarray]:
        """Every game's info as a game in progress (the single env's info before the end)."""
        n = self.num_envs
        return {
            "action_mask": self._mask.astype(np.int8),
            "seat": self._seats.astype(np.int64),
            "dolmens": np.zeros((n, self._slots), dtype=np.int16),
            "score": np.zeros(n, dtype=np.int64),
            "winner": np.full(n, -1, dtype=np.int64),
            "opponent_dolmens": np.zeros((n, self._slots), dtype=np.int16),
            "opponent_score": np.zeros(n, dtype=np.int64),
            "illegal_action": np.zeros(n, dtype=bool),
        }

    def _end_info(self, ends: _Ends, done: np.ndarray) -> dict[str, np.ndarray]:
        """The info each game ``done`` marks had at its end (zeros elsewhere), as the single env's."""
        n = self.num_envs
        info = {
            "action_mask": np.where(done[:, None], ends.mask, False).astype(np.int8),
            "seat": np.where(done, ends.seat, 0).astype(np.int64),
            "dolmens": np.zeros((n, self._slots), dtype=np.int16),
            "score": np.zeros(n, dtype=np.int64),
            "winner": np.where(done, -1, 0).astype(np.int64),
            "opponent_dolmens": np.zeros((n, self._slots), dtype=np.int16),
            "opponent_score": np.zeros(n, dtype=np.int64),
            "illegal_action": ends.illegal & done,
        }
        forfeits = ends.illegal & done
        info["winner"][forfeits] = 1 - ends.seat[forfeits]  # the learner lost by forfeit
        rows = np.flatnonzero(ends.by_rules & done)
        if len(rows):
            # The final cells, from the learner's last view (its own and its opponent's colour planes).
            seat = ends.seat[rows].astype(np.int64)[:, None]
            own = ends.planes[rows, ..., OWN].reshape(len(rows), -1).astype(bool)
            other = ends.planes[rows, ..., OPPONENT].reshape(len(rows), -1).astype(bool)
            cells = np.where(own, own_colour(seat), np.where(other, opponent_colour(seat), 0)).astype(np.uint8)
            sizes = np.zeros((len(rows), 2, self._slots), dtype=np.int16)
            dolmens_of(cells, self.board.arrays.neighbours, self.board.min_dolmen, sizes)
            for key, sides in (("", seat[:, 0]), ("opponent_", 1 - seat[:, 0])):
                held = sizes[np.arange(len(rows)), sides]
                info[f"{key}dolmens"][rows] = held
                info[f"{key}score"][rows] = [bga_score(row[row > 0].tolist()) for row in held]
            reward, seat = ends.rewards[rows], seat[:, 0]
            info["winner"][rows] = np.where(reward > 0, seat, np.where(reward < 0, 1 - seat, -1))
        return info

    def _infos(self, info: dict[str, np.ndarray], present: np.ndarray | None = None) -> VectorInfo:
        """``info`` laid out as Gymnasium's vector envs do: each key beside its ``_key`` mask
        (``present``: which envs have it; all by default)."""
        mask = np.ones(self.num_envs, dtype=bool) if present is None else present
        out: dict[str, Any] = {}
        for key, value in info.items():
            out[key] = value
            out[f"_{key}"] = mask.copy()
        return out  # type: ignore[return-value]

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` int8 0/1: the learner's masks as the last call returned them
        (legal actions now; all ones for a game that has just ended, next-step autoreset)."""
        return self._mask.astype(np.int8)

    # ----------------------------------------------------------------- taking a step back
    def _save(self) -> tuple[Any, ...]:
        return (
            copy.deepcopy(self.games),
            self._seats.copy(),
            self._mask.copy(),
            self._planes.copy(),
            self._steps.copy(),
            self._autoreset.copy(),
            copy.deepcopy(self._np_random),
        )

    def _restore(self, saved: tuple[Any, ...]) -> None:
        self.games, self._seats, self._mask, self._planes, self._steps, self._autoreset, self._np_random = saved

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""


class _Ends:
    """What one vector step records of the games that end in it (any number of engine calls)."""

    def __init__(self, n: int, shape: tuple[int, ...], num_actions: int) -> None:
        self.rewards = np.zeros(n, dtype=np.float64)
        self.terminated = np.zeros(n, dtype=bool)
        self.by_rules = np.zeros(n, dtype=bool)  # ended by the rules (not a forfeit)
        self.illegal = np.zeros(n, dtype=bool)
        # The learner's last view of each game that ends (only those rows are written or read).
        self.planes = np.empty((n, *shape), dtype=np.int8)
        self.mask = np.zeros((n, num_actions), dtype=bool)
        self.seat = np.zeros(n, dtype=np.int8)


def _autoreset_mode(mode: Any) -> AutoresetMode:
    if isinstance(mode, AutoresetMode) and mode in AUTORESET_MODES:
        return mode
    for option in AUTORESET_MODES:
        if isinstance(mode, str) and mode == option.value:
            return option
    raise CarnacError(
        f"autoreset_mode={mode!r}; expected AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP "
        "(or 'NextStep', 'SameStep')"
    )
