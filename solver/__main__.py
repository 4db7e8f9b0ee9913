"""``python -m solver``: the same as the ``solve`` command."""

import sys

from solver.cli import main

sys.exit(main())
