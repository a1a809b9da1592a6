"""Multimodal alignment methods: M3-JEPA (Lei et al., ICML 2025) and its CLIP-style and linear-predictor baselines."""
