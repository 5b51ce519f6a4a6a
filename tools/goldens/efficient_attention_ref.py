#!/usr/bin/env python3
"""Reference attention kinds of config.json's "vkf_attention" (issue 16), written from the papers'
equations, patched into transformers 4.38.2's BertSelfAttention and LlamaAttention so that the rest
of each model is Hugging Face's own. Computed in float64 (the modules cast q, k, v and back).

Kinds (docs/efficient-attention.md lists the keys and the tensors):
  linear     phi(x) = elu(x) + 1                                  (Katharopoulos et al. 2020, eq. 7)
  performer  phi(x) = exp(w_i . x' - |x'|^2 / 2) / sqrt(M)        (Choromanski et al., FAVOR+ eq. 5)
  rfa        phi(x) = sqrt(1/M) [sin(w_i . x'), cos(w_i . x')]    (Peng et al. 2021, eq. 2), with the
             optional gate S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) v_t^T, g_t = sigmoid(w_g . x_t + b_g)
  linformer  softmax(q (E k)^T / sqrt(d)) (F v)                   (Wang et al. 2020, eq. 7)
  nystrom    transformers 4.38.2's own NystromformerSelfAttention (segment_means_seq_len = N)
             sharing the BERT layer's query, key and value
with x' = scale x (scale 0: d^-1/4). Attention of the linear family:
  out_i = phi(q_i)^T sum_j phi(k_j) v_j^T / (phi(q_i) . sum_j phi(k_j) + eps)
over every j (encoder) or j <= i (decoder; the quadratic masked form, or the gate's recurrence).
A padded key (attention mask 0) is left out: phi(k) = 0 and g = 1; Linformer zeroes its k and v
rows (the paper's zero padding up to P, the first N columns of E and F).
"""
import math

import torch
import torch.nn.functional as F
from transformers.models.bert import modeling_bert
from transformers.models.llama import modeling_llama
from transformers.models.nystromformer import modeling_nystromformer
from transformers import NystromformerConfig


M64 = (1 << 64) - 1


def vkf_random_features(seed, m, d, orthogonal):
    """omega [m, d] as graph/ir/random_features.c draws it (a line-by-line port: splitmix64,
    Box-Muller in double, modified Gram-Schmidt with redraws, each row rescaled to a Gaussian
    vector's norm), so a checkpoint without vkf_omega has the same omega here as on the device."""
    st = {"s": seed & M64, "spare": None}

    def splitmix():
        st["s"] = (st["s"] + 0x9E3779B97F4A7C15) & M64
        z = st["s"]
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def uniform():
        return ((splitmix() >> 11) + 0.5) / 9007199254740992.0

    def gaussian():
        if st["spare"] is not None:
            g, st["spare"] = st["spare"], None
            return g
        u, v = uniform(), uniform()
        radius, angle = math.sqrt(-2.0 * math.log(u)), 6.283185307179586 * v
        st["spare"] = radius * math.sin(angle)
        return radius * math.cos(angle)

    if not orthogonal:
        return torch.tensor([gaussian() for _ in range(m * d)], dtype=torch.float32).view(m, d)
    out = []
    for row0 in range(0, m, d):
        a = [[gaussian() for _ in range(d)] for _ in range(d)]
        for i in range(d):
            while True:
                for j in range(i):
                    dot = 0.0
                    for k in range(d):
                        dot += a[i][k] * a[j][k]
                    for k in range(d):
                        a[i][k] -= dot * a[j][k]
                norm = 0.0
                for k in range(d):
                    norm += a[i][k] * a[i][k]
                norm = math.sqrt(norm)
                if norm > 1e-6:
                    a[i] = [x / norm for x in a[i]]
                    break
                a[i] = [gaussian() for _ in range(d)]
        out += [[float(torch.tensor(x, dtype=torch.float32)) for x in row] for row in a[: min(d, m - row0)]]
    for i in range(m):
        norm = 0.0
        for _ in range(d):
            g = gaussian()
            norm += g * g
        norm = math.sqrt(norm)
        out[i] = [x * norm for x in out[i]]
    return torch.tensor(out, dtype=torch.float64).float()


def features(kind, x, omega, scale):
    """x [B, H, N, D] -> phi(x) [B, H, N, F]."""
    if kind == "linear":
        return F.elu(x) + 1
    d = x.shape[-1]
    xs = x * (scale if scale else d ** -0.25)
    proj = xs @ omega.t()  # [B, H, N, M]
    m = omega.shape[0]
    if kind == "performer":
        return torch.exp(proj - (xs * xs).sum(-1, keepdim=True) / 2) / math.sqrt(m)
    return math.sqrt(1.0 / m) * torch.cat([torch.sin(proj), torch.cos(proj)], -1)


