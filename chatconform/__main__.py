"""``python -m chatconform``: the same command as ``chatconform``, for CI scripts and tox."""

import sys

from chatconform.cli import main

if __name__ == "__main__":
    sys.argv[0] = "chatconform"  # usage lines name the command, not this file
    sys.exit(main())
