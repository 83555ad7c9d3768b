import sys

from aliaslint.interpreter import guard_as_main

guard_as_main()  # before the CLI imports libcst, pathspec, tomllib (see interpreter)

from aliaslint.cli import main  # noqa: E402

sys.exit(main())
