"""Probabilistic-verification methods (Boetius, Leue & Sutter, ICML 2025, arXiv 2405.17556): the
branch-and-bound verifier PV and its heuristic variants, and the baselines (Monte-Carlo with a
confidence interval, uniform splitting with interval arithmetic, exhaustive enumeration), one file each."""
