# `python -m bench`: the command line lives in the application layer (app/cli.py); this shim is only ever run, never
# imported, so the core does not depend on it (tests/test_layers.py exempts it by name)
from app.cli import main

main()
