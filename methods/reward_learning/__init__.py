"""Reward-learning methods: the regularised and the clone-robust weighted Bradley–Terry MLE
(Procaccia et al., ICML 2025), rule-based preference labelling with adaptive rule selection and its
baselines (Li et al., ICML 2025), and a sequence-classification reward model for RewardBench."""
