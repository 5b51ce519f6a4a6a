#!/usr/bin/env python3
"""Reference adaptive attention span (Sukhbaatar et al. 2019, "Adaptive Attention Span in
Transformers", eq. 2-3), written from the paper's equations and patched into transformers 4.38.2's
LlamaAttention and GPT2Attention, so that the rest of each model is Hugging Face's own.

For head h of layer l with span z = spans[l][h] and ramp R, the soft mask on the distance x from
query t to key r (x = t - r) is

    m_z(x) = min(max((R + z - x) / R, 0), 1)

and the attention weights are a_tr = m_z(t - r) exp(s_tr) / sum_q m_z(t - q) exp(s_tq), i.e. the
model's own softmax weights (causal and padding masks included) multiplied by m and renormalised
over the row: softmax(s + mask + log m). Query t sits at t + (Nk - Nq) when the keys include a cache (bottom-right aligned).
Computed in float64. The paper's code adds 1e-8 to the row sum; the equation (and vkformer) does
not: a row always keeps its own key (m(0) = (R + z) / R >= 1).
"""
import math

import torch
from transformers.models.gpt2 import modeling_gpt2
from transformers.models.llama import modeling_llama


def span_mask(nq, nk, spans, ramp):
    """m [H, Nq, Nk] float64 for one layer's spans [H]."""
    i = torch.arange(nq, dtype=torch.float64)[:, None] + (nk - nq)
    j = torch.arange(nk, dtype=torch.float64)[None, :]
    x = (i - j)[None]  # [1, Nq, Nk]
    z = torch.tensor(spans, dtype=torch.float64)[:, None, None]
    return ((ramp + z - x) / ramp).clamp(0.0, 1.0)


def span_softmax(scores, spans, ramp):
    """softmax(scores + log m) over the last axis, float64: the paper's weights
    m exp(s) / sum m exp(s), with the model's additive masks already in `scores` (so a query whose
    span holds only padding spreads evenly over that padding, as the additive mask's softmax does;
    such rows exist only at padded positions)."""
    m = span_mask(scores.shape[-2], scores.shape[-1], spans, ramp)
    return torch.softmax(scores.double() + torch.log(m), -1)


def gpt2_attn(self, query, key, value, attention_mask=None, head_mask=None):
    """GPT2Attention._attn (eager, self-attention) with the span."""
    s = (query.double() @ key.double().transpose(-1, -2)) / value.size(-1) ** 0.5
    nq, nk = query.size(-2), key.size(-2)
    causal = self.bias[:, :, nk - nq: nk, :nk]
    s = torch.where(causal, s, torch.tensor(torch.finfo(torch.float32).min, dtype=torch.float64))
    if attention_mask is not None:
        s = s + attention_mask.double()
    w = span_softmax(s, self.vkf_spans, self.vkf_ramp)
    return (w @ value.double()).to(value.dtype), w.to(value.dtype)


def llama_forward(self, hidden_states, attention_mask=None, position_ids=None, *args, **kwargs):
    """LlamaAttention's eager forward without a cache, the span applied after the softmax."""
    b, n, _ = hidden_states.shape
    q = self.q_proj(hidden_states).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
    k = self.k_proj(hidden_states).view(b, n, self.num_key_value_heads, self.head_dim).transpose(1, 2)
    v = self.v_proj(hidden_states).view(b, n, self.num_key_value_heads, self.head_dim).transpose(1, 2)
    cos, sin = self.rotary_emb(v, position_ids)
    q, k = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    k = modeling_llama.repeat_kv(k, self.num_key_value_groups).double()
    v = modeling_llama.repeat_kv(v, self.num_key_value_groups).double()
    s = q.double() @ k.transpose(2, 3) / math.sqrt(self.head_dim)
    if attention_mask is not None:  # 4.38's static mask: rows at cache_position (no cache: 0..n-1)
        pos = kwargs.get("cache_position")
        rows = pos if pos is not None else torch.arange(n)
        s = s + attention_mask[:, :, rows, : k.shape[-2]].double()
    w = span_softmax(s, self.vkf_spans, self.vkf_ramp)
    out = (w @ v).to(hidden_states.dtype).transpose(1, 2).reshape(b, n, -1)
    return self.o_proj(out), None, None


def patch(model, ramp, spans):
    """spans[l][h]: every self-attention of a LlamaForCausalLM or GPT2LMHeadModel gets its layer's
    adaptive span."""
    base = getattr(model, "model", None) or model.transformer
    if hasattr(base, "layers"):
        for l, layer in enumerate(base.layers):
            a = layer.self_attn
            a.vkf_spans, a.vkf_ramp = spans[l], ramp
            a.forward = llama_forward.__get__(a)
    else:
        for l, block in enumerate(base.h):
            a = block.attn
            a.vkf_spans, a.vkf_ramp = spans[l], ramp
            a._attn = gpt2_attn.__get__(a)


def expand_spans(spec, layers, heads):
    """config.json's "spans" (a number, one per layer, or [layers][heads]) as [layers][heads]."""
    s = spec
    if not isinstance(s, list):
        return [[float(s)] * heads for _ in range(layers)]
    return [[float(r)] * heads if not isinstance(r, list) else [float(x) for x in r] for r in s]
