#!/usr/bin/env python3
"""Cross-check of tools/goldens/seeds_transformer.py against D2L's code itself.

The classes below are D2L's (/work/shared/seeds/002_*.txt) copied as written, with only what
running them outside the d2l package needs: d2l.Module / Encoder / AttentionDecoder are nn.Module,
`@d2l.add_to_class` methods are put inside their class, and dropout is 0. nn.LazyLinear is kept, so
loading seeds_transformer's state_dict into them (strict) also checks the key names and shapes.

check(model, src, valid_lens, tgt) compares, for a D2LTransformer `model`:
  - the encoders (eval mode, valid_lens);
  - teacher-forced logits with D2L's decoder in training mode (dec_valid_lens 1..T; dropout 0
    so training mode changes nothing else);
  - the first incremental step in eval mode (later steps differ on purpose: D2L's decoder adds
    position 0 at every step, see seeds_transformer's docstring) and that D2L's step-by-step
    decoding does equal ours when every step is given position 0.

    /usr/bin/python3 tools/goldens/check_seeds_transformer.py DIR     (a checkpoint folder, e.g. d2l_tiny)
"""
import math
import sys

import torch
from torch import nn


def masked_softmax(X, valid_lens):  # @save
    """Perform softmax operation by masking elements on the last axis."""

    # X: 3D tensor, valid_lens: 1D or 2D tensor
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32,
                            device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):  # @save
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):  # @save
    def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        output_concat = self.transpose_output(output)
        return self.W_o(output_concat)

    def transpose_qkv(self, X):
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)


class PositionalEncoding(nn.Module):  # @save
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(
            -1, 1) / torch.pow(10000, torch.arange(
                0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)


class PositionWiseFFN(nn.Module):  # @save
    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.LazyLinear(ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.LazyLinear(ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):  # @save
    def __init__(self, norm_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):  # @save
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(nn.Module):  # @save
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                 use_bias=False):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block" + str(i), TransformerEncoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias))

    def forward(self, X, valid_lens):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return X


class TransformerDecoderBlock(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        if state[2][self.i] is None:
            key_values = X
        else:
            key_values = torch.cat((state[2][self.i], X), dim=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            dec_valid_lens = torch.arange(1, num_steps + 1, device=X.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.num_blks = num_blks
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module("block" + str(i), TransformerDecoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.LazyLinear(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
        return self.dense(X), state


class Seeds(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.encoder = TransformerEncoder(c["src_vocab_size"], c["num_hiddens"],
                                          c["ffn_num_hiddens"], c["num_heads"], c["num_blks"], 0.0)
        self.decoder = TransformerDecoder(c["tgt_vocab_size"], c["num_hiddens"],
                                          c["ffn_num_hiddens"], c["num_heads"], c["num_blks"], 0.0)


def check(model, src, valid_lens, tgt, tol=1e-5):
    """Raises AssertionError when seeds_transformer and D2L's code disagree."""
    c = model.config
    assert not c["use_bias"] and c["layer_norm_eps"] == 1e-5 and c["max_len"] == 1000, \
        "D2L's code has bias=False, LayerNorm eps 1e-5 and max_len 1000"
    seeds = Seeds(c)
    with torch.no_grad():  # materialise the lazy layers, then load (strict: same keys, shapes)
        e = seeds.encoder(src, valid_lens)
        seeds.decoder(tgt, seeds.decoder.init_state(e, valid_lens))
    seeds.load_state_dict(model.state_dict(), strict=True)
    with torch.no_grad():
        seeds.eval()
        enc = seeds.encoder(src, valid_lens)
        ours = model.encode(src, valid_lens)
        assert (enc - ours).abs().max().item() < tol, "encoder differs from D2L's code"
        seeds.train()  # training mode: the causal dec_valid_lens (dropout is 0)
        full = seeds.decoder(tgt, seeds.decoder.init_state(enc, valid_lens))[0]
        d = (full - model.decode_full(tgt, ours, valid_lens)).abs().max().item()
        assert d < tol, "teacher-forced logits differ from D2L's code by %g" % d
        seeds.eval()  # D2L's predict_step: one token per call, position 0 every time
        state = seeds.decoder.init_state(enc, valid_lens)
        mine = model.decoder.init_state(ours, valid_lens)
        for t in range(tgt.shape[1]):
            a = seeds.decoder(tgt[:, t:t + 1], state)[0]
            b = model.decode_step(tgt[:, t:t + 1], mine, 0)[0]
            d = (a - b).abs().max().item()
            assert d < tol, "step %d differs from D2L's eval-mode decoder by %g" % (t, d)
    return True


def main():
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import seeds_transformer
    model = seeds_transformer.D2LTransformer.load(sys.argv[1])
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, model.config["src_vocab_size"], (2, 9), generator=g)
    tgt = torch.randint(4, model.config["tgt_vocab_size"], (2, 6), generator=g)
    check(model, src, torch.tensor([9, 5]), tgt)
    print("seeds_transformer agrees with D2L's code")


if __name__ == "__main__":
    main()
