"""``python -m aliaslint.ops_gen``: regenerate the op tables (the generator is aliaslint.ops.generate)."""

from aliaslint.ops.generate.main import main

if __name__ == "__main__":
    raise SystemExit(main())
