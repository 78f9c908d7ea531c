r"""What the environments share: seeds, options, infos, spaces, image observations and opponents.

The PettingZoo AEC env (:mod:`carnac_env.aec`), the single-agent Gymnasium env
(:mod:`carnac_env.gym_env`) and the vector env (:mod:`carnac_env.vector_env`) are adapters
over the rules core; what they have in common is written here once, so that none of them
imports another for a helper:

* :func:`check_seed`, :func:`moves_option`, :func:`check_options`: what ``reset`` and the
  constructors accept;
* :func:`observation_space`, :func:`image_space`, :func:`image_observation`: the spaces and
  the image layout of the observation planes;
* :func:`info_dolmen_slots`, :func:`blank_info`, :func:`end_info`: the fixed-shape infos, and
  their types, :class:`AECInfo`, :class:`GymInfo` and :class:`VectorInfo` (``TypedDict``\s, so
  that IDEs and type checkers know the keys);
* :func:`learner_space` and :func:`learner_observation`: the learner's observation in the
  layouts of the Gymnasium envs (planes or image, with or without the mask);
* :func:`make_opponent`: the one opponent protocol. An opponent is an agent, any object with
  ``act(env) -> int`` called with the AEC env at the opponent's turn (see
  :mod:`carnac_env.agents`); specs such as ``"greedy"`` are built by
  :func:`carnac_env.agents.make`. The vector env also takes a batched policy
  ``policy(observation, action_mask) -> actions`` on top of this.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

import numpy as np
from gymnasium import spaces

from carnac_env import _checks
from carnac_env.core.boards import RULE_OPTIONS, Board
from carnac_env.core.observation import NUM_PLANES, SUPPLY
from carnac_env.core.record import GameRecord
from carnac_env.core.scoring import Result
from carnac_env.errors import CarnacError, UnknownOptionError

#: The least image side that SB3's default CNN (NatureCNN) accepts.
MIN_IMAGE_SIDE = 36


# --------------------------------------------------------------------------- reset and options
def check_seed(seed: Any) -> int | None:
    """``seed`` as an int, or ``None``: what ``reset(seed=...)`` accepts.

    Raises:
        CarnacError: not ``None`` and not a whole number in 0..2**63-1 (bools are refused).
    """
    return _checks.seed(seed, optional=True)


def moves_option(options: dict[str, Any] | None) -> Any:
    """The ``"moves"`` reset option, checked to be a list of moves or a GameRecord (or ``None``).

    Raises:
        CarnacError: ``options`` is not a dict, or ``"moves"`` is a string, a number or anything
            else that is not a list or tuple of moves (action numbers or notation) or a GameRecord.
    """
    if options is None:
        return None
    if not isinstance(options, dict):
        raise CarnacError(f"options={options!r}; expected a dict such as {{'moves': ['c4 Rns', 'tilt N']}} or None")
    moves = options.get("moves")
    if moves is None or isinstance(moves, GameRecord):
        return moves
    if not isinstance(moves, list | tuple):
        raise CarnacError(
            f"reset option 'moves' is {moves!r}; expected a list of moves (action numbers or notation "
            "such as ['c4 Rns', 'tilt N']) or a GameRecord"
        )
    return moves


def check_options(rules: dict[str, Any], accepted: tuple[str, ...], who: str) -> None:
    """Refuse keyword arguments that are neither in ``accepted`` nor rules options.

    Raises:
        UnknownOptionError: (a TypeError and a CarnacError) naming them and every accepted option.
    """
    unknown = sorted(set(rules) - set(RULE_OPTIONS))
    if unknown:
        # Python's own wording, which code that retries without an optional keyword looks for.
        what = "an unexpected keyword argument" if len(unknown) == 1 else "unexpected keyword arguments"
        raise UnknownOptionError(
            f"{who} got {what} {', '.join(map(repr, unknown))}; expected any of "
            f"{', '.join(accepted)}, or the rules options {', '.join(RULE_OPTIONS)}"
        )


def as_action(action: Any) -> Any:
    """A Python or numpy integer (or a 0-d integer array) as a Python int; anything else
    unchanged (then refused by the rules, which say why)."""
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    return int(action) if _checks.is_whole(action) else action


# --------------------------------------------------------------------------- spaces
def observation_space(board: Board) -> spaces.Dict:
    """The AEC observation space for ``board``: ``Dict(observation=Box(int8, (rows, cols, 9)),
    action_mask=Box(int8, (num_actions,)))`` (a fresh object; the envs cache theirs)."""
    high = np.ones((board.rows, board.cols, NUM_PLANES), dtype=np.int8)
    high[:, :, SUPPLY] = board.megaliths
    return spaces.Dict(
        {
            "observation": spaces.Box(0, high, dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (board.num_actions,), dtype=np.int8),
        }
    )


def default_image_scale(board: Board) -> int:
    """The smallest block size that makes ``board``'s image at least 36 pixels each way."""
    return max(1, math.ceil(MIN_IMAGE_SIDE / min(board.rows, board.cols)))


