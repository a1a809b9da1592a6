"""Calibration of a language model before and after instruction tuning (SFT).

Huang, Lu & Zeng, "Calibrated Language Models and How to Find Them with Label Smoothing", ICML 2025,
arXiv 2508.00264; the CPU-scale world of docs/papers/label-smoothing-calibration.md.

Contract. A `CalibrationProblem` carries a pre-trained causal LM and its tokenizer, the SFT set (token
ids with the prompt masked by −100, open-instruct style) and multiple-choice evaluation questions whose
ground-truth answers were sampled from known categorical distributions (so the Bayes-calibrated
confidence is known). A method fine-tunes a copy of the model and returns it (`CalibrationResult`).
`score`, the only judge, runs both models on the questions itself:

    confidence = max over the option letters of softmax(z)[letter], renormalised over the 4 letters
    ECE    = Σ_m (|B_m|/n)·|acc(B_m) − conf(B_m)|          (M equal-width bins)
    RMS-CE = sqrt(Σ_m (|B_m|/n)·(acc(B_m) − conf(B_m))²)

with accuracy, ECE and RMS-CE before (the pre-trained model) and after (the tuned one) tuning, and the
same ECE with confidence read off the full-vocabulary softmax (no renormalisation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from bench.spec import Metric

N_BINS = 15  # M; the paper's value is not in the available text (15 is common)


@dataclass(frozen=True, eq=False)
class CalibrationProblem:
    model: Any                    # the pre-trained causal LM (transformers PreTrainedModel), eval mode; do not modify
    tokenizer: Any
    sft_input_ids: torch.Tensor   # (n_sft, T) instruction-tuning sequences
    sft_labels: torch.Tensor      # (n_sft, T) the same with prompt tokens set to −100 (only the answer is learned)
    eval_input_ids: torch.Tensor  # (n_eval, T') question prompts ending just before the answer letter
    eval_answers: np.ndarray      # (n_eval,) index of the true option (sampled from the entity's distribution)
    eval_bayes: np.ndarray        # (n_eval, 4) the true answer distribution of each question
    letter_ids: tuple[int, ...]   # token id of each option letter
    vocab_size: int               # V
    hidden_size: int              # d


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    model: Any                    # the instruction-tuned causal LM
    final_loss: float             # the SFT objective on the last step


METRICS = {
    "ece_after": Metric(False, "", True, "expected calibration error (15 bins, letters renormalised) after tuning",
                        bounds=(0.0, 1.0)),
    "ece_before": Metric(False, "", False, "the same for the pre-trained model", bounds=(0.0, 1.0)),
    "ece_increase": Metric(False, "", False, "ece_after − ece_before: the calibration lost to tuning"),
    "rms_ce_after": Metric(False, "", False, "RMS calibration error after tuning", bounds=(0.0, 1.0)),
    "rms_ce_before": Metric(False, "", False, "RMS calibration error before tuning", bounds=(0.0, 1.0)),
    "accuracy_after": Metric(True, "", False, "multiple-choice accuracy after tuning", bounds=(0.0, 1.0)),
    "accuracy_before": Metric(True, "", False, "multiple-choice accuracy before tuning", bounds=(0.0, 1.0)),
    "confidence_after": Metric(False, "", False, "mean confidence after tuning (compare with accuracy_after)",
                               bounds=(0.0, 1.0)),
    "confidence_before": Metric(False, "", False, "mean confidence before tuning", bounds=(0.0, 1.0)),
    "ece_full_vocab_after": Metric(False, "", False, "ECE with the letter's full-vocabulary softmax as confidence, "
                                   "after", bounds=(0.0, 1.0)),
    "ece_full_vocab_before": Metric(False, "", False, "the same before tuning", bounds=(0.0, 1.0)),
    "bayes_accuracy": Metric(True, "", False, "accuracy of the true distributions' mode (the best possible)",
                             bounds=(0.0, 1.0)),
    "sft_final_loss": Metric(False, "nats", False, "the method's SFT objective on its last step", bounds=(0.0, None)),
}


def calibration_errors(confidence: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS) -> tuple[float, float]:
    """(ECE, RMS-CE) over equal-width confidence bins; bin m holds conf ∈ ((m−1)/M, m/M] (the first also 0)."""
    confidence, correct = np.asarray(confidence, float), np.asarray(correct, float)
    bins = np.clip(np.ceil(confidence * n_bins).astype(int) - 1, 0, n_bins - 1)
    ece = sq = 0.0
    for m in np.unique(bins):
        inside = bins == m
        gap = correct[inside].mean() - confidence[inside].mean()
        weight = inside.mean()
        ece += weight * abs(gap)
        sq += weight * gap * gap
    return float(ece), float(np.sqrt(sq))


@torch.no_grad()
def option_probs(model, problem: CalibrationProblem, batch_size: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """((n, 4) softmax over the letters renormalised, (n, 4) full-vocabulary softmax at the letters)."""
    device = next(model.parameters()).device
    full = []
    for start in range(0, len(problem.eval_input_ids), batch_size):
        ids = problem.eval_input_ids[start:start + batch_size].to(device)
        logits = model(input_ids=ids).logits[:, -1].float()                  # (B, V) next-token logits
        full.append(torch.softmax(logits, dim=-1)[:, list(problem.letter_ids)].cpu())
    full = torch.cat(full).double().numpy()
    return full / full.sum(axis=1, keepdims=True), full


def _evaluate(model, problem: CalibrationProblem, when: str) -> dict[str, float]:
    renorm, full = option_probs(model, problem)
    pick = renorm.argmax(axis=1)
    correct = pick == problem.eval_answers
    conf = renorm.max(axis=1)
    ece, rms = calibration_errors(conf, correct)
    ece_full, _ = calibration_errors(full[np.arange(len(pick)), pick], correct)
    return {f"accuracy_{when}": float(correct.mean()), f"ece_{when}": ece, f"rms_ce_{when}": rms,
            f"confidence_{when}": float(conf.mean()), f"ece_full_vocab_{when}": ece_full}


def score(problem: CalibrationProblem, result: CalibrationResult) -> dict[str, float]:
    if not isinstance(problem, CalibrationProblem):
        raise TypeError(f"not a calibration problem: {type(problem).__name__}")
    scores = {**_evaluate(problem.model, problem, "before"), **_evaluate(result.model, problem, "after")}
    scores["ece_increase"] = scores["ece_after"] - scores["ece_before"]
    scores["bayes_accuracy"] = float(np.mean(problem.eval_bayes.argmax(axis=1) == problem.eval_answers))
    scores["sft_final_loss"] = float(result.final_loss)
    return scores
