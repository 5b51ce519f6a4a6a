#!/usr/bin/env python3
"""Reference long-short attention (Zhu et al. 2021, "Long-Short Transformer: Efficient Transformers
for Language and Vision", eq. 3-5 and the causal form of section 3.3), written from the paper's
equations and patched into transformers 4.38.2's LlamaAttention, GPT2Attention and
BertSelfAttention, so that the
rest of each model is Hugging Face's own. Computed in float64, with dense N x N matrices on
purpose: an independent check of vkformer's block-sparse and decode-step forms.

Per key-value head, k and v [N, Dh] the layer's keys and values (after the rotary embedding):
  DualLN   k~ = LN_L(k), v~ = LN_L(v) over Dh (dual_ln; else k~ = k, v~ = v)
  long     per segment (bidirectional: the whole sequence; causal: segments of l positions, a
           last partial one dropped) P = softmax over the segment's positions of k~ W_p [l, r]
           (padding: -1e30 added), K^ = LN_G(P^T k~), V^ = LN_G(P^T v~): r rows per segment
  short    query t sees positions p with s*w - w//2 <= p < s*w + w + w//2, s = t // w (causal:
           also p <= t); a padded key gets -1e30 added to its score
  one softmax over [K^ rows visible to t; the window] (scale 1/sqrt(Dh)); causal: row g is
           visible iff g // r < (t + 1) // l (its segment ended at or before t)
"""
import math

import torch
from transformers.models.bert import modeling_bert
from transformers.models.llama import modeling_llama

MASKED = 1e30


def layer_norm(x, ln, eps):
    if ln is None:
        return x
    g, b = ln
    return torch.nn.functional.layer_norm(x, x.shape[-1:], g.double(), b.double(), eps)