def image_space(board: Board, scale: int) -> spaces.Box:
    """``Box(uint8, 0, 255, (9, rows*scale, cols*scale))``: the space of :func:`image_observation`."""
    return spaces.Box(0, 255, (NUM_PLANES, board.rows * scale, board.cols * scale), dtype=np.uint8)


def image_observation(planes: np.ndarray, board: Board, scale: int) -> np.ndarray:
    """The observation planes ``(..., rows, cols, 9)`` as uint8 images ``(..., 9, rows*scale, cols*scale)``.

    0/1 planes become 0/255; the supply plane becomes ``255 * supply // megaliths``; each square
    becomes a ``scale`` x ``scale`` block. Works on one observation or a batch.
    """
    image = planes.astype(np.int32) * 255
    image[..., SUPPLY] = planes[..., SUPPLY].astype(np.int32) * 255 // max(1, board.megaliths)
    image = np.moveaxis(image.astype(np.uint8), -1, -3)
    if scale > 1:
        image = np.repeat(np.repeat(image, scale, axis=-2), scale, axis=-1)
    return np.ascontiguousarray(image)


#: The layouts of a learner's observation (``observation=`` of the Gymnasium envs).
OBSERVATION_LAYOUTS = ("planes", "image")


def learner_space(board: Board, layout: str, scale: int, mask_in_observation: bool) -> spaces.Space:
    """The single learner's observation space of the Gymnasium envs: the planes
    ``Box(int8, (rows, cols, 9))`` or the image ``Box(uint8, (9, H, W))``, in a
    ``Dict(observation=..., action_mask=Box(int8, (num_actions,)))`` with ``mask_in_observation``."""
    aec = observation_space(board)
    board_space = image_space(board, scale) if layout == "image" else aec["observation"]
    if mask_in_observation:
        return spaces.Dict({"observation": board_space, "action_mask": aec["action_mask"]})
    return board_space


def learner_observation(
    planes: np.ndarray, mask: np.ndarray, board: Board, layout: str, scale: int, mask_in_observation: bool
) -> Any:
    """What the learner sees, in the layout of :func:`learner_space`: ``planes`` (``(..., rows,
    cols, 9)`` int8, one observation or a batch) as they are or as an image, beside ``mask``
    (bool, ``(..., num_actions)``) as int8 with ``mask_in_observation``."""
    shown = image_observation(planes, board, scale) if layout == "image" else planes
    if mask_in_observation:
        return {"observation": shown, "action_mask": mask.astype(np.int8)}
    return shown


# --------------------------------------------------------------------------- infos
class AECInfo(TypedDict):
    """``infos[agent]`` of the AEC env (:mod:`carnac_env.aec`): the same keys and shapes at
    every step, filled in when the game ends (zeros and winner -1 before)."""

    #: int16 ``(info_dolmen_slots(board),)``: the agent's dolmen sizes, largest first, zero-padded.
    dolmens: np.ndarray
    #: The agent's BGA score (100 per dolmen plus the largest dolmen's size).
    score: int
    #: 0 (``player_0``), 1 (``player_1``), or -1 for a draw or a game not over.
    winner: int


