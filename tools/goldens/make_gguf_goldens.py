#!/usr/bin/env python3
"""Writes the GGUF references that tests/models/test_gguf.c and tests/cli/test_gguf.sh compare
against, with the `gguf` PyPI package (llama.cpp's own writer and numpy dequantiser) as the
independent side:

  tests/models/data/gguf/quants.gguf          one [2, 512] tensor per type vkformer reads
                                              ("q.Q4_K", ...): the legacy types quantised from
                                              random values by gguf.quants.quantize, the K-quants
                                              random blocks with finite scales (the package has no
                                              K-quantiser; dequantisation is what is tested)
  tests/models/data/gguf/quants_expected.gguf the same names as F32: gguf.quants.dequantize's values
  tests/models/data/gguf/llama_tiny_TYPE.gguf tests/models/data/llama_tiny written as llama.cpp's
                                              convert_hf_to_gguf.py writes a Llama (Q/K rows
                                              permuted, llama.* keys), its 2-D weights in TYPE;
                                              qwen2_tiny_q8_0.gguf likewise (qwen2.* keys, QKV
                                              biases, tied embeddings, no permutation);
                                              gpt2_tiny_mixed.gguf as GPT2Model writes it
                                              (Conv1D weights transposed; Q8_0 and F16)
  tests/models/data/gguf/llama_kq_TYPE.gguf   a Llama 256 wide of random K-quant blocks (Q4_K with
                                              a Q6_K head, Q5_K, Q6_K with a Q4_K head); no twin
                                              folder: the test's twin is VKF_DEQUANTIZE=1
  tests/models/data/gguf/tok_NAME.gguf        tests/models/data/NAME/tokenizer.json (the BPE test
                                              tokenizers: gpt2, llama3, qwen2, smollm) as
                                              convert_hf_to_gguf.py writes tokenizer.ggml.* (token
                                              types CONTROL for special added tokens, the `pre`
                                              name llama.cpp gives that split); tokenizing with it
                                              must give tests/models/golden/bpe/NAME.json
  tests/models/data/gguf/tok_spm.gguf         a SentencePiece BPE vocabulary (byte fallback) trained
                                              here with `sentencepiece`, written as
                                              convert_hf_to_gguf.py writes one (model "llama":
                                              tokens, scores, token types)
  tests/models/golden/gguf/tok_spm.json       {"texts": [{"text", "ids"}]}: transformers'
                                              GGUFLlamaConverter tokenizer on stress strings, BOS
                                              first as LlamaTokenizerFast adds it
  tests/models/data/gguf/llama_tiny_TYPE_twin/ the Hugging Face folder of the same values: each
                                              weight dequantised by the package and un-permuted
                                              with transformers' reverse_permute_weights, F32

    python3 -m venv /tmp/gvenv && /tmp/gvenv/bin/pip install gguf numpy sentencepiece \
        "transformers==4.46.3"
    /tmp/gvenv/bin/python tools/goldens/make_gguf_goldens.py [--root .]
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants

LEGACY = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.F16, T.BF16]
K_QUANTS = {T.Q4_K: (144, [0, 2]), T.Q5_K: (176, [0, 2]), T.Q6_K: (210, [208])}  # f16 offsets
TINY_TYPES = [T.Q8_0, T.Q4_1, T.Q5_0, T.F16, T.Q4_0, T.Q5_1]


def k_blocks(rng, qtype, rows, cols):
    """Random K-quant blocks whose f16 scale fields are small finite values."""
    size, f16_at = K_QUANTS[qtype]
    blocks = rng.randint(0, 256, size=(rows, cols // 256, size), dtype=np.uint8)
    for at in f16_at:
        scale = (rng.rand(rows, cols // 256) * 0.05 + 0.001).astype(np.float16)
        blocks[:, :, at:at + 2] = scale.view(np.uint8).reshape(rows, cols // 256, 2)
    return blocks.reshape(rows, -1)


def write_quants(out_dir):
    rng = np.random.RandomState(7)
    w = gguf.GGUFWriter(os.path.join(out_dir, "quants.gguf"), "vkf-test")
    e = gguf.GGUFWriter(os.path.join(out_dir, "quants_expected.gguf"), "vkf-test")
    x = (rng.randn(2, 512) * 2).astype(np.float32)
    x[0, :32] = 0.0  # an all-zero block (scale 0)
    w.add_tensor("q.F32", x)
    e.add_tensor("q.F32", x)
    for t in LEGACY + list(K_QUANTS):
        q = k_blocks(rng, t, 2, 512) if t in K_QUANTS else quants.quantize(x, t)
        w.add_tensor("q." + t.name, q, raw_shape=q.shape if t == T.F16 else None,
                     raw_dtype=None if t == T.F16 else t)
        e.add_tensor("q." + t.name, quants.dequantize(q, t).astype(np.float32))
    for f in (w, e):
        f.write_header_to_file()
        f.write_kv_data_to_file()
        f.write_tensors_to_file()
        f.close()


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = np.frombuffer(data[b:e], dtype=np.uint16 if info["dtype"] == "BF16" else
                            {"F32": np.float32, "F16": np.float16}[info["dtype"]])
        if info["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw.astype(np.float32).reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        b = np.ascontiguousarray(t, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def permute(w, n_head, n_head_kv):
    """convert_hf_to_gguf.py's LlamaModel.permute."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def reverse_permute(w, n_head, num_kv_heads=None):
    """transformers' modeling_gguf_pytorch_utils.reverse_permute_weights."""
    if num_kv_heads is not None and n_head != num_kv_heads:
        n_head = num_kv_heads
    dim = w.shape[0] // n_head // 2
    w = w.reshape(n_head, dim, 2, *w.shape[1:])
    return w.swapaxes(2, 1).reshape(w.shape[0] * w.shape[1] * w.shape[2], *w.shape[3:])


