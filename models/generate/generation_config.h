/* The generation settings of a model folder, chosen as transformers 4.38.2 chooses them for
 * `model.generate()`: generation_config.json, or the generation fields of config.json. */
#ifndef VKF_MODELS_GENERATION_CONFIG_H
#define VKF_MODELS_GENERATION_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "models/generate/beam_search.h"
#include "models/generate/sampling.h"

#define VKF_GENERATION_MAX_EOS 32 /* entries of an eos_token_id / forced_eos_token_id list */
#define VKF_GENERATION_MAX_BAD_WORDS 256 /* sequences of bad_words_ids */
#define VKF_GENERATION_MAX_BAD_IDS 4096  /* ids of all bad_words_ids sequences together */
/* Either JSON file is read through vkf_json_read_file, bounded by VKF_JSON_MAX_FILE_SIZE. */

/* Where the values came from (Hugging Face's rule, see vkf_generation_config_load). */
typedef enum vkf_generation_source {
  VKF_GENERATION_DEFAULTS = 0,           /* neither file exists */
  VKF_GENERATION_FROM_GENERATION_CONFIG, /* generation_config.json */
  VKF_GENERATION_FROM_MODEL_CONFIG,      /* config.json (GenerationConfig.from_model_config) */
} vkf_generation_source;

/* GenerationConfig's defaults for what a file leaves out: no eos/bos/pad ids (-1, count 0),
 * max_length 20, max_new_tokens unset (-1), do_sample false, temperature 1.0, top_k 50, top_p 1.0,
 * repetition_penalty 1.0, no_repeat_ngram_size 0, num_beams 1, length_penalty 1.0, early_stopping
 * false, min_length 0, min_new_tokens unset (-1), no forced bos/eos, no decoder_start_token_id. */
typedef struct vkf_generation_config {
  vkf_generation_source source;
  int64_t eos_token_ids[VKF_GENERATION_MAX_EOS]; /* "eos_token_id": an int or a list */
  size_t eos_token_id_count;
  int64_t bos_token_id;   /* -1: none */
  int64_t pad_token_id;   /* -1: none */
  int64_t max_length;     /* prompt + generated, >= 1 */
  int64_t max_new_tokens; /* -1: unset; else >= 1 and it wins over max_length */
  bool do_sample;
  double temperature;           /* > 0 when do_sample (HF only warns about it otherwise) */
  int64_t top_k;                /* >= 0; 0 disables */
  double top_p;                 /* [0, 1]; 1 disables */
  double repetition_penalty;    /* > 0; 1 disables */
  int64_t no_repeat_ngram_size; /* >= 0; 0 disables */
  /* Beam search and the processors encoder-decoders use (models/generate/beam_search.h). */
  int64_t num_beams;                 /* >= 1; 1: greedy or sampling */
  double length_penalty;             /* finite; the exponent of a hypothesis' length */
  vkf_early_stopping early_stopping; /* "early_stopping": true, false or "never" */
  int64_t min_length;                /* >= 0; 0 disables */
  int64_t min_new_tokens;            /* -1: unset; else >= 0 */
  int64_t forced_bos_token_id;       /* -1: none */
  int64_t forced_eos_token_ids[VKF_GENERATION_MAX_EOS]; /* an int or a list */
  size_t forced_eos_token_id_count;
  int64_t decoder_start_token_id; /* -1: none */
  /* "bad_words_ids": sequences (each non-empty) whose last id may not follow the others
   * (NoBadWordsLogitsProcessor; a one-id sequence is banned always), concatenated. */
  int64_t bad_words[VKF_GENERATION_MAX_BAD_IDS];
  uint32_t bad_word_lens[VKF_GENERATION_MAX_BAD_WORDS];
  size_t bad_word_count;
} vkf_generation_config;

/* The settings of model folder `dir`, for a vocabulary of `vocab_size` (> 0) tokens. As in
 * transformers 4.38.2 (PreTrainedModel.from_pretrained, then generate()):
 *  - dir/generation_config.json exists: its fields, GenerationConfig's defaults for the rest;
 *    config.json is not consulted for missing fields. Except the legacy case: the file says
 *    "_from_model_config": true and config.json sets a generation parameter to a non-default
 *    value (PretrainedConfig._has_non_default_generation_parameters): then config.json is used
 *    as below.
 *  - otherwise dir/config.json exists: GenerationConfig.from_model_config: its top-level fields,
 *    and for a field still at its default, the value in a "decoder", "generator" or
 *    "text_config" object (in that order). A config class's own defaults (e.g. LlamaConfig's
 *    eos_token_id 2 when the file omits it) are not known here: what the file says counts.
 *  - neither: the defaults.
 * A field that is JSON null reads as absent. Errors are one line naming the file and the field:
 * NOT_FOUND never (missing files are fine); IO for a path that is not a regular file (a folder)
 * or unreadable; UNSUPPORTED for a file above VKF_JSON_MAX_FILE_SIZE or an eos or forced eos list
 * above VKF_GENERATION_MAX_EOS; PARSE for invalid JSON or a field of the wrong type;
 * INVALID_ARGUMENT for values out of range (see the struct; token ids must be in [0, vocab_size)).
 * *out_config is zeroed on failure. */
vkf_status vkf_generation_config_load(const char *dir, int64_t vocab_size,
                                      vkf_generation_config *out_config);

/* One generation_config.json document (not necessarily NUL-terminated); `name` is used in
 * messages. Same fields, defaults and checks as the load; source is
 * VKF_GENERATION_FROM_GENERATION_CONFIG. */
vkf_status vkf_generation_config_parse(const char *json, size_t size, const char *name,
                                       int64_t vocab_size, vkf_generation_config *out_config);

/* The processors and warpers generate() would run for this config (see vkf_sampling_options;
 * borrows the config's id lists; the caller sets prompt_len and max_length). */
void vkf_generation_config_sampling(const vkf_generation_config *config,
                                    vkf_sampling_options *out_options);

/* How many tokens generate() produces at most after a prompt of `prompt_count` ids:
 * max_new_tokens when set, else max_length - prompt_count, and at least 1 (Hugging Face appends
 * a token before it first checks the length). */
size_t vkf_generation_config_new_token_limit(const vkf_generation_config *config,
                                             size_t prompt_count);

/* Stop criteria over this config's eos ids and new-token limit (borrows config->eos_token_ids;
 * no stop strings). */
void vkf_generation_config_stop_criteria(const vkf_generation_config *config, size_t prompt_count,
                                         vkf_stop_criteria *out_criteria);

#endif