class GymInfo(AECInfo):
    """``info`` of the single-agent Gymnasium env (:mod:`carnac_env.gym_env`), at every step."""

    #: bool ``(num_actions,)``: the learner's legal actions (all True once the episode is over).
    action_mask: np.ndarray
    #: The learner's seat in this game: 0 (Red) or 1 (White).
    seat: int
    #: int16, as ``dolmens``: the opponent's dolmen sizes (zeros until the end).
    opponent_dolmens: np.ndarray
    #: The opponent's BGA score (0 until the end).
    opponent_score: int
    #: Whether the episode ended by the learner's illegal action (``illegal_action="lose"``).
    illegal_action: bool


class VectorInfo(TypedDict, total=False):
    """``infos`` of the Gymnasium vector env (:mod:`carnac_env.vector_env`): the single env's
    keys stacked over the ``num_envs`` games, each beside its ``_key`` mask, as Gymnasium's own
    ``SyncVectorEnv`` and ``AsyncVectorEnv`` stack them; with same-step autoreset, also the
    finished games' ``final_obs`` and ``final_info`` (a :class:`VectorInfo` without them)."""

    action_mask: np.ndarray  # bool (N, num_actions)
    _action_mask: np.ndarray  # bool (N,)
    seat: np.ndarray  # int64 (N,)
    _seat: np.ndarray
    dolmens: np.ndarray  # int16 (N, info_dolmen_slots(board))
    _dolmens: np.ndarray
    score: np.ndarray  # int64 (N,)
    _score: np.ndarray
    winner: np.ndarray  # int64 (N,)
    _winner: np.ndarray
    opponent_dolmens: np.ndarray  # int16 (N, info_dolmen_slots(board))
    _opponent_dolmens: np.ndarray
    opponent_score: np.ndarray  # int64 (N,)
    _opponent_score: np.ndarray
    illegal_action: np.ndarray  # bool (N,)
    _illegal_action: np.ndarray
    final_obs: np.ndarray  # object (N,): a finished game's last observation, None elsewhere
    _final_obs: np.ndarray
    final_info: VectorInfo
    _final_info: np.ndarray


def info_dolmen_slots(board: Board) -> int:
    """The length of ``info["dolmens"]``: the most dolmens one player can have on ``board``."""
    return max(1, board.rows * board.cols // max(1, board.min_dolmen))


def blank_info(board: Board) -> AECInfo:
    """A player's info before the game ends: no dolmens, score 0, winner -1."""
    return {"dolmens": np.zeros(info_dolmen_slots(board), dtype=np.int16), "score": 0, "winner": -1}


def end_info(board: Board, result: Result, player: int) -> AECInfo:
    """A player's info at the end: its dolmen sizes (padded), its BGA score and the winner (-1 draw)."""
    info = blank_info(board)
    sizes = result.dolmens[player]
    info["dolmens"][: len(sizes)] = sizes
    info["score"] = int(result.scores[player])
    info["winner"] = -1 if result.winner is None else int(result.winner)
    return info


# --------------------------------------------------------------------------- opponents
def make_opponent(opponent: Any, seed: int = 0) -> Any:
    """The opponent for a spec string (``"random"``, ``"greedy"``, ``"mcts:sims=200"``, an
    import path; see :func:`carnac_env.agents.make`) or an agent object with ``act(env)``.

    Raises:
        CarnacError: neither a spec nor an object with ``act``.
    """
    if not isinstance(opponent, str) and not callable(getattr(opponent, "act", None)):
        raise CarnacError(
            f"opponent must be an agent spec (e.g. 'random') or an object with act(env), got {opponent!r}"
        )
    from carnac_env.agents import make  # the agents load only when an env needs one

    return make(opponent, seed=seed)
