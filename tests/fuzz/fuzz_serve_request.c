/* vkf serve's request bodies (serve/openai.c): the first byte picks the endpoint (chat,
 * completions, embeddings), the rest is the body. Whatever it holds, the parser returns 0 or an
 * HTTP status with a one-line message recorded; a parsed request keeps to its bounds; the result
 * and error JSON render. */
#include <stdlib.h>
#include <string.h>

#include "serve/serve_internal.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  static char *names[2] = {"talk", "minilm"};
  static const char *paths[2] = {"talk", "minilm"};
  static struct vkf_server srv;
  static int ready;
  if (!ready) {
    srv.names = names;
    srv.paths = paths;
    srv.model_count = 2;
    pthread_mutex_init(&srv.jobs_mu, NULL);
    ready = 1;
  }
  serve_kind kind = (serve_kind)(data[0] % 3);
  serve_job *j = vkf_serve_job_new(&srv);
  FUZZ_ASSERT(j);
  int status = vkf_serve_parse(&srv, kind, (const char *)data + 1, size - 1, j);
  if (status) {
    FUZZ_ASSERT(status == 400 || status == 404);
    FUZZ_ASSERT(j->status == status && j->error && j->error[0] && !strchr(j->error, '\n'));
    char *e = vkf_serve_error_json(j->error, j->error_type, j->error_param, j->error_code);
    FUZZ_ASSERT(e);
    free(e);
  } else {
    FUZZ_ASSERT(j->model >= 0 && j->model < 2 && j->n >= 1 && j->n <= SERVE_MAX_N);
    FUZZ_ASSERT(j->stop_count <= VKF_SLOTS_MAX_STOPS && j->max_tokens >= 0);
    FUZZ_ASSERT(j->top_logprobs >= 0 && j->top_logprobs <= VKF_SLOTS_MAX_TOP_LOGPROBS);
    FUZZ_ASSERT(kind != SERVE_EMBEDDING || (j->input_count >= 1 && j->input_count <= SERVE_MAX_INPUTS));
    FUZZ_ASSERT(kind != SERVE_CHAT || j->messages);
    FUZZ_ASSERT(kind != SERVE_COMPLETION || j->prompt);
    if (kind != SERVE_EMBEDDING) {
      char *r = vkf_serve_result_json(j); /* no choices filled: empty texts */
      FUZZ_ASSERT(r);
      free(r);
    }
  }
  vkf_serve_job_release(j);
  return 0;
}
