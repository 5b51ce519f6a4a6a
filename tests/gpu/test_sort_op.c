/* ARGSORT on the device against the interpreter's merge sort: rows of 1 to 300 keys of rank 1 to
 * 4, distinct random keys and small integers with many ties (stability: equal keys keep their
 * index order), a strided input (copied by the builder), and a permutation sorted back by its own
 * argsort (Reformer's undo). Indices are exact: tolerance 0. */
#include "tests/op_case.h"

static const op_tol TOL_EXACT = {0.0, 0.0};

int main(void) {
  gpu_test t = gpu_test_start();
  static const struct {
    uint32_t rank;
    int64_t shape[4];
    int ints;
  } cases[] = {{1, {1}, 0},          {1, {37}, 0},         {2, {5, 16}, 1},
               {3, {2, 3, 300}, 0},  {3, {4, 2, 60}, 1},   {4, {2, 2, 3, 7}, 1},
               {2, {3, 129}, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    op_case c = op_case_begin("argsort");
    vkf_value k = op_case_input_ex(&c, "keys", VKF_F32, cases[i].rank, cases[i].shape,
                                   cases[i].ints ? 0.0f : -1.0f, cases[i].ints ? 4.0f : 1.0f,
                                   cases[i].ints);
    char label[64];
    snprintf(label, sizeof label, "argsort case %zu%s", i, cases[i].ints ? " (ties)" : "");
    op_case_run(&t, &c, vkf_argsort(c.g, "op", k), TOL_EXACT, label);
  }
  {
    op_case c = op_case_begin("argsort_strided");
    int64_t s[3] = {2, 9, 5};
    vkf_value k = op_case_input_ex(&c, "keys", VKF_F32, 3, s, 0.0f, 3.0f, 1);
    static const uint32_t ax[3] = {0, 2, 1};
    op_case_run(&t, &c, vkf_argsort(c.g, "op", vkf_permute(c.g, "kt", k, ax)), TOL_EXACT,
                "argsort strided");
  }
  {
    /* argsort(argsort(x)) is the inverse permutation: the rank of each key. */
    op_case c = op_case_begin("argsort_undo");
    int64_t s[2] = {3, 50};
    vkf_value k = op_case_input_ex(&c, "keys", VKF_F32, 2, s, 0.0f, 6.0f, 1);
    vkf_value order = vkf_argsort(c.g, "order", k);
    op_case_run(&t, &c, vkf_argsort(c.g, "op", vkf_cast(c.g, "order.f32", order, VKF_F32)),
                TOL_EXACT, "argsort of an argsort");
  }
  return gpu_test_finish(&t);
}
