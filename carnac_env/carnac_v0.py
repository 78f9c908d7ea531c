"""``carnac_v0``: Carnac under the module path PettingZoo's classic environments use.

>>> from carnac_env import carnac_v0
>>> env = carnac_v0.env(board="medium")   # raw_env in PettingZoo's standard wrappers
>>> raw = carnac_v0.raw_env(board="small")  # without them

The same objects as ``carnac_env.env`` and ``carnac_env.raw_env`` (:mod:`carnac_env.envs.aec`,
whose docstring and docs/environment.md are the environment page); the version in the name
is the one in ``env.metadata["name"]``, and a new version of the environment gets a new
module (``carnac_v1``), as in PettingZoo.
"""

from carnac_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
