"""The runners that execute a grid's cells (local processes, a Ray cluster), chosen by name (runners/choice.py)."""
