"""EraseAnything: bi-level LoRA erasure with an attention regulariser and a reverse self-contrastive loss.

Gao et al., "EraseAnything: Enabling Concept Erasure in Rectified Flow Transformers", ICML 2025,
arXiv 2412.20413 (code tomguluson92/EraseAnything). LoRA
(peft, rank 8, α 8, gaussian init) on `attn.add_q_proj` and `attn.add_k_proj` of every dual-stream
block; Algorithm 1 alternates the two levels step by step (all steps erase when λ3 + λ4 = 0):

  even steps (erasure):      L_E = λ1 L_ESD + λ2 L_attn
    L_ESD  (Eq. 2) = ‖v_θ(x_t, t | p) − [v*(x_t, t | p0) − η (v*(x_t, t | p) − v*(x_t, t | p0))]‖²,
           x_t sampled by the current model from noise down to t under p; p0 the prompt without keyword
    L_attn (Eq. 3) = Σ_q Σ_{k∈K} ‖A[:, :, q, k]‖₂ (norm over batch and heads), A the joint-attention
           probabilities of the last dual-stream block at x_t = (1 − t) x0 + t ε, x0 ∈ D_un, prompt p
  odd steps (preservation):  L_P = λ3 L_FM + λ4 L_rSCL
    L_FM   (Eq. 4) = ‖v_θ(x_t, t | p_ir) − (ε − x0)‖² on D_ir (base samples of the irrelevant prompts, as the
           paper's lower level preserves D_ir; `fm_on_irrelevant=False`: the released code's concept batch)
    L_rSCL (Eq. 5) = ℓ_c − logsumexp(ℓ_c, ℓ_1..ℓ_K), ℓ_c = cos(a_syn, a_c)/τ, ℓ_k = cos(a_syn, a_irr,k)/τ,
           a = head-0 attention to the keyword columns K averaged over K, of: the synonym prompt and the K
           irrelevant prompts at a random sampler step from one shared noise (no gradients), and the
           current training forward (a_c, with gradients)
p is the concept prompt with the paper's augmentation (shuffle w.p. 0.9, synonym w.p. 0.5), t as the
code draws it (one of the sampler's bins: 28 on FLUX.1-dev, 14 on the tiny model), AdamW (lr 1e-3, wd 1e-5),
200 steps, batch 1, λ = (1, 1e-3, 0.1, 0.1), η = 1, τ = 0.07.

Fidelity: faithful to the losses, the alternation, the LoRA placement and the weights, at CPU scale
(a 4 + 2 block Flux on 8 × 8 digits). Deviations, following the paper where its code differs:
ESD's x_t is sampled down to t and its targets come from the frozen original model (the code samples
all 28 steps, then evaluates the *current* model at a random t); L_FM on D_ir pairs rather than the
code's concept batch (switchable); synonym and irrelevant prompts are the
augmented prompt with the keyword substituted (so K is exact; the code reuses K across prompts); a
fresh shared noise per preservation step; the sampler stops at the recorded step (the rest does not
change that map). On the tiny model classifier-free guidance (scale 3) replaces Flux's guidance embedding; on a
FluxPipeline (task setting `pipeline`) the sampler is the pipeline's (guidance embedding 3, shifted sigmas), the
training forwards use guidance 3.5, K are the keyword's T5 sub-word tokens, and each synonym / irrelevant prompt
reads its own keyword tokens (they may tokenise to a different count).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from methods.erasure._common import (
    add_lora,
    augmented_prompt,
    esd_target,
    merge,
    mse,
    noisy,
    paper_timestep,
    partial_sample,
    prompt_with,
    times,
)
from tasks.erasure import RESOURCES, ErasureProblem, ErasureResult, euler_sample, record_last_block

SMOKE = {"iterations": 4}

# EraseAnything's mechanisms beside ESD's loss (Eq. 2): the attention-map regulariser L_attn (Eq. 3, weight λ2) and
# the bi-level preservation level λ3 L_FM + λ4 L_rSCL (Eqs. 4–5) that constrains the LoRA. λ2 = 0 removes L_attn;
# λ2 = λ3 = λ4 = 0 leaves the LoRA trained on L_ESD alone, every step an erasure step (solve: `preserve` is false).
SWITCHED_OFF = {"λ2 = 0 (no attention regulariser)": {"lambda_attn": 0.0},
                "λ2 = λ3 = λ4 = 0 (L_ESD alone)": {"lambda_attn": 0.0, "lambda_fm": 0.0, "lambda_rscl": 0.0}}


@dataclass(frozen=True)
class Config:
    iterations: int = 200          # training steps (config.yaml: max_train_steps 200)
    rank: int = 8                  # LoRA rank r
    alpha: float = 8.0             # LoRA α (scale α / r = 1)
    lr: float = 1e-3               # AdamW learning rate
    weight_decay: float = 1e-5     # AdamW weight decay
    lambda_esd: float = 1.0        # λ1, weight of L_ESD
    lambda_attn: float = 1e-3      # λ2, weight of the attention regulariser L_attn
    lambda_fm: float = 0.1         # λ3, weight of the flow-matching (LoRA) loss L_FM
    lambda_rscl: float = 0.1       # λ4, weight of the reverse self-contrastive loss L_rSCL
    eta: float = 1.0               # η, negative guidance of the ESD target
    tau: float = 0.07              # τ, InfoNCE temperature
    shuffle_p: float = 0.9         # probability of shuffling the prompt's words
    synonym_p: float = 0.5         # probability of replacing the keyword by a synonym
    modules: tuple[str, ...] = ("add_q_proj", "add_k_proj")  # LoRA targets in the dual-stream blocks
    fm_on_irrelevant: bool = True  # L_FM on D_ir (the paper's preservation set); False: on the concept batch (the code)

    def __post_init__(self) -> None:
        weights = (self.lambda_esd, self.lambda_attn, self.lambda_fm, self.lambda_rscl)
        if self.iterations < 1 or self.rank < 1 or self.alpha <= 0 or self.lr <= 0 or min(weights) < 0:
            raise ValueError(f"need iterations, rank >= 1, alpha, lr > 0 and λ >= 0; got {self}")
        if self.tau <= 0 or not 0 <= self.shuffle_p <= 1 or not 0 <= self.synonym_p <= 1 or not self.modules:
            raise ValueError(f"need tau > 0, probabilities in [0, 1] and at least one LoRA module; got {self}")


def attention_loss(probs: torch.Tensor, keys: list[int]) -> torch.Tensor:
    """Eq. 3: Σ_q Σ_{k∈K} ‖A[:, :, q, k]‖₂ for probs A (B, H, L, L), the norm over batch and heads."""
    columns = probs[:, :, :, keys]                      # (B, H, L, |K|)
    return columns.pow(2).sum(dim=(0, 1)).sqrt().sum()


def keyword_attention(probs: torch.Tensor, keys: list[int]) -> torch.Tensor:
    """a ∈ R^{B×L}: head 0, columns K, transposed to (B, |K|, L) and averaged over K (infoNCE.py)."""
    return probs[:, 0, :, keys].transpose(1, 2).mean(dim=1)


def rscl_loss(a_c: torch.Tensor, a_syn: torch.Tensor, a_irr: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. 5: log softmax_c([ℓ_c, ℓ_1..ℓ_K]) with ℓ = cos(a_syn, ·)/τ; a_c, a_syn (B, L), a_irr (K, B, L)."""
    syn = torch.nn.functional.normalize(a_syn, dim=-1)
    l_c = (syn * torch.nn.functional.normalize(a_c, dim=-1)).sum(-1) / tau            # (B,)
    l_k = (syn[None] * torch.nn.functional.normalize(a_irr, dim=-1)).sum(-1) / tau    # (K, B)
    logits = torch.cat([l_c[None], l_k])                                               # (1 + K, B)
    return (l_c - torch.logsumexp(logits, dim=0)).mean()


