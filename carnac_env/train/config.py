"""The settings of a training run (no PyTorch needed to read them: the command line builds its
options from this class), and their checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from carnac_env import _checks
from carnac_env.core.boards import make_board
from carnac_env.errors import CarnacError
from carnac_env.train.mix import BoardMix

__all__ = ["REPLAY_BUDGET", "Config", "check_shards", "config_from", "replay_bytes"]

#: The most bytes the replay buffer may hold (``buffer`` positions of the run's largest board).
REPLAY_BUDGET = 16 << 30

#: The self-play search rules.
RULES = ("gumbel", "puct")
#: Whether the network reads the board's rules as inputs: ``auto`` does on a mix of boards
#: (``--board general``) and when ``--init`` names a model that reads them.
RULES_INPUTS = ("auto", "on", "off")


@dataclass
class Config:
    """The settings of a run (``python -m carnac_env.train --help`` describes each)."""

    board: str = "petit_menec"
    seed: int = 0
    iterations: int = 30
    games: int = 32
    bootstrap_iterations: int = 2
    bootstrap_temperature: float = 8.0
    rule: str = "gumbel"
    sims: int = 32
    considered: int = 16
    c: float = 1.5
    temperature_moves: int = 8
    openings: int = 4
    playouts: int = 0
    value_search: float = 0.5
    value_playouts: float = 0.0
    ownership: float = 0.5
    dolmens: float = 0.0
    rules_inputs: str = "auto"
    mix: str = ""
    games_per_board: int = 16
    train_steps: int = 50
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    buffer: int = 40_000
    channels: int = 32
    blocks: int = 3
    hidden: int = 64
    eval_every: int = 4
    eval_games: int = 20
    eval_sims: int = 32
    eval_openings: int = 4
    eval_boards: str = ""
    mcts_sims: int = 200
    threads: int = 1
    init: str = ""
    #: Each iteration's games are split into this many shards, each played with a generator of
    #: its own seed (drawn from the run's), so that workers can play them; 1 plays them all with
    #: the run's own generator (the results differ between the two).
    selfplay_shards: int = 1

    def check(self) -> Config:
        """Check every setting (type and range); returns ``self``.

        Raises:
            CarnacError: naming the setting, its value and what was expected.
        """
        whole = {
            "seed": (0, 2**63 - 1),
            "iterations": (0, 10**7),
            "games": (1, 4096),
            "bootstrap_iterations": (0, 10**6),
            "sims": (1, 100_000),
            "considered": (1, 4096),
            "temperature_moves": (0, 10**4),
            "openings": (0, 64),
            "games_per_board": (1, 4096),
            "playouts": (0, 10_000),
            "train_steps": (1, 10**6),
            "batch_size": (1, 1 << 16),
            "buffer": (1, 10**8),
            "channels": (1, 256),
            "blocks": (0, 32),
            "hidden": (1, 1024),
            "eval_every": (0, 10**6),
            "eval_games": (1, 10_000),
            "eval_sims": (0, 100_000),
            "eval_openings": (0, 64),
            "mcts_sims": (1, 10**6),
            "threads": (1, 256),
        }
        for name, (low, high) in whole.items():
            _checks.whole(f"training setting {name}", getattr(self, name), low, high)
        _checks.number("training setting bootstrap_temperature", self.bootstrap_temperature, 0.0, low_open=True)
        _checks.number("training setting c", self.c, 0.0)
        _checks.number("training setting lr", self.lr, 0.0, 10.0, low_open=True)
        _checks.number("training setting weight_decay", self.weight_decay, 0.0, 10.0)
        for name in ("value_search", "value_playouts"):
            _checks.number(f"training setting {name}", getattr(self, name), 0.0, 1.0)
        if self.value_search + self.value_playouts > 1.0:
            raise CarnacError(
                f"training settings value_search={self.value_search:g} and value_playouts={self.value_playouts:g} "
                "add up to more than 1 (the game's result takes the rest of the value target)"
            )
        if self.value_playouts and not self.playouts:
            raise CarnacError("training setting value_playouts > 0 needs playouts > 0 (playouts per position)")
        _checks.number("training setting ownership", self.ownership, 0.0, 100.0)
        _checks.number("training setting dolmens", self.dolmens, 0.0, 100.0)
        _checks.choice("training setting rule", self.rule, RULES)
        _checks.choice("training setting rules_inputs", self.rules_inputs, RULES_INPUTS)
        for name in ("board", "init", "mix", "eval_boards"):
            if not isinstance(getattr(self, name), str):
                raise CarnacError(f"training setting {name} must be text, got {getattr(self, name)!r}")
        mix = BoardMix.of(self.board, self.mix)
        for name in filter(None, self.eval_boards.split(",")):
            if name not in mix.builtin:
                raise CarnacError(
                    f"training setting eval_boards names {name!r}, not a built-in board of the run "
                    f"({', '.join(mix.builtin)})"
                )
        check_shards(self.selfplay_shards, self.games)
        need = replay_bytes(self.buffer, mix.builtin)
        if need > REPLAY_BUDGET:
            per = replay_bytes(1, mix.builtin)
            raise CarnacError(
                f"training setting buffer={self.buffer} needs {need / (1 << 30):.1f} GiB for the replay buffer "
                f"({per} bytes a position on the run's largest board), more than the limit of "
                f"{REPLAY_BUDGET >> 30} GiB; the most it allows is buffer={REPLAY_BUDGET // per}"
            )
        return self

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for JSON and checkpoints)."""
        return asdict(self)


def replay_bytes(positions: int, boards: list[str]) -> int:
    """Bytes ``positions`` training positions take on the largest of ``boards`` (the fields of
    :mod:`carnac_env.train.replay`: planes, mask, policy, values, ownership, dolmens)."""
    most = 0
    for name in boards or ["le_menec"]:
        b = make_board(name)
        most = max(most, b.squares * 9 + b.num_actions * 5 + 3 * 4 + b.squares + 2 * 2)
    return int(positions) * most


def check_shards(shards: Any, games: int) -> int:
    """``selfplay_shards`` as a whole number from 1 to ``games``; CarnacError otherwise."""
    if not _checks.is_whole(shards) or not 1 <= int(shards) <= games:
        raise CarnacError(
            f"selfplay_shards must be a whole number from 1 to the games per iteration ({games}), got {shards!r}"
        )
    return int(shards)


def config_from(values: dict[str, Any]) -> Config:
    """A checked :class:`Config` from a dict of settings (unknown keys raise CarnacError)."""
    if not isinstance(values, dict):
        raise CarnacError(f"training settings must be a mapping, got {type(values).__name__}")
    known = {f.name for f in fields(Config)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise CarnacError(f"unknown training settings {unknown}; expected some of {sorted(known)}")
    return Config(**values).check()
