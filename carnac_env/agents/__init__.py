"""Agents that play Carnac, and :func:`make` to build one from a spec string.

>>> from carnac_env.agents import make
>>> agent = make("mcts:sims=400", seed=1)
>>> action = agent.act(env)          # a legal action for env.agent_selection

Built-in agents: ``random``, ``greedy``, ``mcts`` and ``az`` (``carnac agents`` lists them, with their
options; docs/agents.md). Your own agent
is any object with ``act(env) -> int``; name it in a spec by its import path
(``mypackage.agents.MyAgent:depth=3``). See :mod:`carnac_env.agents.base` for the protocol.
"""

from carnac_env.agents.base import (
    Agent,
    FunctionAgent,
    SearchAgent,
    agent_names,
    agent_table,
    describe_agents,
    game_of,
    make,
    parse_spec,
)
from carnac_env.agents.greedy import GreedyAgent, evaluate
from carnac_env.agents.mcts import MCTSAgent
from carnac_env.agents.random_agent import RandomAgent

from carnac_env.agents import az as _az  # noqa: F401  # isort: skip  (registers "az", after the others)

__all__ = [
    "Agent",
    "FunctionAgent",
    "GreedyAgent",
    "MCTSAgent",
    "RandomAgent",
    "SearchAgent",
    "agent_names",
    "agent_table",
    "describe_agents",
    "evaluate",
    "game_of",
    "make",
    "parse_spec",
]
