"""Endgame sets: positions from real games, solved exactly, and an agent's error rate on them.

Every other measure of an agent here is relative (one agent against another, or a rating on a
panel). An endgame set measures play against the truth where the truth can be computed: late in
a game, with few megaliths left, the exact solver (:func:`carnac_env.solve.solve`) gives the
game-theoretic value of a position and of every legal move in it. An agent's move *keeps* the
value, or *throws it away*: a won position played to a draw or a loss, a drawn one to a loss.

One module a job:

* :mod:`~carnac_env.evaluate.endgames.sets`: the set file (one versioned file per built-in board
  in ``carnac_env/evaluate/endgame_sets``), read and checked as untrusted input, and written;
* :mod:`~carnac_env.evaluate.endgames.make`: making a set, from seeded games and the solver;
* :mod:`~carnac_env.evaluate.endgames.score`: an agent's error rate on a set;
* :mod:`~carnac_env.evaluate.endgames.report`: the table, the results file and
  ``carnac evaluate SPEC --endgames``.

``carnac endgames --make BOARD`` writes a set (:mod:`carnac_env.cli`);
``python -m carnac_env.evaluate.endgames --make BOARD``, the command the shipped sets record, is
the same command. The public names are importable from :mod:`carnac_env.evaluate`.
"""
