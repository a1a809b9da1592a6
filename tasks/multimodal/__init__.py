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

A method returns its trained model (`RetrievalResult.model`, an `Aligner`), and `score` (the only judge)
runs it on the test pairs itself. The model scores similarities, not embeddings, because M3-JEPA's
prediction branch is directional: similarity("i2t", images, texts)[i, j] scores image i's prediction
against text j, similarity("t2i", texts, images)[j, i] text j's prediction against image i. From them
`score` computes

    R@k (query q) = 1[ some candidate relevant to q is among the k most similar ]

with pessimistic ties (a relevant candidate tied with an irrelevant one ranks below it), averaged
over queries, for both directions and k = 1, 5, 10; the primary `mean_recall` is their mean
(the retrieval literature's rsum / 6). `class_accuracy` is the fraction of test images whose most
similar class prompt (`class_similarity`) is their digit. `trainable_params` is counted on the
returned model: a torch module's parameters that require gradients (the frozen encoders are not in
it: the problem holds their features), or the fitted arrays a closed-form model lists as its
parameters. A model with a mixture-of-experts gate names it (`gate`, `top_k`); `score` reads the
gate's logits with a forward hook while the model retrieves, routes each real query token to its
top-k experts (the paper's softmax gate) and turns the fraction of tokens routed to each expert, per
direction and objective, into the gate's direction specialisation and its counts of shared and
modality-specific experts. A method may still report its parameter count and expert usage; a report
that differs from what `score` counts is a `Misreport` (docs/metrics-audit.md).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Protocol

import numpy as np

from bench.observe import Misreport, check_report
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


class Aligner(Protocol):
    """The trained model a method returns; `score` runs it on the problem's test pairs and class prompts.

    Token arrays are (n, T, D) frozen-encoder features with their (n, T) masks of real tokens (images: all True).
    A model with a mixture-of-experts gate also has `gate` (the module mapping token features (N, H) to the expert
    logits (N, E): run once per objective stream, in OBJECTIVES order, on every query token of each `similarity`
    call) and `top_k` (experts per token).
    """

    def similarity(self, direction: str, queries: np.ndarray, query_mask: np.ndarray, candidates: np.ndarray,
                   candidate_mask: np.ndarray) -> np.ndarray:
        """(n_queries, n_candidates) similarities; `direction` "i2t": image queries, text candidates; "t2i": the
        reverse."""

    def class_similarity(self, images: np.ndarray, image_mask: np.ndarray, prompts: np.ndarray,
                         prompt_mask: np.ndarray) -> np.ndarray:
        """(n_images, n_classes) similarities of images to the encoded class prompts (zero-shot classification)."""

    def parameters(self) -> Iterable[Any]:
        """The trained parameters: torch tensors (those that require grad count) or fitted numpy arrays."""


@dataclass(frozen=True, eq=False)
class RetrievalResult:
    model: Aligner                          # the trained model (frozen encoders excluded): score runs it
    trainable_params: int | None = None     # the method's report, if any: checked against score's count
    expert_usage: np.ndarray | None = None  # (2 directions, 2 objectives, E) the method's report, if any: checked
                                            # against the usage score reads from the gate


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


def usage_scores(usage: np.ndarray) -> dict[str, float]:
    """The gate metrics of a (2 directions, 2 objectives, E) expert usage."""
    usage = np.asarray(usage, float)                                           # (2, 2, E)
    p = usage / np.clip(usage.sum(-1, keepdims=True), 1e-12, None)            # routing distributions
    used = (usage >= USED_FRACTION).any(axis=1)                                # (2, E) used by a direction
    return {
        "gate_direction_tv": float(0.5 * np.abs(p[0] - p[1]).sum(-1).mean()),
        "gate_objective_tv": float(0.5 * np.abs(p[:, 0] - p[:, 1]).sum(-1).mean()),
        "shared_experts": float(np.sum(used[0] & used[1])),
        "specific_experts": float(np.sum(used[0] ^ used[1])),
    }


def retrieval_scores(problem: PairedProblem, sim_i2t: np.ndarray, sim_t2i: np.ndarray,
                     class_sim: np.ndarray) -> dict[str, float]:
    """Recall at k in both directions, their mean, and the zero-shot accuracy of the similarity matrices."""
    m = len(problem.test_keys)
    if sim_i2t.shape != (m, m) or sim_t2i.shape != (m, m):
        raise ValueError(f"sim_i2t and sim_t2i must be ({m}, {m}), got {sim_i2t.shape} and {sim_t2i.shape}")
    if class_sim.shape != (m, len(problem.class_names)):
        raise ValueError(f"class_sim must be ({m}, {len(problem.class_names)}), got {class_sim.shape}")
    relevant = problem.test_keys[:, None] == problem.test_keys[None, :]       # symmetric: i2t and t2i alike
    scores = {f"recall_{d}_at_{k}": recall_at_k(sim, relevant, k)
              for d, sim in zip(DIRECTIONS, (sim_i2t, sim_t2i)) for k in RECALL_KS}
    scores["mean_recall"] = float(np.mean(list(scores.values())))
    scores["class_accuracy"] = float(np.mean(np.argmax(class_sim, axis=1) == problem.test_labels))
    return scores


def count_trainable(model: Aligner) -> int:
    """The parameters the returned model trained: a torch module's parameters that require gradients (counted through
    torch's own `Module.parameters`, whatever the model's class says), else the fitted arrays it lists."""
    import torch

    def size(p: Any) -> int:
        return (p.numel() if p.requires_grad else 0) if isinstance(p, torch.Tensor) else int(np.asarray(p).size)

    listed = torch.nn.Module.parameters(model) if isinstance(model, torch.nn.Module) else model.parameters()
    return sum(size(p) for p in listed)


@contextmanager
def gate_logits(model: Aligner) -> Iterator[list | None]:
    """The expert logits of every call of the model's gate while the block runs (a forward hook; None: no gate)."""
    gate = getattr(model, "gate", None)
    if gate is None:
        yield None
        return
    calls: list = []
    handle = gate.register_forward_hook(lambda module, args, out: calls.append(out.detach()))
    try:
        yield calls
    finally:
        handle.remove()


def routed_usage(calls: list, mask: np.ndarray, top_k: int) -> np.ndarray:
    """(2 objectives, E): the fraction of the real query tokens whose top-k experts under the softmax gate (M3-JEPA's
    Eq. 4, docs/papers/m3-jepa.md) include each expert, from the gate's logits of one retrieval call."""
    import torch

    if len(calls) != len(OBJECTIVES) or any(c.shape[0] != mask.size for c in calls):
        raise ValueError(f"the gate must run once per objective stream on each of the {mask.size} query tokens; "
                         f"it ran on {[int(c.shape[0]) for c in calls]}")
    rows = []
    for logits in calls:
        experts = logits.shape[-1]
        index = torch.topk(torch.softmax(logits, dim=-1), top_k, dim=-1).indices.view(*mask.shape, -1)
        real = torch.as_tensor(mask, device=logits.device)
        chosen = torch.nn.functional.one_hot(index, experts).sum(-2)[real]    # (N_real, E) 0/1
        rows.append(chosen.float().mean(0))
    return torch.stack(rows).cpu().numpy()


def observe(problem: PairedProblem, model: Aligner) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Run the model on the test pairs: ({"i2t", "t2i", "class"}: similarities, expert usage (2, 2, E) read from its
    gate while it retrieves, or None without a gate)."""
    image = (problem.test_image, np.ones(problem.test_image.shape[:2], bool))
    text = (problem.test_text, problem.test_text_mask)
    sims, usage = {}, []
    for direction, (queries, candidates) in zip(DIRECTIONS, ((image, text), (text, image))):
        with gate_logits(model) as calls:
            sims[direction] = np.asarray(model.similarity(direction, *queries, *candidates))
        if calls is not None:
            usage.append(routed_usage(calls, queries[1], int(model.top_k)))
    sims["class"] = np.asarray(model.class_similarity(*image, problem.class_text, problem.class_text_mask))
    return sims, (np.stack(usage) if usage else None)


def check_usage(reported: np.ndarray | None, observed: np.ndarray | None) -> None:
    """Raise Misreport when a reported expert usage is not the one the gate routed."""
    if reported is None:
        return
    if observed is None or np.shape(reported) != observed.shape or not np.array_equal(reported, observed):
        seen = "no gate" if observed is None else f"the gate routed {observed.tolist()}"
        raise Misreport(f"the method reports an expert usage of {np.asarray(reported).tolist()}; {seen}. The "
                        "metrics use the observation, and a run whose report differs is not scored")


def score(problem: PairedProblem, result: RetrievalResult) -> dict[str, float]:
    sims, usage = observe(problem, result.model)
    params = count_trainable(result.model)
    if result.trainable_params is not None:
        check_report("trainable parameters", result.trainable_params, params)
    check_usage(result.expert_usage, usage)
    scores = retrieval_scores(problem, sims["i2t"], sims["t2i"], sims["class"])
    scores["trainable_params"] = float(params)
    if usage is not None:
        scores.update(usage_scores(usage))
    return scores