def long_short(q, k, v, keep, causal, cfg, lw, eps):
    """q [B, H, N, Dh], k and v [B, Hkv, N, Dh], keep [B, N] (1 kept) or None -> [B, H, N, Dh]."""
    q, k, v = q.double(), k.double(), v.double()
    b, h, n, dh = q.shape
    hkv = k.shape[1]
    w, r = cfg["window"], cfg["rank"]
    l = cfg.get("segment", w) if causal else n
    segs = n // l
    k = layer_norm(k, lw.get("local"), eps)
    v = layer_norm(v, lw.get("local"), eps)
    pad = torch.zeros(b, n, dtype=torch.float64) if keep is None else (keep.double() - 1.0) * MASKED
    logits = torch.einsum("bhnd,hdr->bhnr", k, lw["proj"].double()) + pad[:, None, :, None]
    kc, vc = [], []
    for s in range(segs):
        p = torch.softmax(logits[:, :, s * l:(s + 1) * l, :], dim=2)  # over positions
        kc.append(torch.einsum("bhlr,bhld->bhrd", p, k[:, :, s * l:(s + 1) * l]))
        vc.append(torch.einsum("bhlr,bhld->bhrd", p, v[:, :, s * l:(s + 1) * l]))
    kc = layer_norm(torch.cat(kc, 2), lw.get("global"), eps) if kc else k[:, :, :0]
    vc = layer_norm(torch.cat(vc, 2), lw.get("global"), eps) if vc else v[:, :, :0]
    groups = h // hkv
    kall = torch.cat([kc, k], 2).repeat_interleave(groups, 1)
    vall = torch.cat([vc, v], 2).repeat_interleave(groups, 1)
    g_rows = kc.shape[2]
    t = torch.arange(n)[:, None]
    p = torch.arange(n)[None, :]
    start = t // w * w
    local = (p >= start - w // 2) & (p < start + w + w // 2)
    if causal:
        local &= p <= t
        glob = (torch.arange(g_rows)[None, :] // r) < ((t + 1) // l)
    else:
        glob = torch.ones(n, g_rows, dtype=torch.bool)
    visible = torch.cat([glob, local], 1)  # [N, G + N]
    scores = q @ kall.transpose(-1, -2) / math.sqrt(dh)
    scores = scores + torch.cat([torch.zeros(b, g_rows, dtype=torch.float64), pad], 1)[:, None, None]
    scores = scores.masked_fill(~visible, float("-inf"))
    return torch.softmax(scores, -1) @ vall


def llama_forward(self, hidden_states, attention_mask=None, position_ids=None, *args, **kwargs):
    """LlamaAttention's eager forward without a cache, long-short in place of softmax."""
    b, n, _ = hidden_states.shape
    q = self.q_proj(hidden_states).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
    k = self.k_proj(hidden_states).view(b, n, self.num_key_value_heads, self.head_dim).transpose(1, 2)
    v = self.v_proj(hidden_states).view(b, n, self.num_key_value_heads, self.head_dim).transpose(1, 2)
    cos, sin = self.rotary_emb(v, position_ids)
    q, k = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    out = long_short(q, k, v, self.vkf_keep[0], True, self.vkf_cfg, self.vkf_lw, self.vkf_eps)
    out = out.to(hidden_states.dtype).transpose(1, 2).reshape(b, n, -1)
    return self.o_proj(out), None, None


def gpt2_attn(self, query, key, value, attention_mask=None, head_mask=None):
    """GPT2Attention._attn (eager, self-attention, no cache), long-short in place of softmax."""
    out = long_short(query, key, value, self.vkf_keep[0], True, self.vkf_cfg, self.vkf_lw,
                     self.vkf_eps)
    return out.to(value.dtype), None


def bert_forward(self, hidden_states, attention_mask=None, *args, **kwargs):
    """BertSelfAttention.forward (self-attention, no cache), long-short in place of softmax. The
    extended mask is 0 at kept keys."""
    b, n, _ = hidden_states.shape
    def split(x):
        return x.view(b, n, self.num_attention_heads, self.attention_head_size).transpose(1, 2)
    q, k, v = split(self.query(hidden_states)), split(self.key(hidden_states)), split(self.value(hidden_states))
    keep = None if attention_mask is None else (attention_mask[:, 0, 0, :] == 0).long()
    out = long_short(q, k, v, keep, False, self.vkf_cfg, self.vkf_lw, self.vkf_eps)
    return (out.to(hidden_states.dtype).transpose(1, 2).reshape(b, n, -1),)


def make_weights(attn, kv_heads, head_dim, rank, dual_ln, gen):
    """Random W_p and DualLN weights for one attention module, registered as parameters under the
    tensor names vkformer reads."""
    lw = {"proj": torch.nn.Parameter(0.6 * torch.randn(kv_heads, head_dim, rank, generator=gen))}
    attn.register_parameter("vkf_long_short_proj", lw["proj"])
    if dual_ln:
        for part in ("local", "global"):
            wt = torch.nn.Parameter(1.0 + 0.2 * torch.randn(head_dim, generator=gen))
            bs = torch.nn.Parameter(0.1 * torch.randn(head_dim, generator=gen))
            attn.register_parameter("vkf_long_short_norm_%s_weight" % part, wt)
            attn.register_parameter("vkf_long_short_norm_%s_bias" % part, bs)
            lw[part] = (wt, bs)
    return lw


def patch(model, cfg, seed=0):
    """Every self-attention of a LlamaForCausalLM, GPT2LMHeadModel or BertModel runs long-short with cfg
    ({"window", "rank", "segment", "dual_ln"}); returns the holder of the 2-D keep mask the llama
    forward reads (set holder[0] before each call)."""
    gen = torch.Generator().manual_seed(seed)
    dual = cfg.get("dual_ln", True)
    holder = [None]
    base = getattr(model, "model", None)
    if base is not None and hasattr(base, "layers"):
        eps = model.config.rms_norm_eps
        for layer in base.layers:
            a = layer.self_attn
            a.vkf_lw = make_weights(a, a.num_key_value_heads, a.head_dim, cfg["rank"], dual, gen)
            a.vkf_cfg, a.vkf_eps, a.vkf_keep = cfg, eps, holder
            a.forward = llama_forward.__get__(a)
    elif hasattr(model, "transformer"):
        eps = model.config.layer_norm_epsilon
        for block in model.transformer.h:
            a = block.attn
            a.vkf_lw = make_weights(a, a.num_heads, a.head_dim, cfg["rank"], dual, gen)
            a.vkf_cfg, a.vkf_eps, a.vkf_keep = cfg, eps, holder
            a._attn = gpt2_attn.__get__(a)
    else:
        bert = getattr(model, "bert", model)
        eps = model.config.layer_norm_eps
        for layer in bert.encoder.layer:
            a = layer.attention.self
            a.vkf_lw = make_weights(a, a.num_attention_heads, a.attention_head_size, cfg["rank"],
                                    dual, gen)
            a.vkf_cfg, a.vkf_eps = cfg, eps
            a.forward = bert_forward.__get__(a)
    return holder


def tensor_name(name):
    """A state_dict key of a patched module as vkformer reads it."""
    for part in ("proj", "norm_local_weight", "norm_local_bias", "norm_global_weight",
                 "norm_global_bias"):
        old = "vkf_long_short_" + part
        if name.endswith(old):
            new = "vkf_long_short." + part.replace("norm_local_", "norm_local.").replace(
                "norm_global_", "norm_global.")
            return name[: -len(old)] + new
    return name
