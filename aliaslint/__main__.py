import sys

from aliaslint.path_guard import guard_as_main

guard_as_main()  # before the CLI imports libcst, pathspec, tomllib (see path_guard)

from aliaslint.cli import main  # noqa: E402

sys.exit(main())
