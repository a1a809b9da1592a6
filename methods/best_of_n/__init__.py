"""Best-of-n methods (Beirami et al., ICML 2025, arXiv 2401.01879): KL and win rate of best-of-n,
and the trade-off baselines (KL-regularised optimum, rewind-and-repeat), one file each."""
