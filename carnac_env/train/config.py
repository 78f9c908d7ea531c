"""The settings of a training run (no PyTorch needed to read them: the command line builds its
options from this class), and their checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from carnac_env import _checks
from carnac_env.core.boards import Board, make_board
from carnac_env.errors import CarnacError
from carnac_env.train.mix import CUSTOM, BoardMix, largest_custom_board

__all__ = [
    "REPLAY_BUDGET",
    "Config",
    "check_schedule_change",
    "check_shards",
    "config_from",
    "learning_rates",
    "replay_bytes",
    "search_bytes",
    "search_room",
    "searches",
]

#: The most bytes the replay buffer may hold (``buffer`` positions of the run's largest board).
REPLAY_BUDGET = 16 << 30

#: The most characters a text setting may have (a checkpoint's settings are copied into
#: config.json, resume.pt and every model file's header).
SETTING_CHARS = 4096
#: The settings that are text.
TEXT_SETTINGS = ("board", "init", "mix", "eval_boards", "lr_schedule", "rule", "rules_inputs", "selfplay_backend")

#: The self-play search rules.
RULES = ("gumbel", "puct")
#: Whether the network reads the board's rules as inputs: ``auto`` does on a mix of boards
#: (``--board general``) and when ``--init`` names a model that reads them.
RULES_INPUTS = ("auto", "on", "off")
#: How self-play evaluates the network: numpy (Winograd convolutions, the default) or
#: onnxruntime's int8 graph (the ``onnx`` extra; docs/training.md, "Faster CPU inference").
SELFPLAY_BACKENDS = ("numpy", "onnx-int8")


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
    #: Steps of the learning rate, ``ITERATION:RATE,...``: from iteration ITERATION on (its
    #: gradient steps included) AdamW trains at RATE; before the first step, at ``lr``. Empty:
    #: ``lr`` throughout. It may grow on resume (:func:`check_schedule_change`).
    lr_schedule: str = ""
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
    #: :data:`SELFPLAY_BACKENDS`; the onnx-int8 graph is quantised again from each iteration's
    #: network on each board it plays (about a second a board), and its searches' targets are
    #: those of the int8 network, not of the float32 one the learner trains.
    selfplay_backend: str = "numpy"

    def check(self) -> Config:
        """Check every setting (type and range); returns ``self``.

        Raises:
            CarnacError: naming the setting, its value and what was expected.
        """
        for name in TEXT_SETTINGS:
            value = getattr(self, name)
            if not isinstance(value, str):
                raise CarnacError(f"training setting {name} must be text, got {value!r}"[:500])
            if len(value) > SETTING_CHARS:
                raise CarnacError(
                    f"training setting {name} is {len(value)} characters long; expected at most {SETTING_CHARS}"
                )
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
        learning_rates(self.lr_schedule)
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
        _checks.choice("training setting selfplay_backend", self.selfplay_backend, SELFPLAY_BACKENDS)
        mix = BoardMix.of(self.board, self.mix)
        for name in filter(None, self.eval_boards.split(",")):
            if name not in mix.builtin:
                raise CarnacError(
                    f"training setting eval_boards names {name!r}, not a built-in board of the run "
                    f"({', '.join(mix.builtin)})"
                )
        check_shards(self.selfplay_shards, self.games)
        boards = list(mix.weights)
        need = replay_bytes(self.buffer, boards)
        if need > REPLAY_BUDGET:
            per = replay_bytes(1, boards)
            raise CarnacError(
                f"training setting buffer={self.buffer} needs {need / (1 << 30):.1f} GiB for the replay buffer "
                f"({per} bytes a position on the run's largest board), more than the limit of "
                f"{REPLAY_BUDGET >> 30} GiB; the most it allows is buffer={REPLAY_BUDGET // per}"
            )
        self._check_searches(mix)
        return self

    def _check_searches(self, mix: BoardMix) -> None:
        """Raise CarnacError if a search the run will make (:func:`searches`) needs trees
        larger than the search's budget (``carnac_env.search.search.TREE_BUDGET``), naming the
        setting and the most it allows."""
        from carnac_env.search.search import TREE_BUDGET

        sized = [(f[5] * search_bytes(f[1], f[3], f[2], f[4]), f) for f in searches(self, mix)]
        # the largest need of a setting is the one that binds it (the others allow more)
        for need, (setting, board, trees, sims, lanes, factor) in sorted(sized, key=lambda x: -x[0]):
            if need <= TREE_BUDGET:
                break
            low, high = 0, sims
            while low < high:  # the most sims that fit (the need grows with sims)
                mid = (low + high + 1) // 2
                if factor * search_bytes(board, mid, trees, lanes) <= TREE_BUDGET:
                    low = mid
                else:
                    high = mid - 1
            what = f"{trees} trees of {sims} simulations" if trees > 1 else f"a tree of {sims} simulations"
            twice = " (twice a move's tree: the mcts opponent reuses its tree)" if factor > 1 else ""
            fewer = f"; the most it allows is {setting}={low}" if low else ""
            hint = ""
            if setting == "sims" and trees > 1:
                hint = f" (or fewer games per search: {'games_per_board' if mix.general else 'more selfplay_shards'})"
            raise CarnacError(
                f"training setting {setting}={sims} needs {what} on board {board.name!r} ({board.rows} x "
                f"{board.cols}): {need / (1 << 20):.0f} MB of search trees{twice}, more than a search's limit of "
                f"{TREE_BUDGET >> 20} MB{fewer}{hint}"
            )

    def lr_at(self, iteration: int) -> float:
        """The learning rate of iteration ``iteration``'s gradient steps (iterations count from 1):
        the last step of :attr:`lr_schedule` at or before it, else :attr:`lr`."""
        rate = self.lr
        for start, value in learning_rates(self.lr_schedule):
            if start <= iteration:
                rate = value
        return rate

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for JSON and checkpoints)."""
        return asdict(self)


