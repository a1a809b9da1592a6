"""A generated corpus in the paper's three prompt styles: summarisation, code and long context.

The hf-bench prompt templates of the paper's evaluation (hf-bench) wrap generated documents:
CNN/DM-like short articles, HumanEval-like function stubs with tests, SCROLLS-like long texts. The
sentences come from a small template grammar, so that a tiny target and a tiny drafter trained on
the same text learn similar continuations (the drafter "roughly approximates the target").
"""

from __future__ import annotations

import numpy as np

KINDS = ("summarisation", "code", "long_context")
SUMMARY_PROMPT = "Summarize the following article:\n{article}\nSummary:\n"
LONG_PROMPT = "Summarize the following text:\n{text}\nSummary:\n"
CODE_PROMPT = "Implement the function so that it passes the tests.\nTests:\n{tests}\nFunction:\n{stub}\n\nYour code:\n"

_ADJ = "small large old new red green quiet busy".split()
_NOUN = "city river museum market school garden station bridge library harbor".split()
_VERB = "opened closed visited built cleaned painted watched reported".split()
_AGENT = "mayor council teacher artist team police writer".split()
_DAY = "monday tuesday friday sunday".split()
_FUNCS = "add_one double square negate halve increment clamp scale".split()
_OPS = {"add_one": "x + 1", "double": "x * 2", "square": "x * x", "negate": "-x", "halve": "x // 2",
        "increment": "x + 1", "clamp": "max(0, x)", "scale": "x * 3"}


def _sentence(rng: np.random.Generator) -> tuple[str, str]:
    """(sentence, its summary clause)."""
    adj, noun, verb, agent, day = (str(rng.choice(w)) for w in (_ADJ, _NOUN, _VERB, _AGENT, _DAY))
    sentence = f"On {day} the {agent} {verb} the {adj} {noun}."
    return sentence, f"The {agent} {verb} the {noun}."


def _article(rng: np.random.Generator, sentences: int) -> tuple[str, str]:
    pairs = [_sentence(rng) for _ in range(sentences)]
    return " ".join(s for s, _ in pairs), pairs[0][1]


def _code(rng: np.random.Generator) -> tuple[str, str]:
    name = str(rng.choice(_FUNCS))
    x = int(rng.integers(0, 10))
    value = eval(_OPS[name], {"x": x})  # noqa: S307 - a fixed table of integer expressions
    tests = f"assert {name}({x}) == {value}"
    stub = f'def {name}(x):\n    """Return {_OPS[name]}."""'
    body = f"def {name}(x):\n    result = {_OPS[name]}\n    return result\n"
    return CODE_PROMPT.format(tests=tests, stub=stub), body


def document(kind: str, rng: np.random.Generator, long_sentences: int = 12) -> tuple[str, str]:
    """(prompt, continuation) of one document of `kind`."""
    if kind == "summarisation":
        article, summary = _article(rng, int(rng.integers(2, 5)))
        return SUMMARY_PROMPT.format(article=article), summary
    if kind == "code":
        return _code(rng)
    if kind == "long_context":
        text, summary = _article(rng, long_sentences)
        return LONG_PROMPT.format(text=text), summary
    raise ValueError(f"prompt kind {kind!r} unknown; allowed: {', '.join(KINDS)}")


def corpus(documents: int, seed: int) -> list[str]:
    """Training documents (prompt + continuation), the three kinds in turn."""
    rng = np.random.default_rng([seed, 7])
    return ["".join(document(KINDS[i % len(KINDS)], rng, long_sentences=int(rng.integers(6, 13))))
            for i in range(documents)]


def alphabet() -> list[str]:
    """Every character the generator can emit (the drafter's initial alphabet)."""
    chars = set("\n") | {chr(c) for c in range(32, 127)}
    return sorted(chars)
