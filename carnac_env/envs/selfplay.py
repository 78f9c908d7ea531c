"""Self-play over the AEC env: one seat for a single-agent learner, the other for an opponent or a pool.

===================  ==========================================================
Import               ``from carnac_env.envs.selfplay import OpponentPool, SelfPlayEnv``
Built on             ``carnac_env.env(board=...)`` or ``carnac_env.raw_env`` (or a board name)
Action space         ``Discrete(rows*cols*4 + 5)``, the AEC env's
Observation space    the Gymnasium env's (:mod:`carnac_env.envs.gym`): ``Box(int8, (rows, cols,
                     9))`` planes, or ``observation="image"``, with the mask beside them
                     with ``mask_in_observation=True``
Action mask          ``info["action_mask"]`` and ``env.action_masks()``: int8 0/1, as
                     Gymnasium's ``Discrete.sample(mask=...)`` and sb3-contrib take it
Reward               the game result for the learner's seat, +1 / -1 / 0, on its last step,
                     whoever moved last
===================  ==========================================================

PettingZoo's SB3 tutorial trains one model on both seats of an AEC env by stepping whichever
agent is to act, so a transition's reward is that of the agent that just moved: on Carnac the
result reaches only the last mover, and since turns repeat (after a tilt the tilter places;
after a decline the placer places again) consecutive transitions often belong to the same
seat. :class:`SelfPlayEnv` turns the AEC env into a single-agent Gymnasium env the way
self-play learners want it: the learner holds one seat for the whole game (``seat=
"alternate"``, the default, swaps seats every game; ``"random"`` draws it; 0 or 1 fixes
it), and ``reset`` and ``step`` play the other seat's moves, as many as the rules give it,
until the learner is to act again or the game is over. So

* every observation the learner gets is one where it acts (plane 7 all ones), except the
  last, and when the learner is given two turns in a row (its tilt, then its placement; or
  its placement declined, then its next placement) it simply acts twice;
* the reward of a step is everything the AEC env paid the learner's seat while that step ran
  (PettingZoo's ``rewards[agent]`` after the learner's move and after each of the opponent's),
  so the result of the game reaches the learner on its last step also when the opponent
  made the last move.

**The opponent** is one of

* an agent spec (``"random"``, ``"greedy"``, ``"mcts:sims=50"``, an import path; see
  :func:`carnac_env.agents.make`) or an agent (``act(state) -> int``, called with the game,
  a :class:`~carnac_env.core.game.GameState`), re-seeded at every reset from the env's
  generator, as the Gymnasium env's opponent;
* a *policy*: any other callable, ``policy(observation, action_mask) -> action``, called
  with the observation the learner would get in the opponent's seat (the same layout, seen
  from that seat) and that seat's int8 mask; a snapshot of the learner (for
  sb3-contrib: ``lambda obs, mask: snapshot.predict(obs, action_masks=mask)[0]``) plays
  as it is;
* an :class:`OpponentPool` of those, from which each game draws one member (uniformly, from
  the env's generator). A training loop adds snapshots of the learner to the pool while it
  trains (``pool.add(policy)``: a callback every N steps), and every env that holds the pool
  draws from the new members at its next reset.

``set_opponent`` replaces the opponent from the next reset on, and ``add_opponent`` adds to
the pool; both reach an env inside SB3's vector envs by ``venv.env_method(...)``.

**Seeding.** ``reset(seed=s)`` seeds the env's generator (seat draws, pool draws, the seeds of
agent opponents) and restarts the seat alternation with seat 0; the same seed and the same
actions replay the same games, given opponents whose randomness comes from the env (agents and
specs; a policy's own sampling, such as a torch model's, is its own to seed).

**Errors.** An action outside the action space raises :class:`~carnac_env.errors.CarnacError`.
An action the rules forbid now is handled as ``illegal_action`` says: ``"lose"`` (the default,
like the Gymnasium env and ``carnac_env.env()``) ends the episode with -1 without playing it,
``info["illegal_action"]`` True and ``winner`` the opponent's seat; ``"raise"`` raises
:class:`~carnac_env.errors.IllegalActionError` and changes nothing. An opponent that raises or
chooses an illegal move raises :class:`~carnac_env.errors.CarnacError` after the learner's move
is taken back, so the env is as it was before ``step`` (during ``reset``, the env needs another
``reset``).

The step is the learner envs' one step (:class:`carnac_env.envs.learner.LearnerEnv`), which the
Gymnasium env shares; this env plays its moves through the AEC env as it was given (its
wrappers and all) and adds policies, pools and alternating seats.

``reset`` options: ``"seat"`` (0 or 1, this game only) and ``"moves"`` (a list of moves or a
GameRecord played first, as :meth:`carnac_env.envs.aec.raw_env.reset` takes them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from carnac_env import _checks
from carnac_env.core.boards import Board
from carnac_env.envs.aec import raw_env
from carnac_env.envs.learner import LearnerEnv
from carnac_env.envs.opponents import make_opponent
from carnac_env.envs.options import check_options
from carnac_env.envs.spaces import learner_observation
from carnac_env.errors import CarnacError

__all__ = ["SELFPLAY_SEATS", "OpponentPool", "SelfPlayEnv"]

#: The learner's seat: 0 (Red), 1 (White), ``"alternate"`` (0, 1, 0, ... from each seeded
#: reset) or ``"random"`` (drawn every game).
SELFPLAY_SEATS = (0, 1, "alternate", "random")
#: The options of :class:`SelfPlayEnv` (besides the rules options).
SELFPLAY_OPTIONS = (
    "env",
    "opponent",
    "seat",
    "illegal_action",
    "observation",
    "image_scale",
    "mask_in_observation",
    "render_mode",
)

Policy = Callable[[Any, np.ndarray], Any]


class _Opponent:
    """One opponent in the form the env plays it: an agent (``act(state)``) or a policy."""

    def __init__(self, opponent: Any) -> None:
        if isinstance(opponent, OpponentPool):
            raise CarnacError("an OpponentPool cannot be a member of a pool; add its members one by one")
        self.given = opponent
        if isinstance(opponent, str) or callable(getattr(opponent, "act", None)):
            self.agent: Any = make_opponent(opponent, seed=0)
            self.policy: Policy | None = None
        elif callable(opponent):
            self.agent, self.policy = None, opponent
        else:
            raise CarnacError(
                "opponent must be an agent spec (e.g. 'random'), an agent (an object with act(state)), "
                f"a policy (a callable policy(observation, action_mask) -> action) or an OpponentPool, got {opponent!r}"
            )

    def reset(self, seed: int) -> None:
        if self.agent is not None and hasattr(self.agent, "reset"):
            self.agent.reset(seed)

    def __repr__(self) -> str:
        return repr(self.given)


class OpponentPool:
    """Opponents for :class:`SelfPlayEnv`, one drawn for every game.

    Args:
        members: the first members (agent specs, agents or policies); they are kept for good
            (``"random"`` here keeps some games against random play however many snapshots
            come).
        size: the most members :meth:`add` keeps beside the first ones: past that, the oldest
            added member is dropped (``None``: keep them all).

    The members are shared by every env that holds the pool (the envs of one process, such as
    a ``DummyVecEnv``'s, see what :meth:`add` adds at their next reset); each env re-seeds an
    agent member from its own generator when it draws it.

    Raises:
        CarnacError: a member that is not an opponent, or a bad ``size``; drawing from an
            empty pool.
    """

    def __init__(self, members: Iterable[Any] = (), size: int | None = None) -> None:
        if isinstance(members, str):
            raise CarnacError(f"members={members!r}; expected a list of opponents, e.g. ['random']")
        self.size = None if size is None else _checks.whole("size", size, 1)
        self._pinned = [_Opponent(member) for member in members]
        self._added: list[_Opponent] = []

    def add(self, opponent: Any) -> None:
        """Add ``opponent`` (e.g. a snapshot of the learner); games drawn from now on may meet it."""
        self._added.append(_Opponent(opponent))
        if self.size is not None and len(self._added) > self.size:
            del self._added[0]

    @property
    def members(self) -> list[Any]:
        """The members as they were given, the first ones then the added ones, oldest first."""
        return [member.given for member in self._pinned + self._added]

    def __len__(self) -> int:
        return len(self._pinned) + len(self._added)

    def draw(self, rng: np.random.Generator) -> _Opponent:
        """One member, uniformly at random from ``rng``."""
        members = self._pinned + self._added
        if not members:
            raise CarnacError("the opponent pool is empty; give it members or add() one before reset()")
        return members[int(rng.integers(len(members)))]

    def __repr__(self) -> str:
        return f"OpponentPool({self.members!r}, size={self.size})"


class SelfPlayEnv(LearnerEnv):
    """A single-agent Gymnasium env over the AEC env: the learner holds one seat, an opponent the
    other; see the module docstring.

    Args:
        env: a carnac AEC env (``carnac_env.env(...)`` or ``carnac_env.raw_env(...)``), used as it
            is; or a board name or :class:`~carnac_env.core.boards.Board` (default ``"medium"``),
            for which a raw env is built with ``render_mode`` and the rules options.
        opponent: an agent spec (default ``"random"``), an agent, a policy
            ``policy(observation, action_mask) -> action`` or an :class:`OpponentPool`.
        seat: the learner's seat: ``"alternate"`` (default), ``"random"``, 0 or 1.
        illegal_action: ``"lose"`` (default) or ``"raise"``; see the module docstring.
        observation: ``"planes"`` (default) or ``"image"``, as the Gymnasium env.
        image_scale: pixels per square for ``observation="image"``, as the Gymnasium env.
        mask_in_observation: ``True`` for ``Dict(observation, action_mask)`` observations.
        render_mode: for a board name: the AEC env's render mode.
        **rules: for a board name: rules options (``rows``, ``cols``, ``megaliths``, ...).

    Raises:
        UnknownOptionError: a keyword argument that is neither an option above nor a rules option.
        CarnacError: an env that is not a carnac AEC env (or one given with rules options or a
            render mode), a bad board, seat, opponent or option.
    """

    _SEATS = SELFPLAY_SEATS
    _RESET_NEEDED = "call reset() before step() (the env was never reset, or the last reset failed)"
    _ONE_ELEMENT_ARRAYS = True  # a policy's predict() answers an array of one action

    def __init__(
        self,
        env: AECEnv | str | Board = "medium",
        opponent: Any = "random",
        seat: int | str = "alternate",
        illegal_action: str = "lose",
        observation: str = "planes",
        image_scale: int | None = None,
        mask_in_observation: bool = False,
        render_mode: str | None = None,
        **rules: Any,
    ) -> None:
        check_options(rules, SELFPLAY_OPTIONS, "SelfPlayEnv")
        if isinstance(env, str | Board):
            env = raw_env(board=env, render_mode=render_mode, **rules)
        elif not isinstance(getattr(env, "unwrapped", None), raw_env):
            raise CarnacError(
                "env must be a carnac AEC env (carnac_env.env(...) or carnac_env.raw_env(...)) or a board name, "
                f"got {env!r}"
            )
        elif rules or render_mode is not None:
            given = sorted(rules) + (["render_mode"] if render_mode is not None else [])
            raise CarnacError(f"{', '.join(given)} given with an AEC env; set them on the AEC env itself")
        self.aec: AECEnv = env
        self._raw: raw_env = env.unwrapped
        self.board = self._raw.board
        self.render_mode = self._raw.render_mode
        self.seat_option = _checks.choice("seat", seat, SELFPLAY_SEATS)
        self._learner_options(illegal_action, observation, image_scale, mask_in_observation)
        self._opponent_option: OpponentPool | _Opponent = self._as_opponent(opponent)
        self.opponent: _Opponent | None = None  # this game's, drawn at reset
        self.seat = 0 if isinstance(self.seat_option, str) else int(self.seat_option)
        self._games_since_seed = 0
        self._needs_reset = True

    # ----------------------------------------------------------------- opponents
    @staticmethod
    def _as_opponent(opponent: Any) -> OpponentPool | _Opponent:
        return opponent if isinstance(opponent, OpponentPool) else _Opponent(opponent)

    def set_opponent(self, opponent: Any) -> None:
        """Play ``opponent`` (any form the constructor takes) from the next reset on.

        Raises:
            CarnacError: not an opponent (the current one stays).
        """
        self._opponent_option = self._as_opponent(opponent)

    def add_opponent(self, opponent: Any) -> None:
        """Add ``opponent`` to this env's :class:`OpponentPool` (see :meth:`OpponentPool.add`).

        Raises:
            CarnacError: the env's opponent is not a pool, or ``opponent`` is not an opponent.
        """
        pool = self._opponent_option
        if not isinstance(pool, OpponentPool):
            raise CarnacError(f"add_opponent needs an OpponentPool as the opponent; this env plays {pool!r}")
        pool.add(opponent)

    @property
    def opponent_pool(self) -> OpponentPool | None:
        """The env's pool, or ``None`` when it plays one opponent."""
        option = self._opponent_option
        return option if isinstance(option, OpponentPool) else None

    # ----------------------------------------------------------------- the game's seat and opponent
    def _before_reset(self) -> None:
        """An empty pool is refused before anything changes; from here a failed reset (a bad
        move list) leaves the env needing another reset."""
        if self.opponent_pool is not None and not len(self.opponent_pool):
            raise CarnacError("the opponent pool is empty; give it members or add() one before reset()")
        self._needs_reset = True

    def _start_game(self, seat: int | str, seed: int | None) -> None:
        """The seat (``"alternate"``: 0, 1, 0, ... from the last seeded reset; ``"random"``: drawn),
        then the opponent (drawn from a pool) and its seed, from the env's generator."""
        if seed is not None:
            self._games_since_seed = 0
        if seat == "alternate":
            self.seat = self._games_since_seed % 2
        elif seat == "random":
            self.seat = int(self.np_random.integers(2))
        else:
            self.seat = int(seat)
        self._games_since_seed += 1
        option = self._opponent_option
        self.opponent = option.draw(self.np_random) if isinstance(option, OpponentPool) else option
        self.opponent.reset(int(self.np_random.integers(2**31)))

    # ----------------------------------------------------------------- the moves
    def _play(self, move: int) -> None:
        self.aec.step(move)  # through the AEC env as given, wrappers and all

    def _opponent_action(self) -> Any:
        """The agent's move, or the policy's answer to what the learner would see in its seat."""
        raw, opponent, seat = self._raw, self.opponent, 1 - self.seat
        assert opponent is not None
        if opponent.policy is not None:
            seen = learner_observation(
                raw.tracker.observation(seat),
                raw.tracker.mask(seat),
                self.board,
                self.observation_layout,
                self.image_scale,
                self.mask_in_observation,
            )
            chosen = opponent.policy(seen, raw.tracker.mask(seat))
        else:
            chosen = opponent.agent.act(raw.game)
        if isinstance(chosen, np.ndarray) and chosen.size == 1:
            chosen = chosen.item()
        return chosen