def run_board(name: str) -> Board:
    """The board of a mix's entry ``name``: a built-in board, or for ``custom`` the largest a
    custom board can be (:func:`~carnac_env.train.mix.largest_custom_board`)."""
    return largest_custom_board() if name == CUSTOM else make_board(name)


def replay_bytes(positions: int, boards: list[str]) -> int:
    """Bytes ``positions`` training positions take on the largest of ``boards`` (names of a
    mix: ``custom`` counts as the largest custom board), by the fields of
    :mod:`carnac_env.train.replay`: planes, mask, policy, values, ownership, dolmens."""
    most = 0
    for name in boards or ["le_menec"]:
        b = run_board(name)
        most = max(most, b.squares * 9 + b.num_actions * 5 + 3 * 4 + b.squares + 2 * 2)
    return int(positions) * most


#: A new :class:`~carnac_env.search.Search`'s first room per tree: this many nodes, and this
#: many edges per action up to 64 actions; the first growth at least doubles each.
_FIRST_NODES = 64


def search_room(sims: int, board: Board) -> tuple[int, int]:
    """The node and edge room per tree of a fresh search of ``sims`` simulations on ``board``,
    as the search makes it before its first run: room for the root, its expansion and one node
    per simulation, each with an edge per action of the board (the most a position has), the
    first arrays grown by doubling at least."""
    actions = board.num_actions
    first_nodes, first_edges = _FIRST_NODES, _FIRST_NODES * min(actions, 64)
    nodes, edges = sims + 2, (sims + 2) * actions
    nodes = max(nodes, 2 * first_nodes) if nodes > first_nodes else first_nodes
    edges = max(edges, 2 * first_edges) if edges > first_edges else first_edges
    return nodes, edges


