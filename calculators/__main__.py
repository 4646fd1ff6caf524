"""Entry point for ``python -m calculators``."""

import sys

from calculators.cli import main

sys.exit(main())
