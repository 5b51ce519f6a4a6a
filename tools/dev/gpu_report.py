#!/usr/bin/env python3
"""The two Python halves of tools/dev/gpu_report.sh.

    python3 tools/dev/gpu_report.py torch OUT_DIR CKPT_DIR [--quick]
        times the report's work with PyTorch on the same GPU, when torch with CUDA is importable:
        the copy bandwidth (one 256 MiB copy), F.linear for the decode shapes (M = 1..8) and the
        GEMM shape, SDPA for vkf bench attention's shapes, and with transformers the ViT forward
        and the Llama decode (HF generate, greedy). Writes OUT_DIR/torch.json; without torch or a
        GPU it writes why, and the table says so.
    python3 tools/dev/gpu_report.py table OUT_DIR
        reads the vkf JSON files the shell script wrote (gemm_*.json, attention_*.json,
        model_*.json, generate_*.json, serve_*.json) and torch.json, and prints one Markdown report: each
        figure of vkformer beside PyTorch's, with ratios, and the share of the copy bandwidth
        where the work is bandwidth-bound.
"""
import glob
import json
import os
import sys
import time

GEMV_SHAPES = [(4096, 4096), (4096, 14336)]
QUICK_GEMV_SHAPES = [(256, 256), (256, 512)]
ATTENTION_SHAPES = [(1, 12, 197, 197, 64), (1, 12, 577, 577, 64), (1, 12, 1024, 1024, 64),
                    (1, 12, 4096, 4096, 64), (1, 16, 2048, 2048, 128), (1, 12, 1, 4096, 64),
                    (1, 12, 1, 32768, 64)]
QUICK_ATTENTION_SHAPES = [(1, 2, 64, 64, 32), (1, 2, 1, 512, 32)]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def loaded(out, pattern):
    """(path, document) of each JSON result matching `pattern` that a step wrote, in name order."""
    for path in sorted(glob.glob(os.path.join(out, pattern))):
        doc = load(path)
        if doc:
            yield path, doc


def cuda_ms(torch, fn, runs=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = None
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        t = start.elapsed_time(end)
        best = t if best is None or t < best else best
    return best


def torch_part(out, ckpt, quick):
    res = {"available": False}
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        res["why"] = "torch not importable: %s" % e
        return res
    if not torch.cuda.is_available():
        res["why"] = "torch %s has no CUDA device" % torch.__version__
        return res
    dev = torch.device("cuda")
    res.update(available=True, torch=torch.__version__, device=torch.cuda.get_device_name(0))
    n = (256 << 20) // 4
    src, dst = torch.empty(n, device=dev), torch.empty(n, device=dev)
    res["copy_gb_per_s"] = 2 * n * 4 / (cuda_ms(torch, lambda: dst.copy_(src)) * 1e6)
    res["linear"] = []
    for k, nn in (QUICK_GEMV_SHAPES if quick else GEMV_SHAPES):
        for dtype in (torch.float32, torch.float16):
            w = torch.randn(nn, k, device=dev, dtype=dtype)
            for m in range(1, 9):
                x = torch.randn(m, k, device=dev, dtype=dtype)
                ms = cuda_ms(torch, lambda: F.linear(x, w))
                res["linear"].append({"m": m, "k": k, "n": nn, "dtype": str(dtype)[6:], "ms": ms})
    res["sdpa"] = []
    for b, h, nq, nk, d in (QUICK_ATTENTION_SHAPES if quick else ATTENTION_SHAPES):
        for dtype in (torch.float32, torch.float16):
            q = torch.randn(b, h, nq, d, device=dev, dtype=dtype)
            kk = torch.randn(b, h, nk, d, device=dev, dtype=dtype)
            v = torch.randn(b, h, nk, d, device=dev, dtype=dtype)
            ms = cuda_ms(torch, lambda: F.scaled_dot_product_attention(q, kk, v))
            res["sdpa"].append({"shape": [b, h, nq, nk, d], "dtype": str(dtype)[6:], "ms": ms})
    try:
        import transformers
    except Exception as e:  # noqa: BLE001
        res["transformers"] = "not importable: %s" % e
        return res
    res["transformers"] = transformers.__version__
    vit_dir = os.path.join(ckpt, "vit-b16")
    res["vit"] = []
    for dtype in (torch.float32, torch.float16):
        model = transformers.ViTForImageClassification.from_pretrained(vit_dir, torch_dtype=dtype)
        model = model.to(dev).eval()
        size = model.config.image_size
        for batch in (1, 32):
            px = torch.randn(batch, 3, size, size, device=dev, dtype=dtype)
            with torch.no_grad():
                ms = cuda_ms(torch, lambda: model(pixel_values=px), runs=10, warmup=3)
            res["vit"].append({"batch": batch, "dtype": str(dtype)[6:], "ms": ms})
        del model
    res["generate"] = []
    prompt, new = (16, 8) if quick else (512, 64)
    for name in ("llama-1b", "llama-135m"):
        for dtype in (torch.float32, torch.float16):
            model = transformers.LlamaForCausalLM.from_pretrained(os.path.join(ckpt, name),
                                                                  torch_dtype=dtype).to(dev).eval()
            ids = torch.randint(3, model.config.vocab_size, (1, prompt), device=dev)
            with torch.no_grad():
                model.generate(ids, max_new_tokens=4, do_sample=False, min_new_tokens=4)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                model.generate(ids, max_new_tokens=1, do_sample=False)
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False)
                torch.cuda.synchronize()
                t2 = time.perf_counter()
            step = ((t2 - t1) - (t1 - t0)) / (new - 1)
            res["generate"].append({"model": name, "dtype": str(dtype)[6:],
                                    "decode_tokens_per_s": 1.0 / step if step > 0 else 0})
            del model
    return res


