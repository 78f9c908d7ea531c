"""The package's import promises: a light rules core, a quick package import that still
registers the Gymnasium id, and the ``module:id`` form that needs no prior import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from _paths import ROOT


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


NEW_TOP_LEVEL_MODULES = """
import json, sys
before = set(sys.modules)
import {module}
new = sorted({{m.split('.')[0] for m in set(sys.modules) - before}})
print(json.dumps([m for m in new if m not in sys.stdlib_module_names]))
"""


@pytest.mark.parametrize("module", ["carnac_env.core", "carnac_env"])
def test_core_and_package_import_numpy_and_the_standard_library_only(module: str) -> None:
    loaded = json.loads(_run(NEW_TOP_LEVEL_MODULES.format(module=module)))
    assert set(loaded) <= {"carnac_env", "numpy"}, loaded


def test_importing_the_package_registers_the_id_once_gymnasium_loads() -> None:
    code = (
        "import carnac_env, gymnasium\n"
        "env = gymnasium.make('carnac_env/Carnac-v0', board='small')\n"
        "print(env.reset(seed=0)[0].shape)"
    )
    assert _run(code) == "(5, 8, 9)"


def test_importing_the_package_after_gymnasium_registers_at_once() -> None:
    assert _run("import gymnasium, carnac_env\nprint('carnac_env/Carnac-v0' in gymnasium.registry)") == "True"


def test_the_module_id_form_needs_no_prior_import() -> None:
    code = (
        "import gymnasium\nenv = gymnasium.make('carnac_env:carnac_env/Carnac-v0', board='small')\nprint(env.spec.id)"
    )
    assert _run(code) == "carnac_env/Carnac-v0"


def test_lazy_attributes_resolve_and_unknown_ones_raise() -> None:
    import carnac_env

    assert carnac_env.GameState.__name__ == "GameState"
    assert callable(carnac_env.env)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = carnac_env.nonsense


def test_a_find_spec_before_the_import_still_registers() -> None:
    """Libraries probe for Gymnasium with importlib.util.find_spec (TorchRL does) before importing it."""
    code = (
        "import importlib.util, carnac_env\n"
        "assert importlib.util.find_spec('gymnasium') is not None\n"
        "import gymnasium\n"
        "print('carnac_env/Carnac-v0' in gymnasium.registry)"
    )
    assert _run(code) == "True"


#: Modules that once only re-exported names whose homes are elsewhere; the package was never
#: released, so they are gone, and the top level holds real modules only (carnac_v0 is
#: PettingZoo's naming for the AEC entry, not a leftover).
GONE = ["aec", "env_common", "gym_env", "vector_env", "openspiel", "rllib", "symmetry"]


@pytest.mark.parametrize("name", GONE)
def test_no_re_export_module_is_left_at_the_top_level(name: str) -> None:
    package = ROOT / "carnac_env"
    assert not (package / f"{name}.py").exists(), f"carnac_env/{name}.py is back; import from its home instead"


#: The modules that only the optional extras install: a package module that needs one of them
#: may fail to import where it is absent (its tests skip there, saying which).
OPTIONAL_MODULES = {
    "agilerl", "imageio_ffmpeg", "jax", "jaxlib", "matplotlib", "mctx", "mkdocs", "onnx",
    "onnxruntime", "pgx", "pygame", "pyspiel", "ray", "sb3_contrib", "selenium", "shimmy",
    "stable_baselines3", "tensordict", "tianshou", "torch", "torchrl", "tornado",
}  # fmt: skip


def test_every_module_of_the_package_imports_on_this_python() -> None:
    """Every module imports (or lacks only an optional extra; a ``__main__`` compiles), in a
    fresh interpreter: the
    python-oldest and python-newest CI entries run this beside their half of the quick suite,
    so syntax or a standard-library name that an interpreter lacks is found in any floor."""
    code = f"""
import importlib, importlib.util, json, pkgutil, carnac_env
optional = {sorted(OPTIONAL_MODULES)!r}
broken = []
for info in pkgutil.walk_packages(carnac_env.__path__, "carnac_env."):
    try:
        if info.name.endswith(".__main__"):  # runs its command when imported: compiled only
            origin = importlib.util.find_spec(info.name).origin
            compile(open(origin, encoding="utf-8").read(), origin, "exec")
            continue
        importlib.import_module(info.name)
    except ImportError as err:  # Python's, or the module's own message raised from Python's
        cause = err
        while cause.__cause__ is not None or cause.__context__ is not None:
            cause = cause.__cause__ or cause.__context__
        missing = getattr(cause, "name", None) or ""
        if missing.split(".")[0] not in optional:
            broken.append(f"{{info.name}}: {{err!r}}")
    except Exception as err:
        broken.append(f"{{info.name}}: {{err!r}}")
print(json.dumps(broken))
"""
    assert json.loads(_run(code)) == []
