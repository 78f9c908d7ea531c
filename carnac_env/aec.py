"""Carnac as a PettingZoo AEC environment (``carnac_v0``).

===================  ==========================================================
Import               ``import carnac_env; env = carnac_env.env(board="medium")``
Agents               ``player_0`` (Red, moves first), ``player_1`` (White)
Action space         ``Discrete(rows*cols*4 + 5)`` (293 on the medium board)
Observation space    ``Dict(observation=Box(int8, (rows, cols, 9)),
                     action_mask=Box(int8, (rows*cols*4 + 5,)))``
Rewards              +1 win, -1 loss, 0 draw; only when the game ends
===================  ==========================================================

The full page, with the spaces table generated from the real spaces, every observation
plane and worked action examples, is docs/environment.md (``carnac_env.docs_page()``).

Turn order follows the game, not strict alternation: after a tilt the same agent acts
again (it places next); after a decline the placer acts again; a placement that cannot be
tilted passes straight to the opponent's placement. The action mask is all zeros for the
agent that is not to act. At the end, ``infos[agent]`` holds ``"dolmens"`` (that agent's
dolmen sizes, largest first), ``"score"`` (the BGA score) and ``"winner"``.

``carnac_env.env()`` wraps :class:`raw_env` in PettingZoo's standard wrappers (an illegal
move ends the game with -1 for the offender; out-of-bounds actions assert; call order is
enforced). ``raw_env.step`` with an illegal action raises ``ValueError`` that names the
action, its notation and the reason, and leaves the game exactly as it was.

Unlike PettingZoo's classic environments, ``copy.deepcopy(env)`` and ``pickle`` keep the
game in progress, and the rules core is exposed as ``env.unwrapped.game`` for search.

Version history: v0, the first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import OVER, GameState
from carnac_env.core.notation import action_to_text, parse_action
from carnac_env.core.observation import NUM_PLANES, SUPPLY, ObservationTracker
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, IllegalActionError
from carnac_env.render.ansi import render_text, supports_color
from carnac_env.wrappers import wrap

AGENTS = ("player_0", "player_1")
RENDER_MODES = ("human", "ansi")


def observation_space(board: Board) -> spaces.Dict:
    """The observation space for ``board`` (a fresh object; the envs cache theirs)."""
    high = np.ones((board.rows, board.cols, NUM_PLANES), dtype=np.int8)
    high[:, :, SUPPLY] = board.megaliths
    return spaces.Dict(
        {
            "observation": spaces.Box(0, high, dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (board.num_actions,), dtype=np.int8),
        }
    )


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming convention)
    """The bare Carnac AEC environment; see the module docstring and docs/environment.md.

    Args:
        board: a board name (``small``, ``medium``, ``large``, ``kermario``, ``kerlescan``,
            ``le_menec``, ``petit_menec``), ``"custom"``, or a :class:`Board`.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text), ``"human"`` (prints
            text to the terminal after every step, in colour where it supports it) or
            ``"rgb_array"`` (an image; needs the ``render`` extra).
        **rules: rules options ``rows``, ``cols``, ``megaliths``, ``min_dolmen``,
            ``last_tilt`` (see :func:`carnac_env.core.make_board`).

    Raises:
        ValueError: an unknown board, rules option or render mode, or an impossible board.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "carnac_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, board: str | Board = "medium", render_mode: str | None = None, **rules: Any) -> None:
        super().__init__()
        self.board = make_board(board, **rules)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise CarnacError(f"unknown render_mode {render_mode!r}; expected None or one of {', '.join(RENDER_MODES)}")
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self._observation_space = observation_space(self.board)
        self._action_space = spaces.Discrete(self.board.num_actions)
        self.observation_spaces = dict.fromkeys(AGENTS, self._observation_space)
        self.action_spaces = dict.fromkeys(AGENTS, self._action_space)
        self._image_renderer: Any = None
        self.np_random, _ = seeding.np_random(None)
        self._start_new_game(GameState(self.board), [])

    # ----------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        """The observation space (the same object for both agents and on every call)."""
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Discrete:
        """The action space (the same object for both agents and on every call)."""
        return self._action_space

    # ----------------------------------------------------------------- the AEC loop
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. The game itself has no randomness; ``seed`` seeds
        ``np_random`` and the action spaces' samplers.

        ``options`` may hold ``"moves"``: a list of moves (action numbers or notation) or a
        :class:`~carnac_env.core.record.GameRecord`, played from the start so that the
        episode begins from that position (for teaching, analysis and search).
        """
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
            for i, space in enumerate((self._action_space, self._observation_space)):
                space.seed(seed + i)
        state = GameState(self.board)
        played: list[int] = []
        moves = (options or {}).get("moves")
        if moves is not None:
            if isinstance(moves, GameRecord):
                if moves.board != self.board:
                    raise CarnacError(f"the record is for board {moves.board}, this env plays {self.board}")
                moves = moves.moves
            for index, move in enumerate(moves, start=1):
                try:
                    action = parse_action(self.board, move, state.to_act) if isinstance(move, str) else move
                    state.apply(action)
                except CarnacError as err:
                    raise CarnacError(f"reset option 'moves', move {index} ({move!r}): {err}") from None
                played.append(int(action))
        self._start_new_game(state, played)

    def _start_new_game(self, state: GameState, played: list[int]) -> None:
        self.game = state
        self._tracker = ObservationTracker(state)
        self.history = played
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[state.to_act]
        if state.phase == OVER:
            self._finish()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": planes, "action_mask": mask}`` for ``agent`` (fresh arrays)."""
        player = 0 if agent == "player_0" else AGENTS.index(agent)
        tracker = self._tracker
        mask = tracker.mask_to_act if player == self.game.to_act else tracker._zeros
        return {"observation": tracker.observation(player), "action_mask": mask.copy()}

    def step(self, action: int | None) -> None:
        """Play ``action`` for ``agent_selection``; ``None`` for an agent that is done.

        Raises:
            ValueError: the action is illegal now (the message names it, its notation and
                why); nothing changes.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        legal = (
            isinstance(action, int | np.integer)
            and not isinstance(action, bool)
            and 0 <= action < self.board.num_actions
            and self._tracker.mask_to_act[action]
        )
        if not legal:
            reason = self.game.why_illegal(action) or "unknown"
            raise IllegalActionError(f"{agent}: {self.describe_action(action)} is illegal: {reason}")
        action = int(action)
        self._cumulative_rewards[agent] = 0
        self.game._apply_legal(action)
        self._tracker.update(self.game, action)
        self.history.append(action)
        if self.game.phase == OVER:
            self._finish()
        else:
            self.agent_selection = AGENTS[self.game.to_act]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish(self) -> None:
        result = self.game.result()
        for player, agent in enumerate(AGENTS):
            self.rewards[agent] = result.reward(player)
            self.terminations[agent] = True
            self.infos[agent] = {
                "dolmens": list(result.dolmens[player]),
                "score": result.scores[player],
                "winner": None if result.winner is None else AGENTS[result.winner],
            }
        self.agent_selection = AGENTS[1 - self.game.to_act]

    # ----------------------------------------------------------------- conveniences
    def describe_action(self, action: object) -> str:
        """``"action 123 (c4 Rns)"``: an action number with its notation for the agent to act."""
        if (
            isinstance(action, int | np.integer)
            and not isinstance(action, bool)
            and 0 <= action < self.board.num_actions
        ):
            return f"action {int(action)} ({action_to_text(self.board, int(action), self.game.to_act)})"
        return f"action {action!r}"

    def action_to_text(self, action: int) -> str:
        """The move notation of ``action`` for the agent to act (e.g. ``"c4 Rns"``)."""
        return action_to_text(self.board, int(action), self.game.to_act)

    def parse_action(self, text: str) -> int:
        """The action number for a move in notation, for the agent to act."""
        return parse_action(self.board, text, self.game.to_act)

    def legal_actions(self) -> list[int]:
        """The legal action numbers for ``agent_selection``."""
        return self.game.legal_actions()

    def record(self, **meta: Any) -> GameRecord:
        """The game so far as a :class:`~carnac_env.core.record.GameRecord` (extra keys go
        into its ``meta``)."""
        return GameRecord.from_actions(self.board, self.history, meta)

    # ----------------------------------------------------------------- rendering
    def render(self) -> str | np.ndarray | None:
        """Draw the game as set by ``render_mode`` (see the class docstring)."""
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.render_mode == "ansi":
            return render_text(self.game)
        if self.render_mode == "human":
            print(render_text(self.game, color=supports_color()), end="\n\n")
            return None
        if self._image_renderer is None:
            from carnac_env.render.image import ImageRenderer  # the optional render extra

            self._image_renderer = ImageRenderer(self.board)
        return self._image_renderer.draw(self.game)

    def close(self) -> None:
        """Release the renderer, if any."""
        renderer, self._image_renderer = self._image_renderer, None
        if renderer is not None and hasattr(renderer, "close"):
            renderer.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_image_renderer"] = None  # renderers hold fonts and windows; rebuilt on demand
        return state


def env(board: str | Board = "medium", render_mode: str | None = None, **rules: Any) -> AECEnv:
    """:class:`raw_env` in PettingZoo's standard wrappers (illegal moves lose with -1,
    out-of-bounds actions assert, call order enforced). Arguments as for :class:`raw_env`."""
    return wrap(raw_env(board=board, render_mode=render_mode, **rules), illegal_reward=-1)
