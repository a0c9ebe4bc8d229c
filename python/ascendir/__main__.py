"""``python -m ascendir``: the ``ascendir`` command line."""

import sys

from .cli import main

sys.exit(main())
