"""Carnac as a single-agent Gymnasium environment (``carnac_env/Carnac-v0``): a learner against an opponent.

===================  ==========================================================
Import               ``gymnasium.make("carnac_env/Carnac-v0", board="small", opponent="random", seat=0)``
Action space         ``Discrete(rows*cols*4 + 5)``, the action encoding of docs/rules.md
Observation space    ``Box(int8, (rows, cols, 9))``: the planes of
                     :func:`carnac_env.core.observation.observation_planes`, seen by the learner;
                     with ``observation="image"``, ``Box(uint8, 0-255, (9, H, W))`` for
                     Stable-Baselines3's stock ``CnnPolicy`` (see below)
Action mask          ``info["action_mask"]`` and ``env.unwrapped.action_masks()`` (the
                     sb3-contrib ``MaskablePPO`` convention): int8 0/1, as the AEC env's and
                     as Gymnasium's ``Discrete.sample(mask=...)`` takes it; all ones once
                     the episode is over
Info                 :class:`carnac_env.envs.infos.GymInfo` (a ``TypedDict``)
Reward               the game result for the learner, +1 win, -1 loss, 0 draw, on the last step
Vector form          ``gymnasium.make_vec("carnac_env/Carnac-v0", num_envs=1024)``:
                     :class:`carnac_env.envs.vector.CarnacVectorEnv`, on the batched engine
===================  ==========================================================

The learner plays one seat (``seat=0`` Red, moves first; ``1`` White; ``"random"`` drawn at
every reset from the env's seeded generator). Carnac does not alternate strictly: after the
learner tilts, the learner places next; after the opponent declines the learner's megalith,
the learner places again; a megalith that cannot be tilted passes the turn straight to the
other placer. ``reset`` and ``step`` play the opponent's moves until the learner is to act
or the game is over, so every observation the learner gets is one where it acts (plane 7
all ones), except the final one.

The opponent is an agent spec (``"random"``, ``"greedy"``, ``"mcts:sims=200"``, an import
path; see :func:`carnac_env.agents.make`) or any agent, an object with ``act(state) -> int``,
called with the game (a :class:`~carnac_env.core.game.GameState`) at the opponent's turn: the
one agent protocol of the package (:mod:`carnac_env.agents.protocol`,
:func:`carnac_env.envs.opponents.make_opponent`). An agent
built from a spec is re-seeded at every reset from the env's generator (as is any opponent
object with ``reset(seed)``), so a seeded reset replays the same game for the same actions.

The env plays its game on an inner AEC env (:class:`carnac_env.envs.aec.raw_env`), through
that env's public API: each step checks the learner's action once, against the AEC env's
observation tracker (:attr:`~carnac_env.envs.aec.raw_env.tracker`), plays it with
:meth:`~carnac_env.envs.aec.raw_env.play_legal`, and reads the learner's observation and mask
from the tracker. The step itself is the learner envs' one step
(:class:`carnac_env.envs.learner.LearnerEnv`), which the self-play env shares.

``observation="image"`` lays the same planes out as an image, channels first: uint8, a 0/1
plane as 0/255, the supply plane as ``255 * supply // megaliths``, and each square drawn as a
block of ``image_scale`` x ``image_scale`` pixels (by default the smallest block that makes the
image at least 36 pixels each way, the least that SB3's default ``NatureCNN`` takes). This is
what SB3's ``CnnPolicy`` and its env checker expect of an image, so stock policies train on it
without a custom feature extractor (:func:`carnac_env.envs.spaces.image_observation`).

``mask_in_observation=True`` puts the mask beside the board, as the AEC env does:
``Dict(observation=<planes or image>, action_mask=Box(int8, (num_actions,)))``. With
``observation="image"`` this is what SB3's ``MultiInputPolicy`` takes without warnings; with
the planes, TorchRL's ``GymEnv`` carries the mask as an ``"action_mask"`` entry for its
``ActionMask`` transform.

An action outside the action space raises :class:`~carnac_env.errors.CarnacError`. An
action in the space that the rules forbid now is handled as ``illegal_action`` says:
``"lose"`` (the default, like PettingZoo's ``TerminateIllegalWrapper`` in ``carnac_env.env()``)
ends the episode with reward -1 without playing it, and ``info`` holds ``"illegal_action"``
(the reason); ``"raise"`` raises :class:`~carnac_env.errors.IllegalActionError` naming the
action, its notation and why, and changes nothing. Mask the policy to avoid both.

``info`` has the same keys and shapes at every step: ``"action_mask"``, ``"seat"``, and as in
the AEC env ``"dolmens"`` (the learner's dolmen sizes, largest first, zero-padded to a fixed
length), ``"score"`` (BGA score) and ``"winner"`` (0, 1, or -1 for a draw or a game not over),
with ``"opponent_dolmens"`` and ``"opponent_score"`` beside them for the other seat, all
filled in on the last step; ``"illegal_action"`` (bool) is True on a forfeit, whose reason is
:attr:`CarnacEnv.forfeit`, and whose ``"winner"`` is the opponent's seat. Every value is a
number or a numeric array, so TorchRL's ``auto_register_info_dict`` and Tianshou's buffers can
store them.

If the opponent raises (an illegal choice, or any exception of its own), the learner's move is
taken back before the error propagates, so the env is left as it was before ``step``; an
opponent that fails during ``reset`` leaves the env needing another ``reset``.

:func:`carnac_env.envs.registration.register_envs` registers the id (``import carnac_env`` sees to it).
"""

