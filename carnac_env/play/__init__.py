"""Playing Carnac as a person: the mouse game in a window (:mod:`carnac_env.play.gui`).

This package sits above the environment and the agents (it runs a game against one), so
:mod:`carnac_env.render` can stay a plain drawing layer over the rules core.
"""
