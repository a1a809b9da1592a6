"""The text-to-image backbones an erasure problem hands to the methods: one interface, two models.

Every method and the judge's sampler talk to a `Backbone` only:
    encode(prompts) -> Text            token embeddings (the T5 analogue) and pooled embeddings (CLIP's)
    velocity(model, x, text, t)        one conditional forward v_θ(x_t, t | text) (the training forward)
    field(model, text)                 the sampler's velocity field (guidance included)
    sample(model, text, noise, t_stop) the rectified-flow Euler sampler from noise (t = 1) down to t_stop
    step_end(step)                     the time at which sampler step `step` ends (t of the recorded map)
    decode(latents)                    images on the CPU for the judge
    keyword_tokens(words, positions)   token indices K of the keyword words in the prompt " ".join(words)
    noise(n, generator), randn(shape, generator)   Gaussian latents on the backbone's device and dtype
Latents are packed: (B, tokens, channels), 2 × 2 patches per token as FluxPipeline packs them.

* `TinyBackbone`: the CPU world of tasks/erasure/_flux.py (the digit model, word-level text encoder,
  classifier-free guidance from the empty prompt, a uniform grid of the task's steps (14); latents are the pixels).
* `PipelineBackbone`: a diffusers `FluxPipeline` (FLUX.1-dev / schnell or a directory written by
  `save_pretrained`). `encode` is `pipe.encode_prompt` (T5 token embeddings padded to `max_tokens`,
  CLIP pooled embedding); the sampler is FluxPipeline's own: the FlowMatchEulerDiscreteScheduler's
  sigmas with the resolution-dependent shift μ = calculate_shift(image tokens) and the timesteps it
  feeds the transformer (t / 1000 in the latents' dtype), the Euler update in float32; Flux-dev's
  distilled guidance embedding (no classifier-free guidance), none for guidance-free models (schnell);
  latent image ids from `_prepare_latent_image_ids`, packing from `_pack_latents`, decoding with the VAE's
  scaling and shift factors. Training forwards use `train_guidance` (the paper: 3.5), sampling `guidance`
  (the paper: 3). K are the T5 sub-word tokens whose characters overlap the keyword (offset mapping of the
  pipeline's own fast T5 tokenizer), the columns EraseAnything's L_attn and L_rSCL read.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

from tasks.erasure._flux import PAD, TextEncoder, euler_sample, guided_field, tokenize, unpack, velocity


@dataclass(frozen=True)
class Text:
    tokens: torch.Tensor   # (B, L, d) per-token embeddings, read by the joint attention
    pooled: torch.Tensor   # (B, p) pooled embedding, read by the AdaLN modulation (zeros for the tiny model)


class TinyBackbone:
    """The tiny digit model: word-level contextual encoder, CFG sampler, latents = 8 × 8 pixels packed."""

    pad_word = PAD
    batch = None  # everything in one batch (the numbers of the pinned CPU claims depend on it)

    def __init__(self, transformer: nn.Module, encoder: TextEncoder, steps: int, guidance: float, device: str = "cpu"):
        self.transformer = transformer.to(device)
        self.encoder = encoder.to(device)
        self.steps, self.guidance, self.device, self.dtype = steps, guidance, torch.device(device), torch.float32
        self.latent_shape = (16, 4)
        self.grid = steps  # a uniform grid of `steps` Euler steps from t = 1 to 0

    def encode(self, prompts: list[str]) -> Text:
        with torch.no_grad():
            tokens = self.encoder(tokenize(prompts).to(self.device))
        return Text(tokens, torch.zeros(len(prompts), 8, device=self.device))

    def velocity(self, model: nn.Module, x: torch.Tensor, text: Text, t: torch.Tensor) -> torch.Tensor:
        return velocity(model, x, text.tokens, t)

    def field(self, model: nn.Module, text: Text) -> Callable:
        """Classifier-free guidance from the empty prompt; the conditional rows come first in the batch."""
        return guided_field(model, text.tokens, self.encode([""]).tokens, self.guidance)

    def step_end(self, step: int) -> float:
        return 1.0 - (step + 1) / self.steps

    def sample(self, model: nn.Module, text: Text, noise: torch.Tensor, t_stop: float = 0.0) -> torch.Tensor:
        """x_{t_stop} from noise without gradients; at t = 0 the latents are pixels, clamped to [−1, 1]."""
        with torch.no_grad():
            x = euler_sample(self.field(model, text), noise, self.grid, t_stop)
        return x.clamp(-1, 1) if t_stop <= 0 else x

    def decode(self, latents: torch.Tensor) -> np.ndarray:
        return unpack(latents).cpu().numpy()  # (B, 8, 8) in [−1, 1]

    def keyword_tokens(self, words: list[str], positions: list[int]) -> list[int]:
        return list(positions)  # one token per word

    def randn(self, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
        return torch.randn(shape, generator=generator, device=generator.device).to(self.device, self.dtype)

    def noise(self, n: int, generator: torch.Generator) -> torch.Tensor:
        return self.randn((n, *self.latent_shape), generator)


def load_pipeline(name: str, device: str):
    """FluxPipeline.from_pretrained (hub id or save_pretrained directory): bfloat16 on CUDA, float32 on the CPU."""
    from diffusers import FluxPipeline

    from bench.toolkit.models import from_pretrained
    dtype = torch.bfloat16 if torch.device(device).type == "cuda" else torch.float32
    pipe, _ = from_pretrained(FluxPipeline, name, "FLUX pipeline", with_tokenizer=False, dtype=dtype)
    pipe.set_progress_bar_config(disable=True)
    for part in (pipe.transformer, pipe.text_encoder, pipe.text_encoder_2, pipe.vae):
        part.requires_grad_(False).eval()
    return pipe.to(device)


class PipelineBackbone:
    """A FluxPipeline's transformer, text encoders, scheduler and VAE behind the backbone interface."""

    def __init__(self, pipe, steps: int, guidance: float, train_guidance: float, resolution: int, max_tokens: int,
                 batch: int):
        from diffusers.pipelines.flux.pipeline_flux import calculate_shift
        self.pipe, self.transformer = pipe, pipe.transformer
        self.steps, self.guidance, self.train_guidance, self.batch = steps, guidance, train_guidance, batch
        self.device, self.dtype = pipe.transformer.device, pipe.transformer.dtype
        self.max_tokens, self.resolution = max_tokens, resolution
        self.pad_word = pipe.tokenizer_2.pad_token
        side = 2 * (resolution // (pipe.vae_scale_factor * 2))        # latent side, as prepare_latents computes it
        self.channels = pipe.transformer.config.in_channels // 4
        self.latent_shape = ((side // 2) ** 2, self.channels * 4)
        self.img_ids = pipe._prepare_latent_image_ids(1, side // 2, side // 2, self.device, self.dtype)
        self.txt_ids = torch.zeros(max_tokens, 3, device=self.device, dtype=self.dtype)
        # FluxPipeline.__call__'s schedule: sigmas linspace(1, 1/n, n), shifted by μ(image tokens), then 0 appended
        config = pipe.scheduler.config
        mu = calculate_shift(self.latent_shape[0], config.get("base_image_seq_len", 256),
                             config.get("max_image_seq_len", 4096), config.get("base_shift", 0.5),
                             config.get("max_shift", 1.15))
        scheduler = copy.deepcopy(pipe.scheduler)
        scheduler.set_timesteps(sigmas=np.linspace(1.0, 1 / steps, steps), mu=mu, device="cpu")
        self.grid = scheduler.sigmas.float()                           # (steps + 1,), the Euler grid
        self.timesteps = scheduler.timesteps.float()                   # (steps,), sigma · 1000 as the pipeline
                                                                       # feeds them

    def encode(self, prompts: list[str]) -> Text:
        with torch.no_grad():
            tokens, pooled, _ = self.pipe.encode_prompt(prompts, prompt_2=None, device=self.device,
                                                        max_sequence_length=self.max_tokens)
        return Text(tokens.to(self.dtype), pooled.to(self.dtype))

    def _forward(self, model: nn.Module, x: torch.Tensor, text: Text, t: torch.Tensor, guidance: float):
        g = None
        if self.transformer.config.guidance_embeds:  # Flux-dev: the distilled guidance embedding (no CFG)
            g = torch.full((x.shape[0],), guidance, device=x.device, dtype=torch.float32)
        return model(hidden_states=x, timestep=t, guidance=g, pooled_projections=text.pooled,
                     encoder_hidden_states=text.tokens, txt_ids=self.txt_ids, img_ids=self.img_ids,
                     return_dict=False)[0]

    def velocity(self, model: nn.Module, x: torch.Tensor, text: Text, t: torch.Tensor) -> torch.Tensor:
        return self._forward(model, x, text, t, self.train_guidance)

    def field(self, model: nn.Module, text: Text) -> Callable:
        def field(x: torch.Tensor, t: torch.Tensor, step: int) -> torch.Tensor:
            timestep = self.timesteps[step].to(x.device).expand(x.shape[0]).to(x.dtype) / 1000  # as FluxPipeline
            return self._forward(model, x, text, timestep, self.guidance)
        return field

    def step_end(self, step: int) -> float:
        return float(self.grid[step + 1])

    def sample(self, model: nn.Module, text: Text, noise: torch.Tensor, t_stop: float = 0.0) -> torch.Tensor:
        with torch.no_grad():
            return euler_sample(self.field(model, text), noise, self.grid, t_stop)

    def decode(self, latents: torch.Tensor) -> np.ndarray:
        """(B, 3, H, W) in [0, 1]: unpack, undo the VAE's scaling / shift, decode, denormalise (as the pipeline)."""
        vae = self.pipe.vae
        x = self.pipe._unpack_latents(latents, self.resolution, self.resolution, self.pipe.vae_scale_factor)
        x = x / vae.config.scaling_factor + vae.config.shift_factor
        with torch.no_grad():
            images = vae.decode(x.to(vae.dtype), return_dict=False)[0]
        return (images.float() / 2 + 0.5).clamp(0, 1).cpu().numpy()

    def keyword_tokens(self, words: list[str], positions: list[int]) -> list[int]:
        """T5 token indices whose character spans overlap the words at `positions` of " ".join(words)."""
        starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
        spans = [(int(starts[i]), int(starts[i]) + len(words[i])) for i in positions]
        encoded = self.pipe.tokenizer_2(" ".join(words), max_length=self.max_tokens, truncation=True,
                                        return_offsets_mapping=True)
        return [j for j, (a, b) in enumerate(encoded["offset_mapping"])
                if b > a and any(a < end and b > start for start, end in spans)]

    def randn(self, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
        return torch.randn(shape, generator=generator, device=generator.device).to(self.device, self.dtype)

    def noise(self, n: int, generator: torch.Generator) -> torch.Tensor:
        return self.randn((n, *self.latent_shape), generator)