def linear_family(kind, q, k, v, keep, causal, omega, scale, eps, gate=None):
    """q, k, v [B, H, N, D] float64; keep [B, N] (1 kept); gate [B, H, N] probabilities or None."""
    pq = features(kind, q, omega, scale)
    pk = features(kind, k, omega, scale) * keep[:, None, :, None]
    if not causal:
        s = pk.transpose(-1, -2) @ v  # [B, H, F, D]
        z = pk.sum(-2)  # [B, H, F]
        return (pq @ s) / ((pq * z[:, :, None, :]).sum(-1, keepdim=True) + eps)
    if gate is None:
        n = q.shape[2]
        a = (pq @ pk.transpose(-1, -2)) * torch.tril(torch.ones(n, n, dtype=q.dtype))
        return (a @ v) / (a.sum(-1, keepdim=True) + eps)
    g = torch.where(keep[:, None, :] > 0, gate, torch.ones_like(gate))
    b, h, n, f = pk.shape
    s = torch.zeros(b, h, f, v.shape[-1], dtype=q.dtype)
    z = torch.zeros(b, h, f, dtype=q.dtype)
    out = []
    for t in range(n):
        gt = g[:, :, t, None]
        s = gt[..., None] * s + (1 - gt[..., None]) * pk[:, :, t, :, None] * v[:, :, t, None, :]
        z = gt * z + (1 - gt) * pk[:, :, t]
        qt = pq[:, :, t]
        out.append((qt[:, :, None, :] @ s)[:, :, 0] / ((qt * z).sum(-1, keepdim=True) + eps))
    return torch.stack(out, 2)


def linformer(q, k, v, keep, e, f):
    n = k.shape[2]
    r = keep[:, None, :, None]
    k, v = k * r, v * r
    e, f = e[..., :n].to(q.dtype), f[..., :n].to(q.dtype)
    kp, vp = e @ k, f @ v  # [B, H, kp, D]
    w = torch.softmax(q @ kp.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)
    return w @ vp


class Kernel(torch.nn.Module):
    """The extra tensors of one layer's attention (registered on the attention module under the
    names vkformer reads) and the kind's computation."""

    def __init__(self, spec, hidden, heads, head_dim, positions, shared_e=None, gen=None,
                 layer=0):
        super().__init__()
        self.spec = spec
        self.kind = spec["kind"]
        self.causal = False
        if self.kind in ("performer", "rfa"):
            m = spec.get("features", 64)
            omega = torch.randn(m, head_dim, generator=gen, dtype=torch.float64)
            if spec.get("orthogonal", self.kind == "performer"):
                blocks = []
                for i in range(0, m, head_dim):
                    qm, _ = torch.linalg.qr(torch.randn(head_dim, head_dim, generator=gen,
                                                        dtype=torch.float64))
                    blocks.append(qm.t()[: min(head_dim, m - i)])
                norms = torch.randn(m, head_dim, generator=gen, dtype=torch.float64).norm(dim=1)
                omega = torch.cat(blocks) * norms[:, None]
            if spec.get("_drawn"):  # not stored: the draw of seed + layer
                omega = vkf_random_features(spec.get("seed", 0) + layer, m, head_dim,
                                            spec.get("orthogonal", self.kind == "performer"))
            self.register_buffer("omega", omega.float())
        if self.kind == "rfa" and spec.get("gate"):
            self.gate = torch.nn.Linear(hidden, heads)
        if self.kind == "nystrom":
            m = spec["landmarks"]
            cfg = NystromformerConfig(hidden_size=hidden, num_attention_heads=heads,
                                      num_landmarks=m, segment_means_seq_len=m + 1,
                                      conv_kernel_size=spec.get("conv_kernel_size"),
                                      inv_coeff_init_option=False, attention_probs_dropout_prob=0.0)
            self.nys = modeling_nystromformer.NystromformerSelfAttention(cfg)
            if spec.get("inv_init") == "per_head":
                self.nys.init_option = "per_head"  # what inv_coeff_init_option selects in HF
        if self.kind == "linformer":
            kp, share = spec["k"], spec.get("sharing", "none")
            shape = (heads, kp, positions) if share == "none" else (kp, positions)
            mk = lambda: torch.nn.Parameter(torch.randn(*shape, generator=gen) / math.sqrt(positions))
            if share == "layerwise":
                self.shared = [shared_e]
            else:
                self.e = mk()
                if share in ("none", "headwise"):
                    self.f = mk()

    def forward(self, hidden, q, k, v, keep):
        dt = q.dtype
        q, k, v, keep = q.double(), k.double(), v.double(), keep.double()
        if self.kind == "linformer":
            share = self.spec.get("sharing", "none")
            e = self.shared[0] if share == "layerwise" else self.e
            f = self.f if share in ("none", "headwise") else e
            return linformer(q, k, v, keep, e, f).to(dt)
        gate = None
        if hasattr(self, "gate"):
            gate = torch.sigmoid(self.gate(hidden).double()).permute(0, 2, 1)
        omega = self.omega.double() if hasattr(self, "omega") else None
        out = linear_family(self.kind, q, k, v, keep, self.causal, omega,
                            self.spec.get("scale", 0.0), self.spec.get("eps", 1e-6), gate)
        return out.to(dt)


