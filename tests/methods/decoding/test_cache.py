"""The KV-cache and re-tokenisation helpers against the uncached computation they replace, on the trained pair.

A cache that keeps a stale key after a rollback, or a re-tokeniser that drops or doubles text at a
cut, changes logits or drafter contexts silently (the greedy tests would only see it when an argmax
flips), so both are checked here against full recomputation through a random walk of extensions and
rollbacks like those of speculative decoding.
"""

import numpy as np
import torch

from methods.decoding._cache import CachedLM, common_prefix
from methods.decoding._vocab import Retokenizer, encode, text_of


def _full_logits(lm, ids):
    with torch.no_grad():
        return lm.model(torch.tensor([ids])).logits[0].float()


def test_cached_rows_equal_full_forward_through_extensions_and_rollbacks(trained_pair):
    target = trained_pair.target
    cached, rng = CachedLM(target.model), np.random.default_rng(0)
    ids = trained_pair.prompt_ids(0)
    for _ in range(25):
        block = rng.integers(3, 300, int(rng.integers(0, 6))).tolist()
        rows = cached.rows(ids + block, len(ids))
        torch.testing.assert_close(rows, _full_logits(target, ids + block)[len(ids) - 1:], atol=1e-4, rtol=1e-4)
        keep = int(rng.integers(0, len(block) + 1))  # accept a prefix of the block, then one new token
        ids = ids + block[:keep] + [int(rng.integers(3, 300))]
        if rng.random() < 0.1:  # sometimes start over on another prompt
            ids = trained_pair.prompt_ids(int(rng.integers(len(trained_pair.prompts))))
    assert len(cached.ids) > 0


def test_batched_paths_over_a_cached_prefix_equal_full_forwards(trained_pair):
    drafter = trained_pair.drafter
    cached = CachedLM(drafter.model)
    prefix = encode(drafter, trained_pair.prompts[0])
    paths = torch.tensor([[5, 9, 11], [7, 7, 7], [40, 3, 100]])
    got = cached.batch_last(prefix, paths)
    for row, path in zip(got, paths.tolist(), strict=True):
        torch.testing.assert_close(row, _full_logits(drafter, prefix + path)[-1], atol=1e-4, rtol=1e-4)
    assert cached.ids == prefix  # the prefix's own cache is left as it was


def test_retokenizer_equals_encoding_the_whole_text(trained_pair):
    target, drafter = trained_pair.target, trained_pair.drafter
    retok, rng = Retokenizer(target, drafter), np.random.default_rng(1)
    for index in range(len(trained_pair.prompts)):
        ids = trained_pair.prompt_ids(index) + list(trained_pair.reference[index])
        n = len(trained_pair.prompt_ids(index))
        while n <= len(ids):
            assert retok(ids[:n]) == encode(drafter, text_of(target, ids[:n]))
            if rng.random() < 0.3 and n > 2:  # a rejected draft: go back a few tokens
                n -= int(rng.integers(1, 3))
            n += int(rng.integers(1, 4))


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 3, 4]) == 3
    assert common_prefix([1, 2, 3], [1, 5, 3]) == 1
    assert common_prefix([], [1]) == 0 and common_prefix([2], [1]) == 0
