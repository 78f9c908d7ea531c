"""The rules of Carnac, with no reinforcement-learning library in sight.

Everything the game is lives here: the boards (:mod:`.boards`), the action encoding
(:mod:`.actions`), the small rules arithmetic every engine shares (:mod:`.arithmetic`), the
game state and the rules of play (:mod:`.game`), the codes of a position's fields and the
check that they agree (:mod:`.fields`), the one check of a position (:mod:`.validate`),
positions from diagrams (:mod:`.diagram`), dolmens and the winner
(:mod:`.scoring`), the move notation (:mod:`.notation`), game records (:mod:`.record`) and
the observation planes (:mod:`.observation`). This package imports numpy and the standard
library only.
"""

from carnac_env.core.actions import Action, decline_action, decode, place_action, tilt_action
from carnac_env.core.arithmetic import tilt_colours
from carnac_env.core.boards import BOARDS, DIRECTION_NAMES, Board, board_spec, make_board, parse_board
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RED, RESPOND, STANDING, WHITE, GameState, Moves
from carnac_env.core.notation import action_to_text, parse_action, parse_square, square_name
from carnac_env.core.observation import NUM_PLANES, PLANE_NAMES, legal_mask, observation_planes
from carnac_env.core.scoring import Result, bga_score, compare_dolmens, dolmen_sizes, score
from carnac_env.core.validate import validate

__all__ = [
    "BOARDS",
    "DIRECTION_NAMES",
    "EMPTY",
    "LYING",
    "NUM_PLANES",
    "OVER",
    "PLACE",
    "PLANE_NAMES",
    "RED",
    "RESPOND",
    "STANDING",
    "WHITE",
    "Action",
    "Board",
    "GameState",
    "Moves",
    "Result",
    "action_to_text",
    "bga_score",
    "board_spec",
    "compare_dolmens",
    "decline_action",
    "decode",
    "dolmen_sizes",
    "legal_mask",
    "make_board",
    "observation_planes",
    "parse_action",
    "parse_board",
    "parse_square",
    "place_action",
    "score",
    "square_name",
    "tilt_action",
    "tilt_colours",
    "validate",
]
