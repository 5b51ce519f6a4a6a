#!/usr/bin/env bash
# The layering of DESIGN.md, checked on every #include: graph/ is the bottom layer (no Vulkan,
# no other project folder), shaders/ is text, host/ sees graph + shaders, models/ sees graph only.
set -u
cd "${VKF_SOURCE_DIR:-.}"
fail=0
check() { # folder, allowed project prefixes (regex), forbidden system headers (regex)
  local folder=$1 allowed=$2 forbidden=$3
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include[[:space:]]*[<"]([^>"]+)[>"].*/\1/' <<<"$line")
    if [[ $line == *'"'* ]] && ! [[ $inc =~ ^($allowed)/ ]]; then
      echo "layering: $file includes \"$inc\" (allowed: $allowed)"; fail=1
    fi
    if [[ $inc =~ $forbidden ]]; then
      echo "layering: $file includes <$inc>, which $folder/ must not use"; fail=1
    fi
  done < <(grep -H '^[[:space:]]*#include' "$folder"/*.[ch] 2>/dev/null)
}
check graph 'graph' '^(vulkan|volk|shaderc|cjson|stb)'
check shaders 'shaders' '^(vulkan|volk|shaderc)'
check host 'graph|shaders|host' '^(cjson|stb)'
check models 'graph|models' '^(vulkan|volk|shaderc)'
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
