"""Synthetic long contexts whose answer sits in one far-back chunk, and LOGO's positional-index synthesis.

A context is a sequence of 5-word chunks: facts `ka is v3 .`, links `ka is kb .` (multi-hop) and filler
`the sky was calm .`; the question `? ka =` asks one key. Three kinds (docs/papers/logo.md):
* retrieval: one evidence fact, two distractor facts about other keys, filler;
* key_value: one evidence fact among facts about every other key (a dense key-value store);
* multi_hop: a link `ka is kb .` and the fact `kb is v3 .`, plus distractor facts.
The evidence is placed in the first quarter of the context; distractor values always differ from the answer,
so the answer value occurs nowhere but in the evidence: without it the answer is unreachable.

Position synthesis (LOGO §2.3, paper Eq. 4, PoSE-style): the real tokens are cut into N equal chunks and
given position indices spread over a target window K. Continuous chunk (probability 0.9): one bias per
chunk, b_j ~ U{1, …, ⌊(K − k)/N⌋}, accumulated, so indices inside a chunk stay consecutive; sparse chunk
(0.1): per-token bias b_i ~ U{1, …, j·⌊(K − k)/N⌋} for a token of chunk j (1-based), then sorted and made
strictly increasing. Both keep max < K.
"""

from __future__ import annotations

import numpy as np

KEYS = tuple(f"k{c}" for c in "abcdefghijklmnop")
VALUES = tuple(f"v{d}" for d in range(10))
FILLER = ("the sky was calm .", "a bird sang softly .", "rain fell on hills .", "we walked by rivers .",
          "old trees stood still .", "the road was long .")
KINDS = ("retrieval", "key_value", "multi_hop")
LENGTHS = {"short": 4, "medium": 12, "long": 32}   # chunks per context; training contexts are "short"


def make_example(kind: str, n_chunks: int, rng: np.random.Generator) -> tuple[list[str], str, str]:
    """(chunks, question, answer) of one context of n_chunks chunks (n_chunks >= 4)."""
    keys = [str(k) for k in rng.permutation(KEYS)]
    answer = str(rng.choice(VALUES))
    others = [v for v in VALUES if v != answer]
    key = keys[0]
    if kind == "multi_hop":
        evidence = [f"{key} is {keys[1]} .", f"{keys[1]} is {answer} ."]
        pool = keys[2:]
    else:
        evidence = [f"{key} is {answer} ."]
        pool = keys[1:]
    n_distract = n_chunks - len(evidence) if kind == "key_value" else 2
    distract = [f"{pool[i % len(pool)]} is {rng.choice(others)} ." for i in range(n_distract)]
    body = distract + [str(rng.choice(FILLER)) for _ in range(n_chunks - len(evidence) - len(distract))]
    body = [body[i] for i in rng.permutation(len(body))]
    far = max(1, n_chunks // 4)                      # the evidence goes into the first quarter
    slots = (sorted(rng.choice(far + len(evidence) - 1, len(evidence), replace=False)) if far > 1
             else list(range(len(evidence))))
    chunks = list(body)
    for slot, text in zip(slots, evidence):
        chunks.insert(int(slot), text)
    return chunks[:n_chunks], f"? {key} =", answer


def prompt_text(chunks: list[str], question: str) -> str:
    return " ".join(chunks) + " " + question


def distractor_answers(chunks: list[str], answer: str, rng: np.random.Generator, m: int) -> list[str]:
    """LOGO's dis-preferred answers: values read off distractor chunks (irrelevant evidence), else random wrong
    values."""
    seen = [c.split()[2] for c in chunks if c.split()[2] in VALUES and c.split()[2] != answer]
    out = list(dict.fromkeys(seen))[:m]
    while len(out) < m:
        value = str(rng.choice([v for v in VALUES if v != answer and v not in out]))
        out.append(value)
    return out


def exact_match(answer_of: dict, prompts, responses) -> np.ndarray:
    """1 when the answer's first word is the context's answer value."""
    return np.array([float((r.split() or [""])[0] == answer_of[p]) for p, r in zip(prompts, responses, strict=True)])


def synthesize_positions(n_tokens: int, n_chunks: int, window: int, rng: np.random.Generator,
                         sparse_prob: float = 0.1) -> np.ndarray:
    """(n_tokens,) strictly increasing position indices < window (module docstring)."""
    if window < n_tokens:
        raise ValueError(f"window {window} must be >= the {n_tokens} real tokens")
    n_chunks = max(1, min(n_chunks, n_tokens))
    chunk_of = np.minimum(np.arange(n_tokens) * n_chunks // n_tokens, n_chunks - 1)   # (k,) chunk index 0..N-1
    span = max(1, (window - n_tokens) // n_chunks)
    if rng.random() >= sparse_prob:                  # continuous chunk: one bias per chunk, accumulated
        bias = np.cumsum(rng.integers(1, span + 1, size=n_chunks)) - 1 if window > n_tokens else np.zeros(n_chunks, int)
        return np.arange(n_tokens) + bias[chunk_of]
    bias = rng.integers(1, (chunk_of + 1) * span + 1)                                  # sparse: per token, grows with j
    pos = np.sort(np.arange(n_tokens) + bias - 1)
    for i in range(1, n_tokens):                     # strictly increasing
        pos[i] = max(pos[i], pos[i - 1] + 1)
    overflow = pos[-1] - (window - 1)
    return pos - max(0, overflow) if overflow <= pos[0] else np.arange(n_tokens)
