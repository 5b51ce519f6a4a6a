#!/usr/bin/env python3
"""Seed corpora for the fuzz targets of tests/fuzz, collected from the test data (nothing large is
committed for them): one folder per target under OUT_DIR, rewritten on every call.

    python3 tools/dev/fuzz_seeds.py OUT_DIR [SOURCE_DIR]

Multi-file targets take their files joined by the separator line of tests/fuzz/fuzz_util.h. Only
the standard library is used, so CI needs nothing beyond python3.
"""
import glob
import json
import os
import shutil
import struct
import sys

SEP = b"\n@@@@\n"  # FUZZ_SEPARATOR in tests/fuzz/fuzz_util.h
# The order of the tokenizers in fuzz_tokenize.c and fuzz_text_decoder.c (first input byte).
TOKENIZERS = ["bert_tiny", "gpt2", "llama2", "llama3", "qwen2", "qwen2_nfc"]
TEXTS = [b"Hello world!", b"The quick brown fox jumps over the lazy dog.",
         "Ünïcödé 你好 caf\u00e9 \U0001F600 \u03a3\u039f\u03a3".encode(), b"  tabs\tand\nnewlines ",
         b"[CLS] <s> </s> <|endoftext|> [UNK]", b"don't stop-believing 1234.5"]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    out = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..")
    data = os.path.join(src, "tests/models/data")
    seeds = {}

    def add(target, name, blob):
        seeds.setdefault(target, {})[name] = blob

    add("fuzz_safetensors", "readers", read(f"{data}/readers.safetensors"))
    for path in sorted(glob.glob(f"{data}/*/model.safetensors")):
        blob = read(path)
        # the header alone (the data would make every input hundreds of KiB): the mutator learns
        # the JSON structure; the real data section of readers.safetensors covers the conversions
        n = struct.unpack("<Q", blob[:8])[0]
        add("fuzz_safetensors", os.path.basename(os.path.dirname(path)), blob[:8 + n])
    for path in sorted(glob.glob(f"{data}/*.npy")) + sorted(glob.glob(f"{src}/tests/models/golden/*/*.npy")):
        if os.path.getsize(path) <= 1024:
            add("fuzz_npy", os.path.basename(path), read(path))
    # GGUF files: the converted tiny Llamas and tokenizers (tools/goldens/make_gguf_goldens.py)
    for path in sorted(glob.glob(f"{data}/gguf/*.gguf")):
        if os.path.getsize(path) <= 128 * 1024:
            add("fuzz_gguf", os.path.basename(path), read(path))
    for path in sorted(glob.glob(f"{data}/*/config.json")):
        add("fuzz_hf_config", os.path.basename(os.path.dirname(path)), read(path))
    for path in sorted(glob.glob(f"{data}/txl_*/config.json")):
        add("fuzz_transfo_xl_config", os.path.basename(os.path.dirname(path)), read(path))
    for path in sorted(glob.glob(f"{data}/*/preprocessor_config.json")):
        add("fuzz_preprocessor", os.path.basename(os.path.dirname(path)), read(path))
    for path in sorted(glob.glob(f"{data}/*/generation_config.json")):
        add("fuzz_generation_config", os.path.basename(os.path.dirname(path)), read(path))

    # vkf serve's request bodies: byte 0 picks chat (0), completions (1) or embeddings (2)
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi \u00e9\U0001F600"}]
    for i, (kind, body) in enumerate([
            (0, {"model": "talk", "messages": msgs, "temperature": 0.5, "top_p": 0.9, "seed": 7,
                 "max_tokens": 16, "stop": ["a", "b"], "n": 2, "stream": True,
                 "stream_options": {"include_usage": True}, "logprobs": True, "top_logprobs": 3}),
            (0, {"model": "talk", "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}),
            (1, {"model": "talk", "prompt": "Once", "max_tokens": 4, "logprobs": 2, "stop": "\n"}),
            (1, {"model": "talk", "prompt": ["one"], "frequency_penalty": 0, "logit_bias": {}}),
            (2, {"model": "minilm", "input": ["a", "b"], "encoding_format": "base64"}),
            (2, {"model": "minilm", "input": "text"})]):
        add("fuzz_serve_request", "request%d" % i, bytes([kind]) + json.dumps(body).encode())

    bert = f"{data}/bert_tiny"
    modules, pooling = read(f"{bert}/modules.json"), read(f"{bert}/1_Pooling/config.json")
    sbert = b'{"max_seq_length": 64, "do_lower_case": false}'
    add("fuzz_st_pipeline", "bert_tiny", SEP.join([modules, pooling, sbert, read(f"{bert}/config.json")]))
    normalize = json.loads(modules) + [{"idx": 2, "name": "2", "path": "2_Normalize",
                                        "type": "sentence_transformers.models.Normalize"}]
    add("fuzz_st_pipeline", "normalize", SEP.join([json.dumps(normalize).encode(), pooling, b"", b""]))

    index = {"metadata": {"total_size": 16},
             "weight_map": {"a": "model-00001-of-00002.safetensors",
                            "b": "model-00002-of-00002.safetensors"}}
    add("fuzz_checkpoint", "two_shards", json.dumps(index, indent=2).encode())
    add("fuzz_checkpoint", "with_shard", json.dumps(index).encode() + SEP + read(f"{data}/readers.safetensors"))

    for path in sorted(glob.glob(f"{src}/tests/fuzz/seeds/image/*")):
        add("fuzz_image", os.path.basename(path), read(path))
    for path in sorted(glob.glob(f"{src}/tests/models/golden/image/*.png")):
        if os.path.getsize(path) <= 4096:
            add("fuzz_image", os.path.basename(path), read(path))

    add("fuzz_wordpiece", "bert_tiny", SEP.join([read(f"{bert}/vocab.txt"),
                                                 read(f"{bert}/tokenizer_config.json"), TEXTS[1]]))
    add("fuzz_wordpiece", "no_config", SEP.join([read(f"{bert}/vocab.txt"), b"", TEXTS[2]]))

    for i, name in enumerate(TOKENIZERS):
        texts = list(TEXTS)
        golden = f"{src}/tests/models/golden/bpe/{name}.json"
        if os.path.exists(golden):
            texts += [t["text"].encode() for t in json.loads(read(golden))["texts"]][:8]
            add("fuzz_bpe_load", name, SEP.join([read(f"{data}/{name}/tokenizer.json"), TEXTS[2]]))
        for j, text in enumerate(texts):
            add("fuzz_tokenize", f"{name}_{j}", bytes([i]) + text.replace(b"\0", b""))
        decode = f"{src}/tests/models/golden/bpe/{name}_decode.json"
        if os.path.exists(decode):
            for j, case in enumerate(json.loads(read(decode))["cases"][:8]):
                ids = b"".join(struct.pack("<H", (x + 2) & 0xFFFF) for x in case["ids"])
                skip = len(TOKENIZERS) if case["skip_special"] else 0
                add("fuzz_text_decoder", f"{name}_{j}", bytes([i + skip]) + ids)
    add("fuzz_text_decoder", "bert_tiny", bytes([0]) + b"".join(struct.pack("<H", x) for x in range(2, 60)))

    for name, rel in [("spm_bpe", "spm_bpe/bpe.model"), ("marian_source", "tok_marian/source.spm"),
                      ("marian_target", "tok_marian/target.spm"), ("t5", "tok_t5/spiece.model")]:
        add("fuzz_spm", name, read(f"{data}/{rel}") + SEP + TEXTS[2])
    # fuzz_text_files: source.spm, target.spm, vocab.json, merges.txt, tokenizer_config.json, text,
    # spiece.model
    marian, bart = f"{data}/tok_marian", f"{data}/tok_bart_slow"
    add("fuzz_text_files", "marian", SEP.join([read(f"{marian}/source.spm"), read(f"{marian}/target.spm"),
                                               read(f"{marian}/vocab.json"), b"",
                                               read(f"{marian}/tokenizer_config.json"), TEXTS[5]]))
    add("fuzz_text_files", "bart", SEP.join([b"", b"", read(f"{bart}/vocab.json"), read(f"{bart}/merges.txt"),
                                             read(f"{bart}/tokenizer_config.json"), TEXTS[1]]))
    add("fuzz_text_files", "bart_bare", SEP.join([b"", b"", read(f"{bart}/vocab.json"),
                                                  read(f"{bart}/merges.txt"), b"", TEXTS[2]]))
    # ... and T5's spiece.model alone (the 7th part), with and without its tokenizer_config.json
    for name, cfg in (("t5_spiece", "tok_t5"), ("t5_spiece_defaults", "tok_t5_spiece")):
        add("fuzz_text_files", name, SEP.join([b"", b"", b"", b"", read(f"{data}/{cfg}/tokenizer_config.json"),
                                               TEXTS[3], read(f"{data}/tok_t5/spiece.model")]))
    add("fuzz_bpe_load", "t5_unigram", SEP.join([read(f"{data}/tok_t5/tokenizer.json"), TEXTS[2]]))
    # one tokenizer per tokenizers component (tools/goldens/make_tokenizer_components_golden.py)
    for path in sorted(glob.glob(f"{data}/tokcomp_*/tokenizer.json")):
        name = os.path.basename(os.path.dirname(path))
        add("fuzz_bpe_load", name, SEP.join([read(path), TEXTS[1]]))

    # fuzz_chat_template: a chat template, then a messages JSON array (two of the goldens')
    golden = json.loads(read(f"{src}/tests/models/golden/chat_templates.json"))
    convs = {c["name"].split("/")[1]: c["messages"] for c in golden["cases"]}
    for path in sorted(glob.glob(f"{data}/chat_templates/*.jinja")):
        name = os.path.basename(path)[:-len(".jinja")]
        for conv in ("system_multi", "tool_call_reply"):
            add("fuzz_chat_template", f"{name}_{conv}",
                read(path) + SEP + json.dumps(convs[conv], ensure_ascii=False).encode())

    for target, files in seeds.items():
        d = os.path.join(out, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, blob in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(blob)
    print(" ".join(f"{t}:{len(f)}" for t, f in sorted(seeds.items())))


if __name__ == "__main__":
    main()
