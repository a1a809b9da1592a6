"""The application layer, on top of everything else: the `bench` command line (app/cli.py assembles the commands of
app/commands/) and Ray job submission (app/cluster.py). Nothing below imports it (tests/test_layers.py); `python -m
bench` runs app.cli.main through the core package's entry-point shim (bench/__main__.py)."""
