"""The BPE tokenizer trained here: byte-level coverage, special tokens, determinism, save and load."""

from bench.toolkit.tokenizer import (
    SPECIAL_TOKENS,
    generated_corpus,
    load_tokenizer,
    save_tokenizer,
    train_bpe_tokenizer,
)


def test_any_text_round_trips_and_specials_come_first(tmp_path):
    tok = train_bpe_tokenizer(generated_corpus(sentences=500, seed=1), vocab_size=300)
    assert len(tok) == 300
    assert [tok.pad_token_id, tok.eos_token_id, tok.unk_token_id] == [0, 1, 2]
    text = "Describe Paris — café, 1889 Tour Eiffel! \n def f(x): return x ** 2  # ünïcødé ✓"
    ids = tok(text)["input_ids"]
    assert tok.unk_token_id not in ids and tok.decode(ids) == text  # byte level: nothing is unknown
    loaded = load_tokenizer(save_tokenizer(tok, tmp_path / "tok"))
    assert loaded(text)["input_ids"] == ids and loaded.pad_token == SPECIAL_TOKENS[0]


def test_training_is_deterministic():
    a = train_bpe_tokenizer(generated_corpus(seed=3), vocab_size=256)
    b = train_bpe_tokenizer(generated_corpus(seed=3), vocab_size=256)
    assert a.get_vocab() == b.get_vocab()
