#!/usr/bin/env python3
"""Goldens for text/chat_template.c: every template of tests/models/data/chat_templates
rendered by jinja2 exactly as transformers' apply_chat_template renders it, over a set of
conversations; writes tests/models/golden/chat_templates.json.

    /tmp/gvenv/bin/python tools/goldens/make_chat_goldens.py   (jinja2 3.1.6)

The environment copies transformers' _compile_jinja_template (tokenization_utils_base.py / chat
template utils, v4.4x): ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
extensions=[loopcontrols]) with its tojson filter (json.dumps, ensure_ascii=False), its
raise_exception and strftime_now globals; render() gets messages, tools=None, documents=None,
add_generation_prompt and the special tokens, as apply_chat_template passes them. strftime_now is
pinned to NOW (UTC) so the goldens are deterministic (the C side takes the time as an argument).

Where each template's bytes came from (the hub is not reachable here; all are the models'
tokenizer_config.json chat_template as quoted in public code):
  smollm2         HuggingFaceTB/SmolLM2-*-Instruct, as quoted verbatim by several projects
  llama2          meta-llama/Llama-2-7b-chat-hf, guidance-ai's chat templates (cites the hub file)
  llama3          Meta-Llama-3-8B-Instruct, llama.cpp tests/test-chat-template.cpp "Llama-3"
                  (without the add_generation_prompt condition, as llama.cpp quotes it)
  llama3_2        llama.cpp models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja (3.1's layout, no builtin_tools)
  mistral_v0_2    llama.cpp test-chat-template.cpp "mistralai/Mistral-7B-Instruct-v0.2" (pre-v1)
  mistral_v1      llama.cpp test-chat-template.cpp "mistralai 'v1' template with a system prompt"
  mistral_nemo    llama.cpp models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja (v3-tekken)
  qwen2_5         Qwen2.5(-Coder)-7B-Instruct, quoted verbatim in a public llama.cpp nix config
  gemma_7b_it     llama.cpp test-chat-template.cpp "google/gemma-7b-it"
  gemma2          llama.cpp models/templates/google-gemma-2-2b-it.jinja
  phi3_mini       llama.cpp test-chat-template.cpp "Phi-3-mini"
  phi3_5          llama.cpp models/templates/microsoft-Phi-3.5-mini-instruct.jinja
  deepseek_coder  llama.cpp test-chat-template.cpp "deepseek-ai/deepseek-coder-33b-instruct"
The four llama.cpp models/templates files match the byte sizes of their git-lfs pointers.
"""
import json
import os
from datetime import datetime, timezone

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "tests/models/data/chat_templates")
OUT = os.path.join(ROOT, "tests/models/golden/chat_templates.json")
NOW = 1721952000  # 2024-07-26 00:00:00 UTC

TOKENS = {
    "smollm2": ("<|im_start|>", "<|im_end|>"),
    "llama2": ("<s>", "</s>"),
    "llama3": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama3_2": ("<|begin_of_text|>", "<|eot_id|>"),
    "mistral_v0_2": ("<s>", "</s>"),
    "mistral_v1": ("<s>", "</s>"),
    "mistral_nemo": ("<s>", "</s>"),
    "qwen2_5": ("", "<|im_end|>"),
    "gemma_7b_it": ("<bos>", "<eos>"),
    "gemma2": ("<bos>", "<eos>"),
    "phi3_mini": ("<s>", "<|endoftext|>"),
    "phi3_5": ("<s>", "<|endoftext|>"),
    "deepseek_coder": ("<｜begin▁of▁sentence｜>", "<|EOT|>"),
}


def m(role, content, **extra):
    return dict(role=role, content=content, **extra)


