"""RULER's offline subtasks through lm-evaluation-harness: variable tracking (`ruler_vt`) and frequent word
extraction (`ruler_fwe`) on the trained policy, at lengths a tiny model supports (1024 and 2048 tokens).

RULER (Hsieh et al. 2024, arXiv 2404.06654) builds its documents itself, at `max_seq_lengths` tokens of the policy's
own tokenizer. Of the 13 subtasks lm_eval 0.4.13 ships, two run offline with the installed packages:

* `ruler_vt`: a chain of 5 variable assignments (VAR A = 12345, VAR B = VAR A, ...) hidden in repeated filler
  lines after one worked example; the answer is the 5 variables that hold the value (lm_eval's ruler/vt_utils.py).
* `ruler_fwe`: a text of 6-letter coded words with Zipf counts (α = 2); the answer is the 3 most frequent words
  after the noise word "..." (ruler/fwe_utils.py).

The others do not: the eight `niah_*` subtasks and `ruler_cwe` import `wonderwords` at import (prepare_niah.py,
cwe_utils.py; niah also downloads nltk's punkt_tab there), which is not among our dependencies; `ruler_qa_squad` and
`ruler_qa_hotpot` download SQuAD / HotpotQA. lm_eval's own vt.yaml and fwe.yaml do not load either: both include
niah_single_1.yaml, whose `custom_dataset` imports niah_utils. tasks/preference/data/ruler/ (`DIRECTORY`) holds the
two tasks' YAMLs with that base written out, every other field lm_eval's (tests/tasks/preference/test_ruler.py
compares them), and three hooks from this module:

* `vt_documents` / `fwe_documents`: lm_eval's own generators (500 documents per length, a number lm_eval fixes),
  the lengths interleaved so that `limit` = k scores k / len(lengths) documents of each (lm_eval's order is all of
  the first length, then the next); vt refuses first, with one line, where lm_eval's generator would loop forever;
* `process_results`: lm_eval's string match (a document scores the share of its reference words found in the
  output, in [0, 1]), without the -1 it writes for every default length (4096) the document was not built at.

Each length is a metric of its own, `lm_eval_ruler_fwe_<length>` (tasks/preference/_harness.py's names): the mean
of that length's document scores, in [0, 1]. On long_context_alignment's trained policies:

    bench run -m logo -t long_context_alignment --set task.lm_eval_tasks=ruler_fwe
        --set task.lm_eval_include=tasks/preference/data/ruler --set task.lm_eval_seq_lengths=1024,2048
        --set task.lm_eval_max_length=2112 --set task.lm_eval_limit=16

(run from the repository root: the include path is relative). Only fwe runs there: the policy's BPE tokenizer,
trained on its world's few words, writes RULER's English almost letter by letter, and vt's worked example, which
lm_eval builds in 500 tokens, does not fit at any length. A policy with an ordinary tokenizer (a hub model as
`model`) runs both. `lm_eval_max_length` must exceed the longest length a little: HFLM cuts the context from the
left to that window (default: the model config's, 1024 for the tiny Llama) less the generated tokens, and fwe's
documents run up to ~2 % over their length, as lm_eval builds them.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

VT_EXAMPLE = 500     # tokens of vt's worked example (lm_eval's vt_utils.get_dataset)
VT_GENERATED = 30    # tokens vt generates (its CONFIG["variable_tracking"]["tokens_to_generate"])
DIRECTORY = Path(__file__).parent / "data" / "ruler"
OFFLINE = ("ruler_vt", "ruler_fwe")


def interleaved(dataset):
    """A datasets.Dataset of RULER documents reordered round-robin over their `max_length`s, shortest first, each
    length's documents in their own order."""
    lengths = dataset["max_length"]
    seen: dict[int, int] = {}
    keys = []
    for i, length in enumerate(lengths):
        seen[length] = seen.get(length, 0) + 1
        keys.append((seen[length], length, i))
    return dataset.select([i for *_, i in sorted(keys)])


def vt_tokens(tokenizer, noises: int, worked_example: bool) -> int:
    """Tokens of one vt document with `noises` filler lines, as lm_eval's generator counts them (its first try);
    the global random state, which lm_eval seeded, is left as it was."""
    from lm_eval.tasks.ruler import vt_utils

    state, np_state = random.getstate(), np.random.get_state()
    try:
        text, answer = vt_utils.generate_input_output(noises, 1, 4, is_icl=worked_example)
    finally:
        random.setstate(state)
        np.random.set_state(np_state)
    return len(tokenizer(f"{text} {answer}").input_ids) + VT_GENERATED


def check_vt_fits(tokenizer, lengths) -> None:
    """lm_eval's vt generator loops forever when its smallest document does not fit: the worked example with 5
    filler lines in 500 tokens, a document with 10 lines beside that example in `length`. Refuse instead."""
    example = vt_tokens(tokenizer, 5, True)
    if example > VT_EXAMPLE:
        raise ValueError(f"ruler_vt needs a tokenizer that writes its worked example in {VT_EXAMPLE} tokens (lm_eval "
                         f"fixes that length); this one takes {example}: run ruler_fwe only")
    smallest = vt_tokens(tokenizer, 10, False) + VT_EXAMPLE
    too_short = [length for length in lengths if length < smallest]
    if too_short:
        raise ValueError(f"ruler_vt lengths {too_short} are below its smallest document with this tokenizer "
                         f"({smallest} tokens); use lm_eval_seq_lengths >= {smallest}")


def vt_documents(**metadata) -> dict:
    from lm_eval.tasks.ruler.common_utils import DEFAULT_SEQ_LENGTHS, get_tokenizer, resolve_tokenizer_name
    from lm_eval.tasks.ruler.vt_utils import get_vt_dataset

    check_vt_fits(get_tokenizer(resolve_tokenizer_name(metadata)), metadata.get("max_seq_lengths",
                                                                                   DEFAULT_SEQ_LENGTHS))
    return {split: interleaved(docs) for split, docs in get_vt_dataset(**metadata).items()}


def fwe_documents(**metadata) -> dict:
    from lm_eval.tasks.ruler.fwe_utils import fwe_download

    return {split: interleaved(docs) for split, docs in fwe_download(**metadata).items()}


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """lm_eval's RULER score of one document, keyed by the length it was built at only."""
    from lm_eval.tasks.ruler.common_utils import process_results as lm_eval_process_results

    return {length: score for length, score in lm_eval_process_results(doc, results).items() if score != -1}
