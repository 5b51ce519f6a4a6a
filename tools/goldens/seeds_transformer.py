#!/usr/bin/env python3
"""The Transformer of D2L (Dive into Deep Learning), as a
PyTorch reference for vkformer's `d2l_transformer` architecture.

Written from D2L's code, with the same module names so the state_dict keys are D2L's:
  encoder.embedding.weight                          [src_vocab, H]
  encoder.blks.block{i}.attention.W_{q,k,v,o}.weight [H, H]   (no bias: use_bias false)
  encoder.blks.block{i}.addnorm{1,2}.ln.{weight,bias} [H]
  encoder.blks.block{i}.ffn.dense{1,2}.{weight,bias} [F, H] / [F], [H, F] / [H]
  decoder.embedding.weight                          [tgt_vocab, H]
  decoder.blks.block{i}.attention{1,2}.W_{q,k,v,o}.weight, addnorm{1,2,3}.ln.*, ffn.dense{1,2}.*
  decoder.dense.{weight,bias}                       [tgt_vocab, H], [tgt_vocab]
(nn.Linear with explicit in-features where D2L uses nn.LazyLinear; same parameters.)

What D2L's equations fix, reproduced here exactly:
  - masked_softmax: scores past a row's valid length are set to -1e6 (not -inf) before softmax;
  - DotProductAttention: scores = Q K^T / sqrt(head dim);
  - MultiHeadAttention: transpose_qkv splits H into num_heads contiguous slices (head h uses
    features h*H/heads .. (h+1)*H/heads - 1), valid_lens repeated per head;
  - PositionalEncoding: P[pos, 2j] = sin(pos / 10000^(2j/H)), P[pos, 2j+1] = cos(same), in
    float32 arithmetic as written (torch.pow(10000, arange(0, H, 2) / H)), max_len 1000;
  - embedding * sqrt(H) + P (encoder and decoder); AddNorm = LayerNorm(X + Y), eps 1e-5;
  - PositionWiseFFN = dense2(relu(dense1(X))), with biases;
  - decoder block: attention1 (self), addnorm1, attention2 (cross on the encoder outputs with the
    source valid lengths), addnorm2, ffn, addnorm3; `dense` to the target vocabulary.

Decoding, two ways that must agree (checked by self_check()):
  - decode_full(): teacher forcing over the whole target, causal through dec_valid_lens
    1..num_steps, as D2L's training mode does;
  - decode_step(): one token at a time, eval mode as TransformerDecoderBlock does it: each block
    caches its *inputs* (key_values = cat(cache, X)) and attends with dec_valid_lens None.
One deliberate difference from the book: its predict_step feeds one token per call and
PositionalEncoding adds P[:, :X.shape[1]], i.e. position 0 at every step. Here a step adds the
position of the token (the number of tokens before it), which is what training saw and what makes
incremental and teacher-forced logits agree.

Checkpoint (save()/load()): model.safetensors with the keys above, config.json
({"architectures": ["D2LTransformer"], "model_type": "d2l_transformer", ...}) and
generation_config.json. Development time only (torch 1.13 + safetensors).
"""
import json
import math
import os

import torch
from torch import nn

CONFIG_KEYS = ("src_vocab_size", "tgt_vocab_size", "num_hiddens", "ffn_num_hiddens", "num_heads",
               "num_blks")


def masked_softmax(X, valid_lens):
    """Softmax on the last axis; entries at or past a row's valid length get -1e6 first."""
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1]).clone()
    mask = torch.arange(shape[-1], dtype=torch.float32)[None, :] < valid_lens[:, None]
    X[~mask] = -1e6
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.attention_weights, values)


class MultiHeadAttention(nn.Module):
    def __init__(self, num_hiddens, num_heads, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention()
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def transpose_qkv(self, X):
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(self.transpose_output(output))


class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, max_len=1000):
        super().__init__()
        P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        P[:, :, 0::2] = torch.sin(X)
        P[:, :, 1::2] = torch.cos(X)
        self.register_buffer("P", P, persistent=False)  # computed, never stored in the file

    def forward(self, X, offset=0):
        if offset + X.shape[1] > self.P.shape[1]:
            raise ValueError("position %d past max_len %d" % (offset + X.shape[1], self.P.shape[1]))
        return X + self.P[:, offset:offset + X.shape[1], :]


class PositionWiseFFN(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens):
        super().__init__()
        self.dense1 = nn.Linear(num_hiddens, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, num_hiddens)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    def __init__(self, num_hiddens, eps):
        super().__init__()
        self.ln = nn.LayerNorm(num_hiddens, eps=eps)

    def forward(self, X, Y):
        return self.ln(Y + X)


class TransformerEncoderBlock(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, use_bias, eps):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens, num_heads, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, eps)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, eps)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(nn.Module):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, use_bias,
                 max_len, eps):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, max_len)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block" + str(i), TransformerEncoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads, use_bias, eps))

    def forward(self, X, valid_lens):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for blk in self.blks:
            X = blk(X, valid_lens)
        return X


class TransformerDecoderBlock(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, use_bias, eps, i):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(num_hiddens, num_heads, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, eps)
        self.attention2 = MultiHeadAttention(num_hiddens, num_heads, use_bias)
        self.addnorm2 = AddNorm(num_hiddens, eps)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, eps)

    def forward(self, X, state, causal):
        """causal: the training-mode mask over a whole target (dec_valid_lens 1..num_steps);
        otherwise the eval-mode path, where the cache of earlier inputs makes it causal."""
        enc_outputs, enc_valid_lens = state[0], state[1]
        if state[2][self.i] is None:
            key_values = X
        else:
            key_values = torch.cat((state[2][self.i], X), dim=1)
        state[2][self.i] = key_values
        if causal:
            batch_size, num_steps, _ = X.shape
            dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, use_bias,
                 max_len, eps):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.num_blks = num_blks
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, max_len)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block" + str(i), TransformerDecoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads, use_bias, eps, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

    def forward(self, X, state, offset=0, causal=False):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens), offset)
        for blk in self.blks:
            X, state = blk(X, state, causal)
        return self.dense(X), state


