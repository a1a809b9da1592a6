"""A tiny text-to-image rectified-flow model built from diffusers' `FluxTransformer2DModel`.

The pieces the erasure family shares (the CPU-scale plan of docs/papers/eraseanything.md):

* a word-level tokenizer over a fixed vocabulary (templates, and per digit an English word, a
  numeral and a German word: the synonym sets) and a frozen, randomly initialised 1-layer
  transformer text encoder that gives contextual token embeddings, as T5 does for Flux;
* `FluxTransformer2DModel` itself (dual-stream blocks with the text-stream projections
  `attn.add_q_proj` / `attn.add_k_proj` the paper puts its LoRA on, then single-stream blocks),
  on 8 × 8 one-channel images packed as 2 × 2 patches into 16 image tokens, exactly as the Flux
  pipeline packs its 16-channel latents;
* `velocity` (one forward pass), `euler_sample` (the rectified-flow Euler sampler, on a uniform grid
  or a given one such as a Flux scheduler's shifted sigmas; `guided_field` adds classifier-free
  guidance) and `AttentionRecorder`, an attention processor that computes the joint attention
  explicitly and keeps its probability map A ∈ R^{B×H×L×L} (L = text + image tokens), as the
  authors' modified diffusers returns it for the last dual-stream block; it works unchanged on the
  real FLUX.1 transformer (tasks/erasure/_backbone.py puts both models behind one interface).

Deviation: the tiny model has no CLIP-pooled channel (`pooled_projections` are zeros), so all text
conditioning flows through the joint attention; it uses classifier-free guidance (empty prompt,
10 % prompt drop in training) instead of Flux-dev's distilled guidance embedding.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import torch
from diffusers import FluxTransformer2DModel
from diffusers.models.embeddings import apply_rotary_emb
from diffusers.models.transformers.transformer_flux import FluxAttention, FluxAttnProcessor, _get_qkv_projections
from torch import nn

from bench.toolkit.training import seeded

DIGIT_WORDS = (  # (English, numeral, German) per class: the synonym sets
    ("zero", "0", "null"), ("one", "1", "eins"), ("two", "2", "zwei"), ("three", "3", "drei"),
    ("four", "4", "vier"), ("five", "5", "fuenf"), ("six", "6", "sechs"), ("seven", "7", "sieben"),
    ("eight", "8", "acht"), ("nine", "9", "neun"))
WORD_CLASS = {w: c for c, words in enumerate(DIGIT_WORDS) for w in words}
TEMPLATES = ("a photo of the digit {}", "a handwritten {}", "the number {} in black", "a {} written by hand")
PAD = "<pad>"
VOCAB = (PAD, *sorted({w for t in TEMPLATES for w in t.replace("{}", " ").split()} | {"digit"}), *WORD_CLASS)
MAX_TOKENS = 8   # every prompt is padded to 8 tokens (the paper: T5 padded to 256)
TEXT_DIM = 32    # width of the text encoder (joint_attention_dim)
PATCH = 2        # 2 × 2 patches: 8 × 8 image -> 16 tokens of 4 channels
SIDE = 8


def tokenize(prompts: list[str]) -> torch.Tensor:
    """(B, MAX_TOKENS) token ids; unknown words are an error naming the vocabulary."""
    index = {w: i for i, w in enumerate(VOCAB)}
    rows = []
    for prompt in prompts:
        words = prompt.split()
        unknown = [w for w in words if w not in index]
        if unknown or len(words) > MAX_TOKENS:
            raise ValueError(f"prompt {prompt!r}: unknown words {unknown} or more than {MAX_TOKENS} words; "
                             f"vocabulary: {' '.join(VOCAB[1:])}")
        rows.append([index[w] for w in words] + [0] * (MAX_TOKENS - len(words)))
    return torch.tensor(rows, dtype=torch.long)


def keyword_positions(prompt: str, keywords: tuple[str, ...]) -> list[int]:
    """Token indices of the keyword(s) in the prompt (the paper recomputes them after shuffling)."""
    return [i for i, w in enumerate(prompt.split()) if w in keywords]


class TextEncoder(nn.Module):
    """Frozen random 1-layer transformer: contextual token embeddings (B, MAX_TOKENS, TEXT_DIM)."""

    def __init__(self, seed: int = 0):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        # the layers' default init (the biases kept below) draws from the global generator
        with seeded(seed, device=None):
            self.embed = nn.Embedding(len(VOCAB), TEXT_DIM)
            self.position = nn.Parameter(torch.zeros(MAX_TOKENS, TEXT_DIM))
            self.layer = nn.TransformerEncoderLayer(TEXT_DIM, nhead=2, dim_feedforward=64, dropout=0.0,
                                                    batch_first=True)
        with torch.no_grad():
            for p in self.parameters():
                if p.dim() > 1:
                    p.copy_(torch.randn(p.shape, generator=generator) / math.sqrt(p.shape[-1]))
            self.position.copy_(0.5 * torch.randn(MAX_TOKENS, TEXT_DIM, generator=generator))
        self.requires_grad_(False)
        self.eval()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.layer(self.embed(ids) + self.position)

    def encode(self, prompts: list[str]) -> torch.Tensor:
        with torch.no_grad():
            return self(tokenize(prompts))


def make_transformer(layers: int, single_layers: int, heads: int, head_dim: int) -> FluxTransformer2DModel:
    """Flux's transformer class with a tiny configuration (the paper's FLUX.1-dev: 19 + 38 blocks, 24 × 128)."""
    third = head_dim // 4 // 2 * 2  # rope axes (time, row, column) must be even and sum to head_dim
    axes = (head_dim - 2 * third, third, third)
    return direct_attention(FluxTransformer2DModel(
        patch_size=1, in_channels=PATCH * PATCH, num_layers=layers, num_single_layers=single_layers,
        attention_head_dim=head_dim, num_attention_heads=heads, joint_attention_dim=TEXT_DIM, pooled_projection_dim=8,
        guidance_embeds=False, axes_dims_rope=axes))


class _DirectFluxAttention(FluxAttention):
    """FluxAttention that hands its arguments to its processor as they are.

    diffusers' forward reads the processor's signature (inspect.signature) on every call, to drop keyword arguments
    the processor does not take; the tiny model passes none, and on the CPU that inspection was about a fifth of a
    forward at the methods' batch sizes (1–8). The same processor gets the same tensors: outputs are bit-identical
    (tests/tasks/erasure/test_concept_erasure.py)."""

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, image_rotary_emb=None,
                **kwargs):
        if kwargs:
            return super().forward(hidden_states, encoder_hidden_states, attention_mask, image_rotary_emb, **kwargs)
        return self.processor(self, hidden_states, encoder_hidden_states, attention_mask, image_rotary_emb)


def direct_attention(transformer: FluxTransformer2DModel) -> FluxTransformer2DModel:
    """The tiny transformer with every FluxAttention calling its processor directly (_DirectFluxAttention)."""
    for module in transformer.modules():
        if type(module) is FluxAttention:
            module.__class__ = _DirectFluxAttention
    return transformer


def pack(images: torch.Tensor) -> torch.Tensor:
    """(B, 8, 8) -> (B, 16, 4): 2 × 2 patches as tokens, as FluxPipeline._pack_latents does."""
    b = images.shape[0]
    x = images.reshape(b, SIDE // PATCH, PATCH, SIDE // PATCH, PATCH).permute(0, 1, 3, 2, 4)
    return x.reshape(b, (SIDE // PATCH) ** 2, PATCH * PATCH)


def unpack(tokens: torch.Tensor) -> torch.Tensor:
    """(B, 16, 4) -> (B, 8, 8), the inverse of `pack`."""
    b = tokens.shape[0]
    x = tokens.reshape(b, SIDE // PATCH, SIDE // PATCH, PATCH, PATCH).permute(0, 1, 3, 2, 4)
    return x.reshape(b, SIDE, SIDE)


def _ids(device) -> tuple[torch.Tensor, torch.Tensor]:
    n = SIDE // PATCH
    img = torch.zeros(n * n, 3)
    img[:, 1], img[:, 2] = torch.arange(n * n) // n, torch.arange(n * n) % n
    return img.to(device), torch.zeros(MAX_TOKENS, 3, device=device)


def velocity(transformer: nn.Module, x: torch.Tensor, text: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """v_θ(x_t, t | prompt): x (B, 16, 4), text (B, MAX_TOKENS, TEXT_DIM), t (B,) in [0, 1]."""
    img_ids, txt_ids = _ids(x.device)
    pooled = torch.zeros(x.shape[0], 8, dtype=x.dtype, device=x.device)
    return transformer(hidden_states=x, encoder_hidden_states=text, pooled_projections=pooled, timestep=t,
                       img_ids=img_ids, txt_ids=txt_ids).sample


def euler_sample(field: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor], noise: torch.Tensor,
                 steps: int | Sequence[float], t_stop: float = 0.0) -> torch.Tensor:
    """Integrate dx/dt = v(x, t) from t = 1 (noise) down to t_stop on a grid of times 1 = t_0 > … > t_n = 0.

    Rectified flow: x_t = (1 − t) x0 + t ε, v = ε − x0, so x_{t − Δ} = x_t − Δ · v(x_t, t).
    `steps`: the number of steps of a uniform grid, or the grid itself (a Flux scheduler's shifted sigmas).
    `field(x, t, step)` gets the batch-shaped t and the step index (for attention recording). The update is
    done in float32 and cast back to the field's dtype, as FlowMatchEulerDiscreteScheduler.step does.
    """
    x = noise
    grid = torch.linspace(1.0, 0.0, steps + 1) if isinstance(steps, int) else torch.as_tensor(steps)
    for i in range(len(grid) - 1):
        if grid[i] <= t_stop + 1e-9:
            break
        t_next = max(float(grid[i + 1]), t_stop)
        v = field(x, torch.full((x.shape[0],), float(grid[i]), device=x.device), i)
        x = (x.float() + (t_next - float(grid[i])) * v.float()).to(v.dtype)
    return x


def guided_field(transformer: nn.Module, text: torch.Tensor, empty: torch.Tensor, guidance: float):
    """Classifier-free guidance: v = v_∅ + g (v_c − v_∅), conditional and empty prompt in one batch."""
    def field(x: torch.Tensor, t: torch.Tensor, step: int) -> torch.Tensor:
        both = velocity(transformer, torch.cat([x, x]), torch.cat([text, empty.expand_as(text)]), torch.cat([t, t]))
        v_c, v_u = both.chunk(2)
        return v_u + guidance * (v_c - v_u)
    return field


def sample(transformer: nn.Module, text: torch.Tensor, empty: torch.Tensor, noise: torch.Tensor, steps: int,
           guidance: float) -> torch.Tensor:
    """Images (B, 8, 8) in [−1, 1] from noise (B, 16, 4) under prompts `text`, without gradients."""
    with torch.no_grad():
        return unpack(euler_sample(guided_field(transformer, text, empty, guidance), noise, steps)).clamp(-1, 1)


class AttentionRecorder(FluxAttnProcessor):
    """Flux's joint attention computed explicitly, keeping probs A (B, H, L, L), text tokens first.

    Matches FluxAttnProcessor (same projections, QK-norms, rotary embedding, output projections);
    only the scaled-dot-product is written out so the probability map is available with gradients.
    """

    def __init__(self):
        super().__init__()
        self.probs: torch.Tensor | None = None

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, image_rotary_emb=None):
        q, k, v, eq, ek, ev = _get_qkv_projections(attn, hidden_states, encoder_hidden_states)
        q, k, v = (z.unflatten(-1, (-1, attn.head_dim)) for z in (q, k, v))  # (B, S, H, D)
        q, k = attn.norm_q(q), attn.norm_k(k)
        eq, ek, ev = (z.unflatten(-1, (-1, attn.head_dim)) for z in (eq, ek, ev))
        q = torch.cat([attn.norm_added_q(eq), q], dim=1)
        k = torch.cat([attn.norm_added_k(ek), k], dim=1)
        v = torch.cat([ev, v], dim=1)
        if image_rotary_emb is not None:
            q = apply_rotary_emb(q, image_rotary_emb, sequence_dim=1)
            k = apply_rotary_emb(k, image_rotary_emb, sequence_dim=1)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # (B, H, L, D)
        self.probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(attn.head_dim), dim=-1)  # (B, H, L, L)
        out = (self.probs @ v).transpose(1, 2).flatten(2, 3).to(q.dtype)
        n_text = encoder_hidden_states.shape[1]
        text_out, image_out = out[:, :n_text], out[:, n_text:]
        return attn.to_out[1](attn.to_out[0](image_out.contiguous())), attn.to_add_out(text_out.contiguous())


def record_last_block(transformer: nn.Module) -> AttentionRecorder:
    """Install an AttentionRecorder on the last dual-stream block (as the authors' modified Flux does)."""
    blocks = getattr(transformer, "transformer_blocks", None)
    if blocks is None:  # a peft wrapper
        blocks = transformer.get_base_model().transformer_blocks
    recorder = AttentionRecorder()
    blocks[-1].attn.set_processor(recorder)
    return recorder
