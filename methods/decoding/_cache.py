"""A causal LM behind a KV cache that follows a growing, sometimes rolled-back, id sequence.

Speculative decoding feeds each model sequences that mostly extend the previous one: the target
reads y + a draft block, then y' = y + accepted tokens + one new token; the drafter reads its
context and then one draft token at a time. `CachedLM.rows(ids, start)` keeps the keys and values
of the longest prefix it has already read, crops the rest (a rejected draft) and runs the model on
the new ids only, so every forward pass costs the new tokens, not the whole sequence. The outputs
are the model's own next-token logits; a cache changes their cost, never their values (up to
float rounding of a different matmul shape).

A model that does not take a cache (e.g. a hand-built table whose logits depend on the last id
only) is fed the new ids alone as well; it must then not need the rest, which holds for bigram
tables. The cache keyword is `cache` in recent transformers (5.24 here), `past_key_values` in older
ones: whichever forward() names is used.
"""

from __future__ import annotations

import copy
import inspect

import torch


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two id lists."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)


def cache_keyword(model) -> str | None:
    """The forward() keyword that takes a KV cache, or None for a model without one."""
    params = inspect.signature(model.forward).parameters
    return next((k for k in ("cache", "past_key_values") if k in params), None)


def new_cache():
    from transformers import DynamicCache

    return DynamicCache()


class CachedLM:
    """Next-token logits after prefixes of `ids`, reusing the KV cache of the last sequence read."""

    def __init__(self, model):
        self.model = model
        self.device = next(model.parameters()).device
        self.keyword = cache_keyword(model)
        self.ids: list[int] = []   # the ids whose keys and values are in the cache
        self.cache = None
        self.tail = None           # logits after self.ids (the last position read), or None
        self.passes = 0            # forward passes run (a read served from the cached tail runs none)
        self.sequences = 0         # sequences those passes evaluated (a batched pass counts each row)

    def forward(self, new: list[int]) -> torch.Tensor:
        """Run the model on `new` after the cached ids; (len(new), |V|) float32 logits."""
        inputs = torch.tensor([new], device=self.device)
        kwargs = {} if self.keyword is None else {self.keyword: self.cache, "use_cache": True}
        self.passes, self.sequences = self.passes + 1, self.sequences + 1
        with torch.no_grad():
            return self.model(inputs, **kwargs).logits[0].float().cpu()

    def truncate(self, keep: int) -> None:
        """Forget every cached id after the first `keep` (rolls the KV cache back)."""
        if keep >= len(self.ids):
            return
        if keep == 0 or self.cache is None:
            self.cache = new_cache() if self.keyword else None
        else:
            self.cache.crop(keep - len(self.ids))  # a negative count removes that many positions (every version)
        self.ids, self.tail = self.ids[:keep], None

    def rows(self, ids: list[int], start: int) -> torch.Tensor:
        """Logits of the next token after ids[:j], j = start .. len(ids), start >= 1: (len(ids) − start + 1, |V|)."""
        n = common_prefix(self.ids, ids)
        if n == len(self.ids) == start and self.tail is not None:  # extend the sequence read last
            head = self.tail[None]
            if len(ids) == n:
                return head
            out = self.forward(ids[n:])
            self.ids, self.tail = list(ids), out[-1]
            return torch.cat([head, out])
        keep = min(n, start - 1)
        self.truncate(keep)
        if self.cache is None and self.keyword:
            self.cache = new_cache()
        out = self.forward(ids[keep:])
        self.ids, self.tail = list(ids), out[-1]
        return out[start - 1 - keep:]

    def next(self, ids: list[int]) -> torch.Tensor:
        """Logits of the token after `ids`: (|V|,)."""
        return self.rows(ids, len(ids))[0]

    def batch_last(self, prefix: list[int], paths: torch.Tensor) -> torch.Tensor:
        """Logits after prefix + each row of `paths` (B, d), d >= 1: (B, |V|); the prefix's cache is left unchanged."""
        self.rows(prefix, len(prefix))
        self.passes, self.sequences = self.passes + 1, self.sequences + len(paths)
        if self.keyword is None:
            with torch.no_grad():
                return self.model(paths.to(self.device)).logits[:, -1].float().cpu()
        cache = copy.deepcopy(self.cache)
        cache.batch_repeat_interleave(len(paths))
        with torch.no_grad():
            out = self.model(paths.to(self.device), **{self.keyword: cache, "use_cache": True})
        return out.logits[:, -1].float().cpu()
