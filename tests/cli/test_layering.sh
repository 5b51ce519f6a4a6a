#!/usr/bin/env bash
# The layering of the source tree (folders as layers, includes pointing down, no two files calling
# each other); the rules and the check are in tools/dev/check_layering.py. Then the check itself
# must see a circle of calls between files whatever the functions' prefix: a copy of the tree where
# the chat template's value file calls back into its evaluator (a ct_ circle) has to fail.
set -u
cd "${VKF_SOURCE_DIR:-.}"
python3 tools/dev/check_layering.py . || exit 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in graph shaders host models text runtime serve api tools/vkf tools/dev python/vkformer; do
  mkdir -p "$tmp/$(dirname "$d")" && cp -r "$d" "$tmp/$d"
done
printf '\nvkf_status planted_render(ct_ctx *c, const ct_node *n, ct_value *v) { return ct_eval(c, n, v); }\n' \
  >> "$tmp/text/chat_template_value.c"
out=$(python3 tools/dev/check_layering.py "$tmp")
if [ $? -eq 0 ] || ! grep 'circle:' <<<"$out" | grep 'chat_template_value.c' | grep -q 'chat_template_eval.c'; then
  echo "FAIL: check_layering.py did not report the planted ct_ circle (value -> eval -> value):"
  echo "$out"
  exit 1
fi
echo "planted ct_ circle reported: $(grep circle <<<"$out")"

# And the facet rule: above models/, nothing compares family names or casts the architecture
# object out of a model (models/registry/model.h's facets answer what a model can do).
printf '\nstatic int planted_is_bert(const vkf_model *m) { return !strcmp(vkf_model_family(m), "bert"); }\n' \
  >> "$tmp/api/embed.c"
printf '\nstatic void *planted_arch(vkf_model *m) { return (vkf_bert_model *)vkf_model_impl(m); }\n' \
  >> "$tmp/runtime/text_embed.c"
printf '\nif model.family == "bert":\n    pass\n' >> "$tmp/python/vkformer/model.py" 2>/dev/null
out=$(python3 tools/dev/check_layering.py "$tmp")
for want in 'facets: api/embed.c:.* family name' 'facets: runtime/text_embed.c:.* architecture object' \
    'facets: python/vkformer/model.py:.* compares a family name'; do
  if ! grep -q "$want" <<<"$out"; then
    echo "FAIL: check_layering.py did not report a planted facet violation ($want):"
    echo "$out"
    exit 1
  fi
done
echo "planted family comparisons and architecture casts reported: $(grep -c '^facets:' <<<"$out") lines"
