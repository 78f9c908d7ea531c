"""The one loader of the repository's scripts (docs generators, golden-record tools, examples).

They are files, not modules of the package: :func:`load_script` runs one by its path from the
repository root and returns it as a module (once per test session; later calls reuse it).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from _paths import ROOT

_LOADED: dict[str, ModuleType] = {}


def load_script(relative: str) -> ModuleType:
    """The script at ``relative`` (e.g. ``"scripts/make_tutorials.py"``), loaded as a module."""
    if relative not in _LOADED:
        path = ROOT / relative
        name = "carnac_script_" + relative.replace("/", "_").removesuffix(".py")
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:  # pragma: no cover - a wrong path
            raise FileNotFoundError(path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look the module up by name
        spec.loader.exec_module(module)
        _LOADED[relative] = module
    return _LOADED[relative]
