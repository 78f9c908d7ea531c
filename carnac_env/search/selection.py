"""The selection registry, and the compiled switch that calls a selection's score.

A selection rule is one class in one file (:class:`~carnac_env.search.uct.UCT`,
:class:`~carnac_env.search.puct.PUCT`, :class:`~carnac_env.search.gumbel.Gumbel`): its
constants, checked, and its compiled ``select`` (the protocol is
:class:`~carnac_env.search.base.Selection`). :data:`SELECTIONS` registers it by name, one line
each, and gives it its ``kind`` (its place here); the compiled loop calls its ``select`` through
:func:`select_edge`, which holds one line per kind (why it is written out is said there).

To add a rule ``Mine`` (``search/mine.py``): write the class and its ``select``, add
``"mine": Mine`` to :data:`SELECTIONS` and its line to :func:`select_edge`.
tests/search/test_search_selection.py fails while a registered rule has no line there.
"""

from __future__ import annotations

from typing import Any

from numba import njit

from carnac_env.errors import CarnacError
from carnac_env.search.base import Selection
from carnac_env.search.gumbel import Gumbel
from carnac_env.search.puct import PUCT
from carnac_env.search.uct import UCT

__all__ = ["SELECTIONS", "check_selection", "make_selection", "select_edge"]

#: The registered selections, by name, in kind order: a new rule is one line here (and its line
#: in :func:`select_edge`).
SELECTIONS: dict[str, type[Selection]] = {
    "uct": UCT,
    "puct": PUCT,
    "gumbel": Gumbel,
}
for _kind, _rule in enumerate(SELECTIONS.values()):
    _rule.kind = _kind

# numba reads module-level integers as compile-time constants
_UCT, _PUCT, _GUMBEL = UCT.kind, PUCT.kind, Gumbel.kind
_uct, _puct, _gumbel = UCT.select, PUCT.select, Gumbel.select


def check_selection(rule: Any, label: str = "selection") -> Selection:
    """``rule`` if it is an instance of a registered selection; else a CarnacError naming them."""
    if type(rule) not in SELECTIONS.values():
        names = ", ".join(type_.__name__ for type_ in SELECTIONS.values())
        raise CarnacError(
            f"a {label} must be one of carnac_env.search's selections ({names}), got {type(rule).__name__}"
        )
    return rule


def make_selection(name: str, **constants: Any) -> Selection:
    """The registered selection ``name`` (``"uct"``, ``"puct"``, ``"gumbel"`` ...) built with
    ``constants`` (its fields); a CarnacError names the registered ones if ``name`` is not one."""
    rule = SELECTIONS.get(name) if isinstance(name, str) else None
    if rule is None:
        raise CarnacError(f"unknown selection {name!r}; expected one of {', '.join(SELECTIONS)}")
    return rule(**constants)


@njit(cache=True, nogil=True)
def select_edge(tree, t, node, selection, at_root, visit_level, solver):  # pragma: no cover - compiled
    """The edge a simulation follows at expanded ``node`` under ``selection`` (its
    :class:`~carnac_env.search.base.SelectionParameters`; ``at_root``, ``visit_level`` and
    ``solver`` as the rules' ``select`` takes them).

    Written out, one line per registered kind, because numba 0.68 offers no way to call a rule
    chosen at run time from the Python registry that keeps the kernels cached and fast:

    * a compiled function cannot look a Python dict up: the callee must be known when the
      caller is typed. Passing each rule's ``select`` (a dispatcher) or its own parameter type
      into the kernels makes them compile once more per pair of root and interior rules, and
      numba's cache index pickles those argument types by their classes: a rule whose class
      lives where another process cannot import it (a test, a script) makes every later load of
      the kernels' cache raise ModuleNotFoundError (tried; caching.py ``_load_index``);
    * a switch generated from the registry (source built and ``exec``'d) has no file, so numba
      cannot cache it, and a cached switch would not see a registry changed since: the cache is
      keyed by this file's stamp alone;
    * a first-class function (``types.FunctionType``) is called through its address, which the
      compiler cannot inline into the loop (not tried here).

    tests/search/test_search_selection.py checks that every registered kind has its line here.
    """
    kind = selection.kind
    constants = selection.constants
    if kind == _UCT:
        return _uct(tree, t, node, constants, at_root, visit_level, solver)
    if kind == _PUCT:
        return _puct(tree, t, node, constants, at_root, visit_level, solver)
    if kind == _GUMBEL:
        return _gumbel(tree, t, node, constants, at_root, visit_level, solver)
    return -1  # not a registered kind: Search refuses such a selection before any search
