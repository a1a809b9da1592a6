"""Lookup-table models for the multimodal judge's tests: they answer each of score's calls with a fixed matrix."""

from __future__ import annotations

import numpy as np
import torch


class Table:
    """An Aligner whose similarities are given ("i2t", "t2i", "class") and whose parameters are a given list."""

    def __init__(self, sims: dict[str, np.ndarray], parameters: list | None = None):
        self.sims, self._parameters, self.calls = sims, list(parameters or []), []

    def similarity(self, direction, queries, query_mask, candidates, candidate_mask):
        self.calls.append((direction, queries, candidates))
        return self.sims[direction]

    def class_similarity(self, images, image_mask, prompts, prompt_mask):
        self.calls.append(("class", images, prompts))
        return self.sims["class"]

    def parameters(self):
        return iter(self._parameters)


class TorchTable(torch.nn.Module):
    """A torch Aligner: fixed similarities, and the given modules as its parameters."""

    def __init__(self, sims: dict[str, np.ndarray], *modules: torch.nn.Module):
        super().__init__()
        self.sims, self.parts = sims, torch.nn.ModuleList(modules)

    def similarity(self, direction, queries, query_mask, candidates, candidate_mask):
        return self.sims[direction]

    def class_similarity(self, images, image_mask, prompts, prompt_mask):
        return self.sims["class"]
