"""The decoding problem's meter: forward hooks on the models it hands out, and the target's weights as a drafter.

Every `DecodingProblem` counts, from its construction on (so after the task's own reference decoding), each forward
pass of its target (`target`: one per call) and of its drafters (`drafter_rows`: one per sequence of each call's
batch, so SLRS's batched enumeration of ψ counts every path, as the paper's lemma does). The harness resets the
counts right before the method's solve and freezes them right after (bench/observe.py); `score` reads them.
"""

from __future__ import annotations

import torch

from bench.observe import Meter, count_forwards


class WeightsView(torch.nn.Module):
    """Another handle on a model's weights whose forward passes are counted apart from the model's own.

    Its `forward` is the model's own bound forward (same signature, same outputs, the model's own forward hooks not
    run), so a method that uses the target's weights as its drafter (the self-drafting control) is charged drafter
    passes, not target passes, and only through this handle.
    """

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.inner = model
        self.forward = model.forward


def wire(meter: Meter, target: torch.nn.Module, drafters: list[torch.nn.Module]) -> WeightsView:
    """Hook the models onto `meter`; returns the counted view of the target's weights for self-drafting."""
    models = [target, *drafters]
    if len({id(m) for m in models}) != len(models):
        raise ValueError("target and drafters must be distinct model objects (the target's weights as a drafter: "
                         "problem.self_drafter)")
    count_forwards(target, meter, "target")
    view = WeightsView(target)
    for model in (*drafters, view):
        count_forwards(model, meter, "drafter")
    return view
