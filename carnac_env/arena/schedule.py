"""What an arena plays: its settings, checked, and every game with its seed.

A game is identified by its pair and its index within the pair; its seed is derived from
the arena seed and that identity alone (:func:`game_seed`), never from the order in which
games run, so the set of games is the same for any number of workers and a resumed run
plays exactly the games that are missing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from carnac_env.arena.openings import MAX_OPENING_PLIES, random_opening
from carnac_env.core.boards import Board, make_board
from carnac_env.errors import CarnacError

#: The most games per pair an arena accepts (``--games``).
MAX_GAMES_PER_PAIR = 100_000
#: The most games in one arena, all pairs together (the schedule is held in memory).
MAX_ARENA_GAMES = 1_000_000
#: The most worker processes (``--workers``).
MAX_WORKERS = 256
#: Arena seeds are whole numbers in ``0 .. MAX_SEED``.
MAX_SEED = 2**63 - 1


def _twice_advice(names: tuple[str, ...]) -> str:
    """What to do about a spec listed twice, fitting its agent: an agent without options
    plays the same games twice (list it once); one with options can be given other values."""
    from carnac_env.agents import options_of, parse_spec
    from carnac_env.agents.registry import builtin

    spec = next(n for n in names if names.count(n) > 1)
    name, _ = parse_spec(spec)
    if "." in name:
        return f"{spec!r} is listed twice: to compare two settings of your agent, give them different options"
    cls = builtin(name)
    if cls is None:
        return f"{spec!r} is listed twice; list each agent once"
    options = options_of(cls)
    if not options:
        return f"{spec!r} is listed twice, and {name} has no options: a second copy is the same player; list it once"
    example = next(iter(options))
    return (
        f"{spec!r} is listed twice: to compare two settings, give one of them other options "
        f"({name}'s: {', '.join(options)}; e.g. {name}:{example}=...)"
    )


@dataclass(frozen=True)
class ArenaGame:
    """One game of the round robin: agents ``a`` and ``b`` (in the order given), game ``index``."""

    a: str
    b: str
    index: int
    seed: int
    #: The opening's actions (played before the agents move), empty without openings.
    opening: tuple[int, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        """The game's identity."""
        return (self.a, self.b, self.index)

    @property
    def seats(self) -> tuple[str, str]:
        """``(Red, White)``: ``a`` is Red in even games, White in odd ones."""
        return (self.a, self.b) if self.index % 2 == 0 else (self.b, self.a)

    def meta(self) -> dict[str, Any]:
        """The keys the arena adds to this game's record (see :mod:`carnac_env.arena`)."""
        red, white = self.seats
        meta: dict[str, Any] = {
            "agents": [red, white],
            "pair": [self.a, self.b],
            "game": self.index,
            "seats": {red: 0, white: 1},
            "seed": self.seed,
        }
        if self.opening:
            meta["opening"] = {"index": self.index // 2, "plies": len(self.opening)}
        return meta


@dataclass(frozen=True)
class ArenaSettings:
    """An arena's checked settings; :meth:`check` builds one from user input."""

    agents: tuple[str, ...]
    board: Board
    games: int
    seed: int
    #: Random plies each game opens with (0: none); see :mod:`carnac_env.arena.openings`.
    openings: int = 0

    @classmethod
    def check(cls, agents: Any, board: Any, games: Any, seed: Any, openings: Any = 0) -> ArenaSettings:
        """Check every setting (before anything is built, written or played).

        Raises:
            CarnacError: naming the bad setting and what is expected.
        """
        if isinstance(agents, str) or not all(isinstance(a, str) for a in agents):
            raise CarnacError(f"agents must be a list of agent spec strings, got {agents!r}")
        names = tuple(a.strip() for a in agents)
        if len(names) < 2:
            raise CarnacError(f"an arena needs at least two agents, got {list(names)}")
        if len(set(names)) != len(names):
            raise CarnacError(f"agent names must differ, got {list(names)}; {_twice_advice(names)}")
        games = _whole("games per pair", games, 1, MAX_GAMES_PER_PAIR)
        pairs = len(names) * (len(names) - 1) // 2
        if pairs * games > MAX_ARENA_GAMES:
            raise CarnacError(
                f"{len(names)} agents x {games} games per pair make {pairs * games} games; "
                f"an arena holds at most {MAX_ARENA_GAMES}"
            )
        seed = _whole("the arena seed", seed, 0, MAX_SEED)
        openings = _whole("opening plies", openings, 0, MAX_OPENING_PLIES)
        board = board if isinstance(board, Board) else make_board(board)
        return cls(names, board, games, seed, openings)

    def to_dict(self, package_version: str) -> dict[str, Any]:
        """The contents of ``arena.json``."""
        return {
            "board": self.board.name,
            "rules": self.board.rules(),
            "agents": list(self.agents),
            "games_per_pair": self.games,
            "seed": self.seed,
            "carnac_env": package_version,
            # absent without openings, so the arenas made before openings existed resume unchanged
            **({"openings": self.openings} if self.openings else {}),
        }


def check_games(games: Any) -> int:
    """``games`` as a number of games per pair in ``1 .. MAX_GAMES_PER_PAIR``; CarnacError otherwise."""
    return _whole("games per pair", games, 1, MAX_GAMES_PER_PAIR)


def check_seed(seed: Any) -> int:
    """``seed`` as an arena seed in ``0 .. MAX_SEED``; CarnacError otherwise."""
    return _whole("the arena seed", seed, 0, MAX_SEED)


def check_workers(workers: Any) -> int:
    """``workers`` as a number of processes in ``1 .. MAX_WORKERS``; CarnacError otherwise."""
    return _whole("workers", workers, 1, MAX_WORKERS)


def _whole(what: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise CarnacError(f"{what} must be a whole number in {low}..{high}, got {value!r}")
    value = int(value.__index__())
    if value < low:
        raise CarnacError(f"{what} must be at least {low}, got {value}")
    if value > high:
        raise CarnacError(f"{what} must be at most {high}, got {value}")
    return value


def game_seed(seed: int, a: str, b: str, index: int) -> int:
    """The seed of game ``index`` between ``a`` and ``b`` in an arena seeded ``seed`` (63 bits)."""
    digest = hashlib.sha256(f"carnac-arena\0{seed}\0{a}\0{b}\0{index}".encode()).hexdigest()
    return int(digest[:15], 16)


def split_agents(text: str) -> list[str]:
    """Split a comma-separated list of agent specs, keeping ``key=value`` pieces with the
    spec before them: ``"random,mcts:sims=200,c=2"`` -> ``["random", "mcts:sims=200,c=2"]``."""
    specs: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        name = piece.partition(":")[0]
        if "=" in name and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def schedule(
    agents: list[str] | tuple[str, ...], games: int, seed: int, openings: int = 0, board: Board | None = None
) -> list[ArenaGame]:
    """Every game of the round robin, in canonical order (pairs in the agents' order, then index).

    With ``openings`` plies (and the ``board``), game ``k`` of every pair opens with opening
    ``k // 2`` of the set seeded by the arena seed (:func:`~carnac_env.arena.openings.random_opening`):
    each opening is played once from each seat, and every pair meets the same openings.
    """
    lines = {}
    if openings:
        if board is None:
            raise CarnacError("an arena with openings needs its board to draw them")
        lines = {k: tuple(random_opening(board, openings, seed, k)) for k in range((games + 1) // 2)}
    out = []
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            out.extend(ArenaGame(a, b, k, game_seed(seed, a, b, k), lines.get(k // 2, ())) for k in range(games))
    return out
