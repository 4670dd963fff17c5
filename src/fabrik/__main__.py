"""``python -m fabrik ...``: the same command line as ``fabrik ...``."""

import sys

from fabrik.cli import main

sys.exit(main())
