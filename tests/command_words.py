"""The API's functions whose words name options, with the command's words: each takes `option_names=COMMAND_OPTIONS`
(the flags ``solve`` names) in place of its default, the API's keywords (`API_OPTIONS`; docs/api.md, "Words"), as
the command passes it. For tests of what the command says that call these functions as it does: import them from
here in place of solver's (an `option_names` given still overrides)."""

from __future__ import annotations

from functools import partial

import solver.api
import solver.query
import solver.trinity
from solver.rules import COMMAND_OPTIONS

make_query = partial(solver.query.make_query, option_names=COMMAND_OPTIONS)
config_query = partial(solver.api.config_query, option_names=COMMAND_OPTIONS)
read_trinity_config = partial(solver.trinity.read_trinity_config, option_names=COMMAND_OPTIONS)
check_trinity_config = partial(solver.trinity.check_trinity_config, option_names=COMMAND_OPTIONS)
trinity_config_problems = partial(solver.trinity.trinity_config_problems, option_names=COMMAND_OPTIONS)
trinity_fragment = partial(solver.trinity.trinity_fragment, option_names=COMMAND_OPTIONS)
plan_fragment = partial(solver.trinity.plan_fragment, option_names=COMMAND_OPTIONS)
