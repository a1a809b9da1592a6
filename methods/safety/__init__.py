"""Safety methods: the paper's multi-dimensional safety directions (SVD of the fine-tuning shift; Pan et al.,
ICML 2025) and the single difference-of-means refusal direction baseline (Arditi et al., 2024)."""
