"""Calibration methods: instruction tuning with plain cross-entropy (sft_ce) and with label smoothing
(sft_label_smoothing; Huang, Lu & Zeng, ICML 2025), sharing the SFT loop of _sft.py, whose loss is the
memory-efficient label-smoothed kernel of methods/calibration/_label_smoothed_ce.py."""
