"""Text and vocabularies across two tokenizers: token strings, and re-tokenisation of the new text only.

The heterogeneous methods need the drafter's ids for the text of the target's sequence y,
z = enc_D(dec_T(y)). Re-encoding the whole of y every round costs O(|y|) tokenizer work per round;
`Retokenizer` decodes only the target ids added since its last call and re-encodes only the text
after its last cut, a space at least `margin` characters before the end. Both tokenizers of the
task split words before a space (byte-level `Ġ`, Metaspace `▁`), so encoding the text in pieces cut
before spaces gives the same ids as encoding it whole; a tokenizer that merges across spaces gets
slightly different drafter contexts, which changes how many drafts are accepted, never the output
(every emitted token is verified by the target).
"""

from __future__ import annotations

from methods.decoding._cache import common_prefix
from tasks.decoding import LM


def text_of(lm: LM, ids: list[int]) -> str:
    return lm.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)


def encode(lm: LM, text: str) -> list[int]:
    return list(lm.tokenizer.encode(text, add_special_tokens=False))


def output_size(lm: LM) -> int:
    """Rows of the model's output layer (may exceed the tokenizer's size: padded vocabularies)."""
    return int(lm.model.get_output_embeddings().weight.shape[0]) if hasattr(lm.model, "get_output_embeddings") \
        else int(lm.model.vocab_size)


def token_strings(lm: LM, size: int) -> list[str | None]:
    """The text of each id (None for ids beyond the tokenizer); `▁` read as a space, byte-level decoded."""
    tok, out = lm.tokenizer, []
    for i in range(size):
        raw = tok.convert_ids_to_tokens(i) if i < len(tok) else None
        out.append(None if raw is None else raw.replace("▁", " ") if "▁" in raw else tok.decode([i]))
    return out


class Retokenizer:
    """enc_dst(dec_src(ids)) for a sequence that grows (and is sometimes cut back), working on the new text only."""

    def __init__(self, src: LM, dst: LM, margin: int = 24, lookbehind: int = 4):
        self.src, self.dst, self.margin, self.lookbehind = src, dst, margin, lookbehind
        self.reset()

    def reset(self) -> None:
        self.ids: list[int] = []     # src ids read so far
        self.text = ""               # their text
        self.frozen: list[int] = []  # dst ids of text[:cut]
        self.cut = 0
        self.states: list[tuple[int, int, int, int]] = []  # (len ids, len text, cut, len frozen) after each call

    def _rollback(self, ids: list[int]) -> None:
        """Return to the last state whose src ids are a prefix of `ids` (a rejected draft), else start over."""
        n = common_prefix(self.ids, ids)
        while self.states and self.states[-1][0] > n:
            self.states.pop()
        if not self.states:
            self.reset()
            return
        n_ids, n_text, self.cut, n_frozen = self.states[-1]
        self.ids, self.text, self.frozen = self.ids[:n_ids], self.text[:n_text], self.frozen[:n_frozen]

    def _append(self, ids: list[int]) -> None:
        """Add the text of ids[len(self.ids):], decoding a few ids of look-behind (byte-level tokens can split
        a character); falls back to decoding everything when the look-behind does not settle it."""
        n = len(self.ids)
        w = max(0, n - self.lookbehind)
        before, after = text_of(self.src, ids[w:n]), text_of(self.src, ids[w:])
        if after.startswith(before) and "\ufffd" not in after:
            self.text += after[len(before):]
        else:
            full = text_of(self.src, ids)
            if not full.startswith(self.text[: self.cut]):
                self.reset()
            self.text = full
        self.ids = list(ids)

    def __call__(self, ids: list[int]) -> list[int]:
        if common_prefix(self.ids, ids) < len(self.ids):
            self._rollback(ids)
        if len(ids) > len(self.ids):
            self._append(ids)
        live = self.text[self.cut:]
        j = live.rfind(" ", 0, max(0, len(live) - self.margin))
        if j > 0:  # freeze the text before that space
            self.frozen += encode(self.dst, live[:j])
            self.cut += j
            live = live[j:]
        self.states.append((len(self.ids), len(self.text), self.cut, len(self.frozen)))
        del self.states[:-64]
        return self.frozen + encode(self.dst, live)
