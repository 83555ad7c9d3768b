import sys

from aliaslint.cli import main

sys.exit(main())
