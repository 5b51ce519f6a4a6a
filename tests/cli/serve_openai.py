#!/usr/bin/env python3
"""The official `openai` package (a pinned 1.x, in the venv tests/cli/test_serve.sh makes) against
`vkf serve`: chat and text completions at temperature 0 give the text `vkf chat` / `vkf generate`
give, streamed chunks join to it, embeddings (the package asks for base64 and decodes it) equal
`vkf embed --json`, the model list, and the package's own exceptions for a wrong key, an unknown
model and a bad parameter. Prints "ok NAME" / "FAIL NAME: why" lines and "N failed".

    serve_openai.py URL KEY MODEL EMBEDDER REFDIR
"""
import json
import os
import sys

import openai

url, key, model, embedder, d = sys.argv[1:]
failures = []


def check(name, cond, why=""):
    print(("ok %s" % name) if cond else ("FAIL %s: %s" % (name, why)))
    if not cond:
        failures.append(name)


client = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0, timeout=600)
chat = json.load(open(os.path.join(d, "chat.json")))
messages = json.load(open(os.path.join(d, "messages.json")))
r = client.chat.completions.create(model=model, messages=messages, temperature=0, max_tokens=16)
check("openai chat = vkf chat", r.choices[0].message.content == chat["reply"] and
      r.usage.completion_tokens == len(chat["ids"]), repr(r))
parts = [c.choices[0].delta.content or "" for c in client.chat.completions.create(
    model=model, messages=messages, temperature=0, max_tokens=16, stream=True) if c.choices]
check("openai chat stream", "".join(parts) == chat["reply"], repr(parts))

gen = json.load(open(os.path.join(d, "generate.json")))
prompt = open(os.path.join(d, "prompt.txt")).read()
r = client.completions.create(model=model, prompt=prompt, temperature=0, max_tokens=16)
check("openai completion = vkf generate", r.choices[0].text == gen["text"], repr(r))
parts = [c.choices[0].text for c in client.completions.create(
    model=model, prompt=prompt, temperature=0, max_tokens=16, stream=True)]
check("openai completion stream", "".join(parts) == gen["text"], repr(parts))

emb = json.load(open(os.path.join(d, "embed.json")))
texts = [e["text"] for e in emb["embeddings"]]
r = client.embeddings.create(model=embedder, input=texts)
worst = max(abs(x - y) for got, want in zip(r.data, emb["embeddings"])
            for x, y in zip(got.embedding, want["embedding"]))
check("openai embeddings = vkf embed", len(r.data) == len(texts) and worst <= 1e-8, str(worst))
check("openai models", {m.id for m in client.models.list()} >= {model, embedder})

errors = [
    ("wrong key", openai.AuthenticationError,
     lambda: openai.OpenAI(base_url=url + "/v1", api_key="nope", max_retries=0).models.list()),
    ("unknown model", openai.NotFoundError,
     lambda: client.chat.completions.create(model="gpt-4o", messages=messages)),
    ("bad temperature", openai.BadRequestError,
     lambda: client.completions.create(model=model, prompt="x", temperature=5)),
]
for name, cls, call in errors:
    try:
        call()
        check("openai error: " + name, False, "no exception")
    except cls as e:
        check("openai error: " + name, isinstance(e.body, dict) and e.body.get("message"), repr(e.body))
    except Exception as e:  # noqa: BLE001 - the wrong exception class is the failure
        check("openai error: " + name, False, repr(e))
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
