"""Kept for old imports: the OpenSpiel game ``python_carnac`` now lives in
:mod:`carnac_env.envs.openspiel`; importing this module registers it all the same."""

from carnac_env.envs.openspiel import GAME_TYPE, SHORT_NAME, CarnacGame, CarnacState, load_game

__all__ = ["GAME_TYPE", "SHORT_NAME", "CarnacGame", "CarnacState", "load_game"]
