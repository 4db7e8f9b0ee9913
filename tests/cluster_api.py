"""The placement and the purchase as ``solve cluster`` asks for them: the API's `place` and `buy_nodes`, their
reasons naming the command's options (``--time-limit``, ``--buy``) as the tests' expected words do."""

from functools import partial

import solver
from solver.rules import COMMAND_OPTIONS

place = partial(solver.place, option_names=COMMAND_OPTIONS)
buy = partial(solver.buy_nodes, option_names=COMMAND_OPTIONS)
