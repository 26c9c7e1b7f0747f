import sys

from agentls.server.cli import main

sys.exit(main())
