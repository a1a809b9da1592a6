"""Concept-erasure methods for rectified-flow transformers: EraseAnything (Gao et al., ICML 2025) and the
baselines it ports to Flux: ESD (negative guidance), UCE (closed-form edit), CA (concept ablation)."""