def bert_forward(self, hidden_states, attention_mask=None, *args, **kwargs):
    b, n, _ = hidden_states.shape
    if self.vkf.kind == "nystrom":
        self.vkf.nys.seq_len = n
        return self.vkf.nys(hidden_states, attention_mask)
    split = lambda x: x.view(b, n, self.num_attention_heads, self.attention_head_size).transpose(1, 2)
    q, k, v = split(self.query(hidden_states)), split(self.key(hidden_states)), split(self.value(hidden_states))
    keep = (attention_mask[:, 0, 0, :] == 0).to(q.dtype) if attention_mask is not None else torch.ones(b, n)
    ctx = self.vkf(hidden_states, q, k, v, keep)
    return (ctx.transpose(1, 2).reshape(b, n, self.all_head_size),)


def llama_forward(self, hidden_states, attention_mask=None, position_ids=None, *args, **kwargs):
    b, n, _ = hidden_states.shape
    split = lambda x: x.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
    q, k, v = split(self.q_proj(hidden_states)), split(self.k_proj(hidden_states)), split(self.v_proj(hidden_states))
    cos, sin = self.rotary_emb(v, position_ids)
    q, k = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    # The 4-D mask's last row: a key is masked there only for padding (every j <= N - 1 is causal).
    keep = (attention_mask[:, 0, -1, :n] == 0).to(q.dtype) if attention_mask is not None else torch.ones(b, n)
    ctx = self.vkf(hidden_states, q, k, v, keep)
    return self.o_proj(ctx.transpose(1, 2).reshape(b, n, -1)), None, None


def patch(model, spec, gen):
    """Swaps every self-attention of a BertModel or LlamaForCausalLM for `spec`'s kind, adding its
    tensors to the module tree under vkformer's names (vkf_omega, vkf_gate.*, vkf_linformer_*)."""
    cfg = model.config
    dh = cfg.hidden_size // cfg.num_attention_heads
    base = model.model if hasattr(model, "model") else model
    shared = None
    if spec.get("sharing") == "layerwise":
        shared = torch.nn.Parameter(
            torch.randn(spec["k"], cfg.max_position_embeddings, generator=gen) /
            math.sqrt(cfg.max_position_embeddings))
        base.vkf_linformer_e = shared
    if hasattr(base, "encoder"):
        attns = [layer.attention.self for layer in base.encoder.layer]
        cls, causal = modeling_bert.BertSelfAttention, False
    else:
        attns = [layer.self_attn for layer in base.layers]
        cls, causal = modeling_llama.LlamaAttention, True
    for layer, a in enumerate(attns):
        kern = Kernel(spec, cfg.hidden_size, cfg.num_attention_heads, dh,
                      cfg.max_position_embeddings, shared, gen, layer)
        kern.causal = causal
        if kern.kind == "nystrom":
            kern.nys.query, kern.nys.key, kern.nys.value = a.query, a.key, a.value
        a.vkf = kern
        a.forward = (bert_forward if cls is modeling_bert.BertSelfAttention else llama_forward).__get__(a)


def renamed_state_dict(model):
    """state_dict with the kernels' tensors under vkformer's names: <attention>.vkf_omega,
    <attention>.vkf_gate.{weight,bias}, <attention>.vkf_linformer_{e,f},
    <attention>.vkf_nystrom_conv.weight."""
    out = {}
    for name, t in model.state_dict().items():
        if any(f"vkf.nys.{p}." in name for p in ("query", "key", "value")):
            continue  # the layer's own projections
        name = name.replace("vkf.nys.conv.", "vkf_nystrom_conv.")
        name = (name.replace("vkf.omega", "vkf_omega").replace("vkf.gate.", "vkf_gate.")
                .replace("vkf.e", "vkf_linformer_e").replace("vkf.f", "vkf_linformer_f"))
        out[name] = t.contiguous()
    return out
