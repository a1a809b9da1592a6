"""The synthetic preference world: prompts, hidden gold reward, noisy SFT teacher, off-policy pool, annotator.

Four categories, named after SimpleMix's four AlpacaEval slices, two verifiable, two subjective:
* math        `add a b =`        → the digit a + b (a, b ≤ 4). Gold: 1 if the first word is right, −0.1 per extra word.
* coding      `rev x y z =`      → the letters reversed. Gold: share of the 3 positions right, −0.1 per extra word.
* creative_writing `story <topic> =`  → words from a content vocabulary. Gold: hidden taste, the mean weight of the
  words (+1 for the category's style subset, 0 otherwise, −1 outside the vocabulary) − 0.1·|length − 6|.
* recommendations `recommend <topic> =` → the same with a different (disjoint) style subset.

The SFT teacher is noisy: half its arithmetic / code answers carry the policy's own structured mistakes
(off by one; the letters copied unreversed) and its subjective answers are uniform words (no taste).
The off-policy pool is three rule-based "other models" of style quality q ∈ {0.2, 0.5, 0.8}: strong on
taste, out of distribution on the verifiable categories (right with probability 0.15, else a random digit
or random letters, unlike the policy's errors). The annotator ranks K responses by Plackett–Luce with
scores gold/τ (for two responses: Bradley–Terry, P(a ≻ b) = σ((g_a − g_b)/τ)).
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


def teacher_response(prompt: str, rng: np.random.Generator, accuracy: float) -> str:
    """The noisy SFT teacher: right with probability `accuracy`, else the policy's structured mistake."""
    category = category_of(prompt)
    if category in VERIFIABLE:
        target = answer(prompt)
        if rng.random() < accuracy:
            return " ".join(target)
        if category == "math":  # off by one
            return str((int(target[0]) + int(rng.choice([-1, 1]))) % 10)
        return " ".join(prompt.split()[1:4])  # copied, not reversed
    return " ".join(rng.choice(CONTENT, int(rng.integers(3, 10))))


POOL_QUALITY = (0.2, 0.5, 0.8)   # style quality q of the three off-policy "other models"
POOL_ACCURACY = 0.15             # their accuracy on the (out-of-distribution) verifiable categories


def pool_response(prompt: str, quality: float, rng: np.random.Generator) -> str:
    """An off-policy "other model": tasteful on subjective prompts, unlike the policy on verifiable ones."""
    category = category_of(prompt)
    if category in VERIFIABLE:
        target = answer(prompt)
        if rng.random() < POOL_ACCURACY:
            return " ".join(target)
        if category == "math":
            return str(rng.choice(DIGITS))
        return " ".join(rng.choice(LETTERS, 3))
    n = int(np.clip(rng.normal(TARGET_LENGTH, 1.5), 2, 10))
    words = [str(rng.choice(STYLE[category])) if rng.random() < quality else str(rng.choice(CONTENT)) for _ in range(n)]
    return " ".join(words)


def annotate(prompt: str, responses, rng: np.random.Generator, temperature: float) -> np.ndarray:
    """Indices of `responses` best first: a Plackett–Luce draw with scores gold/τ (Gumbel-max trick)."""
    scores = np.array([gold_reward(prompt, r) for r in responses]) / temperature
    return np.argsort(-(scores + rng.gumbel(size=len(scores))), kind="stable")
