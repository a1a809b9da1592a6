"""Helpers of benchmarks/ray_grid.py (importable by Ray workers through PYTHONPATH)."""