class D2LTransformer(nn.Module):
    """D2L's Seq2Seq: encoder + decoder, no weight sharing."""

    def __init__(self, config):
        super().__init__()
        self.config = dict(config)
        c = self.config
        if c["num_hiddens"] % 2 or c["num_hiddens"] % c["num_heads"]:
            raise ValueError("num_hiddens must be even and divisible by num_heads")
        common = (c["num_hiddens"], c["ffn_num_hiddens"], c["num_heads"], c["num_blks"],
                  c["use_bias"], c["max_len"], c["layer_norm_eps"])
        self.encoder = TransformerEncoder(c["src_vocab_size"], *common)
        self.decoder = TransformerDecoder(c["tgt_vocab_size"], *common)

    def encode(self, src, valid_lens):
        """src int64 [B, S], valid_lens int64 [B] -> encoder outputs [B, S, H] (padded rows too)."""
        return self.encoder(src, valid_lens)

    def decode_full(self, tgt, enc_outputs, valid_lens):
        """Teacher forcing: tgt [B, T] (starting with <bos>) -> logits [B, T, tgt_vocab]."""
        state = self.decoder.init_state(enc_outputs, valid_lens)
        return self.decoder(tgt, state, 0, causal=True)[0]

    def decode_step(self, token, state, offset):
        """One step: token [B, 1] at position offset -> logits [B, 1, tgt_vocab], state updated."""
        return self.decoder(token, state, offset, causal=False)

    def greedy(self, src, valid_lens, max_new_tokens, stop_at_eos=True):
        """Greedy incremental decoding from decoder_start_token_id. Returns (new ids [B, N],
        logits [B, N, V]); with stop_at_eos, stops once every row has produced eos (rows that
        finished earlier keep going: callers decoding one source at a time see exact lengths)."""
        enc = self.encode(src, valid_lens)
        state = self.decoder.init_state(enc, valid_lens)
        start = self.config["decoder_start_token_id"]
        token = torch.full((src.shape[0], 1), start, dtype=torch.long)
        ids, logits = [], []
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for step in range(max_new_tokens):
            out, state = self.decode_step(token, state, step)
            token = out.argmax(-1)
            ids.append(token)
            logits.append(out)
            done |= token[:, 0] == self.config["eos_token_id"]
            if stop_at_eos and bool(done.all()):
                break
        return torch.cat(ids, 1), torch.cat(logits, 1)

    def save(self, folder, generation_config):
        from safetensors.torch import save_file
        os.makedirs(folder, exist_ok=True)
        tensors = {k: v.detach().contiguous() for k, v in self.state_dict().items()}
        save_file(tensors, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
        conf = {"architectures": ["D2LTransformer"], "model_type": "d2l_transformer"}
        conf.update(self.config)
        conf["torch_dtype"] = "float32"
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(conf, f, indent=2, sort_keys=True)
            f.write("\n")
        with open(os.path.join(folder, "generation_config.json"), "w") as f:
            json.dump(generation_config, f, indent=2, sort_keys=True)
            f.write("\n")

    @classmethod
    def load(cls, folder):
        from safetensors.torch import load_file
        with open(os.path.join(folder, "config.json")) as f:
            conf = json.load(f)
        model = cls({k: v for k, v in conf.items()
                     if k not in ("architectures", "model_type", "torch_dtype")})
        model.load_state_dict(load_file(os.path.join(folder, "model.safetensors")), strict=True)
        return model.eval()


def self_check(model, src, valid_lens, tgt):
    """The two decoding paths agree and padding changes nothing, up to float32 rounding (1e-5 of
    the largest value); raises AssertionError if not."""
    with torch.no_grad():
        enc = model.encode(src, valid_lens)
        full = model.decode_full(tgt, enc, valid_lens)
        tol_h = 1e-5 * max(1.0, enc.abs().max().item())
        tol = 1e-5 * max(1.0, full.abs().max().item())
        state = model.decoder.init_state(enc, valid_lens)
        steps = [model.decode_step(tgt[:, t:t + 1], state, t)[0] for t in range(tgt.shape[1])]
        diff = (torch.cat(steps, 1) - full).abs().max().item()
        assert diff < tol, "incremental vs full-sequence logits differ by %g" % diff
        for b in range(src.shape[0]):
            n = int(valid_lens[b])
            alone = model.encode(src[b:b + 1, :n], valid_lens[b:b + 1])
            d = (alone[0] - enc[b, :n]).abs().max().item()
            assert d < tol_h, "row %d: padding changes the encoder output by %g" % (b, d)
            # Different pad ids change nothing either: padded keys are masked out.
            other = src[b:b + 1].clone()
            other[0, n:] = (other[0, n:] + 7) % model.config["src_vocab_size"]
            d = (model.encode(other, valid_lens[b:b + 1])[0, :n] - enc[b, :n]).abs().max().item()
            assert d < tol_h, "row %d: padded ids leak into the encoder output (%g)" % (b, d)
            la = model.decode_full(tgt[b:b + 1], alone, valid_lens[b:b + 1])
            d = (la[0] - full[b]).abs().max().item()
            assert d < tol, "row %d: padding changes the decoder logits by %g" % (b, d)
    return diff