def search_bytes(board: Board, sims: int, trees: int = 1, lanes: int = 1) -> int:
    """Bytes the trees of a search of ``trees`` trees and ``lanes`` lanes take after making room
    for ``sims`` simulations on ``board`` (:func:`search_room`), sized by
    :func:`carnac_env.search.tree.tree_bytes` (nothing allocated)."""
    from carnac_env.search.tree import tree_bytes

    nodes, edges = search_room(int(sims), board)
    return tree_bytes(trees, nodes, edges, 2 * board.megaliths + 2, lanes)


def searches(config: Config, mix: BoardMix) -> list[tuple[str, Board, int, int, int, int]]:
    """The largest searches a run of ``config`` on ``mix`` makes, each as ``(setting, board,
    trees, sims, lanes, factor)``: ``factor`` times :func:`search_bytes` is what its trees may
    take. Self-play searches all the games of a shard together (``games``, its share of the
    ``selfplay_shards``, or ``games_per_board`` on a mix) on every board of the mix, custom ones
    at their largest; the evaluation plays ``az:sims=eval_sims`` (8 lanes) and
    ``mcts:sims=mcts_sims`` (which reuses its tree: twice a move's) on each evaluated board."""
    trees = config.games_per_board if mix.general else -(-config.games // config.selfplay_shards)
    found = [("sims", run_board(name), trees, config.sims, 1, 1) for name in mix.weights]
    if config.eval_every:
        for name in filter(None, config.eval_boards.split(",")) if config.eval_boards else mix.builtin:
            board = make_board(name)
            if config.eval_sims:
                found.append(("eval_sims", board, 1, config.eval_sims, 8, 1))
            found.append(("mcts_sims", board, 1, config.mcts_sims, 1, 2))
    return found


def learning_rates(schedule: Any) -> list[tuple[int, float]]:
    """The steps of a ``lr_schedule`` (``"ITERATION:RATE,..."``) as ``[(iteration, rate), ...]``,
    iterations rising from 1, each rate in (0, 10]; ``""`` gives no steps.

    Raises:
        CarnacError: naming the step that is not ``ITERATION:RATE`` or out of order.
    """
    if not isinstance(schedule, str):
        raise CarnacError(f"training setting lr_schedule must be text, got {schedule!r}")
    steps: list[tuple[int, float]] = []
    for item in filter(None, (part.strip() for part in schedule.split(","))):
        start, sep, rate = item.partition(":")
        if not sep:
            raise CarnacError(
                f"training setting lr_schedule has step {item!r}; expected ITERATION:RATE, e.g. 1000:0.0001"
            )
        parsed = (  # ASCII digits only: Python's int() and float() read "٣" as 3
            _checks.whole_text(f"training setting lr_schedule step {item!r}: iteration", start, 1, 10**7),
            _checks.number_text(f"training setting lr_schedule step {item!r}: rate", rate, 0.0, 10.0, low_open=True),
        )
        if steps and parsed[0] <= steps[-1][0]:
            raise CarnacError(
                f"training setting lr_schedule has step {item!r} after iteration {steps[-1][0]}; "
                "expected the steps' iterations to rise"
            )
        steps.append(parsed)
    return steps


def check_schedule_change(config: Config, schedule: str, done: int) -> None:
    """Whether a run of ``config`` that has done ``done`` iterations may resume with
    ``lr_schedule=schedule``: only if every iteration already done keeps its rate, so that the
    run is the one the new schedule would have given from the start.

    Raises:
        CarnacError: a bad schedule, or one that changes the rate of an iteration done, naming it.
    """
    learning_rates(schedule)
    new = Config(**dict(config.as_dict(), lr_schedule=schedule))
    for iteration in range(1, done + 1):
        if new.lr_at(iteration) != config.lr_at(iteration):
            raise CarnacError(
                f"--lr-schedule {schedule!r} gives iteration {iteration} the rate {new.lr_at(iteration):g}, but "
                f"it trained at {config.lr_at(iteration):g} (the run has done {done}); a schedule can change on resume "
                f"only from iteration {done + 1} on"
            )


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