from __future__ import annotations

from typing import Any

from carnac_env.core.boards import Board, make_board
from carnac_env.envs.aec import raw_env
from carnac_env.envs.learner import LearnerEnv
from carnac_env.envs.opponents import make_opponent
from carnac_env.envs.options import ENV_OPTIONS, SEATS, check_options, check_seat

__all__ = ["CarnacEnv"]


class CarnacEnv(LearnerEnv):
    """The single-agent Carnac environment; see the module docstring.

    Args:
        board: a board name, ``"custom"`` or a :class:`~carnac_env.core.boards.Board`.
        opponent: an agent spec (default ``"random"``) or an agent (an object with ``act(state) -> int``).
        seat: the learner's seat: 0, 1 or ``"random"``.
        render_mode: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (as the AEC env).
        illegal_action: ``"lose"`` (default) or ``"raise"``; see the module docstring.
        observation: ``"planes"`` (default, int8 ``(rows, cols, 9)``) or ``"image"`` (uint8
            ``(9, H, W)`` for SB3's ``CnnPolicy``); see the module docstring.
        image_scale: pixels per square for ``observation="image"`` (default: the least that
            makes the image 36 pixels each way).
        mask_in_observation: ``True`` for a ``Dict(observation, action_mask)`` observation
            (SB3's ``MultiInputPolicy``, TorchRL's ``ActionMask``); the mask stays in ``info``.
        **rules: rules options (``rows``, ``cols``, ``megaliths``, ``min_dolmen``, ``last_tilt``).

    Raises:
        UnknownOptionError: a keyword argument that is neither an option above nor a rules
            option (a TypeError as well as a CarnacError).
        CarnacError: a bad board, rules option, seat, opponent, render mode or observation layout.
    """

    _SEATS = SEATS
    _RESET_NEEDED = "the last reset() failed (the opponent raised); call reset() before step()"

    def __init__(
        self,
        board: str | Board = "medium",
        opponent: Any = "random",
        seat: int | str = 0,
        render_mode: str | None = None,
        illegal_action: str = "lose",
        observation: str = "planes",
        image_scale: int | None = None,
        mask_in_observation: bool = False,
        **rules: Any,
    ) -> None:
        check_options(rules, ENV_OPTIONS, "carnac_env/Carnac-v0")
        self.board = make_board(board, **rules)
        self._learner_options(illegal_action, observation, image_scale, mask_in_observation)
        self._needs_reset = False
        self.seat_option = check_seat(seat)
        self.opponent = make_opponent(opponent, seed=0)
        self.aec = self._raw = raw_env(board=self.board, render_mode=render_mode)
        self.render_mode = render_mode
        self.seat = 0 if seat == "random" else int(seat)

    def _start_game(self, seat: int | str, seed: int | None) -> None:
        """The seat (``"random"``: drawn from the env's generator), then the opponent's seed."""
        self.seat = int(self.np_random.integers(2)) if seat == "random" else int(seat)
        opponent_seed = int(self.np_random.integers(2**31))
        if hasattr(self.opponent, "reset"):
            self.opponent.reset(opponent_seed)

    def _play(self, move: int) -> None:
        self._raw.play_legal(move)  # checked once, by the caller

    def _opponent_action(self) -> Any:
        return self.opponent.act(self._raw.game)
