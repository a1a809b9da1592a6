"""What the CLI and the app show: aggregations (queries), claim verdicts (claims), exports."""
