"""Multimodal alignment on paired data: image–text retrieval and zero-shot classification.

Contract of the family (docs/papers/m3-jepa.md; Lei et al., "M3-JEPA: Multimodal Alignment via
Multi-gate MoE based on the Joint-Embedding Predictive Architecture", ICML 2025, arXiv 2409.05929).

`PairedProblem`: the token features of two FROZEN encoders (an image encoder and a text encoder) for
paired training data and a paired test set, plus the encoded class prompts ("a handwritten seven")
for zero-shot classification. Methods never see pixels or strings, exactly as in the paper where the
encoders are frozen (its LoRA aside) and alignment is learned in latent space only. Each test pair
carries a semantic key (e.g. digit × stroke × slant × width); image i and text j are a correct match
iff their keys are equal, so equivalent captions ("7" / "seven", synonyms) count as relevant
(as COCO's several captions per image do).

A method returns similarity matrices (`RetrievalResult`), not embeddings, because M3-JEPA's
prediction branch is directional: sim_i2t[i, j] scores image i's prediction against text j,
sim_t2i[j, i] text j's prediction against image i. `score` (the only judge) computes

    R@k (query q) = 1[ some candidate relevant to q is among the k most similar ]

with pessimistic ties (a relevant candidate tied with an irrelevant one ranks below it), averaged
over queries, for both directions and k = 1, 5, 10; the primary `mean_recall` is their mean
(the retrieval literature's rsum / 6). `class_accuracy` is the fraction of test images whose most
similar class prompt is their digit. Methods with a mixture-of-experts gate also report their expert
usage (the fraction of test tokens whose top-k includes each expert, per direction and objective);
the judge turns it into the gate's direction specialisation and its counts of shared and
modality-specific experts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.spec import Metric

DIRECTIONS = ("i2t", "t2i")      # image → text, text → image (the paper's two directional tasks)
OBJECTIVES = ("l2", "cl")        # prediction (regularisation) stream, contrastive stream
RECALL_KS = (1, 5, 10)
USED_FRACTION = 0.1              # an expert is "used" by a (direction, objective) if ≥ 10% of its tokens pick it


@dataclass(frozen=True, eq=False)
class PairedProblem:
    train_image: np.ndarray        # (n, T_img, D_img) frozen image-encoder tokens
    train_text: np.ndarray         # (n, T_txt, D_txt) frozen text-encoder tokens, zero-padded
    train_text_mask: np.ndarray    # (n, T_txt) True on real tokens
    train_keys: np.ndarray         # (n,) semantic key of each training pair
    test_image: np.ndarray         # (m, T_img, D_img)
    test_text: np.ndarray          # (m, T_txt', D_txt)
    test_text_mask: np.ndarray     # (m, T_txt')
    test_keys: np.ndarray          # (m,) image i ↔ text j relevant iff keys equal
    test_labels: np.ndarray        # (m,) class of each test pair (the digit)
    class_text: np.ndarray         # (C, T_c, D_txt) encoded class prompts
    class_text_mask: np.ndarray    # (C, T_c)
    class_names: tuple[str, ...]
    test_captions: tuple[str, ...]  # for display only
    encoders: str                  # what stands in for the paper's frozen encoders

    def __post_init__(self) -> None:
        n, m = len(self.train_image), len(self.test_image)
        if (len(self.train_text) != n or len(self.train_keys) != n
                or self.train_text_mask.shape != self.train_text.shape[:2]):
            raise ValueError("train_image, train_text, train_text_mask and train_keys must describe the same n pairs")
        if len(self.test_text) != m or len(self.test_keys) != m or len(self.test_labels) != m:
            raise ValueError("test_image, test_text, test_keys and test_labels must describe the same m pairs")
        if self.class_text.shape[0] != len(self.class_names):
            raise ValueError("class_text needs one encoded prompt per class name")

    @property
    def image_dim(self) -> int:
        return int(self.train_image.shape[-1])

    @property
    def text_dim(self) -> int:
        return int(self.train_text.shape[-1])


@dataclass(frozen=True, eq=False)
class RetrievalResult:
    sim_i2t: np.ndarray            # (m, m) image queries × text candidates
    sim_t2i: np.ndarray            # (m, m) text queries × image candidates
    class_sim: np.ndarray          # (m, C) test images × class prompts
    trainable_params: int          # parameters the method trained (encoders are frozen)
    expert_usage: np.ndarray | None = None  # (2 directions, 2 objectives, E) fraction of tokens routed to each expert


METRICS = {
    "mean_recall": Metric(True, "", True, "mean of R@1, R@5, R@10 over both directions (rsum / 6)", bounds=(0.0, 1.0)),
    **{f"recall_{d}_at_{k}": Metric(True, "", False, f"{'image→text' if d == 'i2t' else 'text→image'} recall at {k}",
                                        bounds=(0.0, 1.0))
       for d in DIRECTIONS for k in RECALL_KS},
    "class_accuracy": Metric(True, "", False, "zero-shot accuracy: the most similar class prompt is the image's digit",
                             bounds=(0.0, 1.0)),
    "trainable_params": Metric(False, "", False, "number of trained parameters (frozen encoders excluded)",
                               bounds=(0.0, None)),
    "gate_direction_tv": Metric(True, "", False, "total variation between the i2t and t2i expert usage (averaged over "
                                "the two objectives): 0 = same routing, 1 = disjoint experts", bounds=(0.0, 1.0)),
    "gate_objective_tv": Metric(True, "", False, "total variation between the l2 and cl streams' expert usage "
                                "(averaged over directions)", bounds=(0.0, 1.0)),
    "shared_experts": Metric(True, "", False, "experts used (≥ 10% of tokens) by both directions", bounds=(0.0, None)),
    "specific_experts": Metric(True, "", False, "experts used by exactly one direction (modality-specific)",
                               bounds=(0.0, None)),
}


def recall_at_k(sim: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """Fraction of queries (rows) with a relevant candidate among the k most similar; ties pessimistic.

    The best relevant candidate of a query ranks 1 + #(irrelevant candidates with similarity ≥ its own).
    """
    sim, relevant = np.asarray(sim, float), np.asarray(relevant, bool)
    if sim.shape != relevant.shape:
        raise ValueError(f"similarity {sim.shape} and relevance {relevant.shape} must have the same shape")
    has = relevant.any(axis=1)
    best = np.where(relevant, sim, -np.inf).max(axis=1, keepdims=True)         # (q, 1)
    above = np.sum(~relevant & (sim >= best), axis=1)                           # irrelevant at or above it
    return float(np.mean(has & (above < k)))


def _usage_scores(usage: np.ndarray) -> dict[str, float]:
    usage = np.asarray(usage, float)                                           # (2, 2, E)
    p = usage / np.clip(usage.sum(-1, keepdims=True), 1e-12, None)            # routing distributions
    used = (usage >= USED_FRACTION).any(axis=1)                                # (2, E) used by a direction
    return {
        "gate_direction_tv": float(0.5 * np.abs(p[0] - p[1]).sum(-1).mean()),
        "gate_objective_tv": float(0.5 * np.abs(p[:, 0] - p[:, 1]).sum(-1).mean()),
        "shared_experts": float(np.sum(used[0] & used[1])),
        "specific_experts": float(np.sum(used[0] ^ used[1])),
    }


def score(problem: PairedProblem, result: RetrievalResult) -> dict[str, float]:
    m = len(problem.test_keys)
    if result.sim_i2t.shape != (m, m) or result.sim_t2i.shape != (m, m):
        raise ValueError(f"sim_i2t and sim_t2i must be ({m}, {m}), "
                         f"got {result.sim_i2t.shape} and {result.sim_t2i.shape}")
    if result.class_sim.shape != (m, len(problem.class_names)):
        raise ValueError(f"class_sim must be ({m}, {len(problem.class_names)}), got {result.class_sim.shape}")
    relevant = problem.test_keys[:, None] == problem.test_keys[None, :]       # symmetric: i2t and t2i alike
    scores = {f"recall_{d}_at_{k}": recall_at_k(sim, relevant, k)
              for d, sim in zip(DIRECTIONS, (result.sim_i2t, result.sim_t2i)) for k in RECALL_KS}
    scores["mean_recall"] = float(np.mean(list(scores.values())))
    scores["class_accuracy"] = float(np.mean(np.argmax(result.class_sim, axis=1) == problem.test_labels))
    scores["trainable_params"] = float(result.trainable_params)
    if result.expert_usage is not None:
        scores.update(_usage_scores(result.expert_usage))
    return scores
