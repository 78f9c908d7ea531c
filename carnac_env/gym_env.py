"""Carnac as a single-agent Gymnasium environment (``carnac_env/Carnac-v0``): a learner against an opponent.

===================  ==========================================================
Import               ``gymnasium.make("carnac_env/Carnac-v0", board="small", opponent="random", seat=0)``
Action space         ``Discrete(rows*cols*4 + 5)``, the action encoding of docs/rules.md
Observation space    ``Box(int8, (rows, cols, 9))``: the planes of
                     :func:`carnac_env.core.observation.observation_planes`, seen by the learner
Action mask          ``info["action_mask"]`` (bool) and ``env.unwrapped.action_masks()``
                     (the sb3-contrib ``MaskablePPO`` convention)
Reward               the game result for the learner, +1 win, -1 loss, 0 draw, on the last step
Vector form          ``gymnasium.make_vec("carnac_env/Carnac-v0", num_envs=1024)``:
                     :class:`carnac_env.vector_env.CarnacVectorEnv`, on the batched engine
===================  ==========================================================

The learner plays one seat (``seat=0`` Red, moves first; ``1`` White; ``"random"`` drawn at
every reset from the env's seeded generator). Carnac does not alternate strictly: after the
learner tilts, the learner places next; after the opponent declines the learner's megalith,
the learner places again; a megalith that cannot be tilted passes the turn straight to the
other placer. ``reset`` and ``step`` play the opponent's moves until the learner is to act
or the game is over, so every observation the learner gets is one where it acts (plane 7
all ones), except the final one.

The opponent is an agent spec (``"random"``, ``"greedy"``, ``"mcts:sims=200"``, an import
path; see :func:`carnac_env.agents.make`) or any object with ``act(env) -> int``, called with
the inner PettingZoo AEC env (``carnac_env.aec.raw_env``) at the opponent's turn. An agent
built from a spec is re-seeded at every reset from the env's generator (as is any opponent
object with ``reset(seed)``), so a seeded reset replays the same game for the same actions.
Without :mod:`carnac_env.agents` a built-in uniformly random opponent stands in.

An action outside the action space raises :class:`~carnac_env.errors.CarnacError`. An
action in the space that the rules forbid now is handled as ``illegal_action`` says:
``"lose"`` (the default, like PettingZoo's ``TerminateIllegalWrapper`` in ``carnac_env.env()``)
ends the episode with reward -1 without playing it, and ``info`` holds ``"illegal_action"``
(the reason); ``"raise"`` raises :class:`~carnac_env.errors.IllegalActionError` naming the
action, its notation and why, and changes nothing. Mask the policy to avoid both. At the end,
``info`` holds ``"dolmens"`` (the learner's dolmen sizes, largest first), ``"score"`` (BGA
score) and ``"winner"`` (``"player_0"``, ``"player_1"`` or ``None``) as in the AEC env.

:func:`carnac_env.registration.register_envs` registers the id (``import carnac_env`` sees to it).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from carnac_env.aec import AGENTS, observation_space, raw_env
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.observation import legal_mask, observation_planes
from carnac_env.errors import CarnacError, IllegalActionError

SEATS = (0, 1, "random")
ILLEGAL_ACTION_MODES = ("lose", "raise")


class RandomOpponent:
    """A uniformly random legal move from a seeded numpy generator (the fallback opponent)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed."""
        self.rng = np.random.default_rng(seed)

    def act(self, env: Any) -> int:
        """A uniformly random legal action for ``env.agent_selection``."""
        legal = env.unwrapped.game.legal_actions()
        return int(legal[int(self.rng.integers(len(legal)))])


def make_opponent(opponent: Any, seed: int = 0) -> Any:
    """An opponent object from a spec string or an object with ``act(env)``.

    Specs go to :func:`carnac_env.agents.make` when that module is available; without it,
    only ``"random"`` works (:class:`RandomOpponent`).

    Raises:
        CarnacError: neither a spec nor an object with ``act``.
    """
    if isinstance(opponent, str):
        try:
            from carnac_env.agents import make
        except ImportError:
            if opponent == "random":
                return RandomOpponent(seed)
            raise CarnacError(
                f"opponent {opponent!r} needs carnac_env.agents, which is not available; "
                "use 'random' or an agent object"
            ) from None
        return make(opponent, seed=seed)
    if callable(getattr(opponent, "act", None)):
        return opponent
    raise CarnacError(f"opponent must be an agent spec (e.g. 'random') or an object with act(env), got {opponent!r}")


def _check_seat(seat: Any) -> int | str:
    if isinstance(seat, bool) or seat not in SEATS:
        raise CarnacError(f"seat={seat!r}; expected 0 (Red, moves first), 1 (White) or 'random'")
    return seat


class CarnacEnv(gym.Env):
    """The single-agent Carnac environment; see the module docstring.

    Args:
        board: a board name, ``"custom"`` or a :class:`~carnac_env.core.boards.Board`.
        opponent: an agent spec (default ``"random"``) or an object with ``act(env) -> int``.
        seat: the learner's seat: 0, 1 or ``"random"``.
        render_mode: ``None``, ``"ansi"`` or ``"human"`` (as the AEC env).
        illegal_action: ``"lose"`` (default) or ``"raise"``; see the module docstring.
        **rules: rules options (``rows``, ``cols``, ``megaliths``, ``min_dolmen``, ``last_tilt``).

    Raises:
        CarnacError: a bad board, rules option, seat, opponent or render mode.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 2}

    def __init__(
        self,
        board: str | Board = "medium",
        opponent: Any = "random",
        seat: int | str = 0,
        render_mode: str | None = None,
        illegal_action: str = "lose",
        **rules: Any,
    ) -> None:
        self.board = make_board(board, **rules)
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise CarnacError(f"illegal_action={illegal_action!r}; expected 'lose' or 'raise'")
        self.illegal_action = illegal_action
        self._forfeit: str | None = None
        self.seat_option = _check_seat(seat)
        self.opponent = make_opponent(opponent, seed=0)
        self.aec = raw_env(board=self.board, render_mode=render_mode)
        self.render_mode = render_mode
        self.observation_space = observation_space(self.board)["observation"]
        self.action_space = spaces.Discrete(self.board.num_actions)
        self.seat = 0 if seat == "random" else int(seat)

    @property
    def game(self) -> GameState:
        """The live core :class:`~carnac_env.core.game.GameState` (read it; do not change it)."""
        return self.aec.game

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start a game: pick the seat, re-seed the opponent, play its moves until the learner acts.

        ``options`` may hold ``"moves"`` (as :meth:`carnac_env.aec.raw_env.reset`: a list of
        moves or a GameRecord played first) and ``"seat"`` (0 or 1, this game only).
        """
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        options = dict(options or {})
        seat = _check_seat(options.pop("seat", self.seat_option))
        unknown = sorted(set(options) - {"moves"})
        if unknown:
            raise CarnacError(f"unknown reset option(s) {unknown}; expected 'moves' and/or 'seat'")
        self.seat = int(self.np_random.integers(2)) if seat == "random" else int(seat)
        opponent_seed = int(self.np_random.integers(2**31))
        if hasattr(self.opponent, "reset"):
            self.opponent.reset(opponent_seed)
        self.aec.reset(options=options or None)
        self._forfeit = None
        self._play_opponent()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's ``action``, then the opponent's moves until the learner acts again.

        Raises:
            IllegalActionError: the action is illegal now (nothing changes).
            CarnacError: the game is over (call ``reset``).
        """
        game = self.aec.game
        if game.is_over or self._forfeit is not None:
            raise CarnacError("the game is over; call reset() before step()")
        action = self._as_action(action)
        reason = game.why_illegal(action)
        if reason is not None:
            message = f"learner ({AGENTS[self.seat]}): {self.aec.describe_action(action)} is illegal: {reason}"
            if self.illegal_action == "raise":
                raise IllegalActionError(message)
            self._forfeit = message
            info = self._info()
            info["illegal_action"] = message
            return self._observe(), -1.0, True, False, info
        self.aec.step(action)
        self._play_opponent()
        over = self.aec.game.is_over
        reward = float(self.aec.game.result().reward(self.seat)) if over else 0.0
        return self._observe(), reward, over, False, self._info()

    def _as_action(self, action: Any) -> int:
        """``action`` as an int in the action space, or a CarnacError."""
        value = action.item() if isinstance(action, np.ndarray) and action.shape == () else action
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            value = None
        if value is None or not 0 <= value < self.board.num_actions:
            raise CarnacError(f"action {action!r} is not in the action space Discrete({self.board.num_actions})")
        return int(value)

    def _play_opponent(self) -> None:
        game = self.aec.game
        while not game.is_over and game.to_act != self.seat:
            action = self.opponent.act(self.aec)
            reason = game.why_illegal(action)
            if reason is not None:
                raise CarnacError(f"the opponent {self.opponent!r} chose an illegal action {action!r}: {reason}")
            self.aec.step(int(action))

    def _observe(self) -> np.ndarray:
        return observation_planes(self.aec.game, self.seat)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self.action_masks(), "seat": self.seat}
        if self.aec.game.is_over:
            info.update(self.aec.infos[AGENTS[self.seat]])
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (all False once the episode is over)."""
        if self._forfeit is not None:
            return np.zeros(self.board.num_actions, dtype=bool)
        return legal_mask(self.aec.game, self.seat).astype(bool)

    def render(self) -> str | None:
        """Draw the game as the AEC env does (``"ansi"`` returns text, ``"human"`` prints it)."""
        return self.aec.render()

    def close(self) -> None:
        """Release the renderer, if any."""
        self.aec.close()
