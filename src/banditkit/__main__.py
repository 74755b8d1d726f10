"""``python -m banditkit`` runs the command line (:mod:`banditkit.cli`)."""

import sys

from .cli import main

sys.exit(main())
