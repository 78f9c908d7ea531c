r"""The environments' infos: the same keys and shapes at every step, and their types.

:class:`AECInfo`, :class:`GymInfo` and :class:`VectorInfo` are ``TypedDict``\s, so that IDEs
and type checkers know the keys; :func:`blank_info` and :func:`end_info` build a player's info
before and at the end of a game, with :func:`info_dolmen_slots` dolmen entries, and
:func:`learner_info` a single-agent env's info from the AEC env's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

import numpy as np

from carnac_env.core.boards import Board
from carnac_env.core.scoring import Result

__all__ = ["AECInfo", "GymInfo", "VectorInfo", "blank_info", "end_info", "info_dolmen_slots", "learner_info"]


class AECInfo(TypedDict):
    """``infos[agent]`` of the AEC env (:mod:`carnac_env.envs.aec`): the same keys and shapes at
    every step, filled in when the game ends (zeros and winner -1 before)."""

    #: int16 ``(info_dolmen_slots(board),)``: the agent's dolmen sizes, largest first, zero-padded.
    dolmens: np.ndarray
    #: The agent's BGA score (100 per dolmen plus the largest dolmen's size).
    score: int
    #: 0 (``player_0``), 1 (``player_1``), or -1 for a draw or a game not over; after a forfeit
    #: (an illegal action), the other player.
    winner: int


class GymInfo(AECInfo):
    """``info`` of the single-agent Gymnasium env (:mod:`carnac_env.envs.gym`), at every step."""

    #: int8 0/1 ``(num_actions,)``: the learner's legal actions (all ones once the episode is over).
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
    """``infos`` of the Gymnasium vector env (:mod:`carnac_env.envs.vector`): the single env's
    keys stacked over the ``num_envs`` games, each beside its ``_key`` mask, as Gymnasium's own
    ``SyncVectorEnv`` and ``AsyncVectorEnv`` stack them; with same-step autoreset, also the
    finished games' ``final_obs`` and ``final_info`` (a :class:`VectorInfo` without them)."""

    action_mask: np.ndarray  # int8 0/1 (N, num_actions)
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


def learner_info(
    board: Board,
    aec_infos: Mapping[str, AECInfo],
    agents: tuple[str, str],
    over: bool,
    seat: int,
    action_mask: np.ndarray,
    forfeited: bool,
) -> GymInfo:
    """The single-agent info of the learner in ``seat`` (the Gymnasium env's and the self-play
    adapter's): its mask, and both players' ends from the AEC env's ``aec_infos`` (keyed by
    ``agents``, seat 0's name first) once the game is ``over`` (blank before); after the
    learner's forfeit the winner is the other seat."""
    mine, theirs = (aec_infos.get(agents[side]) if over else None for side in (seat, 1 - seat))
    ends = blank_info(board) if mine is None else mine
    other = blank_info(board) if theirs is None else theirs
    return GymInfo(
        action_mask=action_mask,
        seat=seat,
        dolmens=ends["dolmens"],
        score=ends["score"],
        winner=1 - seat if forfeited else ends["winner"],
        opponent_dolmens=other["dolmens"],
        opponent_score=other["score"],
        illegal_action=forfeited,
    )
