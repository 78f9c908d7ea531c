"""The one search: :class:`Search` runs simulations in many trees at once, for every agent and
for self-play.

    from carnac_env.search import Search, UCT, Playouts
    search = Search("medium", Playouts(), UCT(c=1.0))
    search.set_games([state])             # a core GameState per tree (or set_roots: engine slots)
    search.run(5000)
    action = search.best_action(0)

The trees live in arrays (:mod:`carnac_env.search.tree`), the simulation loop is compiled
(:mod:`carnac_env.search.simulation`), the games are the batched engine's
(:mod:`carnac_env.batch`); this class owns the buffers, calls the evaluator between the
compiled rounds (``Search._evaluate``, the one place), and reads the results. A
:class:`Search` is deterministic: the same roots, settings and ``seed`` give the same trees,
bit for bit (a network's values included, as long as numpy's BLAS gives the same bits, which
it does on one machine).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.batch import BatchGame
from carnac_env.batch.rules import OVER, copy_game, legal_actions, reset_all
from carnac_env.batch.state import KernelState, new_state
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.observation import NUM_PLANES
from carnac_env.errors import CarnacError
from carnac_env.models.network import blas_single_thread
from carnac_env.search import simulation
from carnac_env.search.base import Evaluation, Evaluator, Leaves, RootEdges, Selection
from carnac_env.search.evaluators import as_array, check_evaluator
from carnac_env.search.selection import check_selection
from carnac_env.search.simulation import Batch, Budget, Games, Settings
from carnac_env.search.tree import (
    UNPROVEN,
    compact,
    grown,
    new_tree,
    node_proof,
    reprove_root,
    restrict_root_edges,
    root_table,
    tree_bytes,
)

#: The most bytes a :class:`Search`'s trees may take (all its trees together): a budget of
#: ``sims`` that would need more is refused before anything is allocated, and a time budget
#: (``seconds``) stops adding simulations once the next chunk would need more.
TREE_BUDGET = 2 << 30
#: The longest time budget :meth:`Search.run` takes, in seconds.
MAX_SECONDS = 3600.0
#: The most simulations :meth:`Search.run` and :meth:`Search.check_budget` take (checked before
#: any reaches numpy or the compiled kernels, so a huge count is a CarnacError, not an overflow).
MAX_SIMS = 1 << 40


@njit(cache=True, nogil=True)
def _kernel_board(kernel):  # pragma: no cover - compiled
    """``(games, megaliths, min_dolmen, last_tilt, neighbours)`` of a KernelState: enough to tell
    its board from another (the neighbours give the squares and their shape)."""
    return kernel.cells.shape[0], kernel.megaliths, kernel.min_dolmen, kernel.last_tilt, kernel.neighbours


def _whole_numbers(label: str, values: object, high: int, wrong: str = "out of range") -> np.ndarray:
    """``values`` as a 1-d int64 array of whole numbers in ``0 .. high - 1``; CarnacError otherwise
    (a float, a bool, a huge number or one out of range is refused, never truncated or wrapped)."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "iu" or values.ndim != 1:
            raise CarnacError(f"{label} must be a 1-d array of integers, got {values.dtype} of shape {values.shape}")
        items = [int(v) for v in values]
    else:
        try:
            items = list(values)  # type: ignore[call-overload]
        except TypeError:
            raise CarnacError(f"{label} must be a sequence of whole numbers, got {type(values).__name__}") from None
        for v in items:
            if not _checks.is_whole(v):
                raise CarnacError(f"{label} must be whole numbers, got {v!r}")
        items = [int(v) for v in items]
    for v in items:
        if not 0 <= v < high:
            raise CarnacError(f"{label}: {v} is {wrong}; expected 0 to {high - 1}")
    return np.asarray(items, dtype=np.int64)


@njit(cache=True, nogil=True)
def _slot_over(kernel, slot):  # pragma: no cover - compiled
    return kernel.phase[slot] == OVER


