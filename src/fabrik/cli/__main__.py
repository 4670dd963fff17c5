import sys

from fabrik.cli import main

sys.exit(main())
