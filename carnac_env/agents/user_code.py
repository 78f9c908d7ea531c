"""Agents named by an import path in a spec (``mypackage.agents.MyAgent:depth=3``): the guard.

**A spec that names an import path runs code**: importing the module runs it, and the class
(or function) it names is then called. Only name code you trust. Before anything is called,
the path must be dotted Python names, objects from the standard library are refused
(``subprocess.Popen`` or ``sys.exit`` are not agents), a class must have ``act``, and the
options must fit the constructor's signature. The attribute may be a class (called with the
options as keyword arguments, plus ``seed=`` when its constructor takes one), an object with
``act`` (used as it is), or a plain function ``f(state) -> int`` (wrapped; no options).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any

from carnac_env.agents.protocol import FunctionAgent
from carnac_env.errors import CarnacError

__all__ = ["make_user_agent"]


def make_user_agent(spec: str, path: str, options: dict[str, Any], seed: int) -> Any:
    """Import ``path`` (``module.attribute``), check that it looks like an agent, then build it."""
    target = _import_target(spec, path)
    if inspect.isclass(target):
        return _build_agent_class(spec, path, target, options, seed)
    if hasattr(target, "act"):
        if options:
            raise CarnacError(f"agent spec {spec!r}: {path} is an agent object and takes no options")
        if hasattr(target, "reset"):
            target.reset(seed)
        return target
    if callable(target):
        if options:
            raise CarnacError(f"agent spec {spec!r}: {path} is a function state -> action and takes no options")
        _check_signature(spec, path, target, (None,), {})
        return FunctionAgent(target, name=path)
    raise CarnacError(f"agent spec {spec!r}: {path} is neither an agent class, an agent object nor a function")


def _import_target(spec: str, path: str) -> Any:
    """The attribute that ``path`` names, after checking the path's shape and refusing the
    standard library (whose callables are not agents and may run commands)."""
    parts = path.split(".")
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        raise CarnacError(
            f"agent spec {spec!r}: {path!r} is not an import path 'module.Attribute' (dotted Python names)"
        )
    module_name, attribute = ".".join(parts[:-1]), parts[-1]
    if _is_standard_library(module_name):
        raise CarnacError(f"agent spec {spec!r}: {module_name!r} is in the standard library, not an agent module")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise CarnacError(f"agent spec {spec!r}: cannot import module {module_name!r} ({err})") from None
    except Exception as err:  # the module's own code failed
        raise CarnacError(f"agent spec {spec!r}: importing module {module_name!r} raised {err!r}") from err
    if not hasattr(module, attribute):
        raise CarnacError(f"agent spec {spec!r}: module {module_name!r} has no attribute {attribute!r}")
    target = getattr(module, attribute)
    if _is_standard_library(getattr(target, "__module__", None) or ""):
        raise CarnacError(f"agent spec {spec!r}: {path} comes from the standard library and is not an agent")
    return target


def _is_standard_library(module_name: str) -> bool:
    return module_name.split(".")[0] in sys.stdlib_module_names


def _build_agent_class(spec: str, path: str, cls: type, options: dict[str, Any], seed: int) -> Any:
    """Check that ``cls`` has the agent protocol's ``act`` and accepts ``options``, then build it."""
    if not callable(getattr(cls, "act", None)):
        raise CarnacError(f"agent spec {spec!r}: class {path} has no act(state) method, so it is not an agent")
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        raise CarnacError(f"agent spec {spec!r}: cannot read the constructor of {path}") from None
    takes_seed = "seed" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    kwargs = {**options, "seed": seed} if takes_seed else dict(options)
    _check_signature(spec, path, cls, (), kwargs)
    try:
        agent = cls(**kwargs)
    except Exception as err:  # the user's constructor failed
        raise CarnacError(f"agent spec {spec!r}: {path}({options}) failed: {err}") from err
    if not hasattr(agent, "act"):
        raise CarnacError(f"agent spec {spec!r}: {path} built an object without act(state)")
    return agent


def _check_signature(spec: str, path: str, target: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """Refuse a call of ``target`` that its signature would not accept, before making it."""
    try:
        inspect.signature(target).bind(*args, **kwargs)
    except TypeError as err:
        raise CarnacError(f"agent spec {spec!r}: {path} does not take these arguments: {err}") from None
    except ValueError:
        raise CarnacError(f"agent spec {spec!r}: cannot read the signature of {path}") from None