CONVERSATIONS = {
    "user": [m("user", "Hello")],
    "system_user": [m("system", "You are a helpful assistant"), m("user", "Hello")],
    "multi_turn": [m("user", "Hi there"), m("assistant", "Hello! How can I help?"),
                   m("user", "Tell me a joke.")],
    "system_multi": [m("system", "You are a helpful assistant"), m("user", "Hello"),
                     m("assistant", "Hi there"), m("user", "Who are you"),
                     m("assistant", "   I am an assistant   "), m("user", "Another question")],
    "unicode": [m("user", "Ünïcödé 你好 café \U0001F600 ΣΟΣ"), m("assistant", "こんにちは 👋🏽"),
                m("user", "«quotes» \"double\" 'single' \\ back\\slash")],
    "whitespace": [m("user", "\n  leading and trailing  \n\t"), m("assistant", "\n\nanswer\n"),
                   m("user", " x ")],
    "nbsp": [m("user", "\u00a0 wide\u3000space\u2003 \u00a0"), m("assistant", "\u2028ok\u0085")],
    "empty": [m("user", "")],
    "empty_system": [m("system", ""), m("user", "Hi")],
    "non_alternating": [m("user", "one"), m("user", "two")],
    "assistant_first": [m("assistant", "I start"), m("user", "ok")],
    "unknown_role": [m("user", "a"), m("narrator", "b")],
}

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather in a city, \"quoted\" & <tagged>",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Zürich"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7.5}},
        "required": ["city"]}}}]
TOOL_CONVERSATIONS = {
    "tools_user": [m("system", "Be brief."), m("user", "Weather in Paris?")],
    "tool_call": [m("user", "Weather in Paris?"),
                  m("assistant", "", tool_calls=[{"id": "abcDEF123", "type": "function", "function": {
                      "name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]),
                  m("tool", "{\"temp\": 21.5}", tool_call_id="abcDEF123"),
                  m("user", "Thanks")],
    "tool_call_reply": [m("user", "Weather in Paris?"),
                        m("assistant", None, tool_calls=[{"id": "abcDEF123", "type": "function", "function": {
                            "name": "get_weather", "arguments": {"city": "Paris"}}}]),
                        m("tool", {"temp": 21.5, "unit": "°C"}, tool_call_id="abcDEF123"),
                        m("assistant", "It is 21.5 °C."), m("user", "Thanks")],
}


def make_env():
    # transformers' _compile_jinja_template, less the {% generation %} tracker extension
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.fromtimestamp(NOW, timezone.utc).strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, messages, variables):
    try:
        return {"expected": env.from_string(source).render(messages=messages, **variables)}
    except jinja2.exceptions.TemplateError as e:
        return {"error": str(e)}


def main():
    env = make_env()
    cases = []
    for name in sorted(TOKENS):
        with open(os.path.join(DATA, name + ".jinja"), encoding="utf-8") as f:
            source = f.read()
        bos, eos = TOKENS[name]
        convs = dict(CONVERSATIONS)
        if name in ("llama3_2", "qwen2_5", "mistral_nemo"):
            convs.update(TOOL_CONVERSATIONS)
        for conv, messages in convs.items():
            for gen in (False, True):
                if conv.startswith("tool") and not gen:
                    continue
                variables = {"tools": TOOLS if conv.startswith("tool") else None,
                             "documents": None, "add_generation_prompt": gen,
                             "bos_token": bos, "eos_token": eos}
                case = {"name": f"{name}/{conv}/{'gen' if gen else 'nogen'}",
                        "template": f"{name}.jinja", "messages": messages, "vars": variables}
                case.update(render(env, source, messages, variables))
                cases.append(case)
        if name == "llama3_2":  # the date from a variable instead of strftime_now
            variables = {"tools": None, "documents": None, "add_generation_prompt": True,
                         "bos_token": bos, "eos_token": eos, "date_string": "01 Jan 2025"}
            case = {"name": f"{name}/date_string", "template": f"{name}.jinja",
                    "messages": CONVERSATIONS["system_user"], "vars": variables}
            case.update(render(env, source, CONVERSATIONS["system_user"], variables))
            cases.append(case)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"jinja2": jinja2.__version__, "now": NOW, "cases": cases}, f, ensure_ascii=False,
                  indent=1)
        f.write("\n")
    errors = sum("error" in c for c in cases)
    print(f"{len(cases)} cases ({errors} errors) -> {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