def _erasure_loss(model, recorder, problem, config, words, positions, x0, t, rng, generator):
    """λ1 L_ESD + λ2 L_attn for one augmented concept prompt (words, keyword word positions)."""
    backbone = problem.backbone
    keys = backbone.keyword_tokens(words, positions)
    text_p = problem.encode([" ".join(words)])
    text_0 = problem.encode([prompt_with(words, positions[0], None)])
    z = partial_sample(model, problem, text_p, backbone.randn(x0.shape, generator), t)
    tt = times(problem, t)
    with model.disable_adapter():  # v*: the frozen original model
        target = esd_target(backbone, model, z, tt, text_p, text_0, config.eta)
    l_esd = mse(backbone.velocity(model, z, text_p, tt), target)
    backbone.velocity(model, noisy(x0, backbone.randn(x0.shape, generator), tt), text_p, tt)
    l_attn = attention_loss(recorder.probs.float(), keys)
    return config.lambda_esd * l_esd + config.lambda_attn * l_attn, {"esd": float(l_esd.detach()),
                                                                     "attn": float(l_attn.detach())}


def _anchor_maps(model, recorder, problem, words, positions, rng, generator) -> torch.Tensor:
    """Keyword attention (1 + K, 1, L) of the synonym and the irrelevant prompts at a random sampler step.

    Each prompt is the augmented one with its keyword words substituted; its own keyword tokens are read
    (the same positions as the concept's on the tiny model's one-token words)."""
    backbone = problem.backbone
    synonym = problem.synonyms[rng.integers(len(problem.synonyms))]
    substituted = [[w if i in positions else v for i, v in enumerate(words)] for w in (synonym, *problem.irrelevant)]
    keys = [backbone.keyword_tokens(ws, positions) for ws in substituted]
    text = problem.encode([" ".join(ws) for ws in substituted])
    noise = backbone.noise(1, generator).expand(len(substituted), -1, -1)  # one shared z_T
    step = int(rng.integers(problem.sample_steps))
    field, captured = backbone.field(model, text), {}

    def recording(x, t, i):
        v = field(x, t, i)
        captured["probs"] = recorder.probs[: len(substituted)]  # the conditional rows (first half of a CFG batch)
        return v

    with torch.no_grad():
        euler_sample(recording, noise, backbone.grid, t_stop=backbone.step_end(step))
    probs = captured["probs"].float()
    return torch.stack([keyword_attention(probs[j:j + 1], k) for j, k in enumerate(keys)])


