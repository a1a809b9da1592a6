"""Speculative decoding against the fastest plain decoding, with transformers' own assisted generation beside it.

One run, greedy and sampling (temperature 1) mode. For every method (standard SD, SLEM, TLI, SLRS) it
prints tokens/s, wall-clock speedup over the fastest autoregressive baseline of that mode (ours with
the KV cache, or transformers' `generate` with its cache, whichever is faster here), target forward
passes per token, the forward-pass ratio (baseline calls / method calls) and speedup / ratio, the
share of the fewer forward passes that turns into wall clock. The anchor rows run transformers'
universal assisted generation (UAG, `generate(assistant_model=, tokenizer=, assistant_tokenizer=)`;
in sampling mode transformers takes its TLI path) on the same pair and prompts, its target forward
passes counted by a hook. transformers is pinned below 5.25 (pyproject.toml: 5.25 breaks this path).

World: the task's drafters (hetero_vocab_pairs defaults: 2x48 Metaspace BPE, 2x48 over the target's
tokenizer) and a benchmark-only target over the task's target tokenizer, GPT-2 10x256 (8M parameters)
trained on the same corpus and cached, so that a target forward pass costs >= 10x a drafter's as on
real pairs (measured and printed). Prompts are long-context documents cut after their first sentence,
so every method decodes `--tokens` tokens of article text, not a 7-token summary that the prompt's
prefill would dominate. Targets (issue 20): sampling speedup >= 0.8x the forward-pass ratio for
speculative and SLEM, > 1x for TLI, SLRS >= 50 tok/s, ours at least as fast as UAG (greedy: SLEM, the
algorithm of transformers' greedy path; sampling: TLI, the algorithm of its sampling path).

    flock /tmp/cpu.lock .venv/bin/python benchmarks/decoding_speedup.py [--quick | --shapes | --draft-lengths 1,2,5]

Timings are the best of `--repeats` passes (a shared CPU is noisy); no test asserts them.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import torch

from bench.context import RunContext
from bench.observe import observing
from bench.toolkit.cache import cached_dir
from methods.decoding import autoregressive, slem, slrs, speculative, tli
from methods.decoding._cache import CachedLM
from tasks.decoding import DecodingProblem, score
from tasks.decoding._corpus import corpus, document
from tasks.decoding._lm import _gpt2, greedy_reference, load_lm, train_causal_lm
from tasks.decoding.hetero_vocab_pairs import Config, build

TARGET = {"layers": 10, "width": 256, "heads": 4, "steps": 160, "batch": 8, "lr": 2e-3, "seed": 5, "format": 1}
METHODS = {"speculative": speculative, "slem": slem, "tli": tli, "slrs": slrs}


def big_target(config: Config, local: str, cache_dir):
    """The benchmark's target: the task's target tokenizer, a 10x256 GPT-2 trained on the task's corpus (cached in
    `cache_dir`, beside the task's pairs)."""
    def train(tmp):
        tokenizer = load_lm(f"{local}/target").tokenizer
        model, loss = train_causal_lm(tokenizer, corpus(config.documents, config.train_seed), TARGET["layers"],
                                      TARGET["width"], TARGET["heads"], TARGET["steps"], TARGET["seed"],
                                      batch=TARGET["batch"], lr=TARGET["lr"])
        print(f"trained the benchmark target: final loss {loss:.3f}", flush=True)
        model.save_pretrained(tmp / "target")
        tokenizer.save_pretrained(tmp / "target")

    settings = {**TARGET, "documents": config.documents, "corpus_seed": config.train_seed, "tokenizer": local}
    return load_lm(str(cached_dir(cache_dir, settings, train, prefix="bench-target-") / "target"))


def long_prompts(n: int, seed: int) -> tuple[str, ...]:
    rng = np.random.default_rng([seed, 23])
    out = []
    for _ in range(n):
        text = document("long_context", rng)[0]
        out.append(text[: text.index(".") + 1])  # header and first sentence; the article goes on from there
    return tuple(out)


