"""`python -m evalapp COMMAND`: the same as the `evalapp` command (evalapp.cli)."""

import sys

from evalapp.cli import main

sys.exit(main())
