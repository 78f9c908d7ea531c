"""The lockstep harness: one core GameState per lane of an engine under test, compared every step.

The batched engine (tests/batch/test_batch.py) and the JAX engine (tests/jax_engine/test_jax_engine.py) each
play many games at once; :class:`CoreLanes` plays the same actions on the rules core, one
game per lane, and :meth:`CoreLanes.check` compares what an engine reports (the player to act,
the legal mask, the observations, the end of the game) with what the core says, naming the
lane, its position and the first differing entries when they disagree. Rewards are compared
by the engines' tests from what :meth:`CoreLanes.apply` returns.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from carnac_env.core import Board, GameState, legal_mask, observation_planes


class CoreLanes:
    """One core game per lane, advanced with the same actions as the engine under test.

    Args:
        board: the board every lane plays on.
        games: the lanes' starting positions (fresh games when omitted, with ``lanes``).
        lanes: how many fresh games, when ``games`` is not given.
    """

    def __init__(self, board: Board, games: Iterable[GameState] | None = None, lanes: int = 0) -> None:
        self.board = board
        self.games = [g.copy() for g in games] if games is not None else [GameState(board) for _ in range(lanes)]
        self.finished = 0

    def __len__(self) -> int:
        return len(self.games)

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per lane (any action for a finished lane)."""
        return np.array(
            [
                int(rng.integers(self.board.num_actions)) if g.is_over else g.legal_action_at(rng.random())
                for g in self.games
            ],
            dtype=np.int64,
        )

    def apply(self, actions: np.ndarray, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions`` in the lanes still in play (and ``active``): each must be legal in
        the core (``apply`` raises otherwise). Returns each lane's rewards ``(N, 2)`` and
        which lanes ended on this step."""
        rewards = np.zeros((len(self.games), 2), dtype=np.float32)
        ended = np.zeros(len(self.games), dtype=bool)
        for i, game in enumerate(self.games):
            if game.is_over or (active is not None and not active[i]):
                continue
            game.apply(int(actions[i]))
            if game.is_over:
                result = game.result()
                rewards[i] = (result.reward(0), result.reward(1))
                ended[i] = True
                self.finished += 1
        return rewards, ended

    def restart(self, lanes: np.ndarray) -> None:
        """A fresh game in each of ``lanes`` (for engines that reset finished games at once)."""
        for i in np.flatnonzero(lanes):
            self.games[i] = GameState(self.board)

    def expected(self) -> dict[str, np.ndarray]:
        """What the core says of every lane: ``current_player``, ``legal_action_mask`` (bool;
        all True for a finished game, the package's convention), ``observation`` (seen by the
        player to act) and ``other_observation``."""
        masks = [legal_mask(g).astype(bool) for g in self.games]
        return {
            "current_player": np.array([g.to_act for g in self.games], dtype=np.int8),
            "terminated": np.array([g.is_over for g in self.games]),
            "legal_action_mask": np.stack(masks),
            "observation": np.stack([observation_planes(g, g.to_act) for g in self.games]),
            "other_observation": np.stack([observation_planes(g, 1 - g.to_act) for g in self.games]),
        }

    def check(self, where: str, reported: dict[str, np.ndarray]) -> None:
        """Compare every entry of ``reported`` (keys as in :meth:`expected`) with the core.

        Raises:
            AssertionError: naming the entry, the first differing lane with its position,
                and the first differing places.
        """
        want = self.expected()
        for name, got in reported.items():
            got = np.asarray(got)
            expected = want[name]
            if got.shape != expected.shape or not np.array_equal(got, expected.astype(got.dtype)):
                if got.shape != expected.shape:
                    raise AssertionError(f"{where}: {name} has shape {got.shape}, the core's {expected.shape}")
                wrong = (got != expected).reshape(len(self.games), -1).any(axis=1)
                lane = int(np.flatnonzero(wrong)[0])
                game = self.games[lane]
                places = np.argwhere(got[lane] != expected[lane])[:8].tolist()
                raise AssertionError(
                    f"{where}: {name} differs in lanes {np.flatnonzero(wrong)[:5].tolist()}; lane {lane} "
                    f"({game!r}):\n{game.diagram()}\nat {places}: engine {got[lane][got[lane] != expected[lane]][:8]}, "
                    f"core {expected[lane][got[lane] != expected[lane]][:8]}"
                )
