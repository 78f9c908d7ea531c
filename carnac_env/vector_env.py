"""A Gymnasium ``VectorEnv`` of Carnac games for single-agent training, on the batched engine.

>>> import gymnasium as gym
>>> envs = gym.make_vec("carnac_env/Carnac-v0", num_envs=1024, board="medium")
>>> obs, infos = envs.reset(seed=0)
>>> obs, rewards, terminations, truncations, infos = envs.step(actions)  # (1024,) ints

or ``carnac_env.vector_env.CarnacVectorEnv(num_envs=1024, board="medium")``. Each of the
``num_envs`` games pits the learner (seat 0, 1 or ``"random"`` per game) against an opponent,
given as for the single env: an agent spec (``"random"``, the default, played by the batched
engine's own sampler; ``"greedy"``, ``"mcts:sims=200"``, an import path) or an agent object
with ``act(env) -> int``, called with an AEC env holding that game at the opponent's turn (the
one opponent protocol, :func:`carnac_env.env_common.make_opponent`). On top of it, a batched
policy: any callable without ``act``, ``policy(observation, action_mask) -> actions``, taking
the ``(K, rows, cols, 9)`` int8 observations and ``(K, num_actions)`` bool masks of the K games
where the opponent is to act (seen by the opponent) and returning K legal actions. After the
learner's actions the opponent moves, as many times as the rules give it the turn, until the
learner acts again in every game.

Spaces: ``single_observation_space`` is the single env's ``Box(int8, (rows, cols, 9))``,
``single_action_space`` ``Discrete(rows*cols*4 + 5)``; rewards are the learner's result
(+1/-1/0) on the step its game ends. Masks: ``infos["action_mask"]`` ``(num_envs,
num_actions)`` bool and :meth:`CarnacVectorEnv.action_masks` (sb3-contrib's convention).
``infos["seat"]`` gives the learner's seat in each game.

Autoreset: ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``. When a game ends
on a step, that step's ``terminations[i]`` is True with the learner's reward, ``obs[i]`` and
the mask already belong to the next game (after the opponent's opening moves when the
learner is White), and ``infos["final_obs"][i]`` holds the finished position seen by the
learner (``infos["_final_obs"]`` marks which); ``infos["final_info"]`` holds its ``winner``
(0, 1 or -1 for a draw). Nothing is ever truncated.

Illegal learner actions raise :class:`~carnac_env.errors.IllegalActionError` naming the env
indices and actions, and change nothing (mask the policy). If an opponent policy raises or
returns bad or illegal actions, the learner's actions are taken back before the error
propagates: every game, the seats and :meth:`CarnacVectorEnv.action_masks` are as they were
before ``step``.

``seed`` seeds the seat draws and the random opponent; the rules themselves have no
randomness. All games share one generator: ``reset(seed=s)`` seeds it with ``s``, and
``reset(seed=[s0, ..., s(n-1)])`` (one seed per env, as Gymnasium's vector envs take) seeds it
with the whole list (a list of another length is refused), so the same list replays the same
batch. The vector env has no render modes (render one game with the single env).
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
from carnac_env.aec import raw_env
from carnac_env.batch import BatchGame
from carnac_env.core.boards import Board, make_board
from carnac_env.env_common import check_options, check_seed, make_opponent, observation_space
from carnac_env.errors import CarnacError, IllegalActionError

VECTOR_OPTIONS = ("num_envs", "board", "opponent", "seat", "backend", "render_mode")

Policy = Callable[[np.ndarray, np.ndarray], Any]


class CarnacVectorEnv(VectorEnv):
    """``num_envs`` Carnac games against a batched opponent; see the module docstring.

    Args:
        num_envs: how many games (>= 1).
        board: a board name, ``"custom"`` or a :class:`~carnac_env.core.boards.Board`.
        opponent: an agent spec (``"random"``, the default), an agent object with ``act(env)``,
            or a batched policy ``policy(observation, action_mask) -> actions``.
        seat: the learner's seat: 0, 1 or ``"random"`` (drawn for every game).
        backend: the batched engine's backend, ``"auto"``, ``"numpy"`` or ``"numba"``.
        render_mode: must be ``None``: the vector env has no render modes.
        **rules: rules options (``rows``, ``cols``, ``megaliths``, ``min_dolmen``, ``last_tilt``).

    Raises:
        UnknownOptionError: a keyword argument that is neither an option above nor a rules option.
        CarnacError: a bad board, rules option, ``num_envs``, seat, opponent, backend or render mode.
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        board: str | Board = "medium",
        opponent: str | Policy = "random",
        seat: int | str = 0,
        backend: str = "auto",
        render_mode: str | None = None,
        **rules: Any,
    ) -> None:
        check_options(rules, VECTOR_OPTIONS, "CarnacVectorEnv")
        if render_mode is not None:
            raise CarnacError(
                f"render_mode={render_mode!r}: CarnacVectorEnv has no render modes (metadata['render_modes'] is "
                "empty); render one game with gymnasium.make('carnac_env/Carnac-v0', render_mode=...) instead"
            )
        self.board = make_board(board, **rules)
        seat = _checks.choice("seat", seat, (0, 1, "random"))
        self.games = BatchGame(self.board, num_envs=num_envs, seed=None, backend=backend)
        self.num_envs = self.games.num_envs
        self.seat_option = seat
        self.opponent = opponent
        self._random = isinstance(opponent, str) and opponent == "random"
        if self._random or (callable(opponent) and not hasattr(opponent, "act")):
            self._agent = None  # the batched sampler, or a batched policy
        else:
            self._agent = make_opponent(opponent, seed=0)
            self._view = raw_env(self.board)  # holds one game at a time for the agent
        self.render_mode = None
        self.single_observation_space = observation_space(self.board)["observation"]
        self.single_action_space = spaces.Discrete(self.board.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._np_random, _ = seeding.np_random(None)
        self._seats = np.zeros(self.num_envs, dtype=np.int8)
        self._mask = np.zeros((self.num_envs, self.board.num_actions), dtype=bool)
        self._needs_reset = True

    @property
    def seats(self) -> np.ndarray:
        """``(num_envs,)`` int8: the learner's seat in each current game (a copy)."""
        return self._seats.copy()

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
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
        step = self.games.reset()
        obs, mask, *_ = self._play_opponent(step, np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, bool))
        self._needs_reset = False
        return obs, {"action_mask": mask, "seat": self._seats.copy()}

    def _draw_seats(self, count: int) -> np.ndarray:
        if self.seat_option == "random":
            return self._np_random.integers(0, 2, count).astype(np.int8)
        return np.full(count, self.seat_option, dtype=np.int8)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play the learner's action in every game, then the opponent until the learner acts again.

        Raises:
            IllegalActionError: some learner actions are illegal (nothing changes).
            CarnacError: ``actions`` of the wrong shape or type, or ``step`` before ``reset``.
        """
        if self._needs_reset:
            raise CarnacError("call reset() before step()")
        # A policy opponent may fail after the learner's moves are played: keep what is needed to take them back.
        saved = None if self._random else self._save()
        step = self.games.step(actions, final_observer=self._seats, observe=self._agent is None and not self._random)
        try:
            return self._after_learner(step)
        except BaseException as error:
            if saved is None:
                raise
            self._restore(saved)
            if isinstance(error, CarnacError):
                kind = IllegalActionError if isinstance(error, IllegalActionError) else CarnacError
                raise kind(f"the opponent policy failed: {error} (the learner's actions were taken back)") from error
            raise

    def _save(self) -> tuple[Any, ...]:
        return copy.deepcopy(self.games), self._seats.copy(), self._mask.copy(), copy.deepcopy(self._np_random)

    def _restore(self, saved: tuple[Any, ...]) -> None:
        self.games, self._seats, self._mask, self._np_random = saved

    def _after_learner(self, step: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        n = self.num_envs
        rewards = step.rewards[np.arange(n), self._seats].astype(np.float32)
        terminated = step.terminated.copy()
        final_obs = step.final_observation.copy()
        winners = self._winners(step, terminated)
        if terminated.any():
            self._seats[terminated] = self._draw_seats(int(terminated.sum()))
        obs, mask, rewards, terminated, final_obs, winners = self._play_opponent(
            step, rewards, terminated, final_obs, winners
        )
        infos: dict[str, Any] = {"action_mask": mask, "seat": self._seats.copy()}
        if terminated.any():
            final = np.full(n, None, dtype=object)
            for i in np.flatnonzero(terminated):
                final[i] = final_obs[i]
            infos["final_obs"] = final
            infos["_final_obs"] = terminated.copy()
            infos["final_info"] = {"winner": winners, "_winner": terminated.copy()}
            infos["_final_info"] = terminated.copy()
        return obs, rewards, terminated, np.zeros(n, dtype=bool), infos

    @staticmethod
    def _winners(step: Any, terminated: np.ndarray) -> np.ndarray:
        """Winner per game from the rewards of the games that ended (-1 draw); 0 elsewhere."""
        red = step.rewards[:, 0]
        return np.where(terminated, np.where(red > 0, 0, np.where(red < 0, 1, -1)), 0).astype(np.int8)

    def _play_opponent(
        self,
        step: Any,
        rewards: np.ndarray,
        terminated: np.ndarray,
        final_obs: np.ndarray | None = None,
        winners: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        if final_obs is None:
            final_obs = np.zeros((n, *self.games.observation_shape), dtype=np.int8)
        if winners is None:
            winners = np.zeros(n, dtype=np.int8)
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
            batched_policy = self._agent is None and not self._random
            reply = self.games.step(actions, active=waiting, final_observer=self._seats, observe=batched_policy)
            ended = reply.terminated
            if (ended & terminated).any():
                raise CarnacError(
                    "a game ended twice in one step before the learner could act: this board is too small "
                    f"for the learner's seat ({self.board.rules()})"
                )
            if ended.any():
                rewards = rewards.copy()
                rewards[ended] = reply.rewards[np.flatnonzero(ended), self._seats[ended]]
                terminated = terminated | ended
                final_obs[ended] = reply.final_observation[ended]
                winners[ended] = self._winners(reply, ended)[ended]
                self._seats[ended] = self._draw_seats(int(ended.sum()))
            obs, mask, player = reply.observation, reply.action_mask, reply.current_player
            waiting = player != self._seats
        if obs is None:
            now = self.games.observe()
            obs, mask = now.observation, now.action_mask
        self._mask = mask
        return obs, mask.copy(), rewards, terminated, final_obs, winners

    def _agent_move(self, index: int) -> int:
        """The opponent agent's action in game ``index``: the agent protocol, ``act(env)``, on
        an AEC env holding that game."""
        self._view._start_new_game(self.games.get_state(index), [])
        return self._agent.act(self._view)

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bool: the learner's legal actions now (a copy)."""
        return self._mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""
