/* Owns reading two facts from a compute module's SPIR-V: whether it uses subgroup operations (its
 * pipeline then runs at the planned subgroup size, host/kernel.c) and its workgroup width after
 * specialization (full subgroups can be required only of a multiple of the size). */
#include "host/spirv_info.h"

#include <stdlib.h>

enum {
  OP_EXECUTION_MODE = 16,
  OP_CAPABILITY = 17,
  OP_CONSTANT = 43,
  OP_SPEC_CONSTANT = 50,
  OP_SPEC_CONSTANT_COMPOSITE = 51,
  OP_DECORATE = 71,
  OP_EXECUTION_MODE_ID = 331,
  MODE_LOCAL_SIZE = 17,
  MODE_LOCAL_SIZE_ID = 38,
  DECORATION_SPEC_ID = 1,
  DECORATION_BUILTIN = 11,
  BUILTIN_WORKGROUP_SIZE = 25,
  CAP_GROUP_NON_UNIFORM_FIRST = 61, /* GroupNonUniform .. GroupNonUniformQuad */
  CAP_GROUP_NON_UNIFORM_LAST = 68,
  CAP_SUBGROUP_BALLOT_KHR = 4423,
  CAP_SUBGROUP_VOTE_KHR = 4431,
};

typedef struct id_facts {
  int32_t spec_id; /* -1: none */
  uint32_t value;  /* OpConstant / OpSpecConstant default literal */
  uint32_t first;  /* OpSpecConstantComposite: its x constituent */
  uint8_t kind;    /* 0 unknown, 1 constant, 2 spec constant, 3 composite */
} id_facts;

static uint32_t resolve(const id_facts *ids, uint32_t bound, uint32_t id, const uint32_t *spec,
                        uint32_t spec_count) {
  if (id >= bound) return 0;
  const id_facts *f = &ids[id];
  if (f->kind == 3) return resolve(ids, bound, f->first, spec, spec_count);
  if (f->kind == 2 && f->spec_id >= 0 && (uint32_t)f->spec_id < spec_count)
    return spec[f->spec_id];
  return f->kind ? f->value : 0;
}

void vkf_spirv_info_read(const uint32_t *words, size_t size, const uint32_t *spec,
                         uint32_t spec_count, vkf_spirv_info *out_info) {
  *out_info = (vkf_spirv_info){0};
  size_t n = size / 4;
  if (n < 5) return;
  uint32_t bound = words[3];
  id_facts *ids = bound && bound < (1u << 22) ? calloc(bound, sizeof *ids) : NULL;
  uint32_t literal_x = 0, size_id = 0, builtin_id = 0;
  for (uint32_t i = 0; ids && i < bound; i++) ids[i].spec_id = -1;
  for (size_t at = 5; at < n;) {
    uint32_t count = words[at] >> 16, op = words[at] & 0xffffu;
    if (count == 0 || at + count > n) break;
    const uint32_t *w = &words[at];
    if (op == OP_CAPABILITY && count >= 2 &&
        ((w[1] >= CAP_GROUP_NON_UNIFORM_FIRST && w[1] <= CAP_GROUP_NON_UNIFORM_LAST) ||
         w[1] == CAP_SUBGROUP_BALLOT_KHR || w[1] == CAP_SUBGROUP_VOTE_KHR))
      out_info->uses_subgroups = 1;
    else if (op == OP_EXECUTION_MODE && count >= 4 && w[2] == MODE_LOCAL_SIZE)
      literal_x = w[3];
    else if (op == OP_EXECUTION_MODE_ID && count >= 4 && w[2] == MODE_LOCAL_SIZE_ID)
      size_id = w[3];
    else if (op == OP_DECORATE && count >= 4 && w[2] == DECORATION_BUILTIN &&
             w[3] == BUILTIN_WORKGROUP_SIZE)
      builtin_id = w[1];
    else if (ids && op == OP_DECORATE && count >= 4 && w[2] == DECORATION_SPEC_ID && w[1] < bound)
      ids[w[1]].spec_id = (int32_t)w[3];
    else if (ids && (op == OP_CONSTANT || op == OP_SPEC_CONSTANT) && count >= 4 && w[2] < bound) {
      ids[w[2]].kind = op == OP_CONSTANT ? 1 : 2;
      ids[w[2]].value = w[3];
    } else if (ids && op == OP_SPEC_CONSTANT_COMPOSITE && count >= 4 && w[2] < bound) {
      ids[w[2]].kind = 3;
      ids[w[2]].first = w[3];
    }
    at += count;
  }
  /* The WorkgroupSize built-in overrides the execution mode (local_size_x_id in GLSL). */
  if (ids && builtin_id)
    out_info->local_size_x = resolve(ids, bound, builtin_id, spec, spec_count);
  else if (ids && size_id)
    out_info->local_size_x = resolve(ids, bound, size_id, spec, spec_count);
  else
    out_info->local_size_x = literal_x;
  free(ids);
}
