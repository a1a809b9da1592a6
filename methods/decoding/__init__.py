"""Lossless speculative decoding methods (Timor et al., ICML 2025): SLEM, TLI and SLRS for drafters with a
different vocabulary, standard speculative decoding for a same-vocabulary drafter, and autoregressive decoding."""
