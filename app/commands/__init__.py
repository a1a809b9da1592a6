"""One module per `bench` command (or per small group of them); app/cli.py assembles them."""
