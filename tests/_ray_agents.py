"""An agent for the Ray arena tests: it kills its own worker process the first time it
moves (while ``marker`` does not exist yet), as a lost worker or node would."""

from __future__ import annotations

import os
from typing import Any

from carnac_env.agents import make


class DiesOnce:
    """Plays like ``random``; the first call to act() anywhere creates ``marker`` and ends its process."""

    def __init__(self, marker: str, seed: int = 0) -> None:
        self.marker = marker
        self.inner = make("random", seed=seed)

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)

    def act(self, env: Any) -> int:
        if not os.path.exists(self.marker):
            with open(self.marker, "w") as handle:
                handle.write(str(os.getpid()))
            os._exit(1)  # the worker process is lost mid-game
        return self.inner.act(env)