def forward_ms(model, prompt: list[int], block: int, repeats: int = 30) -> float:
    """Milliseconds of one cached forward pass of `model` reading `block` new tokens after `prompt`."""
    cached = CachedLM(model)
    cached.next(prompt)
    extra = prompt[-block:]
    start = time.perf_counter()
    for _ in range(repeats):
        cached.rows(prompt + extra, len(prompt) + 1)
        cached.truncate(len(prompt))
    return (time.perf_counter() - start) / repeats * 1e3


class CallCounter:
    """Counts forward passes of a model (transformers' generate runs the target once per round)."""

    def __init__(self, model):
        self.calls, self.handle = 0, model.register_forward_hook(self.hook)

    def hook(self, *args) -> None:
        self.calls += 1


def hf_generate(problem: DecodingProblem, sample: bool, seed: int, assistant: bool) -> dict:
    """transformers' generate on every prompt: plain (with its cache) or UAG with the heterogeneous drafter."""
    target, drafter = problem.target, problem.drafter
    eos = target.tokenizer.eos_token_id
    kwargs = dict(do_sample=sample, max_new_tokens=problem.max_new_tokens, eos_token_id=eos, pad_token_id=eos)
    if sample:
        kwargs.update(temperature=1.0, top_k=0, top_p=1.0)
    if assistant:
        kwargs.update(assistant_model=drafter.model, tokenizer=target.tokenizer, assistant_tokenizer=drafter.tokenizer)
    counter, outputs, seconds = CallCounter(target.model), [], 0.0
    torch.manual_seed(seed)
    try:
        for index in range(len(problem.prompts)):
            ids = torch.tensor([problem.prompt_ids(index)])
            start = time.perf_counter()
            with torch.no_grad():
                out = target.model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)[0, ids.shape[1]:]
            seconds += time.perf_counter() - start
            out = out.tolist()
            outputs.append(tuple(out[: out.index(eos) + 1] if eos in out else out))
    except Exception as exc:  # noqa: BLE001 - the anchor's own failures are reported, not fatal
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"}
    finally:
        counter.handle.remove()
    tokens = sum(map(len, outputs))
    exact = sum(o == r for o, r in zip(outputs, problem.reference, strict=True)) / len(outputs)
    return {"tok/s": tokens / seconds, "calls/tok": counter.calls / tokens, "exact": exact if not sample else None}


def ours(problem: DecodingProblem, module, sample: bool, seed: int, **settings) -> dict:
    with observing(problem):  # the problem is solved repeatedly (and its target run by the anchors): count each solve
        result = module.solve(problem, module.Config(do_sample=sample, **settings), RunContext(seed=seed))
    s = score(problem, result)
    return {"tok/s": s["new_tokens"] / result.seconds, "calls/tok": s["target_calls_per_token"],
            "exact": s.get("greedy_exact_match")}


def best(run, repeats: int) -> dict:
    """The fastest of `repeats` runs (identical outputs and counts; only the wall clock varies)."""
    results = [run() for _ in range(repeats)]
    return max(results, key=lambda r: r.get("tok/s", 0.0))


def row(name: str, mode: str, r: dict, base: dict) -> str:
    if "error" in r:
        return f"{name:<22}{mode:<8}  failed: {r['error']}"
    ratio = base["calls/tok"] / r["calls/tok"]
    speedup = r["tok/s"] / base["tok/s"]
    exact = "-" if r["exact"] is None else f"{r['exact']:.2f}"
    return (f"{name:<22}{mode:<8}{r['tok/s']:>9.1f}{speedup:>9.2f}x{r['calls/tok']:>10.3f}{ratio:>9.2f}x"
            f"{speedup / ratio:>10.2f}{exact:>7}")


SHAPES = ((10, 256), (8, 512), (6, 768), (12, 512), (8, 768))  # (layers, width) of candidate targets


