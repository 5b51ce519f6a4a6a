/* libstdc++'s partial_sort, nth_element and sort (GCC's bits/stl_algo.h, stl_heap.h), with the
 * comparator of torch 1.13's topk_impl_loop for largest=True: x before y when x is NaN and y is
 * not, or x > y. Every step mirrors the library so that equal values end up where torch puts them.
 */
#include "models/generate/torch_topk.h"

#include <math.h>
#include <stdbool.h>

typedef vkf_topk_item item;

static bool before(const item *x, const item *y) {
  return (isnan(x->value) && !isnan(y->value)) || x->value > y->value;
}

static void swap_items(item *a, item *b) {
  item t = *a;
  *a = *b;
  *b = t;
}

static ptrdiff_t lg(ptrdiff_t n) {
  ptrdiff_t k = 0;
  while (n > 1) n >>= 1, k++;
  return k;
}

/* ---- heaps ---- */

static void push_heap(item *first, ptrdiff_t hole, ptrdiff_t top, item value) {
  ptrdiff_t parent = (hole - 1) / 2;
  while (hole > top && before(&first[parent], &value)) {
    first[hole] = first[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  first[hole] = value;
}

static void adjust_heap(item *first, ptrdiff_t hole, ptrdiff_t len, item value) {
  const ptrdiff_t top = hole;
  ptrdiff_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (before(&first[child], &first[child - 1])) child--;
    first[hole] = first[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    first[hole] = first[child - 1];
    hole = child - 1;
  }
  push_heap(first, hole, top, value);
}

static void make_heap(item *first, item *last) {
  ptrdiff_t len = last - first;
  if (len < 2) return;
  for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
    adjust_heap(first, parent, len, first[parent]);
    if (parent == 0) return;
  }
}

static void pop_heap(item *first, item *last, item *result) {
  item value = *result;
  *result = *first;
  adjust_heap(first, 0, last - first, value);
}

static void heap_select(item *first, item *middle, item *last) {
  make_heap(first, middle);
  for (item *i = middle; i < last; i++)
    if (before(i, first)) pop_heap(first, middle, i);
}

static void sort_heap(item *first, item *last) {
  while (last - first > 1) {
    --last;
    pop_heap(first, last, last);
  }
}

static void partial_sort(item *first, item *middle, item *last) {
  heap_select(first, middle, last);
  sort_heap(first, middle);
}

/* ---- quicksort pieces ---- */

static void move_median_to_first(item *result, item *a, item *b, item *c) {
  if (before(a, b)) {
    if (before(b, c))
      swap_items(result, b);
    else if (before(a, c))
      swap_items(result, c);
    else
      swap_items(result, a);
  } else if (before(a, c)) {
    swap_items(result, a);
  } else if (before(b, c)) {
    swap_items(result, c);
  } else {
    swap_items(result, b);
  }
}

static item *unguarded_partition(item *first, item *last, const item *pivot) {
  for (;;) {
    while (before(first, pivot)) first++;
    --last;
    while (before(pivot, last)) --last;
    if (!(first < last)) return first;
    swap_items(first, last);
    first++;
  }
}

static item *partition_pivot(item *first, item *last) {
  item *mid = first + (last - first) / 2;
  move_median_to_first(first, first + 1, mid, last - 1);
  return unguarded_partition(first + 1, last, first);
}

static void unguarded_linear_insert(item *last) {
  item value = *last;
  item *next = last - 1;
  while (before(&value, next)) {
    *last = *next;
    last = next--;
  }
  *last = value;
}

static void insertion_sort(item *first, item *last) {
  if (first == last) return;
  for (item *i = first + 1; i != last; i++) {
    if (before(i, first)) {
      item value = *i;
      for (item *p = i; p > first; p--) p[0] = p[-1];
      *first = value;
    } else {
      unguarded_linear_insert(i);
    }
  }
}

static void introsort_loop(item *first, item *last, ptrdiff_t depth) {
  while (last - first > 16) {
    if (depth == 0) {
      partial_sort(first, last, last);
      return;
    }
    --depth;
    item *cut = partition_pivot(first, last);
    introsort_loop(cut, last, depth);
    last = cut;
  }
}

static void sort(item *first, item *last) {
  if (first == last) return;
  introsort_loop(first, last, 2 * lg(last - first));
  if (last - first > 16) {
    insertion_sort(first, first + 16);
    for (item *i = first + 16; i != last; i++) unguarded_linear_insert(i);
  } else {
    insertion_sort(first, last);
  }
}

static void nth_element(item *first, item *nth, item *last) {
  if (first == last || nth == last) return;
  ptrdiff_t depth = 2 * lg(last - first);
  while (last - first > 3) {
    if (depth == 0) {
      heap_select(first, nth + 1, last);
      swap_items(first, nth);
      return;
    }
    --depth;
    item *cut = partition_pivot(first, last);
    if (cut <= nth)
      first = cut;
    else
      last = cut;
  }
  insertion_sort(first, last);
}

void vkf_torch_topk(const float *values, size_t n, size_t k, vkf_topk_item *scratch,
                    float *out_values, int64_t *out_indices) {
  for (size_t i = 0; i < n; i++) scratch[i] = (item){values[i], (int64_t)i};
  if (k * 64 <= n) {
    partial_sort(scratch, scratch + k, scratch + n);
  } else {
    nth_element(scratch, scratch + k - 1, scratch + n);
    sort(scratch, scratch + k - 1);
  }
  for (size_t i = 0; i < k; i++) {
    out_values[i] = (float)scratch[i].value;
    out_indices[i] = scratch[i].index;
  }
}
