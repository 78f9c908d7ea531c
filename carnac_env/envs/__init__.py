"""The environment layer: adapters that put the rules core behind the RL libraries' APIs.

==========================  ===============================================================
:mod:`~.aec`                the PettingZoo AEC env (``raw_env``; ``env()`` wraps it)
:mod:`~.wrappers`           ``env()``'s wrapper: PettingZoo's standard chain in one layer
:mod:`~.gym`                the single-agent Gymnasium env (``carnac_env/Carnac-v0``)
:mod:`~.vector`             the Gymnasium vector env, on the batched engine (``make_vec``)
:mod:`~.selfplay`           the AEC env as a single-agent self-play env, with an opponent pool
:mod:`~.learner`            the learner's reset and step, shared by ``gym`` and ``selfplay``
:mod:`~.registration`       the Gymnasium id, registered when Gymnasium loads
:mod:`~.rllib`              the AEC env under RLlib's observation keys
:mod:`~.openspiel`          the OpenSpiel game ``python_carnac``
:mod:`~.options`            what the constructors and ``reset`` accept (options, seeds, moves)
:mod:`~.spaces`             the observation spaces and the learner's observation layouts
:mod:`~.infos`              the fixed-shape infos and their ``TypedDict`` types
:mod:`~.opponents`          the Gymnasium envs' opponent (an agent, or a spec for one)
==========================  ===============================================================

Inside the layer, from the bottom: ``options``, ``spaces``, ``infos``, ``opponents`` (which
builds agents, a layer below), ``registration`` (its entry points are strings) and
``openspiel`` import no other module of the layer; ``wrappers`` imports ``options``; ``aec``
imports ``infos``, ``options``, ``spaces`` and ``wrappers``; ``rllib`` imports ``aec``;
``learner`` imports ``aec`` and the shared modules; ``gym`` and ``selfplay`` import ``learner``,
``aec`` and the shared modules; ``vector`` imports the shared modules only (it plays on
:class:`~carnac_env.batch.BatchGame`, and its opponents act on a
:class:`~carnac_env.core.game.GameState`). No circles. Each adapter uses another only through
public names: the AEC env's ``tracker``, ``play_legal`` and ``forfeit``, the batched engine's
public methods.

The public entry points are ``carnac_env.env()``, ``carnac_env.raw_env``,
``carnac_env.carnac_v0``, ``gymnasium.make("carnac_env/Carnac-v0")`` and
``gymnasium.make_vec("carnac_env/Carnac-v0")``; everything else is imported from its module
here (``carnac_env.envs.aec``, ``carnac_env.envs.gym``, ...). Importing
this package loads none of its modules (nor PettingZoo or Gymnasium).
"""
