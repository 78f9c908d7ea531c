"""Kept for old imports: the RLlib adapter now lives in :mod:`carnac_env.envs.rllib`."""

from carnac_env.envs.rllib import ACTION_MASK, OBSERVATIONS, RLlibObservations, env, multi_agent_env

__all__ = ["ACTION_MASK", "OBSERVATIONS", "RLlibObservations", "env", "multi_agent_env"]
