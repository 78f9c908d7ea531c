"""The learner's episode, once: what the Gymnasium env and the self-play env share.

Both put a learner in one seat of the AEC env (:class:`carnac_env.envs.aec.raw_env`), an opponent
in the other, and hand the learner only its own turns (a tilter places next, a declined placer
places again: either side may act twice in a row). :class:`LearnerEnv` is that skeleton, as Pgx's
``core.Env`` is its games': ``reset`` (checks, seeding, the opponent's opening moves); ``step``
(the action checked once against the AEC env's tracker; an illegal one handled as
``illegal_action`` says; the learner's move; the opponent's while it is its turn; the reward,
everything the AEC env paid the learner's seat meanwhile; the end; the learner's move taken back
if the opponent fails); the observation, the info and the mask. Each env says what is its own:
how a move reaches the AEC env (:meth:`~LearnerEnv._play`), what the opponent answers
(:meth:`~LearnerEnv._opponent_action`), a game's seat and opponent
(:meth:`~LearnerEnv._start_game`), and its seats, reset-needed message and action arrays.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from carnac_env import _checks
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.envs.aec import AGENTS, raw_env
from carnac_env.envs.infos import GymInfo, learner_info
from carnac_env.envs.options import ILLEGAL_ACTION_MODES, check_seed, moves_option
from carnac_env.envs.spaces import OBSERVATION_LAYOUTS, default_image_scale, learner_observation, learner_space
from carnac_env.errors import CarnacError, IllegalActionError

__all__ = ["LearnerEnv"]


class LearnerEnv(gym.Env):
    """The single-agent learner's env over the AEC env; see the module docstring.

    A subclass's ``__init__`` sets ``board``, ``aec`` (the AEC env the moves go through),
    ``_raw`` (the raw env under it), ``render_mode``, ``seat_option``, ``seat``, ``opponent``
    and ``_needs_reset``, and calls :meth:`_learner_options`; it defines the three hooks.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    #: The seats ``reset``'s ``"seat"`` option takes.
    _SEATS: ClassVar[tuple[int | str, ...]]
    #: The message of a ``step`` before a (successful) ``reset``.
    _RESET_NEEDED: ClassVar[str]
    #: Whether an action may be a numpy array of any shape with one element (else only 0-d).
    _ONE_ELEMENT_ARRAYS: ClassVar[bool] = False

    board: Board
    aec: Any
    _raw: raw_env
    seat_option: int | str
    seat: int
    opponent: Any
    _needs_reset: bool

    def _learner_options(
        self, illegal_action: str, observation: str, image_scale: int | None, mask_in_observation: bool
    ) -> None:
        """Check and keep the learner's options, and set the spaces for ``self.board``.

        Raises:
            CarnacError: a bad illegal-action mode, layout, mask flag or image scale (in that order).
        """
        self.illegal_action = _checks.choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.observation_layout = _checks.choice("observation", observation, OBSERVATION_LAYOUTS)
        self.mask_in_observation = _checks.flag("mask_in_observation", mask_in_observation)
        if image_scale is not None:
            image_scale = _checks.whole("image_scale", image_scale, 1, 64)
        self.image_scale = default_image_scale(self.board) if image_scale is None else image_scale
        self.observation_space = learner_space(
            self.board, self.observation_layout, self.image_scale, self.mask_in_observation
        )
        self.action_space = spaces.Discrete(self.board.num_actions)
        self._forfeit: str | None = None

    # ----------------------------------------------------------------- what each env says
    def _play(self, move: int) -> None:
        """Play the legal ``move`` for the AEC env's agent to act."""
        raise NotImplementedError

    def _opponent_action(self) -> Any:
        """The opponent's answer at its turn (checked by the caller)."""
        raise NotImplementedError

    def _start_game(self, seat: int | str, seed: int | None) -> None:
        """Pick this game's ``self.seat`` (from the ``seat`` option) and ready its opponent."""
        raise NotImplementedError

    def _before_reset(self) -> None:
        """Checks and bookkeeping of ``reset`` before the AEC env restarts (none here)."""

    # ----------------------------------------------------------------- the episode
    @property
    def game(self) -> GameState:
        """The live core :class:`~carnac_env.core.game.GameState` (read it; do not change it)."""
        return self._raw.game

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, GymInfo]:
        """Start a game: pick the seat and the opponent, play the opponent until the learner acts.

        ``options`` may hold ``"moves"`` (as :meth:`carnac_env.envs.aec.raw_env.reset`: a list of
        moves or a GameRecord played first) and ``"seat"`` (0 or 1, this game only).

        Raises:
            CarnacError: a bad seed or option (nothing changes); or the opponent failed while
                playing its opening moves (then ``reset`` must be called again).
        """
        seed = check_seed(seed)
        if options is not None and not isinstance(options, dict):
            raise CarnacError(f"options={options!r}; expected a dict with 'moves' and/or 'seat', or None")
        options = dict(options or {})
        seat = _checks.choice("seat", options.pop("seat", self.seat_option), self._SEATS)
        unknown = sorted(set(options) - {"moves"})
        if unknown:
            raise CarnacError(f"unknown reset option(s) {unknown}; expected 'moves' and/or 'seat'")
        moves_option(options)
        self._before_reset()
        self.aec.reset(options=options or None)  # checks the moves before anything else changes
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        self._start_game(seat, seed)
        self._forfeit = None
        self._needs_reset = True
        self._play_opponent()
        self._needs_reset = False
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, GymInfo]:
        """Play the learner's ``action``, then the opponent's moves until the learner acts again.

        Returns the learner's observation, its reward (all the AEC env paid its seat during this
        step: the result, on the last step), terminated, truncated (never: a game is finite) and info.

        Raises:
            IllegalActionError: the action is illegal now and ``illegal_action="raise"`` (nothing changes).
            CarnacError: an action outside the action space, a game that is over (call ``reset``),
                or an opponent that failed (the learner's move is taken back).
        """
        if self._needs_reset:
            raise CarnacError(self._RESET_NEEDED)
        if self._over():
            raise CarnacError("the game is over; call reset() before step()")
        action = self._as_action(action)
        raw = self._raw
        if not raw.tracker.is_legal(action):  # the one legality check of this step
            message = (
                f"learner ({AGENTS[self.seat]}): {raw.describe_action(action)} is illegal: "
                f"{raw.game.why_illegal(action)}"
            )
            if self.illegal_action == "raise":
                raise IllegalActionError(message)
            self._forfeit = message
            return self._observe(), -1.0, True, False, self._info()
        before = list(raw.history)
        reward = 0.0
        try:
            self._play(action)
            reward += self._learner_reward()
            reward += self._play_opponent()
        except BaseException:
            self.aec.reset(options={"moves": before})  # take the learner's move back
            raise
        return self._observe(), reward, self._over(), False, self._info()

    def _as_action(self, action: Any) -> int:
        """``action`` as an int in the action space, or a CarnacError."""
        one = isinstance(action, np.ndarray) and (action.size == 1 if self._ONE_ELEMENT_ARRAYS else action.shape == ())
        value = action.item() if one else action
        if not _checks.is_whole(value) or not 0 <= value < self.board.num_actions:
            raise CarnacError(f"action {action!r} is not in the action space Discrete({self.board.num_actions})")
        return int(value)

    def _over(self) -> bool:
        """Whether the episode is over: the learner forfeited, or its seat is done in the AEC env."""
        agent = AGENTS[self.seat]
        return self._forfeit is not None or self._raw.terminations[agent] or self._raw.truncations[agent]

    def _learner_reward(self) -> float:
        """What the AEC env paid the learner's seat on the move just played."""
        return float(self._raw.rewards[AGENTS[self.seat]])

    def _play_opponent(self) -> float:
        """The opponent's moves until the learner is to act or the game is over; the learner's reward meanwhile.

        Raises:
            CarnacError: the opponent answered something that is not a legal action now.
        """
        raw, reward = self._raw, 0.0
        learner = AGENTS[self.seat]
        while not self._over() and raw.agent_selection != learner:
            chosen = self._opponent_action()
            move = int(chosen) if _checks.is_whole(chosen) else None
            if move is None or not raw.tracker.is_legal(move):
                raise CarnacError(
                    f"the opponent {self.opponent!r} chose an illegal action {chosen!r}: {raw.game.why_illegal(chosen)}"
                )
            self._play(move)
            reward += self._learner_reward()
        return reward

    # ----------------------------------------------------------------- what the learner sees
    def _observe(self) -> Any:
        return learner_observation(
            self._raw.tracker.observation(self.seat),
            self.action_masks(),
            self.board,
            self.observation_layout,
            self.image_scale,
            self.mask_in_observation,
        )

    def _info(self) -> GymInfo:
        return learner_info(
            self.board,
            self._raw.infos,
            AGENTS,
            self._raw.game.is_over,
            self.seat,
            self.action_masks(),
            self._forfeit is not None,
        )

    @property
    def forfeit(self) -> str | None:
        """Why the learner lost by an illegal action this episode (``illegal_action="lose"``), else ``None``."""
        return self._forfeit

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as an int8 0/1 array (the package's one mask dtype, which
        ``self.action_space.sample(mask=...)`` takes as it is, and sb3-contrib's ``MaskablePPO``
        calls for); all ones once the episode is over (the game ended or was forfeited), so that
        a policy fed the last observation never meets an empty mask (the package's convention
        for a finished game, as Pgx's)."""
        if self._forfeit is not None:
            return np.ones(self.board.num_actions, dtype=np.int8)
        return self._raw.tracker.mask(self.seat)

    def render(self) -> Any:
        """Draw the game as the AEC env does (``render_mode`` is the AEC env's: ``"ansi"``
        returns text, ``"human"`` prints it, ``"rgb_array"`` returns an image)."""
        return self.aec.render()

    def close(self) -> None:
        """Close the AEC env (and its renderer, if any)."""
        self.aec.close()
