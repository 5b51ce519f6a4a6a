#!/usr/bin/env python3
"""Bahdanau attention's encoder-decoder of D2L (Dive into Deep Learning:
AdditiveAttention, masked_softmax, Seq2SeqAttentionDecoder) with
D2L 1.0's Seq2SeqEncoder, which D2L's chapter only references, as a PyTorch reference for vkformer's
`d2l_seq2seq_attention` architecture.

Module names as D2L 1.0 writes them, so the state_dict keys are D2L's:
  encoder.embedding.weight                      [src_vocab, E]
  encoder.rnn.rnn.{weight,bias}_{ih,hh}_l{i}    d2l.GRU wraps nn.GRU as .rnn: [3H, E or H], [3H, H], [3H]
  decoder.attention.W_q.weight, W_k.weight      [H, H]   (no bias)
  decoder.attention.w_v.weight                  [1, H]
  decoder.embedding.weight                      [tgt_vocab, E]
  decoder.rnn.{weight,bias}_{ih,hh}_l{i}        D2L's decoder holds nn.GRU itself: layer 0's
                                                input is cat(context, embedding): [3H, H + E]
  decoder.dense.{weight,bias}                   [tgt_vocab, H], [tgt_vocab]
(nn.Linear with explicit in-features where D2L uses nn.LazyLinear; same parameters.)

The encoder runs over every source position (valid lengths only mask the attention), outputs
time-major [S, B, H] and the final state [L, B, H]; the decoder starts from that state, and at
each step queries the additive attention with the top layer's state, feeds cat(context, embedded
token) to its GRU and `dense` to the target vocabulary; every step's attention weights are kept.
masked_softmax sets scores at or past a row's valid length to -1e6 before the softmax.

Checkpoint (save()/load()): model.safetensors with the keys above, config.json
({"architectures": ["D2LSeq2SeqAttention"], "model_type": "d2l_seq2seq_attention",
src_vocab_size, tgt_vocab_size, embed_size, num_hiddens, num_layers, dropout, ...}) and
generation_config.json. Development time only (torch 1.13 + safetensors).
"""
import json
import os

import torch
from torch import nn

CONFIG_KEYS = ("src_vocab_size", "tgt_vocab_size", "embed_size", "num_hiddens", "num_layers",
               "dropout")


def masked_softmax(X, valid_lens):
    """Softmax on the last axis; entries at or past a row's valid length get -1e6 first."""
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1])
    mask = torch.arange(X.size(1), dtype=torch.float32)[None, :] < valid_lens[:, None]
    X = X.clone()
    X[~mask] = -1e6
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class GRU(nn.Module):
    """d2l.GRU (D2L 1.0): nn.GRU held as .rnn."""

    def __init__(self, num_inputs, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.rnn = nn.GRU(num_inputs, num_hiddens, num_layers, dropout=dropout)

    def forward(self, inputs, H=None):
        return self.rnn(inputs, H)


class Seq2SeqEncoder(nn.Module):
    """D2L 1.0's Seq2SeqEncoder: Embedding -> GRU; outputs time-major."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(embed_size, num_hiddens, num_layers, dropout)

    def forward(self, X, *args):
        embs = self.embedding(X.t().type(torch.int64))
        outputs, state = self.rnn(embs)
        return outputs, state


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights


class Seq2SeqAttention(nn.Module):
    """d2l.EncoderDecoder's encoder / decoder pair with D2L 1.0's Seq2Seq.predict_step."""

    def __init__(self, config):
        super().__init__()
        self.config = dict(config)
        c = self.config
        self.encoder = Seq2SeqEncoder(c["src_vocab_size"], c["embed_size"], c["num_hiddens"],
                                      c["num_layers"], c["dropout"])
        self.decoder = Seq2SeqAttentionDecoder(c["tgt_vocab_size"], c["embed_size"],
                                               c["num_hiddens"], c["num_layers"], c["dropout"])

    def forward(self, src, valid_lens, tgt):
        """Teacher forcing: (encoder outputs [S, B, H], logits [B, T, V], weights [B, T, S])."""
        enc = self.encoder(src, valid_lens)
        state = self.decoder.init_state(enc, valid_lens)
        logits, _ = self.decoder(tgt, state)
        weights = torch.cat(self.decoder.attention_weights, dim=1)
        return enc[0], logits, weights

    def predict(self, src, valid_lens, num_steps, start=None, save_attention_weights=False):
        """predict_step: greedy from the start id for num_steps tokens; ids [B, num_steps] and
        each step's logits [B, num_steps, V]; with save_attention_weights also each step's
        attention weights over the source [B, num_steps, S] (D2L's heatmaps)."""
        start = self.config["decoder_start_token_id"] if start is None else start
        enc = self.encoder(src, valid_lens)
        state = self.decoder.init_state(enc, valid_lens)
        outputs, logits = [torch.full((src.shape[0], 1), start, dtype=torch.long)], []
        weights = []
        for _ in range(num_steps):
            Y, state = self.decoder(outputs[-1], state)
            logits.append(Y)
            outputs.append(Y.argmax(2))
            weights.append(self.decoder.attention_weights[0])
        if save_attention_weights:
            return torch.cat(outputs[1:], 1), torch.cat(logits, 1), torch.cat(weights, 1)
        return torch.cat(outputs[1:], 1), torch.cat(logits, 1)

    def save(self, folder, generation_config):
        from safetensors.torch import save_file
        os.makedirs(folder, exist_ok=True)
        save_file({k: v.contiguous() for k, v in self.state_dict().items()},
                  os.path.join(folder, "model.safetensors"))
        conf = {"architectures": ["D2LSeq2SeqAttention"], "model_type": "d2l_seq2seq_attention",
                "torch_dtype": "float32"}
        conf.update(self.config)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(conf, f, indent=2, sort_keys=True)
        with open(os.path.join(folder, "generation_config.json"), "w") as f:
            json.dump(generation_config, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    m = Seq2SeqAttention(dict(src_vocab_size=10, tgt_vocab_size=10, embed_size=8, num_hiddens=16,
                              num_layers=2, dropout=0, decoder_start_token_id=0))
    for k, v in m.state_dict().items():
        print(k, tuple(v.shape))
