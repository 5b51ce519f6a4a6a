/* The shipped models' search (models/formats/default_models.h): VKF_MODEL_PATH first, in order,
 * skipping folders without the model's config.json; then <executable's folder>/../share/vkformer/
 * models, which for this test binary (build/tests/) is the build tree's links to the committed
 * checkpoints; one NOT_FOUND error naming every folder tried; names that are not plain folder
 * names refused. Run from the source root (ctest's working directory). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "models/formats/default_models.h"
#include "tests/test_util.h"

static void make_model(const char *root, const char *name, int with_config) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", root, name);
  VKF_ASSERT(mkdir(path, 0700) == 0);
  if (!with_config) return;
  snprintf(path, sizeof path, "%s/%s/config.json", root, name);
  FILE *f = fopen(path, "w");
  VKF_ASSERT(f);
  fputs("{}", f);
  fclose(f);
}

static void set_model_path(const char *value) {
  if (value)
    setenv("VKF_MODEL_PATH", value, 1);
  else
    unsetenv("VKF_MODEL_PATH");
  vkf_env_reload();
}

/* Without VKF_MODEL_PATH: the build tree's share/vkformer/models beside build/tests/. */
static void test_beside_executable(void) {
  set_model_path(NULL);
  char *found = NULL;
  CHECK_OK(vkf_default_model_find("vit_tiny", &found));
  const char *tail = "/share/vkformer/models/vit_tiny";
  CHECK_MSG(found && strlen(found) > strlen(tail) &&
                strcmp(found + strlen(found) - strlen(tail), tail) == 0,
            "found %s", found ? found : "(null)");
  char a[PATH_MAX], b[PATH_MAX];
  CHECK(found && realpath(found, a) && realpath("tests/models/data/vit_tiny", b) && !strcmp(a, b));
  free(found);
}

static void test_model_path_order(const char *root) {
  char first[PATH_MAX / 2], second[PATH_MAX / 2], value[3 * PATH_MAX], want[PATH_MAX];
  snprintf(first, sizeof first, "%s/first", root);
  snprintf(second, sizeof second, "%s/second", root);
  VKF_ASSERT(mkdir(first, 0700) == 0 && mkdir(second, 0700) == 0);
  make_model(first, "vit_tiny", 0); /* a folder without config.json is not the model */
  make_model(second, "vit_tiny", 1);
  make_model(first, "only_first", 1);
  make_model(second, "only_first", 1);

  snprintf(value, sizeof value, "%s/nowhere::%s:%s", root, first, second);
  set_model_path(value);
  char *found = NULL;
  CHECK_OK(vkf_default_model_find("vit_tiny", &found));
  snprintf(want, sizeof want, "%s/vit_tiny", second);
  CHECK_MSG(found && !strcmp(found, want), "found %s, want %s", found ? found : "(null)", want);
  free(found);
  found = NULL;
  CHECK_OK(vkf_default_model_find("only_first", &found));
  snprintf(want, sizeof want, "%s/only_first", first);
  CHECK_MSG(found && !strcmp(found, want), "found %s, want %s", found ? found : "(null)", want);
  free(found);
  found = NULL;

  /* VKF_MODEL_PATH without the model: the executable-relative folder still answers. */
  snprintf(value, sizeof value, "%s", first);
  set_model_path(value);
  CHECK_OK(vkf_default_model_find("vit_tiny", &found));
  CHECK_MSG(found && strstr(found, "/share/vkformer/models/vit_tiny"), "found %s",
            found ? found : "(null)");
  free(found);
  found = NULL;

  /* Not found anywhere: one error naming VKF_MODEL_PATH's folders and the share folder. */
  CHECK_STATUS(vkf_default_model_find("no_such_model", &found), VKF_STATUS_NOT_FOUND,
               "no_such_model/config.json not found");
  CHECK_STATUS(vkf_default_model_find("no_such_model", &found), VKF_STATUS_NOT_FOUND, first);
  CHECK_STATUS(vkf_default_model_find("no_such_model", &found), VKF_STATUS_NOT_FOUND,
               "share/vkformer/models");
  CHECK_STATUS(vkf_default_model_find("no_such_model", &found), VKF_STATUS_NOT_FOUND,
               "VKF_MODEL_PATH");
  CHECK(found == NULL);
  set_model_path(NULL);
}

static void test_bad_names(void) {
  const char *names[] = {"", ".", "..", "../vit_tiny", "a/b", "/etc"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *found = NULL;
    CHECK_STATUS(vkf_default_model_find(names[i], &found), VKF_STATUS_INVALID_ARGUMENT,
                 "not a plain folder name");
    CHECK(found == NULL);
  }
}

int main(void) {
  char root[] = "/tmp/vkf_models_XXXXXX";
  VKF_ASSERT(mkdtemp(root));
  test_beside_executable();
  test_model_path_order(root);
  test_bad_names();
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  return test_report();
}
