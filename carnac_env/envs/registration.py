"""Registering ``carnac_env/Carnac-v0`` with Gymnasium without importing Gymnasium early.

``import carnac_env`` must register the Gymnasium id, yet ``import carnac_env.core`` (which
runs the package's ``__init__`` first) must load numpy and the standard library only. So the
package calls :func:`register_when_gymnasium_loads`: if Gymnasium is already imported the id
is registered at once; otherwise a small import hook waits for ``import gymnasium`` and
registers the id right after Gymnasium has finished loading. Either way, by the time a user
can call ``gymnasium.make`` the id exists. ``gymnasium.make("carnac_env:carnac_env/Carnac-v0")``
needs no prior import at all: Gymnasium imports this package itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

ENV_ID = "carnac_env/Carnac-v0"


def register_envs() -> None:
    """Register ``carnac_env/Carnac-v0`` (single env and vector entry point); idempotent.

    Imports Gymnasium; the entry points are strings, so the env modules load only when
    ``gymnasium.make`` or ``gymnasium.make_vec`` is called.
    """
    import gymnasium

    if ENV_ID in gymnasium.registry:
        return
    gymnasium.register(
        id=ENV_ID,
        entry_point="carnac_env.envs.gym:CarnacEnv",
        vector_entry_point="carnac_env.envs.vector:CarnacVectorEnv",
        disable_env_checker=False,
    )


class _AfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds ``gymnasium`` with the regular finders and gives it a loader that registers the id.

    Only a real import removes the hook: ``importlib.util.find_spec("gymnasium")`` (which some
    libraries call to see whether Gymnasium is installed, TorchRL among them) leaves it in place.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, then :func:`register_envs`."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        _remove_hook()
        module.__spec__.loader = module.__loader__ = self._loader  # gymnasium sees its own loader from now on
        self._loader.exec_module(module)
        register_envs()


def _remove_hook() -> None:
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _AfterGymnasium)]


def register_when_gymnasium_loads() -> None:
    """Register the id now if Gymnasium is loaded, else as soon as it is imported."""
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(finder, _AfterGymnasium) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterGymnasium())
