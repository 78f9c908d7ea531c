"""Agents that play Carnac, and :func:`make` to build one from a spec string.

>>> from carnac_env.agents import make
>>> agent = make("mcts:sims=400", seed=1)
>>> action = agent.act(state)        # a legal action for state.to_act (a core GameState)

Built-in agents: ``random``, ``greedy``, ``mcts`` and ``az`` (``carnac agents`` lists them, with
their options; docs/agents.md). Your own agent is any object with ``act(state) -> int``; name
it in a spec by its import path (``mypackage.agents.MyAgent:depth=3``).

The modules, each with one job: :mod:`~carnac_env.agents.protocol` (what an agent is, and
:func:`observe` for learned agents), :mod:`~carnac_env.agents.base` (the built-in agents' base
class and their options, each declared once), :mod:`~carnac_env.agents.registry` (the
built-in names and their listing order, one table), :mod:`~carnac_env.agents.specs` (spec strings and :func:`make`),
:mod:`~carnac_env.agents.user_code` (the guard before an agent named by an import path is
built) and :mod:`~carnac_env.agents.listing` (the help tables); then one module per agent.
"""

from carnac_env.agents.base import Option, SeededAgent, option, options_of
from carnac_env.agents.greedy import GreedyAgent, evaluate
from carnac_env.agents.listing import agent_table, describe_agents
from carnac_env.agents.mcts import MCTSAgent
from carnac_env.agents.protocol import Agent, FunctionAgent, game_of, model_record, observe
from carnac_env.agents.random_agent import RandomAgent
from carnac_env.agents.registry import agent_names, register
from carnac_env.agents.specs import make, parse_spec

__all__ = [
    "Agent",
    "FunctionAgent",
    "GreedyAgent",
    "MCTSAgent",
    "Option",
    "RandomAgent",
    "SeededAgent",
    "agent_names",
    "agent_table",
    "describe_agents",
    "evaluate",
    "game_of",
    "make",
    "model_record",
    "observe",
    "option",
    "options_of",
    "parse_spec",
    "register",
]
