"""``carnac_env.carnac_v0``: PettingZoo's classic module path, kept in step with ``carnac_env.env``."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys

from pettingzoo.test import api_test

import carnac_env
from carnac_env.envs import aec


def test_module_gives_the_package_env_and_raw_env() -> None:
    from carnac_env import carnac_v0

    assert carnac_v0.env is carnac_env.env is aec.env
    assert carnac_v0.raw_env is carnac_env.raw_env is aec.raw_env
    assert carnac_v0.__all__ == ["env", "raw_env"]
    assert carnac_env.carnac_v0 is carnac_v0


def test_every_public_env_factory_of_the_aec_module_is_there() -> None:
    """A new factory in carnac_env.envs.aec (a parallel_env, say) must be added here too."""
    from carnac_env import carnac_v0

    factories = {
        name
        for name, value in vars(aec).items()
        if name in ("env", "raw_env", "parallel_env", "manual_control")
        and (inspect.isfunction(value) or inspect.isclass(value))
    }
    assert factories <= set(carnac_v0.__all__), factories


def test_module_name_is_the_env_name_and_version() -> None:
    from carnac_env import carnac_v0

    env = carnac_v0.env(board="small")
    name = carnac_v0.__name__.rsplit(".", 1)[1]
    assert env.metadata["name"] == name
    assert re.fullmatch(r"[a-zA-Z_]+_v[0-9]+", name)  # PettingZoo's env module pattern
    api_test(env, num_cycles=30)


def test_attribute_access_imports_it_without_a_warning() -> None:
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "import carnac_env\n"
        "env = carnac_env.carnac_v0.env(board='petit_menec')\n"
        "env.reset(seed=0); print(env.agent_selection)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "player_0"