def fmt(x, digits=3):
    return "-" if x is None else ("%.*f" % (digits, x))


def ratio(a, b):
    return "-" if not a or not b else "%.2fx" % (a / b)


def table(out):
    lines = []
    t = load(os.path.join(out, "torch.json")) or {"available": False, "why": "no torch.json"}
    meta = load(os.path.join(out, "meta.json")) or {}
    lines.append("# vkformer GPU report")
    lines.append("")
    lines.append("- device: %s; vkformer %s" % (meta.get("device", "?"), meta.get("version", "?")))
    lines.append("- PyTorch: %s" % ("%s on %s, transformers %s" % (t["torch"], t["device"],
                                                                   t.get("transformers", "-"))
                                    if t.get("available") else "not measured (%s)" % t.get("why")))
    lines.append("- tests: %s" % meta.get("tests", "not run"))
    lines.append("")
    # GEMV / GEMM
    torch_lin = {(r["m"], r["k"], r["n"], r["dtype"]): r["ms"] for r in t.get("linear", [])}
    lines.append("## GEMV and GEMM (B as [N, K], nn.Linear's)")
    lines.append("")
    lines.append("| M×K×N | dtype | vkformer variant | vkf ms | vkf GB/s | % of copy | torch ms | "
                 "torch / vkf |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for path, g in loaded(out, "gemm_*.json"):
        for r in g["results"]:
            if not r["transpose_b"]:
                continue
            tm = torch_lin.get((r["m"], r["k"], r["n"], "float16" if g["dtype"] == "f16" else "float32"))
            lines.append("| %d×%d×%d | %s | %s | %s | %s | %s | %s | %s |" % (
                r["m"], r["k"], r["n"], g["dtype"] + ("" if g.get("weights", g["dtype"]) == g["dtype"]
                                                      else " × " + g["weights"]),
                r["variant"], fmt(r["mean_ms"]),
                fmt(r["gb_per_s"], 1), fmt(100 * r["copy_fraction"], 1), fmt(tm), ratio(tm, r["mean_ms"])))
        lines.append("")
        lines.append("vkformer's copy bandwidth (%s): %.1f GB/s; PyTorch's: %s GB/s" % (
            os.path.basename(path), g["copy_gb_per_s"], fmt(t.get("copy_gb_per_s"), 1)))
        lines.append("")
    # attention
    torch_sdpa = {(tuple(r["shape"]), r["dtype"]): r["ms"] for r in t.get("sdpa", [])}
    lines.append("## Fused attention")
    lines.append("")
    lines.append("| B,H,Nq,Nk,D | dtype | vkf variant | vkf ms | vkf GFLOP/s | vkf GB/s | "
                 "design FLOP/shared B | design FLOP/global B | torch SDPA ms | torch / vkf |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for path, a in loaded(out, "attention_*.json"):
        for r in a["results"]:
            shape = (r["b"], r["h"], r["nq"], r["nk"], r["d"])
            tm = torch_sdpa.get((shape, "float16" if a["dtype"] == "f16" else "float32"))
            shared_i = r.get("flop_per_shared_byte")
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                ",".join(map(str, shape)), a["dtype"], r["variant"], fmt(r["fused_ms"]),
                fmt(r["fused_gflops"], 1), fmt(r.get("fused_gb_per_s"), 1),
                fmt(shared_i, 1) if shared_i else "-", fmt(r.get("flop_per_global_byte"), 1),
                fmt(tm), ratio(tm, r["fused_ms"])))
    lines.append("")
    # ViT
    torch_vit = {(r["batch"], r["dtype"]): r["ms"] for r in t.get("vit", [])}
    lines.append("## ViT-B/16 forward")
    lines.append("")
    lines.append("| batch | dtype | vkf GPU ms | vkf wall ms | torch ms | torch / vkf (GPU) |")
    lines.append("|---|---|---|---|---|---|")
    for path, m in loaded(out, "model_*.json"):
        tm = torch_vit.get((m["batch"], "float16" if m["dtype"] == "fp16" else "float32"))
        lines.append("| %d | %s | %s | %s | %s | %s |" % (m["batch"], m["dtype"], fmt(m["gpu_ms"]),
                                                         fmt(m["latency_ms_mean"]), fmt(tm),
                                                         ratio(tm, m["gpu_ms"])))
    lines.append("")
    # decode
    torch_gen = {(r["model"], r["dtype"]): r["decode_tokens_per_s"] for r in t.get("generate", [])}
    lines.append("## Decoding (greedy, batch 1)")
    lines.append("")
    lines.append("| model | weights | prefill tok/s | decode tok/s | step ms | bound ms (bytes / copy) | "
                 "% of copy | dispatches / barriers a step (a layer) | submits / host waits a step | "
                 "bytes read back a step | GPU ms a step | HF generate tok/s | vkf / HF |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path, r in loaded(out, "generate_*.json"):
        name = os.path.basename(r["model"].rstrip("/"))
        dtype = "float16" if path.endswith("_f16.json") else "float32"
        hf = torch_gen.get((name, dtype))
        weights = "f16" if dtype == "float16" else "bf16" if name.endswith("-bf16") else "f32"
        layers = r.get("layers") or 0
        per_layer = (" (%.1f / %.1f)" % (r["step_dispatches"] / layers, r["step_barriers"] / layers)
                     if layers else "")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %d / %d%s | %s / %s | %s | %s | %s | %s |" % (
            name, weights,
            fmt(r["prefill_tokens_per_s"], 1), fmt(r["decode_tokens_per_s"], 1),
            fmt(r["decode_step_ms"]), fmt(r["bound_step_ms"]), fmt(100 * r["copy_fraction"], 1),
            r["step_dispatches"], r["step_barriers"], per_layer,
            fmt(r.get("step_submits"), 2), fmt(r.get("step_host_waits"), 2),
            fmt(r.get("step_bytes_read_back"), 0), fmt(r.get("step_gpu_ms") or None),
            fmt(hf, 1), ratio(r["decode_tokens_per_s"], hf)))
    lines.append("")
    # serving
    lines.append("## Serving (vkf serve, continuous batching; the 135M Llama)")
    lines.append("")
    levels = load(os.path.join(out, "serve_levels.json"))
    if levels and levels["levels"]:
        lines.append("%d completions of %d tokens a level, temperature 0, against --parallel 16" % (
            levels["requests"], levels["max_tokens"]))
        lines.append("")
        lines.append("| clients | tokens/s | vs 1 client | requests/s | steps | mean batch |")
        lines.append("|---|---|---|---|---|---|")
        for r in levels["levels"]:
            lines.append("| %d | %s | %.2fx | %s | %s | %s |" % (
                r["clients"], fmt(r["tokens_per_s"], 1), r["vs_one_client"],
                fmt(r["requests_per_s"], 2), "-" if r["steps"] is None else r["steps"],
                fmt(r["mean_batch"], 2)))
        lines.append("")
    ttft = [load(os.path.join(out, "serve_ttft_p%d.json" % p)) for p in (1, 4)]
    ttft = [d["ttft"] if d else None for d in ttft]
    lines.append("Time to the first streamed token, idle server (median of %s): --parallel 1: %s s, "
                 "--parallel 4: %s s (%s)" % (
                     (ttft[0] or ttft[1] or {}).get("requests", "-"),
                     fmt(ttft[0]["median_s"] if ttft[0] else None),
                     fmt(ttft[1]["median_s"] if ttft[1] else None),
                     "%.2fx" % (ttft[1]["median_s"] / ttft[0]["median_s"])
                     if ttft[0] and ttft[1] and ttft[0]["median_s"] > 0 else "-"))
    lines.append("")
    missing = sorted(p for p in os.listdir(out) if p.endswith(".err") and os.path.getsize(os.path.join(out, p)))
    if missing:
        lines.append("Steps that failed (their .err files): " + ", ".join(missing))
        lines.append("")
    print("\n".join(lines))
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "torch":
        res = torch_part(argv[2], argv[3], "--quick" in argv)
        with open(os.path.join(argv[2], "torch.json"), "w") as f:
            json.dump(res, f, indent=1)
        print("torch: %s" % ("measured" if res.get("available") else res.get("why")))
        return 0
    if len(argv) == 3 and argv[1] == "table":
        return table(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
