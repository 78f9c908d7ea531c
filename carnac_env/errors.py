"""The one exception type a user mistake raises.

Every bad input the package rejects (an illegal action, an unknown board, an impossible
rules option, a malformed move string or game record, an array of the wrong dtype or
shape) raises :class:`CarnacError` or one of its subclasses. It is a ``ValueError``, so
``except ValueError`` catches it too, and a rejected call never half-applies: the state
it was given is left exactly as it was.
"""

from __future__ import annotations


class CarnacError(ValueError):
    """A value the caller passed is not acceptable; the message says which and why."""


class IllegalActionError(CarnacError):
    """An action that the rules do not allow in the current position."""


class NotationError(CarnacError):
    """A move string that does not parse in the move notation."""


class RecordError(CarnacError):
    """A game record that is malformed or does not replay."""


class UnknownOptionError(CarnacError, TypeError):
    """A keyword argument that the env or board does not take.

    It is a ``TypeError`` too, as Python raises for an unexpected keyword argument, so that
    code that retries without an optional keyword (TorchRL's ``GymEnv`` does this with
    ``frameskip``) works; the message names the accepted options.
    """


class SolveLimitError(CarnacError):
    """The exact solver (:func:`carnac_env.solve.solve`) spent its ``node_limit`` or ``seconds``
    budget before it finished: the position is not solved (nothing is guessed)."""
