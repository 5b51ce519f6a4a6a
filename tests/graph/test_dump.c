/* Dumps: VKF_DUMP=passes writes text/DOT/JSON after every pass; the text of a small graph after
 * each pass matches tests/graph/golden/ (regenerate with VKF_UPDATE_GOLDEN=1), every DOT file
 * renders with `dot -Tsvg` when graphviz is installed, and every JSON file parses. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "graph/ir/builder.h"
#include "graph/ir/dump.h"
#include "graph/passes/passes.h"
#include "tests/graph/small_block.h"
#include "tests/test_util.h"

#define GOLDEN_DIR "tests/graph/golden"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* ---- a strict little JSON checker (RFC 8259 grammar, no semantics) ---- */
static const char *json_value(const char *p);
static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
  return p;
}
static const char *json_string(const char *p) {
  if (*p++ != '"') return NULL;
  while (*p && *p != '"') {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
    p++;
  }
  return *p == '"' ? p + 1 : NULL;
}
static const char *json_number(const char *p) {
  const char *start = p;
  if (*p == '-') p++;
  while (*p >= '0' && *p <= '9') p++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    while (*p >= '0' && *p <= '9') p++;
  }
  return p > start ? p : NULL;
}
static const char *json_value(const char *p) {
  p = ws(p);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    int object = *p == '{';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (object) {
        p = json_string(ws(p));
        if (!p) return NULL;
        p = ws(p);
        if (*p++ != ':') return NULL;
      }
      p = json_value(p);
      if (!p) return NULL;
      p = ws(p);
      if (*p == close) return p + 1;
      if (*p++ != ',') return NULL;
    }
  }
  if (*p == '"') return json_string(p);
  if (!strncmp(p, "null", 4) || !strncmp(p, "true", 4)) return p + 4;
  if (!strncmp(p, "false", 5)) return p + 5;
  return json_number(p);
}
static int json_valid(const char *text) {
  const char *end = json_value(text);
  return end && *ws(end) == '\0';
}

static int have_dot(void) {
  return system("command -v dot >/dev/null 2>&1") == 0;
}

static void test_pass_dumps(void) {
  char dir[] = "/tmp/vkf_dump_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  /* Dumping is driven by the environment, as a user would turn it on. */
  setenv("VKF_DUMP", "passes", 1);
  setenv("VKF_DUMP_DIR", dir, 1);
  unsetenv("VKF_NO_FUSE");
  vkf_env_reload();
  vkf_graph *g = small_block();
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(g, NULL, &report));
  unsetenv("VKF_DUMP");
  unsetenv("VKF_DUMP_DIR");
  vkf_env_reload();
  int update = vkf_env_get()->update_golden;
  int dot = have_dot();
  if (!dot) fprintf(stderr, "note: graphviz `dot` not installed; DOT rendering not checked\n");
  uint32_t count;
  const vkf_pass *passes = vkf_passes_list(&count);
  for (uint32_t i = 0; i < count; i++) {
    char path[512], golden[512], cmd[1200];
    snprintf(path, sizeof path, "%s/%02u_%s.txt", dir, i, passes[i].name);
    snprintf(golden, sizeof golden, GOLDEN_DIR "/%02u_%s.txt", i, passes[i].name);
    char *got = read_file(path);
    CHECK_MSG(got != NULL, "missing dump %s", path);
    if (!got) continue;
    if (update) {
      int written = write_file(golden, got);
      CHECK_MSG(written, "cannot write %s", golden);
      if (written) fprintf(stderr, "updated %s\n", golden);
    }
    char *want = read_file(golden);
    CHECK_MSG(want != NULL, "missing golden %s (run with VKF_UPDATE_GOLDEN=1)", golden);
    if (want && strcmp(got, want) != 0) {
      CHECK_MSG(0,
                "%s differs from %s; diff them, and if the change is intended rerun with "
                "VKF_UPDATE_GOLDEN=1",
                path, golden);
      snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' >&2", golden, path);
      if (system(cmd)) { /* diff exits 1 on differences: expected here */
      }
    }
    free(want);
    free(got);

    snprintf(path, sizeof path, "%s/%02u_%s.json", dir, i, passes[i].name);
    char *json = read_file(path);
    CHECK_MSG(json && json_valid(json), "%s is not valid JSON", path);
    free(json);

    snprintf(path, sizeof path, "%s/%02u_%s.dot", dir, i, passes[i].name);
    if (dot) {
      snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o '%s.svg'", path, path);
      CHECK_MSG(system(cmd) == 0, "dot -Tsvg failed on %s", path);
    }
  }
  /* The planned graph's dumps carry offsets and sizes. */
  char path[512];
  snprintf(path, sizeof path, "%s/%02u_memory_plan.json", dir, count - 1);
  char *json = read_file(path);
  CHECK(json && strstr(json, "\"arena_offset\"") && strstr(json, "\"peak_size\""));
  free(json);
  snprintf(path, sizeof path, "%s/%02u_memory_plan.dot", dir, count - 1);
  char *dot_text = read_file(path);
  CHECK(dot_text && strstr(dot_text, "arena @"));
  free(dot_text);
  vkf_graph_destroy(g);

  /* Clean up the temporary directory. */
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static void test_json_checker(void) {
  /* The checker itself must reject what is not JSON, or the test above proves nothing. */
  CHECK(json_valid("{\"a\": [1, -2.5e3, null, \"x\\n\"], \"b\": {}}"));
  CHECK(!json_valid("{\"a\": [1, 2,]}"));
  CHECK(!json_valid("{\"a\" 1}"));
  CHECK(!json_valid("{\"a\": \"unterminated}"));
  CHECK(!json_valid("[1] 2"));
}

static void test_dump_errors(void) {
  vkf_graph *g = small_block();
  CHECK_STATUS(vkf_dump_files(g, "/nonexistent/dir", "x"), VKF_STATUS_IO,
               "cannot write dump /nonexistent/dir/x.txt");
  vkf_graph_destroy(g);
}

int main(void) {
  test_json_checker();
  test_pass_dumps();
  test_dump_errors();
  return test_report();
}
