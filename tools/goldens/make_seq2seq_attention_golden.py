#!/usr/bin/env python3
"""A tiny `d2l_seq2seq_attention` checkpoint (tools/goldens/seeds_seq2seq_attention.py: D2L's
Bahdanau encoder-decoder) and its goldens, for tests/cli/test_seq2seq_attention.sh.
Writes tests/models/data/d2l_attn_tiny/ (config.json, generation_config.json, model.safetensors)
and tests/models/golden/d2l_attn_tiny/:
  input_ids int64 [3, 5], valid_lens int64 [3] (5, 3, 1), decoder_input_ids int64 [3, 4];
  encoder_outputs float32 [5, 3, H] (time-major), logits [3, 4, V], attention_weights [3, 4, 5];
  lens_input_ids / lens_valid_lens / lens_decoder_input_ids: one source repeated with valid
  lengths 1 .. 5, and lens_logits, lens_attention_weights;
  greedy_{0,1}_ids int64: predict_step's ids of source i alone (num_steps GREEDY_STEPS) cut after
  the first eos (generate() stops there), greedy_{0,1}_src the source, greedy_{0,1}_weights
  float32 [steps, S] each of those steps' attention weights (what `vkf attn` draws).
Parameters are drawn N(0, 0.6) so that greedy argmaxes are not near ties.
Run: /tmp/tvenv2/bin/python tools/goldens/make_seq2seq_attention_golden.py (from the repository
root; torch 1.13 + safetensors).
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seeds_seq2seq_attention as ref  # noqa: E402

DATA = "tests/models/data/d2l_attn_tiny"
GOLD = "tests/models/golden/d2l_attn_tiny"
GREEDY_STEPS = 10
CONFIG = dict(src_vocab_size=23, tgt_vocab_size=19, embed_size=6, num_hiddens=8, num_layers=2,
              dropout=0.1, pad_token_id=1, bos_token_id=2, eos_token_id=3,
              decoder_start_token_id=2)
GEN = dict(pad_token_id=1, bos_token_id=2, eos_token_id=3, decoder_start_token_id=2)


def main():
    torch.manual_seed(34)
    model = ref.Seq2SeqAttention(CONFIG).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape) * 0.6)
    model.save(DATA, GEN)
    os.makedirs(GOLD, exist_ok=True)

    def save(name, a):
        np.save(os.path.join(GOLD, name + ".npy"), a)

    g = torch.Generator().manual_seed(7)
    src = torch.randint(4, 23, (3, 5), generator=g)
    lens = torch.tensor([5, 3, 1])
    tgt = torch.randint(0, 19, (3, 4), generator=g)
    with torch.no_grad():
        enc, logits, weights = model(src, lens, tgt)
    save("input_ids", src.numpy().astype(np.int64))
    save("valid_lens", lens.numpy().astype(np.int64))
    save("decoder_input_ids", tgt.numpy().astype(np.int64))
    save("encoder_outputs", enc.numpy().astype(np.float32))
    save("logits", logits.numpy().astype(np.float32))
    save("attention_weights", weights.numpy().astype(np.float32))

    # One source with every valid length 1 .. 5.
    src5 = src[0:1].repeat(5, 1)
    lens5 = torch.arange(1, 6)
    tgt5 = tgt[0:1].repeat(5, 1)
    with torch.no_grad():
        _, logits5, weights5 = model(src5, lens5, tgt5)
    save("lens_input_ids", src5.numpy().astype(np.int64))
    save("lens_valid_lens", lens5.numpy().astype(np.int64))
    save("lens_decoder_input_ids", tgt5.numpy().astype(np.int64))
    save("lens_logits", logits5.numpy().astype(np.float32))
    save("lens_attention_weights", weights5.numpy().astype(np.float32))

    # Greedy, each source alone at its full length (vkf generate's source has no padding).
    for i, s in enumerate(([5, 9, 12, 7, 20], [8, 4, 17])):
        x = torch.tensor([s])
        with torch.no_grad():
            ids, _, w = model.predict(x, torch.tensor([len(s)]), GREEDY_STEPS,
                                      save_attention_weights=True)
        out = []
        for t in ids[0].tolist():
            out.append(t)
            if t == CONFIG["eos_token_id"]:
                break
        save("greedy_%d_src" % i, np.array(s, dtype=np.int64))
        save("greedy_%d_ids" % i, np.array(out, dtype=np.int64))
        save("greedy_%d_weights" % i, w[0, :len(out)].numpy().astype(np.float32))
        print("greedy", i, out)


if __name__ == "__main__":
    main()