class Search:
    """Search trees over many roots; see the module docstring.

    Args:
        board: the board (a name or a Board) of every root.
        evaluator: :class:`~carnac_env.search.evaluators.Playouts`, ``Network``, ``Mixed``, or
            any :class:`~carnac_env.search.evaluators.Evaluator` (an object with
            ``evaluate(leaves)``; docs/search.md).
        selection: the selection below the root: a registered
            :class:`~carnac_env.search.base.Selection` (:mod:`carnac_env.search.selection`:
            ``UCT``, ``PUCT``, ``Gumbel``).
        root_selection: the selection at the root (default: ``selection``). A ``paired``
            selection (Gumbel) must be the selection at both, and one that ``needs_logits``
            (Gumbel) an evaluator that gives logits (not Playouts).
        trees: how many trees (roots) are searched together.
        seed: seeds the trees' generators (UCT's untried order, playouts, root noise, and
            the ``rng`` that evaluators receive with the leaves).
        dirichlet: ``(alpha, fraction)``: mix Dirichlet noise into every new root's priors
            (AlphaZero's self-play exploration), or None.
        lanes: simulations per tree evaluated in one network batch (with virtual losses
            steering them apart); 1 (the default) runs strictly one after the other. Several
            lanes make a search over few trees (one agent's) cheaper per simulation, at a small
            cost in what each simulation knows.
        solver: MCTS-Solver (:mod:`carnac_env.search.tree`): finished games' results are
            proven up the tree (a proven win for the player to act if one child is, a proven
            result if all children are), a simulation stops at a proven node and backs up its
            result, the selections never follow a proven loss while another edge is left
            (Gumbel's root plan excepted), and :meth:`best_action` and :meth:`gumbel_action`
            play a proven win when there is one and a proven loss only when all are. Off (the
            default), the search is the same bit for bit as without the option.
    """

    def __init__(
        self,
        board: Board | str,
        evaluator: Evaluator,
        selection: Selection,
        *,
        root_selection: Selection | None = None,
        trees: int = 1,
        seed: int = 0,
        dirichlet: tuple[float, float] | None = None,
        lanes: int = 1,
        solver: bool = False,
    ) -> None:
        self.board = board if isinstance(board, Board) else make_board(board)
        self._evaluator_parameters = check_evaluator(evaluator)
        self.evaluator = evaluator
        self.selection = selection
        self.root_selection = selection if root_selection is None else root_selection
        for r in (self.selection, self.root_selection):
            check_selection(r)
        for r in (self.selection, self.root_selection):
            if r.paired and type(self.selection) is not type(self.root_selection):
                name = type(r).__name__
                raise CarnacError(f"{name}'s selection comes as a pair: pass {name}(...) at the root and below")
        for r in (self.selection, self.root_selection):
            if r.needs_logits and not self._evaluator_parameters.batched:
                raise CarnacError(
                    f"the {type(r).__name__} selection needs an evaluator's logits; use Network, Mixed or an "
                    "evaluate() evaluator, or a selection without logits (UCT, PUCT) with Playouts"
                )
        self.trees = _checks.whole("trees", trees, 1, 1 << 16)
        self.lanes = _checks.whole("lanes", lanes, 1, 256)
        if self.lanes > 1 and not self._evaluator_parameters.batched:
            raise CarnacError("lanes > 1 batch evaluator calls; a playout search runs its simulations one by one")
        self.seed = _checks.seed(seed)
        if dirichlet is not None:
            alpha, fraction = dirichlet
            dirichlet = (
                _checks.number("Dirichlet alpha", alpha, 0.0, low_open=True),
                _checks.number("Dirichlet fraction", fraction, 0.0, 1.0),
            )
        self.dirichlet = dirichlet
        self.solver = _checks.flag("solver", solver)
        self.num_actions = self.board.num_actions
        self.max_depth = 2 * self.board.megaliths + 2
        self._new_trees(nodes=64, edges=64 * min(self.num_actions, 64))
        self.base, self._base_arrays = new_state(self.board, self.trees)
        self.scratch, self._scratch_arrays = new_state(self.board, self.trees * self.lanes)
        # a playout slot per tree; greedy playouts add two lookahead slots per tree after them
        self.work, _ = new_state(self.board, self.trees * (3 if self._evaluator_parameters.greedy else 1))
        for kernel in (self.base, self.scratch, self.work):
            reset_all(kernel)
        squares = self.board.squares
        slots = self.trees * self.lanes
        self._obs = np.zeros((slots, squares * NUM_PLANES), dtype=np.int8)
        self._masks = np.zeros((slots, self.num_actions), dtype=np.bool_)
        self._waiting = np.zeros((slots, 2), dtype=np.int32)
        self._done = np.zeros(self.trees, dtype=np.int64)
        self._room = np.zeros(self.trees, dtype=np.int64)
        self._buffer = np.zeros(self.num_actions, dtype=np.int32)
        self._no_logits = np.zeros(self.num_actions, dtype=np.float32)
        self._slots = np.arange(self.trees, dtype=np.int64)
        # the compiled kernels' arguments (simulation.Games, Settings, Batch): fixed for this search
        self._play = Games(self.base, self._slots, self.scratch, self.work, self._buffer)
        self._settings = Settings(
            self.root_selection.parameters(), self.selection.parameters(), self._evaluator_parameters, self.solver
        )
        self._batch = Batch(self._obs, self._masks, self._waiting)
        self.active = np.zeros(self.trees, dtype=np.bool_)
        self._restrict: list[np.ndarray | None] = [None] * self.trees
        self._games: BatchGame | None = None
        self._noise_rng = np.random.default_rng(self.seed)
        self._evaluator_rng = np.random.default_rng([self.seed, 1])  # for evaluate(); apart from the noise
        self.arrays.rng[:] = np.random.SeedSequence(self.seed).generate_state(self.trees, np.uint64)
        #: Simulations run by the last :meth:`run`, per tree.
        self.last_sims = np.zeros(self.trees, dtype=np.int64)

    # ------------------------------------------------------------------ capacity
    def _new_trees(self, nodes: int, edges: int) -> None:
        self.tree, self.arrays = new_tree(self.trees, nodes, edges, self.max_depth, self.lanes)

    def _grow(self, nodes: int, edges: int) -> None:
        """Room for at least ``nodes`` nodes and ``edges`` edges per tree (contents kept)."""
        old = self.arrays
        have_nodes, have_edges = old.player.shape[1], old.action.shape[1]
        nodes = max(nodes, have_nodes)
        edges = max(edges, have_edges)
        if nodes == have_nodes and edges == have_edges:
            return
        self.tree, self.arrays = grown(
            old,
            max(nodes, 2 * have_nodes) if nodes > have_nodes else have_nodes,
            max(edges, 2 * have_edges) if edges > have_edges else have_edges,
        )

    def _room_after(self, sims: int) -> tuple[int, int]:
        """The node and edge room per tree :meth:`_make_room` would leave for ``sims`` more
        simulations (as :meth:`_grow` sizes it, before any compaction; nothing changed)."""
        sims = _checks.whole("sims", sims, 0, MAX_SIMS)  # before numpy's int64 sums overflow
        a = self.arrays
        have_nodes, have_edges = a.player.shape[1], a.action.shape[1]
        live = self.active
        if not live.any():
            return have_nodes, have_edges
        room = 4 * self._base_arrays.empty[live].astype(np.int64) + 5
        nodes = int((a.size[live].astype(np.int64) + sims + 1).max())
        edges = int((a.used[live] + (sims + 1) * room).max())
        nodes = max(nodes, 2 * have_nodes) if nodes > have_nodes else have_nodes
        edges = max(edges, 2 * have_edges) if edges > have_edges else have_edges
        return nodes, edges

    def tree_bytes(self, sims: int) -> int:
        """Bytes the trees would hold after room is made for ``sims`` more simulations."""
        nodes, edges = self._room_after(sims)
        return tree_bytes(self.trees, nodes, edges, self.max_depth, self.lanes)

    def check_budget(self, sims: int, label: str = "sims") -> None:
        """Raise :class:`CarnacError` (naming ``label``, the value and :data:`TREE_BUDGET`) if
        ``sims`` more simulations would need trees larger than the budget (or is not a whole
        number in ``0 ..`` :data:`MAX_SIMS`)."""
        sims = _checks.whole(label, sims, 0, MAX_SIMS)
        need = self.tree_bytes(sims)
        if need > TREE_BUDGET:
            raise CarnacError(
                f"{label}={sims} on board {self.board.name!r} needs search trees of {need / (1 << 20):.0f} MB, "
                f"more than the limit of {TREE_BUDGET >> 20} MB; give fewer simulations"
            )

    def _make_room(self, sims: int) -> None:
        """Room in every active tree for ``sims`` more simulations (compacting reused trees first)."""
        a = self.arrays
        self._room[:] = 4 * self._base_arrays.empty + 5  # a node's actions: 4 per empty square, or 5
        nodes_needed = a.size + sims + 1
        edges_needed = a.used + (sims + 1) * self._room
        have_nodes, have_edges = a.player.shape[1], a.action.shape[1]
        for t in np.flatnonzero(self.active & ((nodes_needed > have_nodes) | (edges_needed > have_edges))):
            if a.root[t] > 0:
                compact(self.tree, int(t))
        nodes_needed = a.size + sims + 1
        edges_needed = a.used + (sims + 1) * self._room
        live = self.active
        if live.any():
            self._grow(int(nodes_needed[live].max()), int(edges_needed[live].max()))

    # ------------------------------------------------------------------ roots
    def set_roots(self, kernel: KernelState, slots: Sequence[int], reuse: bool = False) -> None:
        """Search the games in ``slots`` of ``kernel`` (a KernelState on this board, e.g. a
        :attr:`BatchGame.kernel <carnac_env.batch.BatchGame.kernel>`): tree ``t`` gets slot
        ``slots[t]``; trees beyond ``len(slots)`` are inactive. The games are copied; ``kernel``
        may change afterwards.

        With ``reuse``, a tree whose previous search reached the new game within a few moves
        keeps that subtree and its statistics (tree reuse); otherwise it starts afresh.
        """
        games = self._check_kernel(kernel)
        slots = _whole_numbers("set_roots slots", slots, games)
        if len(slots) > self.trees:
            raise CarnacError(f"set_roots: {len(slots)} slots for a search of {self.trees} trees")
        if reuse not in (True, False):
            raise CarnacError(f"set_roots reuse must be True or False, got {reuse!r}")
        over = [int(s) for s in slots if self._kernel_over(kernel, int(s))]
        if over:
            raise CarnacError(f"set_roots: the games in slots {over} are over; a search needs unfinished games")
        if reuse and not self.root_selection.reusable:
            name = type(self.root_selection).__name__
            raise CarnacError(
                f"tree reuse needs a root selection that can go on from a reused root; {name}'s starts afresh"
            )
        self.active[:] = False
        for t, slot in enumerate(slots):
            t, slot = int(t), int(slot)
            node = -1
            if reuse and self.arrays.root[t] >= 0:
                node = simulation.find_position(self.tree, self._play, t, kernel, slot, 8)
            copy_game(kernel, slot, self.base, t)
            if node >= 0:
                self.arrays.root[t] = node
            else:
                simulation.start_tree(self.tree, self._play, t)
            self._restrict[t] = None
            self.active[t] = True

    def _check_kernel(self, kernel: object) -> int:
        """The number of games of ``kernel``, after checking it is a KernelState on this board."""
        if not isinstance(kernel, KernelState):
            raise CarnacError(f"set_roots needs a KernelState (BatchGame.kernel), got {type(kernel).__name__}")
        games, megaliths, min_dolmen, last_tilt, neighbours = _kernel_board(kernel)
        b = self.board
        mine = (b.megaliths, b.min_dolmen, b.last_tilt)
        if (megaliths, min_dolmen, bool(last_tilt)) != mine or not np.array_equal(neighbours, b.arrays.neighbours):
            raise CarnacError(
                f"set_roots: the games are not on this search's board {b.name!r} ({b.rows} x {b.cols}, "
                f"{b.megaliths} megaliths); build a Search for their board"
            )
        return int(games)

    @staticmethod
    def _kernel_over(kernel: KernelState, slot: int) -> bool:
        return bool(_slot_over(kernel, slot))

    def set_games(self, states: Sequence[GameState], reuse: bool = False) -> None:
        """:meth:`set_roots` for core game states (unfinished, on this board), one per tree."""
        if isinstance(states, GameState) or not isinstance(states, Sequence):
            raise CarnacError(f"set_games needs a list of GameState, got {type(states).__name__}")
        if len(states) > self.trees:
            raise CarnacError(f"{len(states)} games for a search of {self.trees} trees")
        for state in states:
            if not isinstance(state, GameState):
                raise CarnacError(f"set_games needs GameState objects, got {type(state).__name__}")
            if state.board != self.board:
                raise CarnacError(
                    f"set_games: a game on board {state.board.name!r} for a search on {self.board.name!r}; "
                    "build a Search for its board"
                )
        if self._games is None:
            self._games = BatchGame(self.board, num_envs=self.trees, seed=0)
        for i, state in enumerate(states):
            if state.is_over:
                raise CarnacError("a search needs unfinished games; one of the roots is over")
            self._games.set_state(i, state)
        self.set_roots(self._games.kernel, range(len(states)), reuse=reuse)

    def restrict_root(self, t: int, actions: Sequence[int] | None) -> None:
        """Search only ``actions`` (legal ones, e.g. the best few by some ranking) at tree ``t``'s
        root, or every legal action with None. A reused root keeps the statistics of the
        actions it keeps; call after :meth:`set_roots` or :meth:`set_games`, before :meth:`run`."""
        t = self._tree(t, "restrict_root")
        if not self.active[t]:
            raise CarnacError(f"restrict_root: tree {t} has no root; call set_roots or set_games first")
        if actions is None:
            self._restrict[t] = None
            return
        wanted = np.unique(
            _whole_numbers("restrict_root actions", actions, self.num_actions, "not legal (out of range)").astype(
                np.int32
            )
        )
        legal = self._legal(t)
        if len(wanted) == 0 or not np.isin(wanted, legal).all():
            raise CarnacError(f"root actions {list(map(int, wanted))} are not legal actions of tree {t}'s root")
        self._restrict[t] = wanted
        a = self.arrays
        if a.count[t, a.root[t]] >= 0:
            kept = restrict_root_edges(self.tree, t, wanted, len(wanted), self.num_actions)
            if kept < len(wanted):  # the reused root lacked some: start afresh with the restriction
                simulation.start_tree(self.tree, self._play, t)
            elif self.solver:  # a proof from edges now dropped no longer holds
                reprove_root(self.tree, t)

    def expand_roots(self) -> None:
        """Expand the active trees' new roots (their edges, priors and value; root noise),
        over the actions given to :meth:`restrict_root` or all legal ones."""
        a = self.arrays
        fresh = [int(t) for t in np.flatnonzero(self.active) if a.count[t, a.root[t]] < 0]
        if not fresh:
            return
        self._make_room(0)
        a = self.arrays
        logits = values = None
        order: dict[int, int] = {}
        if self._evaluator_parameters.batched:
            count = simulation.write_roots(self.tree, self._play, self._batch, self.active)
            logits, values = self._evaluate(count)
            order = {int(self._waiting[k, 0]): k for k in range(count)}
        for t in fresh:
            wanted = self._restrict[t]
            actions = self._legal(t) if wanted is None else wanted
            if t in order:
                k = order[t]
                simulation.expand_root(self.tree, t, actions, len(actions), logits[k], float(values[k]), True)
            else:
                simulation.expand_root(self.tree, t, actions, len(actions), self._no_logits, 0.0, False)
            first, count = int(a.first[t, a.root[t]]), len(actions)
            if self.dirichlet is not None and count > 1:
                alpha, fraction = self.dirichlet
                eta = self._noise_rng.dirichlet([alpha] * count)
                a.prior[t, first : first + count] = (1 - fraction) * a.prior[t, first : first + count] + fraction * eta
            noise = self.root_selection.root_noise(self._noise_rng, count)
            if noise is not None:
                a.noise[t, first : first + count] = noise

    def _tree(self, t: object, caller: str) -> int:
        """``t`` checked as a tree index of this search."""
        if not _checks.is_whole(t) or not 0 <= int(t) < self.trees:  # type: ignore[arg-type]
            raise CarnacError(f"{caller}: tree {t!r} is not a tree of this search; expected 0 to {self.trees - 1}")
        return int(t)  # type: ignore[arg-type]

    def _searched(self, t: object, caller: str) -> int:
        """``t`` checked as a tree whose root has been expanded (by :meth:`run` or :meth:`expand_roots`)."""
        t = self._tree(t, caller)
        a = self.arrays
        root = int(a.root[t])
        if root < 0 or a.count[t, root] < 0:
            raise CarnacError(f"{caller}: tree {t} has not been searched; call set_roots or set_games, then run")
        return t

    def _legal(self, t: int) -> np.ndarray:
        count = legal_actions(self.base, t, self._buffer)
        return self._buffer[:count].copy()

    def _evaluate(self, count: int) -> Evaluation:
        """The evaluator's logits and values of the ``count`` leaves waiting in the scratch slots
        (as :attr:`_waiting` lists them): the search's one call of ``evaluate``."""
        if count == 0:
            return Evaluation(np.zeros((0, self.num_actions), np.float32), np.zeros(0, np.float32))
        b = self.board
        waiting = self._waiting[:count]
        leaves = Leaves(
            board=b,
            observations=self._obs[:count].reshape(count, b.rows, b.cols, NUM_PLANES),
            masks=self._masks[:count],
            kernel=self.scratch,
            slots=waiting[:, 0].astype(np.int64) * self.lanes + waiting[:, 1],
            rng=self._evaluator_rng,
            arrays=self._scratch_arrays,
        )
        logits, values = self.evaluator.evaluate(leaves)
        return Evaluation(as_array("logits", logits, (count, self.num_actions)), as_array("values", values, (count,)))

    # ------------------------------------------------------------------ running
    def run(self, sims: int, seconds: float = 0.0) -> int:
        """Run ``sims`` simulations in every active tree (expanding new roots first), or, with
        ``seconds`` > 0 and playouts, as many as fit in that time. Returns the simulations run
        per tree (also in :attr:`last_sims`)."""
        sims = _checks.whole("sims", sims, 0, MAX_SIMS)
        seconds = _checks.number("seconds", seconds, 0.0, MAX_SECONDS)
        if not seconds and sims:
            self.check_budget(sims)
        with blas_single_thread():
            return self._run(sims, seconds)

    def _run(self, sims: int, seconds: float) -> int:
        self.expand_roots()
        self.last_sims[:] = 0
        if seconds:
            return self._run_for(seconds)
        if sims == 0:
            return 0
        self._make_room(sims)
        if not self._evaluator_parameters.batched:
            for t in np.flatnonzero(self.active):
                done = simulation.run_playouts(self.tree, self._play, self._settings, int(t), sims, int(self._room[t]))
                self.last_sims[t] = done
            return sims
        budget = Budget(self.active, self._schedules(sims), self._done, sims)
        self._done[:] = 0
        while (self._done[self.active] < sims).any():
            count = simulation.select_round(self.tree, self._play, self._settings, budget, self._batch)
            if count:
                logits, values = self._evaluate(count)
                simulation.expand_round(self.tree, self._play, self._settings, self._batch, count, logits, values)
        self.last_sims[self.active] = sims
        return sims

    def _run_for(self, seconds: float) -> int:
        """Playout simulations in chunks until ``seconds`` have passed (not reproducible)."""
        if self._evaluator_parameters.batched:
            raise CarnacError("a time budget needs the Playouts evaluator; give other searches a number of sims")
        deadline = time.perf_counter() + seconds
        chunk = 64
        done = 0
        while True:
            if self.tree_bytes(chunk) > TREE_BUDGET:
                break  # the trees are as large as the budget allows: keep what was searched
            self._make_room(chunk)
            for t in np.flatnonzero(self.active):
                simulation.run_playouts(self.tree, self._play, self._settings, int(t), chunk, int(self._room[t]))
            done += chunk
            if time.perf_counter() >= deadline:
                break
        self.last_sims[self.active] = done
        return done

    def _schedules(self, sims: int) -> np.ndarray:
        """Each tree's root visit plan (:meth:`Selection.visit_plan
        <carnac_env.search.base.Selection.visit_plan>`: Gumbel's sequential halving), else zeros."""
        plans = np.zeros((self.trees, sims), dtype=np.int32)
        a = self.arrays
        for t in np.flatnonzero(self.active):
            plan = self.root_selection.visit_plan(int(a.count[t, a.root[t]]), sims)
            if plan is None:
                return plans
            plans[t] = plan
        return plans

    # ------------------------------------------------------------------ results
    def root(self, t: int = 0) -> RootEdges:
        """Tree ``t``'s root edges after the search (sorted by action number)."""
        t = self._searched(t, "root")
        a = self.arrays
        count = int(a.count[t, a.root[t]])
        actions = np.zeros(count, np.int32)
        visits = np.zeros(count, np.int32)
        values = np.zeros(count, np.float64)
        priors = np.zeros(count, np.float32)
        logits = np.zeros(count, np.float32)
        root_table(self.tree, t, actions, visits, values, priors, logits)
        order = np.argsort(actions, kind="stable")
        return RootEdges(actions[order], visits[order], values[order], priors[order], logits[order])

    def best_action(self, t: int = 0, ties: str = "prior") -> int:
        """The most visited root action; ties go to the higher prior (``ties="prior"``) or
        the higher mean value (``"value"``), then to the lower action number."""
        if ties not in ("prior", "value"):
            raise CarnacError(f"best_action ties={ties!r}; expected 'prior' or 'value'")
        edges = self.root(self._searched(t, "best_action"))
        if len(edges.actions) == 0:
            raise CarnacError(f"best_action: tree {t}'s root has no actions")
        second = edges.priors if ties == "prior" else edges.values
        order = np.lexsort((edges.actions, -second, -edges.visits))
        if self.solver:
            return int(edges.actions[self._proven_pick(self.root_proofs(t), order)])
        return int(edges.actions[order[0]])

    @staticmethod
    def _proven_pick(proofs: np.ndarray, order: np.ndarray) -> int:
        """The first of ``order`` (indices into ``proofs``) that is a proven win, else the first
        not proven lost, else ``order[0]``."""
        for wanted in (proofs[order] == 1, proofs[order] != -1):
            if wanted.any():
                return int(order[int(np.argmax(wanted))])
        return int(order[0])

    def root_proofs(self, t: int = 0) -> np.ndarray:
        """MCTS-Solver: each root action's proven result for the player to act at the root
        (+1 a win, 0 a draw, -1 a loss, :data:`~carnac_env.search.tree.UNPROVEN` (2) not
        proven), int8, sorted by action number as :meth:`root`. Without ``solver`` only the
        finished games one move away are proven."""
        t = self._searched(t, "root_proofs")
        a = self.arrays
        root = int(a.root[t])
        first, count = int(a.first[t, root]), int(a.count[t, root])
        player = int(a.player[t, root])
        actions = a.action[t, first : first + count]
        proofs = np.empty(count, np.int8)
        for k in range(count):
            proof = node_proof(self.tree, t, int(a.child[t, first + k]))
            proofs[k] = proof if proof == UNPROVEN or player == 0 else -proof
        return proofs[np.argsort(actions, kind="stable")]

    def proven(self, t: int = 0) -> int | None:
        """MCTS-Solver: tree ``t``'s root result for its player to act if proven (+1, 0, -1),
        else None (always None without ``solver``). A root restricted to some actions
        (:meth:`restrict_root`) is proven over those: a win is a win, but a loss or a draw says
        only that no searched action does better."""
        t = self._searched(t, "proven")
        a = self.arrays
        root = int(a.root[t])
        proof = node_proof(self.tree, t, root)
        if proof == UNPROVEN:
            return None
        return proof if int(a.player[t, root]) == 0 else -proof

    def gumbel_action(self, t: int = 0) -> int:
        """Gumbel's choice (a root selection's own, :meth:`Selection.root_scores
        <carnac_env.search.base.Selection.root_scores>`): among the most visited root actions,
        the best by ``noise + logit + sigma(completed q)`` (ties: the lower action number)."""
        t = self._searched(t, "gumbel_action")
        a = self.arrays
        root = int(a.root[t])
        first, count = int(a.first[t, root]), int(a.count[t, root])
        scores = np.zeros(count, np.float64)
        if not self.root_selection.root_scores(self.tree, t, root, scores):
            raise CarnacError(
                f"gumbel_action needs a search whose root selection scores its actions (Gumbel), "
                f"not {type(self.root_selection).__name__}"
            )
        visits = a.n[t, first : first + count]
        actions = a.action[t, first : first + count]
        if self.solver:  # a proven win first, a proven loss last; then Gumbel's rule
            in_order = np.argsort(actions, kind="stable")
            proofs = np.empty(count, np.int8)
            proofs[in_order] = self.root_proofs(t)
            for wanted in (proofs == 1, proofs != -1):
                if wanted.any():
                    pool = np.flatnonzero(wanted)
                    candidates = pool[visits[pool] == visits[pool].max()]
                    best = candidates[np.lexsort((actions[candidates], -scores[candidates]))[0]]
                    return int(actions[best])
        candidates = np.flatnonzero(visits == visits.max())
        best = candidates[np.lexsort((actions[candidates], -scores[candidates]))[0]]
        return int(actions[best])

    def policy(self, t: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, probabilities)`` of the root: Gumbel's improved policy
        ``softmax(logit + sigma(completed q))`` with the Gumbel selection, else the visit counts'
        distribution (the priors if nothing was visited). Sorted by action number."""
        t = self._searched(t, "policy")
        a = self.arrays
        root = int(a.root[t])
        first, count = int(a.first[t, root]), int(a.count[t, root])
        actions = a.action[t, first : first + count].copy()
        probs = np.zeros(count, np.float64)
        if not self.root_selection.improved_policy(self.tree, t, root, probs):
            visits = a.n[t, first : first + count].astype(np.float64)
            probs = visits / visits.sum() if visits.sum() > 0 else a.prior[t, first : first + count].astype(np.float64)
            probs = probs / probs.sum()
        order = np.argsort(actions, kind="stable")
        return actions[order], probs[order]

    def root_value(self, t: int = 0) -> float:
        """The search's value of tree ``t``'s root for its player to act: the visit-weighted
        mean of the root edges' values (the evaluator's value before any visit)."""
        t = self._searched(t, "root_value")
        edges = self.root(t)
        total = edges.visits.sum()
        if total == 0:
            a = self.arrays
            return float(a.value[t, a.root[t]])
        return float((edges.visits * edges.values).sum() / total)