def _preservation_loss(model, recorder, problem, config, words, positions, x0, t, rng, generator, irrelevant):
    """λ3 L_FM + λ4 L_rSCL; the concept prompt's training forward gives a_c (and L_FM, as in the code)."""
    backbone = problem.backbone
    tt = times(problem, t)
    noise = backbone.randn(x0.shape, generator)
    v = backbone.velocity(model, noisy(x0, noise, tt), problem.encode([" ".join(words)]), tt)
    a_c = keyword_attention(recorder.probs.float(), backbone.keyword_tokens(words, positions))
    l_fm = mse(v, noise - x0)
    if irrelevant is not None:  # L_FM on a D_ir pair instead (the paper's description of the preservation set)
        prompts, images = irrelevant
        j = int(rng.integers(len(prompts)))
        noise = backbone.randn(x0.shape, generator)
        v = backbone.velocity(model, noisy(images[j][None], noise, tt), problem.encode([prompts[j]]), tt)
        l_fm = mse(v, noise - images[j][None])
    loss, curves = config.lambda_fm * l_fm, {"fm": float(l_fm.detach())}
    if config.lambda_rscl > 0:
        anchors = _anchor_maps(model, recorder, problem, words, positions, rng, generator)
        l_rscl = rscl_loss(a_c, anchors[0], anchors[1:], config.tau)
        loss, curves = loss + config.lambda_rscl * l_rscl, {**curves, "rscl": float(l_rscl.detach())}
    return loss, curves


def _irrelevant_data(problem: ErasureProblem, n: int, generator: torch.Generator):
    """D_ir: n base-model samples of the irrelevant concepts' prompts (templates in turn)."""
    prompts = [problem.templates[i % len(problem.templates)].format(problem.irrelevant[i % len(problem.irrelevant)])
               for i in range(n)]
    return prompts, problem.generate_latents(problem.transformer, prompts, problem.backbone.noise(n, generator))


@method(family="erasure", config=Config, hardware=("cpu", "cuda"), resources=RESOURCES, smoke=SMOKE)
def solve(problem: ErasureProblem, config: Config, ctx: RunContext) -> ErasureResult:
    rng, generator = ctx.rng, ctx.torch_generator
    model = add_lora(problem.transformer, config.rank, config.alpha, config.modules, generator)
    recorder = record_last_block(model)
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(params, lr=config.lr, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=config.weight_decay)
    preserve = config.lambda_fm + config.lambda_rscl > 0
    irrelevant = _irrelevant_data(problem, len(problem.concept_images), generator) if config.fm_on_irrelevant else None
    for step in range(config.iterations):
        words, positions = augmented_prompt(problem, rng, config.shuffle_p, config.synonym_p)
        x0 = problem.concept_images[rng.integers(len(problem.concept_images))][None]  # (1, tokens, channels) ∈ D_un
        t = paper_timestep(rng, problem.sample_steps)
        if preserve and step % 2 == 1:
            loss, curves = _preservation_loss(model, recorder, problem, config, words, positions, x0, t, rng,
                                              generator, irrelevant)
        else:
            loss, curves = _erasure_loss(model, recorder, problem, config, words, positions, x0, t, rng, generator)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        ctx.log(step, loss=float(loss.detach()), **curves)
        ctx.progress((step + 1) / config.iterations)
        ctx.check_deadline()
    return ErasureResult(transformer=merge(model))
