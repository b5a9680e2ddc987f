"""``python -m bbcore``: the ``bbcore`` command line."""

import sys

from bbcore.cli import main

sys.exit(main())
