"""The search's plug points, each type stated once here (the shape of mctx's ``base.py``).

A :class:`~carnac_env.search.Search` is put together from two kinds of parts; this module says
what each must be, and the other search modules import these types from here:

* an **evaluator** values a batch of new positions: :meth:`Evaluator.evaluate` takes
  :class:`Leaves` and returns an :class:`Evaluation` (logits and values). The compiled loop reads
  its :class:`EvaluatorParameters` (:func:`~carnac_env.search.evaluators.evaluator_parameters`).
  A :class:`Network` needs an object of the :class:`Forward` protocol.
* a **selection** picks the edge a simulation follows at an expanded node: a :class:`Selection`
  subclass in a file of its own (its constants, checked, and its compiled ``select``),
  registered with one line in :mod:`carnac_env.search.selection`. The compiled loop reads its
  :class:`SelectionParameters`; the search asks it, through the methods and flags below, for
  what it needs besides (root noise, a root visit plan, an improved policy, root scores).

What a search gives back per root is a :class:`RootEdges`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

import numpy as np

from carnac_env.batch.engine import game_state
from carnac_env.batch.state import KernelState, StateArrays
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState

__all__ = [
    "SELECTION_CONSTANTS",
    "Evaluation",
    "Evaluator",
    "EvaluatorParameters",
    "Forward",
    "Leaves",
    "RootEdges",
    "Selection",
    "SelectionParameters",
]


# ----------------------------------------------------------------------------- evaluators
@dataclass(frozen=True, eq=False)
class Leaves:
    """A batch of positions to evaluate: what :meth:`Evaluator.evaluate` receives.

    The arrays are the search's buffers, valid during the call (copy what you keep).

    Attributes:
        board: the board of every leaf (its rules included).
        observations: ``(N, rows, cols, 9)`` int8, each leaf seen by its player to act (the
            planes of :func:`carnac_env.core.observation.observation_planes`).
        masks: ``(N, actions)`` bool, each leaf's legal actions.
        kernel: the engine state holding the leaves' games, for compiled code
            (:mod:`carnac_env.batch`); leaf ``k`` is in slot ``slots[k]``. Play on copies:
            :func:`~carnac_env.batch.rules.copy_rules_state` into your own state.
        slots: ``(N,)`` int64, each leaf's slot in ``kernel``.
        rng: a generator owned by the search (seeded by its ``seed``), for evaluators that
            draw: the same search and seed give the same draws.
        arrays: ``kernel``'s numpy arrays (:class:`~carnac_env.batch.state.StateArrays`, the
            same memory), for Python code.
    """

    board: Board
    observations: np.ndarray
    masks: np.ndarray
    kernel: KernelState
    slots: np.ndarray
    rng: np.random.Generator
    arrays: StateArrays

    def __len__(self) -> int:
        return len(self.slots)

    @property
    def players(self) -> np.ndarray:
        """``(N,)`` int8: the player to act at each leaf (the values are for them)."""
        return self.arrays.to_act[self.slots].copy()

    def states(self) -> list[GameState]:
        """The leaves as core :class:`~carnac_env.core.game.GameState` objects (new ones, built
        on each call: for evaluators written on the core's API)."""
        return [game_state(self.board, self.arrays, int(slot)) for slot in self.slots]


class Evaluation(NamedTuple):
    """What an evaluator returns for ``N`` leaves (a plain ``(logits, values)`` pair does too).

    Attributes:
        logits: ``(N, actions)``, indexed by action number; only the legal ones are read, and
            the priors are their softmax over the legal actions.
        values: ``(N,)`` in ``[-1, 1]``, each for its leaf's player to act.
    """

    logits: np.ndarray
    values: np.ndarray


@runtime_checkable
class Forward(Protocol):
    """A policy-value network: logits ``(N, actions)`` and values ``(N,)`` for the player to act."""

    def forward(self, observations: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Logits and values for ``(N, rows, cols, 9)`` observations."""
        ...


class EvaluatorParameters(NamedTuple):
    """What the compiled search loop reads of an evaluator."""

    #: True: ``evaluate`` is called with each round's leaves; False: they are valued in the loop.
    batched: bool
    #: Compiled playouts per leaf (0: none).
    playouts: int
    #: The playouts' share of the value when the evaluator is batched and has playouts.
    weight: float
    #: The compiled playouts play greedy's moves (:mod:`carnac_env.search.lookahead`), not random ones.
    greedy: bool = False
    #: With ``greedy``: the chance of a uniformly random move instead of greedy's, at each move.
    epsilon: float = 0.0


class Evaluator:
    """The base of leaf evaluators: subclass it and write :meth:`evaluate`.

    Class attributes (the defaults suit a Python evaluator):
        batched: True: :meth:`evaluate` is called with each round's leaves. False: the leaves
            are valued inside the compiled loop (:class:`~carnac_env.search.Playouts`).
        playouts: compiled random playouts per leaf, mixed into the value (0: none).
        weight: the playouts' share of the value, ``(1 - weight) * evaluated + weight *
            playouts``, when ``playouts`` > 0.
        policy: the compiled playouts' moves: ``"random"`` (uniform) or ``"greedy"``
            (greedy's one-move lookahead, :mod:`carnac_env.search.lookahead`).
        epsilon: with ``"greedy"``, the chance of a uniformly random move at each move.
    """

    batched: bool = True
    playouts: int = 0
    weight: float = 0.0
    policy: str = "random"
    epsilon: float = 0.0

    def evaluate(self, leaves: Leaves) -> Evaluation | tuple[np.ndarray, np.ndarray]:
        """The :class:`Evaluation` of ``leaves``: logits ``(N, actions)`` (indexed by action
        number; only the legal ones are read) and values ``(N,)`` in ``[-1, 1]`` for the player
        to act."""
        raise NotImplementedError(f"{type(self).__name__} must define evaluate(leaves)")


# ----------------------------------------------------------------------------- selections
#: How many constants a selection passes to the compiled loop (unused ones are 0).
SELECTION_CONSTANTS = 4


class SelectionParameters(NamedTuple):
    """What the compiled loop reads of a selection: its ``kind`` (its place in the registry,
    :mod:`carnac_env.search.selection`, which the compiled switch
    :func:`~carnac_env.search.selection.select_edge` reads) and its ``constants``, in the order
    its :meth:`Selection.constants` gives them (padded with 0 to :data:`SELECTION_CONSTANTS`)."""

    kind: int
    constants: tuple[float, float, float, float]


class Selection:
    """The base of selection rules. A rule is a frozen dataclass in a file of its own that gives:

    * its constants as fields, checked in ``__post_init__``, and :meth:`constants`, the numbers
      its compiled score reads (``parameters.constants[0]``, ``[1]`` ...);
    * ``select``: its compiled score, a numba function ``select(tree, t, node, constants,
      at_root, visit_level, solver) -> edge`` (``solver``: never follow an edge whose child is
      proven lost for the mover while another is left; ``visit_level``: the root visit plan's
      entry, :meth:`visit_plan`);
    * and, where it differs from these defaults, the flags and methods below.

    Registering it (one line in :mod:`carnac_env.search.selection`, or
    :func:`~carnac_env.search.selection.register` at run time) gives it its :attr:`kind`.
    """

    #: Its place in the registry (set by registration; -1: not registered).
    kind: ClassVar[int] = -1
    #: Its compiled score (see the class docstring).
    select: ClassVar[Any] = None
    #: It reads the evaluator's logits, so it needs a batched evaluator (not compiled playouts alone).
    needs_logits: ClassVar[bool] = False
    #: It must be the selection at the root and below alike.
    paired: ClassVar[bool] = False
    #: A search may go on from a reused root with it (its root needs no fresh start).
    reusable: ClassVar[bool] = True

    def constants(self) -> tuple[float, ...]:
        """The constants its compiled score reads (at most :data:`SELECTION_CONSTANTS`)."""
        raise NotImplementedError(f"{type(self).__name__} must define constants()")

    def parameters(self) -> SelectionParameters:
        """The compiled loop's view of this selection."""
        values = tuple(float(v) for v in self.constants())
        if len(values) > SELECTION_CONSTANTS:
            raise ValueError(f"{type(self).__name__} gives {len(values)} constants; at most {SELECTION_CONSTANTS}")
        padded = values + (0.0,) * (SELECTION_CONSTANTS - len(values))
        return SelectionParameters(type(self).kind, padded)  # type: ignore[arg-type]

    def root_noise(self, rng: np.random.Generator, count: int) -> np.ndarray | None:
        """Noise for a new root's ``count`` edges (the tree's ``noise`` field), drawn from
        ``rng``; None (the default): none."""
        return None

    def visit_plan(self, count: int, sims: int) -> np.ndarray | None:
        """At the root of ``count`` edges, for each of ``sims`` simulations the ``visit_level``
        its ``select`` receives; None (the default): no plan (the level is 0)."""
        return None

    def improved_policy(self, tree: Any, t: int, node: int, out: np.ndarray) -> bool:
        """Write the rule's policy over ``node``'s edges (edge order) into ``out`` and return
        True; False (the default): it has none, and the search's policy is the visit counts'."""
        return False

    def root_scores(self, tree: Any, t: int, node: int, out: np.ndarray) -> bool:
        """Write the scores that pick among the most visited root edges (edge order) into
        ``out`` and return True; False (the default): it has none."""
        return False


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class RootEdges:
    """A root's edges after a search, sorted by action number.

    Attributes:
        actions: the root's actions (all legal ones, or those it was restricted to).
        visits: simulations through each.
        values: each edge's mean value for the player to act at the root (0 if unvisited).
        priors: the evaluator's prior (with any root noise mixed in).
        logits: the evaluator's logits (0 with compiled playouts alone).
    """

    actions: np.ndarray
    visits: np.ndarray
    values: np.ndarray
    priors: np.ndarray
    logits: np.ndarray