GGUF_NAMES = [("model.embed_tokens.weight", "token_embd.weight"),
              ("model.norm.weight", "output_norm.weight"), ("lm_head.weight", "output.weight")]
LAYER_NAMES = [("input_layernorm.weight", "attn_norm.weight"),
               ("post_attention_layernorm.weight", "ffn_norm.weight"),
               ("self_attn.q_proj.weight", "attn_q.weight"),
               ("self_attn.k_proj.weight", "attn_k.weight"),
               ("self_attn.v_proj.weight", "attn_v.weight"),
               ("self_attn.q_proj.bias", "attn_q.bias"),
               ("self_attn.k_proj.bias", "attn_k.bias"),
               ("self_attn.v_proj.bias", "attn_v.bias"),
               ("self_attn.o_proj.weight", "attn_output.weight"),
               ("mlp.gate_proj.weight", "ffn_gate.weight"), ("mlp.up_proj.weight", "ffn_up.weight"),
               ("mlp.down_proj.weight", "ffn_down.weight")]


def write_tiny(root, out_dir, qtype, model="llama_tiny", arch="llama"):
    """A tiny checkpoint as convert_hf_to_gguf.py writes it: Llama's Q/K rows permuted (its
    LlamaModel.permute), Qwen2's kept (Qwen2Model does not permute); biases and norms F32."""
    src = os.path.join(root, "tests/models/data", model)
    cfg = json.load(open(os.path.join(src, "config.json")))
    hf = read_safetensors(os.path.join(src, "model.safetensors"))
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    name = f"{model}_{qtype.name.lower()}"
    w = gguf.GGUFWriter(os.path.join(out_dir, name + ".gguf"), arch)
    w.add_name(model.replace("_", " ") + " " + qtype.name)
    permuted = arch == "llama"
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_rope_dimension_count(cfg["hidden_size"] // heads)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_vocab_size(cfg["vocab_size"])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])
    names = list(GGUF_NAMES)
    for i in range(cfg["num_hidden_layers"]):
        names += [(f"model.layers.{i}.{h}", f"blk.{i}.{g}") for h, g in LAYER_NAMES]
    twin = {}
    for h, g in names:
        if h not in hf:  # lm_head of a tied model, biases of a model without them
            continue
        t = hf[h]
        if permuted and g.endswith("attn_q.weight"):
            t = permute(t, heads, heads)
        elif permuted and g.endswith("attn_k.weight"):
            t = permute(t, heads, kv)
        if t.ndim == 1:  # norms stay F32, as llama.cpp keeps them
            w.add_tensor(g, t)
            back = t
        elif qtype == T.F16:
            w.add_tensor(g, t.astype(np.float16))
            back = t.astype(np.float16).astype(np.float32)
        else:
            q = quants.quantize(t, qtype)
            w.add_tensor(g, q, raw_dtype=qtype)
            back = quants.dequantize(q, qtype).astype(np.float32)
        if permuted and g.endswith("attn_q.weight"):
            back = reverse_permute(back, heads, heads)
        elif permuted and g.endswith("attn_k.weight"):
            back = reverse_permute(back, heads, kv)
        twin[h] = back
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    twin_dir = os.path.join(out_dir, name + "_twin")
    os.makedirs(twin_dir, exist_ok=True)
    cfg["torch_dtype"] = "float32"
    json.dump(cfg, open(os.path.join(twin_dir, "config.json"), "w"), indent=2)
    shutil.copy(os.path.join(src, "generation_config.json"), twin_dir)
    write_safetensors(os.path.join(twin_dir, "model.safetensors"), twin)


def write_kquant_tiny(root, out_dir, qtype, head_type):
    """A Llama 256 wide (K-quants need rows of whole 256-element super-blocks): random blocks of
    `qtype` for every matrix, the head in `head_type` (llama.cpp's mixes keep it Q6_K), norms F32.
    No twin folder (5 MB of F32 each): tests/cli/test_gguf.sh runs the same file with
    VKF_DEQUANTIZE=1 as its twin, whose dequantisation models/test_gguf checks against the gguf
    package's bit for bit."""
    rng = np.random.RandomState(int(qtype) * 7 + 1)
    heads, kv, d, inter = 4, 2, 256, 512
    name = f"llama_kq_{qtype.name.lower()}"
    w = gguf.GGUFWriter(os.path.join(out_dir, name + ".gguf"), "llama")
    w.add_name("llama kq " + qtype.name)
    w.add_context_length(64)
    w.add_embedding_length(d)
    w.add_block_count(1)
    w.add_feed_forward_length(inter)
    w.add_rope_dimension_count(d // heads)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(256)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    shapes = {"token_embd.weight": (256, d), "output.weight": (256, d)}
    for i in range(1):
        shapes.update({f"blk.{i}.attn_q.weight": (d, d), f"blk.{i}.attn_k.weight": (d // 2, d),
                       f"blk.{i}.attn_v.weight": (d // 2, d), f"blk.{i}.attn_output.weight": (d, d),
                       f"blk.{i}.ffn_gate.weight": (inter, d), f"blk.{i}.ffn_up.weight": (inter, d),
                       f"blk.{i}.ffn_down.weight": (d, inter)})
    for g, (rows, cols) in shapes.items():
        t = head_type if g == "output.weight" else qtype
        blocks = k_blocks(rng, t, rows, cols)
        w.add_tensor(g, blocks, raw_dtype=t)
    for g in ["output_norm.weight"] + [f"blk.{i}.{n}" for i in range(1)
                                        for n in ("attn_norm.weight", "ffn_norm.weight")]:
        v = (1.0 + 0.1 * rng.randn(d)).astype(np.float32)
        w.add_tensor(g, v)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


PRE = {"gpt2": "gpt-2", "llama3": "llama-bpe", "qwen2": "qwen2", "smollm": "smollm"}


def write_tokenizer(root, out_dir, name):
    j = json.load(open(os.path.join(root, "tests/models/data", name, "tokenizer.json")))
    vocab = j["model"]["vocab"]
    added = j.get("added_tokens", [])
    tokens = [None] * (max(list(vocab.values()) + [a["id"] for a in added]) + 1)
    types = [gguf.TokenType.NORMAL] * len(tokens)
    for t, i in vocab.items():
        tokens[i] = t
    for a in j.get("added_tokens", []):
        tokens[a["id"]] = a["content"]
        types[a["id"]] = gguf.TokenType.CONTROL if a["special"] else gguf.TokenType.USER_DEFINED
    assert all(t is not None for t in tokens), name
    merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
    post = json.dumps(j.get("post_processor"))
    w = gguf.GGUFWriter(os.path.join(out_dir, "tok_%s.gguf" % name), "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(PRE[name])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    bos = [a["id"] for a in j.get("added_tokens", []) if a["content"] in post and a["special"]]
    w.add_add_bos_token(bool(bos) and "TemplateProcessing" in post)
    if bos:
        w.add_bos_token_id(bos[0])
    template = os.path.join(root, "tests/models/data/chat_templates/smollm2.jinja")
    if name == "smollm" and os.path.exists(template):
        w.add_chat_template(open(template, encoding="utf-8").read())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


SPM_CORPUS = """The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
Sphinx of black quartz, judge my vow! How vexingly quick daft zebras jump.
Tokenizers split text into pieces; pieces become ids. The model reads the ids.
In 2024 there were 365 days, 12 months and 52 weeks; 3.14159 is close to pi.
café naïve déjà vu façade — über straße ÀÉÎÕÜ. 你好世界 こんにちは 안녕하세요.
def f(x):\n    return x * 2  # a comment\n
""" * 20

SPM_TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "  leading and   inner   spaces  ",
    "tabs\tand\nnewlines\n\n",
    "café naïve Ünïcödé 你好 😀 🇫🇷 Ωμέγα",
    "unseen: zxqv qqq 💡",
    "<s> and </s> and <unk> in text",
    "1234567890 3.14159",
    "def f(x):\n    return x * 2",
    "",
    " ",
    "▁already▁has▁metaspace",
]


def write_spm_tokenizer(root, out_dir):
    import tempfile
    import sentencepiece as spm
    from transformers.integrations.ggml import GGUF_TO_FAST_CONVERTERS
    with tempfile.TemporaryDirectory() as d:
        corpus = os.path.join(d, "corpus.txt")
        open(corpus, "w", encoding="utf-8").write(SPM_CORPUS)
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(d, "sp"),
                                       vocab_size=400, model_type="bpe", byte_fallback=True,
                                       character_coverage=0.9995, num_threads=1, seed_sentencepiece_size=10000,
                                       shuffle_input_sentence=False, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(d, "sp.model"))
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        t = gguf.TokenType.NORMAL
        if sp.is_unknown(i):
            t = gguf.TokenType.UNKNOWN
        elif sp.is_control(i):
            t = gguf.TokenType.CONTROL
        elif sp.is_unused(i):
            t = gguf.TokenType.UNUSED
        elif sp.is_byte(i):
            t = gguf.TokenType.BYTE
        types.append(t)
    w = gguf.GGUFWriter(os.path.join(out_dir, "tok_spm.gguf"), "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    w.add_unk_token_id(sp.unk_id())
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    d = {"tokenizer_type": "llama", "tokens": tokens, "scores": scores, "token_type": [int(t) for t in types],
         "bos_token_id": sp.bos_id(), "eos_token_id": sp.eos_id(), "unk_token_id": sp.unk_id()}
    from transformers import PreTrainedTokenizerFast
    conv = GGUF_TO_FAST_CONVERTERS["llama"](d)
    # as load_gguf_checkpoint hands it to the fast tokenizer: its special tokens (unk included)
    # become added special tokens there
    tk = PreTrainedTokenizerFast(tokenizer_object=conv.converted(), unk_token=tokens[sp.unk_id()],
                                 bos_token=tokens[sp.bos_id()], eos_token=tokens[sp.eos_id()])
    doc = {"texts": [{"text": t, "ids": [sp.bos_id()] + tk.encode(t, add_special_tokens=False)}
                     for t in SPM_TEXTS]}
    gold = os.path.join(root, "tests/models/golden/gguf")
    os.makedirs(gold, exist_ok=True)
    json.dump(doc, open(os.path.join(gold, "tok_spm.json"), "w"), ensure_ascii=False, indent=1)


GPT2_NAMES = [("transformer.wte.weight", "token_embd.weight"),
              ("transformer.wpe.weight", "position_embd.weight"),
              ("transformer.ln_f.weight", "output_norm.weight"),
              ("transformer.ln_f.bias", "output_norm.bias")]
GPT2_LAYER = [("ln_1.weight", "attn_norm.weight"), ("ln_1.bias", "attn_norm.bias"),
              ("attn.c_attn.weight", "attn_qkv.weight"), ("attn.c_attn.bias", "attn_qkv.bias"),
              ("attn.c_proj.weight", "attn_output.weight"), ("attn.c_proj.bias", "attn_output.bias"),
              ("ln_2.weight", "ffn_norm.weight"), ("ln_2.bias", "ffn_norm.bias"),
              ("mlp.c_fc.weight", "ffn_up.weight"), ("mlp.c_fc.bias", "ffn_up.bias"),
              ("mlp.c_proj.weight", "ffn_down.weight"), ("mlp.c_proj.bias", "ffn_down.bias")]


def write_gpt2_tiny(root, out_dir):
    """tests/models/data/gpt2_tiny as convert_hf_to_gguf.py's GPT2Model writes it: the Conv1D
    weights transposed to [out, in], output.weight a copy of wte; Q8_0 where a row is whole
    blocks, F16 where it is not (48-wide rows), as llama.cpp falls back."""
    src = os.path.join(root, "tests/models/data/gpt2_tiny")
    cfg = json.load(open(os.path.join(src, "config.json")))
    hf = read_safetensors(os.path.join(src, "model.safetensors"))
    w = gguf.GGUFWriter(os.path.join(out_dir, "gpt2_tiny_mixed.gguf"), "gpt2")
    w.add_name("gpt2 tiny mixed")
    w.add_context_length(cfg["n_positions"])
    w.add_embedding_length(cfg["n_embd"])
    w.add_feed_forward_length(cfg.get("n_inner") or 4 * cfg["n_embd"])
    w.add_block_count(cfg["n_layer"])
    w.add_head_count(cfg["n_head"])
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_vocab_size(cfg["vocab_size"])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])
    names = list(GPT2_NAMES)
    for i in range(cfg["n_layer"]):
        names += [(f"transformer.h.{i}.{h}", f"blk.{i}.{g}") for h, g in GPT2_LAYER]
    names.append(("transformer.wte.weight", "output.weight"))
    twin = {}
    for h, g in names:
        t = hf[h]
        conv1d = h.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight"))
        if conv1d:
            t = np.ascontiguousarray(t.T)
        if t.ndim == 1:
            w.add_tensor(g, t)
            back = t
        elif t.shape[-1] % 32:
            w.add_tensor(g, t.astype(np.float16))
            back = t.astype(np.float16).astype(np.float32)
        else:
            q = quants.quantize(t, T.Q8_0)
            w.add_tensor(g, q, raw_dtype=T.Q8_0)
            back = quants.dequantize(q, T.Q8_0).astype(np.float32)
        twin["lm_head.weight" if g == "output.weight" else h] = back.T if conv1d else back
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    twin_dir = os.path.join(out_dir, "gpt2_tiny_mixed_twin")
    os.makedirs(twin_dir, exist_ok=True)
    cfg["tie_word_embeddings"] = False  # the GGUF has its own output.weight
    json.dump(cfg, open(os.path.join(twin_dir, "config.json"), "w"), indent=2)
    shutil.copy(os.path.join(src, "generation_config.json"), twin_dir)
    write_safetensors(os.path.join(twin_dir, "model.safetensors"), twin)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    a = ap.parse_args()
    out_dir = os.path.join(a.root, "tests/models/data/gguf")
    os.makedirs(out_dir, exist_ok=True)
    write_quants(out_dir)
    for t in TINY_TYPES:
        write_tiny(a.root, out_dir, t)
    write_tiny(a.root, out_dir, T.Q8_0, "qwen2_tiny", "qwen2")
    write_gpt2_tiny(a.root, out_dir)
    write_kquant_tiny(a.root, out_dir, T.Q4_K, T.Q6_K)
    write_kquant_tiny(a.root, out_dir, T.Q5_K, T.Q5_K)
    write_kquant_tiny(a.root, out_dir, T.Q6_K, T.Q4_K)
    for name in PRE:
        write_tokenizer(a.root, out_dir, name)
    write_spm_tokenizer(a.root, out_dir)


if __name__ == "__main__":
    main()
