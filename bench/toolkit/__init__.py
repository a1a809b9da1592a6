"""Building blocks several families share: tiny language models and tokenizers, loading by hub id or path.

`tokenizer`: a byte-level BPE tokenizer trained with `tokenizers` on a generated corpus, wrapped as
a transformers `PreTrainedTokenizerFast`. `models`: tiny GPT-2 / Llama shapes, `load_model(name_or_path,
kind, device)` for any hub id, local directory or tiny shape, and batched sequence-classification
scoring. Each module imports torch / transformers itself; importing this package costs nothing.
"""
