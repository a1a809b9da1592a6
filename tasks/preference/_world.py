"""The synthetic preference world: prompts, hidden gold reward, SFT teacher, off-policy pool, annotator.

Four categories, named after SimpleMix's four AlpacaEval slices, two verifiable, two subjective:
* math        `add a b =`        → the digit a + b (a, b ≤ 4). Gold: 1 if the first word is right, −0.1 per extra word.
* coding      `rev x y z =`      → the letters reversed. Gold: share of the 3 positions right, −0.1 per extra word.
* creative_writing `story <topic> =`  → words from a content vocabulary. Gold: hidden taste, the mean weight of the
  words (+1 for the category's style subset, 0 otherwise, −1 outside the vocabulary) − 0.1·|length − 6|.
* recommendations `recommend <topic> =` → the same with a different (disjoint) style subset.

Every writer of answers has one quality q, the same in every category (version 3 of the world; issue 23: a world
in which each data source is better where the paper says it helps would restate the paper's claims). A writer of
quality q is right on a verifiable prompt with probability q, and on a subjective one picks each of its words from the
category's style subset with probability q (else any content word), about 6 words long. The SFT teacher is one writer,
of quality `teacher_quality` (½), whose verifiable mistakes are the policy's own structured ones (off by one; the
letters copied unreversed). The off-policy pool is three "other models" of qualities POOL_QUALITY = (0.2, 0.5, 0.8):
on average exactly the teacher's quality, in every category; their mistakes are their own (a random digit, random
letters). So neither source of preference pairs holds better answers anywhere by construction. What differs is what
the paper argues matters: on-policy pairs contrast the policy's own answers (its own mistakes against its own right
answers), off-policy pairs contrast other writers' answers, whose spread of quality reaches beyond what the policy
samples. Which helps which category is measured, not built in.
The annotator ranks K responses by Plackett–Luce with scores gold/τ (for two responses: Bradley–Terry,
P(a ≻ b) = σ((g_a − g_b)/τ)).
"""

from __future__ import annotations

import numpy as np

CATEGORIES = ("math", "coding", "creative_writing", "recommendations")
VERIFIABLE = ("math", "coding")
DIGITS = tuple(str(d) for d in range(10))
LETTERS = tuple("abcdef")
TOPICS = ("sea", "moon", "city", "forest")
CONTENT = ("bright", "calm", "warm", "gentle", "quiet", "bold", "swift", "dark", "old", "new", "tiny", "grand",
           "soft", "wild", "clear", "golden")
STYLE = {"creative_writing": ("bright", "gentle", "golden", "wild", "soft"),
         "recommendations": ("quiet", "clear", "old", "calm", "warm")}
TARGET_LENGTH = 6
_VERB = {"math": "add", "coding": "rev", "creative_writing": "story", "recommendations": "recommend"}
_CATEGORY_OF_VERB = {v: k for k, v in _VERB.items()}


def make_prompts(n_per_category: int, rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """(prompts, categories): n_per_category random prompts of each category, categories in CATEGORIES order."""
    prompts, categories = [], []
    for category in CATEGORIES:
        for _ in range(n_per_category):
            if category == "math":
                body = " ".join(rng.choice(DIGITS[:5], 2))
            elif category == "coding":
                body = " ".join(rng.choice(LETTERS, 3, replace=False))
            else:
                body = str(rng.choice(TOPICS))
            prompts.append(f"{_VERB[category]} {body} =")
            categories.append(category)
    return prompts, categories


def category_of(prompt: str) -> str:
    return _CATEGORY_OF_VERB[prompt.split()[0]]


def answer(prompt: str) -> list[str]:
    """The checkable answer of a verifiable prompt, as words."""
    words = prompt.split()
    if words[0] == "add":
        return [str(int(words[1]) + int(words[2]))]
    if words[0] == "rev":
        return words[1:4][::-1]
    raise ValueError(f"{prompt!r} is not a verifiable prompt")


def gold_reward(prompt: str, response: str) -> float:
    """The hidden gold reward r*(x, y) of the module docstring."""
    category, words = category_of(prompt), response.split()
    if category in VERIFIABLE:
        target = answer(prompt)
        right = sum(a == b for a, b in zip(words, target)) / len(target)
        return right - 0.1 * max(0, len(words) - len(target))
    if not words:
        return -1.0
    style = STYLE[category]
    taste = np.mean([1.0 if w in style else (0.0 if w in CONTENT else -1.0) for w in words])
    return float(taste - 0.1 * abs(len(words) - TARGET_LENGTH))


def gold_rewards(prompts, responses) -> np.ndarray:
    return np.array([gold_reward(p, r) for p, r in zip(prompts, responses, strict=True)])


def _tasteful(category: str, quality: float, rng: np.random.Generator) -> str:
    """About TARGET_LENGTH words, each from the category's style subset with probability `quality`."""
    n = int(np.clip(rng.normal(TARGET_LENGTH, 1.5), 2, 10))
    words = [str(rng.choice(STYLE[category])) if rng.random() < quality else str(rng.choice(CONTENT)) for _ in range(n)]
    return " ".join(words)


def teacher_response(prompt: str, rng: np.random.Generator, quality: float) -> str:
    """The SFT teacher: right with probability `quality`, else the policy's structured mistake; tasteful at the same
    quality on subjective prompts."""
    category = category_of(prompt)
    if category not in VERIFIABLE:
        return _tasteful(category, quality, rng)
    target = answer(prompt)
    if rng.random() < quality:
        return " ".join(target)
    if category == "math":  # off by one
        return str((int(target[0]) + int(rng.choice([-1, 1]))) % 10)
    return " ".join(prompt.split()[1:4])  # copied, not reversed


POOL_QUALITY = (0.2, 0.5, 0.8)   # quality q of the three off-policy "other models" (mean ½: the teacher's)


def pool_response(prompt: str, quality: float, rng: np.random.Generator) -> str:
    """An off-policy "other model" of quality q: right with probability q (else its own mistake: a random digit or
    random letters) and tasteful at the same q."""
    category = category_of(prompt)
    if category not in VERIFIABLE:
        return _tasteful(category, quality, rng)
    target = answer(prompt)
    if rng.random() < quality:
        return " ".join(target)
    if category == "math":
        return str(rng.choice(DIGITS))
    return " ".join(rng.choice(LETTERS, 3))


def annotate(prompt: str, responses, rng: np.random.Generator, temperature: float) -> np.ndarray:
    """Indices of `responses` best first: a Plackett–Luce draw with scores gold/τ (Gumbel-max trick)."""
    scores = np.array([gold_reward(prompt, r) for r in responses]) / temperature
    return np.argsort(-(scores + rng.gumbel(size=len(scores))), kind="stable")
