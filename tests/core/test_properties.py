"""Property tests over random legal play on random boards (named and small custom ones)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carnac_env
from carnac_env.core import BOARDS, Board, GameState, make_board, observation_planes
from carnac_env.core.game import LYING, RESPOND, STANDING
from carnac_env.errors import IllegalActionError


@st.composite
def boards(draw: st.DrawFn) -> Board:
    """A named board, or a small custom one with any rules options."""
    if draw(st.booleans()):
        return make_board(draw(st.sampled_from(sorted(BOARDS))), last_tilt=draw(st.booleans()))
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(1, 6))
    return make_board(
        "custom",
        rows=rows,
        cols=cols,
        megaliths=draw(st.integers(1, 30)),
        min_dolmen=draw(st.integers(1, min(5, rows * cols))),
        last_tilt=draw(st.booleans()),
    )


def _illegal_candidates(board: Board, legal: list[int], rng: np.random.Generator) -> list[object]:
    legal_set = set(legal)
    illegal = [a for a in rng.integers(0, board.num_actions, 8).tolist() if a not in legal_set]
    return [*illegal[:2], -1, board.num_actions, 1.5]


@settings(deadline=None, max_examples=100)
@given(board=boards(), seed=st.integers(0, 2**32 - 1))
def test_random_play_invariants(board: Board, seed: int) -> None:
    rng = np.random.default_rng(seed)
    env = carnac_env.raw_env(board=board)
    env.reset(seed=seed)
    game = env.game
    placements = 0
    decisions = 0
    while not game.is_over:
        agent = env.agent_selection
        player = env.possible_agents.index(agent)
        assert player == game.to_act
        legal = game.legal_actions()
        mask = env.observe(agent)["action_mask"]
        other = env.observe(env.possible_agents[1 - player])["action_mask"]
        # the env mask is the core's legal set, and empty for the waiting agent; the env's
        # observations equal the reference planes for both agents
        assert set(np.flatnonzero(mask).tolist()) == set(legal)
        assert not other.any()
        for seat, name in enumerate(env.possible_agents):
            np.testing.assert_array_equal(env.observe(name)["observation"], observation_planes(game, seat))
        # a rejected action changes nothing, in the core and in the env
        for bad in _illegal_candidates(board, legal, rng):
            before = game.copy()
            with pytest.raises(IllegalActionError):
                game.copy().apply(bad)
            with pytest.raises(ValueError):
                env.step(bad)
            assert game == before and env.game is game
        action = int(rng.choice(legal))
        if action < board.squares * 4:
            placements += 1
        env.step(action)
        decisions += 1
        game = env.game
        # placed + supply == megaliths
        standing = sum(1 for k in game.kinds if k == STANDING)
        assert placements + game.supply == board.megaliths
        assert standing + len(game.lying) == placements
        # covered squares == standing + 2 x lying
        covered = sum(1 for k in game.kinds if k)
        assert covered == standing + 2 * len(game.lying)
        assert sum(1 for k in game.kinds if k == LYING) == 2 * len(game.lying)
        assert game.empty == board.squares - covered
        planes = env.observe(env.agent_selection)["observation"]
        assert int(planes[:, :, 2].sum()) == standing and int(planes[:, :, 3].sum()) == 2 * len(game.lying)
        assert int((planes[:, :, 0] + planes[:, :, 1]).sum()) == covered
        assert decisions <= 2 * board.megaliths
    # every game ends within 2 x megaliths decisions, by supply or a full board
    assert decisions <= 2 * board.megaliths
    assert game.supply == 0 or game.empty == 0
    assert all(env.terminations.values())
    result = game.result()
    for player, agent in enumerate(env.possible_agents):
        assert env.rewards[agent] == result.reward(player)
        assert [int(size) for size in env.infos[agent]["dolmens"] if size] == list(result.dolmens[player])


@settings(deadline=None, max_examples=40)
@given(board=boards(), seed=st.integers(0, 2**32 - 1))
def test_core_random_play_matches_a_replay_of_its_history(board: Board, seed: int) -> None:
    """Playing actions one by one, and replaying them from a copy of the start, agree; the
    fast unchecked path gives the same states as the checked one."""
    rng = np.random.default_rng(seed)
    checked = GameState(board)
    fast = GameState(board)
    while not checked.is_over:
        legal = checked.legal_actions()
        action = int(rng.choice(legal))
        if checked.phase == RESPOND:
            assert legal[-1] == board.squares * 4 + 4  # declining is always allowed
        checked.apply(action)
        fast.apply_unchecked(action)
        assert fast == checked
    assert fast.result() == checked.result()


# --------------------------------------------------------------------------- an independent model
class ReferenceGame:
    """Carnac re-implemented from the rules text alone (slow and plain), to check the core.

    The board is a dict {(row, col): (colour, kind)}; a megalith is its six faces.
    """

    STEPS = ((-1, 0), (0, 1), (1, 0), (0, -1))  # north, east, south, west

    def __init__(self, board: Board) -> None:
        self.b = board
        self.squares: dict[tuple[int, int], tuple[int, str]] = {}
        self.supply = board.megaliths
        self.to_act = 0
        self.pending: tuple[tuple[int, int], dict[str, int]] | None = None
        self.over = False

    def _faces(self, mover: int, o: int) -> dict[str, int]:
        own, other = (1, 2) if mover == 0 else (2, 1)
        top = own if o % 2 == 0 else other
        under = 3 - top
        ns, ew = (top, under) if o < 2 else (under, top)
        return {"up": top, "N": ns, "S": ns, "E": ew, "W": ew}

    def _free(self, r: int, c: int) -> bool:
        return 0 <= r < self.b.rows and 0 <= c < self.b.cols and (r, c) not in self.squares

    def _tilts(self) -> list[int]:
        (r, c), _ = self.pending
        return [
            d
            for d, (dr, dc) in enumerate(self.STEPS)
            if self._free(r + dr, c + dc) and self._free(r + 2 * dr, c + 2 * dc)
        ]

    def legal(self) -> list[int]:
        if self.over:
            return []
        base = self.b.rows * self.b.cols * 4
        if self.pending:
            return [base + d for d in self._tilts()] + [base + 4]
        return [
            (r * self.b.cols + c) * 4 + o
            for r in range(self.b.rows)
            for c in range(self.b.cols)
            if (r, c) not in self.squares
            for o in range(4)
        ]

    def play(self, action: int) -> None:
        base = self.b.rows * self.b.cols * 4
        if action < base:
            r, c = divmod(action // 4, self.b.cols)
            faces = self._faces(self.to_act, action % 4)
            self.squares[(r, c)] = (faces["up"], "standing")
            self.supply -= 1
            placer = self.to_act
            self.pending = ((r, c), faces)
            can_tilt = bool(self._tilts())
            board_full = len(self.squares) == self.b.rows * self.b.cols
            if can_tilt and (self.supply > 0 or self.b.last_tilt):
                self.to_act = 1 - placer  # the other player responds
                return
            self.pending = None
            if self.supply == 0 or board_full:
                self.over = True
            else:
                self.to_act = 1 - placer
            return
        (r, c), faces = self.pending
        self.pending = None
        if action == base + 4:  # decline: the placer places again
            self.to_act = 1 - self.to_act
        else:
            d = action - base
            dr, dc = self.STEPS[d]
            up = faces[{0: "S", 1: "W", 2: "N", 3: "E"}[d]]  # the face opposite the fall
            del self.squares[(r, c)]
            self.squares[(r + dr, c + dc)] = self.squares[(r + 2 * dr, c + 2 * dc)] = (up, "lying")
            # the tilter places next: to_act is unchanged
        if self.supply == 0:
            self.over = True

    def dolmens(self, colour: int) -> list[int]:
        seen: set[tuple[int, int]] = set()
        sizes = []
        for start, (col, _) in self.squares.items():
            if col != colour or start in seen:
                continue
            seen.add(start)
            todo, size = [start], 0
            while todo:
                r, c = todo.pop()
                size += 1
                for dr, dc in self.STEPS:
                    nxt = (r + dr, c + dc)
                    if nxt not in seen and self.squares.get(nxt, (0, ""))[0] == colour:
                        seen.add(nxt)
                        todo.append(nxt)
            if size >= self.b.min_dolmen:
                sizes.append(size)
        return sorted(sizes, reverse=True)

    def winner(self) -> int | None:
        red, white = self.dolmens(1), self.dolmens(2)
        if len(red) != len(white):
            return 0 if len(red) > len(white) else 1
        for a, b in zip(red, white):
            if a != b:
                return 0 if a > b else 1
        return None


@settings(deadline=None, max_examples=60)
@given(board=boards(), seed=st.integers(0, 2**32 - 1), decline_bias=st.floats(0, 1))
def test_core_agrees_with_an_independent_model_of_the_rules(board: Board, seed: int, decline_bias: float) -> None:
    rng = np.random.default_rng(seed)
    core = GameState(board)
    model = ReferenceGame(board)
    while True:
        legal = core.legal_actions()
        assert legal == model.legal()
        assert core.is_over == model.over
        if model.over:
            break
        assert core.to_act == model.to_act and core.supply == model.supply
        if core.phase == RESPOND and rng.random() < decline_bias:
            action = legal[-1]
        else:
            action = int(rng.choice(legal))
        core.apply(action)
        model.play(action)
        for (r, c), (colour, kind) in model.squares.items():
            square = r * board.cols + c
            assert core.cells[square] == colour
            assert core.kinds[square] == (STANDING if kind == "standing" else LYING)
        assert sum(1 for k in core.kinds if k) == len(model.squares)
    result = core.result()
    assert result.dolmens == (tuple(model.dolmens(1)), tuple(model.dolmens(2)))
    assert result.winner == model.winner()
    assert result.scores == tuple(100 * len(d) + (d[0] if d else 0) for d in result.dolmens)


@settings(deadline=None, max_examples=60)
@given(board=boards(), seed=st.integers(0, 2**32 - 1))
def test_diagrams_round_trip_positions_of_random_play(board: Board, seed: int) -> None:
    # from_diagram(diagram()) rebuilds any playable place-phase position: the same squares,
    # the same lying squares (pairs may be matched differently where a picture is ambiguous),
    # supply, empty count and player to act
    rng = np.random.default_rng(seed)
    game = GameState(board)
    while not game.is_over:
        if game.phase == 0 and game.supply >= 1 and game.empty:
            rebuilt = GameState.from_diagram(board, game.diagram(), to_act=game.to_act, supply=game.supply)
            assert (rebuilt.cells, rebuilt.kinds) == (game.cells, game.kinds)
            assert (rebuilt.supply, rebuilt.empty, rebuilt.to_act) == (game.supply, game.empty, game.to_act)
            assert sorted(s for pair in rebuilt.lying for s in pair) == sorted(s for pair in game.lying for s in pair)
            assert rebuilt.diagram() == game.diagram()
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
