"""Grid expansion and the runners that execute cells (local processes, Ray)."""