def shapes(config: Config) -> None:
    """Forward cost of GPT-2 shapes over the task's target vocabulary against the task's drafter shape, one new
    token and verification blocks of 2 / 4 / 8 (random weights: the cost does not depend on them)."""
    context = list(range(5, 125))

    def best_ms(model, blocks: tuple[int, ...]) -> list[float]:
        return [min(forward_ms(model, context, n) for _ in range(3)) for n in blocks]

    drafter = best_ms(_gpt2(config.drafter_vocab, 1, 0, config.drafter_layers, config.drafter_width, 2, 0), (1,))[0]
    print(f"drafter {config.drafter_layers}x{config.drafter_width}: {drafter:.2f} ms per new token")
    for layers, width in SHAPES:
        model = _gpt2(config.target_vocab, 1, 0, layers, width, 4 if width <= 256 else 8, 0)
        ms = best_ms(model, (1, 2, 4, 8))
        size = sum(p.numel() for p in model.parameters()) / 1e6
        print(f"target {layers}x{width} ({size:.1f}M): {ms[0]:.2f} ms = {ms[0] / drafter:.1f}x the drafter; "
              f"blocks of 2 / 4 / 8: " + " / ".join(f"{m / ms[0]:.2f}" for m in ms[1:]), flush=True)


def draft_lengths(problem: DecodingProblem, lengths: list[int], repeats: int, seed: int) -> None:
    """Sampling-mode speedup / ratio of SD and SLEM for each draft length k, with the drafter's confidence stop off
    (every round drafts k tokens) and at its default 0.4: whether shorter drafts, whose verification blocks are
    cheaper on a CPU, bring the share of the fewer target passes that turns into wall clock up to 0.8."""
    base = best(lambda: ours(problem, autoregressive, True, seed), repeats)
    print(f"sampling, baseline ours {base['tok/s']:.1f} tok/s; speedup / ratio by draft length k")
    for name in ("speculative", "slem"):
        for threshold in (0.0, 0.4):
            shares = []
            for k in lengths:
                r = best(lambda name=name, k=k, threshold=threshold: ours(
                    problem, METHODS[name], True, seed, num_assistant_tokens=k, confidence_threshold=threshold),
                    repeats)
                shares.append((r["tok/s"] / base["tok/s"]) / (base["calls/tok"] / r["calls/tok"]))
            ratios = " / ".join(f"k={k} {v:.2f}" for k, v in zip(lengths, shares, strict=True))
            print(f"  {name:<12} stop {threshold}: {ratios}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 prompts, 24 new tokens, one pass")
    parser.add_argument("--prompts", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=64, help="new tokens per prompt")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shapes", action="store_true", help="only the forward costs of larger target shapes")
    parser.add_argument("--draft-lengths", help="only SD's and SLEM's sampling speedup / ratio at these draft lengths "
                        "(comma-separated, e.g. 1,2,3,5,20)")
    args = parser.parse_args()
    if args.shapes:
        torch.set_num_threads(1)
        return shapes(Config())
    if args.quick:
        args.prompts, args.tokens, args.repeats = 3, 24, 1
    config = Config()
    ctx = RunContext(seed=args.seed)
    world = build(dataclasses.replace(config, prompts_per_kind=1, max_new_tokens=1), ctx)
    local = str(world.target.name).rsplit("/", 1)[0]
    target = big_target(config, local, ctx.cache_dir("decoding"))
    torch.set_num_threads(1)  # one core per process, as the project's runners give each worker
    prompts = long_prompts(args.prompts, args.seed)
    ids = [target.tokenizer.encode(p, add_special_tokens=False) for p in prompts]
    start = time.perf_counter()
    reference = tuple(tuple(greedy_reference(target, i, args.tokens)) for i in ids)
    problem = DecodingProblem(target=target, drafter=world.drafter, same_drafter=world.same_drafter, prompts=prompts,
                              kinds=("long_context",) * len(prompts), max_new_tokens=args.tokens, reference=reference,
                              ar_seconds=time.perf_counter() - start)
    if args.draft_lengths:
        return draft_lengths(problem, [int(k) for k in args.draft_lengths.split(",")], args.repeats, args.seed)
    slrs_problem = dataclasses.replace(problem, prompts=prompts[:2], kinds=problem.kinds[:2],
                                       reference=reference[:2], max_new_tokens=min(args.tokens, 16))

    blocks = (1, 2, 4, 8)
    target_ms = [forward_ms(target.model, ids[0], n) for n in blocks]
    drafter_ids = world.drafter.tokenizer.encode(prompts[0], add_special_tokens=False)
    drafter_ms = forward_ms(world.drafter.model, drafter_ids, 1)
    print(f"target/drafter forward cost {target_ms[0] / drafter_ms:.1f}x (cached, one new token: target "
          f"{target_ms[0]:.2f} ms, drafter {drafter_ms:.2f} ms); target verifying a block of "
          + ", ".join(f"{n}: {ms / target_ms[0]:.2f}x" for n, ms in zip(blocks, target_ms, strict=True))
          + " one token's cost (the ceiling of speedup / ratio is about 1 / that factor)")
    header = (f"{'method':<22}{'mode':<8}{'tok/s':>9}{'speedup':>10}{'calls/tok':>10}{'ratio':>10}"
              f"{'spd/ratio':>10}{'exact':>7}")
    summary = {}
    for sample in (False, True):
        mode = "sample" if sample else "greedy"
        base_ours = best(lambda sample=sample: ours(problem, autoregressive, sample, args.seed), args.repeats)
        base_hf = best(lambda sample=sample: hf_generate(problem, sample, args.seed, assistant=False), args.repeats)
        base = max((base_ours, base_hf), key=lambda r: r.get("tok/s", 0.0))
        print(f"\n{mode} (baseline: {'ours' if base is base_ours else 'transformers generate'}, "
              f"{base['tok/s']:.1f} tok/s)")
        print(header)
        print(row("autoregressive (ours)", mode, base_ours, base))
        print(row("transformers generate", mode, base_hf, base))
        for name, module in METHODS.items():
            if name == "slrs" and not sample:
                continue
            instance = slrs_problem if name == "slrs" else problem
            summary[name, sample] = r = best(lambda instance=instance, module=module, sample=sample: ours(
                instance, module, sample, args.seed), args.repeats)
            print(row(name, mode, r, base))
        summary["uag", sample] = r = best(lambda sample=sample: hf_generate(problem, sample, args.seed, assistant=True),
                                          args.repeats)
        print(row("transformers UAG", mode, r, base))
        summary["base", sample] = base

    def fraction(name: str) -> float:
        r, base = summary[name, True], summary["base", True]
        return (r["tok/s"] / base["tok/s"]) / (base["calls/tok"] / r["calls/tok"])

    uag = {s: summary["uag", s].get("tok/s") for s in (False, True)}
    print("\ntargets (sampling mode unless named):")
    print(f"  speculative speedup / ratio {fraction('speculative'):.2f} (>= 0.8)")
    print(f"  slem speedup / ratio {fraction('slem'):.2f} (>= 0.8)")
    print(f"  tli speedup {summary['tli', True]['tok/s'] / summary['base', True]['tok/s']:.2f}x (> 1)")
    print(f"  slrs {summary['slrs', True]['tok/s']:.1f} tok/s (>= 50)")
    for s, ours_name in ((False, "slem"), (True, "tli")):  # transformers samples across tokenizers with TLI
        theirs = f"{uag[s]:.1f} tok/s" if uag[s] else summary["uag", s]["error"]
        print(f"  {ours_name} vs UAG, {'sample' if s else 'greedy'}: {summary[ours_name, s]['tok/s']:.1f} tok/s vs "
              f"{theirs} (>=)")


if __name__ == "__main__":
    main()
