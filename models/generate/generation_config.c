/* generation_config.json / config.json reading: bounded file reads, the typed field readers, the
 * choice between the two files that transformers 4.38.2 makes, and the range checks. */
#include "models/generate/generation_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/formats/json_fields.h"

static const vkf_generation_config k_defaults = {
    .bos_token_id = -1,
    .pad_token_id = -1,
    .max_length = 20,
    .max_new_tokens = -1,
    .temperature = 1.0,
    .top_k = 50,
    .top_p = 1.0,
    .repetition_penalty = 1.0,
    .num_beams = 1,
    .length_penalty = 1.0,
    .min_new_tokens = -1,
    .forced_bos_token_id = -1,
    .decoder_start_token_id = -1,
};

/* ---- files ---- */

/* The whole file, NUL-terminated; *out_text NULL (and OK) when it does not exist. */
static vkf_status read_optional_file(const char *path, char **out_text, size_t *out_size) {
  vkf_status s = vkf_json_read_file(path, out_text, out_size);
  if (vkf_status_code_of(s) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(s);
    return VKF_OK;
  }
  return s;
}

/* ---- typed fields ---- */

static vkf_status get_int(const char *file, const cJSON *item, const char *key, int64_t *value) {
  if (!vkf_json_is_int(item))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be an integer", file, key);
  *value = (int64_t)item->valuedouble;
  return VKF_OK;
}

static vkf_status get_number(const char *file, const cJSON *item, const char *key, double *value) {
  if (!cJSON_IsNumber(item))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be a number", file, key);
  *value = item->valuedouble;
  return VKF_OK;
}

/* An int or a list of ints ("eos_token_id", "forced_eos_token_id") into
 * ids[VKF_GENERATION_MAX_EOS]. */
static vkf_status get_id_list(const char *file, const cJSON *item, const char *key, int64_t *ids,
                              size_t *count) {
  if (vkf_json_is_int(item)) {
    ids[0] = (int64_t)item->valuedouble;
    *count = 1;
    return VKF_OK;
  }
  if (!cJSON_IsArray(item))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: field \"%s\" must be an integer or a list of integers", file, key);
  int n = cJSON_GetArraySize(item);
  if (n > VKF_GENERATION_MAX_EOS)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: field \"%s\" lists %d ids, more than %d",
                           file, key, n, VKF_GENERATION_MAX_EOS);
  size_t i = 0;
  for (const cJSON *e = item->child; e; e = e->next, i++) {
    if (!vkf_json_is_int(e))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\"[%zu] is not an integer", file, key,
                             i);
    ids[i] = (int64_t)e->valuedouble;
  }
  *count = i;
  return VKF_OK;
}

/* "bad_words_ids": a list of non-empty lists of ids (HF's _validate_arguments: ints >= 0). */
static vkf_status get_bad_words(const char *file, const cJSON *item, vkf_generation_config *c) {
  const char *key = "bad_words_ids";
  c->bad_word_count = 0;
  if (cJSON_IsNull(item)) return VKF_OK;
  if (!cJSON_IsArray(item) || !item->child)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: field \"%s\" must be a non-empty list of lists of ids", file, key);
  size_t at = 0, s = 0;
  for (const cJSON *seq = item->child; seq; seq = seq->next, s++) {
    if (!cJSON_IsArray(seq) || !seq->child)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\"[%zu] is not a non-empty list",
                             file, key, s);
    if (s >= VKF_GENERATION_MAX_BAD_WORDS)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: field \"%s\" lists more than %d sequences",
                             file, key, VKF_GENERATION_MAX_BAD_WORDS);
    uint32_t len = 0;
    for (const cJSON *e = seq->child; e; e = e->next, len++, at++) {
      if (!vkf_json_is_int(e) || e->valuedouble < 0)
        return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\"[%zu][%u] is not an id >= 0",
                               file, key, s, len);
      if (at >= VKF_GENERATION_MAX_BAD_IDS)
        return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "%s: field \"%s\" holds more than %d ids in all", file, key,
                               VKF_GENERATION_MAX_BAD_IDS);
      c->bad_words[at] = (int64_t)e->valuedouble;
    }
    c->bad_word_lens[s] = len;
  }
  c->bad_word_count = s;
  return VKF_OK;
}

/* GenerationConfig fields whose processors (or outputs) vkformer does not have, with the value
 * that leaves them off (NAN: None). One set otherwise is refused: generate() would change the
 * tokens, and ignoring it would give other tokens than transformers without a word. */
static const struct {
  const char *key;
  double off;
} k_unsupported[] = {
    {"suppress_tokens", NAN},       {"begin_suppress_tokens", NAN},
    {"sequence_bias", NAN},         {"forced_decoder_ids", NAN},
    {"typical_p", 1},               {"epsilon_cutoff", 0},
    {"eta_cutoff", 0},              {"num_return_sequences", 1},
    {"num_beam_groups", 1},         {"diversity_penalty", 0},
    {"penalty_alpha", NAN},         {"guidance_scale", NAN},
    {"encoder_repetition_penalty", 1}, {"encoder_no_repeat_ngram_size", 0},
    {"exponential_decay_length_penalty", NAN}, {"remove_invalid_values", 0},
    {"constraints", NAN},           {"force_words_ids", NAN},
    {"max_time", NAN},
};

static vkf_status refuse_unsupported(const char *file, const cJSON *obj) {
  for (size_t i = 0; i < sizeof k_unsupported / sizeof k_unsupported[0]; i++) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, k_unsupported[i].key);
    const double off = k_unsupported[i].off;
    if (!item || cJSON_IsNull(item)) continue;
    int is_off = !isnan(off) && ((cJSON_IsNumber(item) && item->valuedouble == off) ||
                                 (cJSON_IsBool(item) && (cJSON_IsTrue(item) ? 1.0 : 0.0) == off));
    if (is_off) continue;
    char *text = cJSON_PrintUnformatted(item);
    vkf_status st = vkf_status_make(
        VKF_STATUS_UNSUPPORTED,
        "%s: field \"%s\" is %.60s, which vkformer's generate does not implement (remove it, or "
        "set it to %s)",
        file, k_unsupported[i].key, text ? text : "set", isnan(off) ? "null" : off == 1 ? "1" : "0");
    cJSON_free(text);
    return st;
  }
  return VKF_OK;
}

/* "early_stopping": true, false or "never" (BeamHypotheses' three modes). */
static vkf_status get_early_stopping(const char *file, const cJSON *item, vkf_early_stopping *out) {
  if (cJSON_IsBool(item)) {
    *out = cJSON_IsTrue(item) ? VKF_EARLY_STOPPING_TRUE : VKF_EARLY_STOPPING_FALSE;
    return VKF_OK;
  }
  if (cJSON_IsString(item) && !strcmp(item->valuestring, "never")) {
    *out = VKF_EARLY_STOPPING_NEVER;
    return VKF_OK;
  }
  return vkf_status_make(VKF_STATUS_PARSE,
                         "%s: field \"early_stopping\" must be true, false or \"never\"", file);
}

/* Whether each field still holds GenerationConfig's default (from_model_config's test for taking
 * a value from a nested decoder config). */
static bool at_default(const vkf_generation_config *c, const char *key) {
  const vkf_generation_config *d = &k_defaults;
  if (!strcmp(key, "eos_token_id")) return c->eos_token_id_count == 0;
  if (!strcmp(key, "bos_token_id")) return c->bos_token_id == d->bos_token_id;
  if (!strcmp(key, "pad_token_id")) return c->pad_token_id == d->pad_token_id;
  if (!strcmp(key, "max_length")) return c->max_length == d->max_length;
  if (!strcmp(key, "max_new_tokens")) return c->max_new_tokens == d->max_new_tokens;
  if (!strcmp(key, "do_sample")) return c->do_sample == d->do_sample;
  if (!strcmp(key, "temperature")) return c->temperature == d->temperature;
  if (!strcmp(key, "top_k")) return c->top_k == d->top_k;
  if (!strcmp(key, "top_p")) return c->top_p == d->top_p;
  if (!strcmp(key, "repetition_penalty")) return c->repetition_penalty == d->repetition_penalty;
  if (!strcmp(key, "num_beams")) return c->num_beams == d->num_beams;
  if (!strcmp(key, "length_penalty")) return c->length_penalty == d->length_penalty;
  if (!strcmp(key, "early_stopping")) return c->early_stopping == d->early_stopping;
  if (!strcmp(key, "min_length")) return c->min_length == d->min_length;
  if (!strcmp(key, "min_new_tokens")) return c->min_new_tokens == d->min_new_tokens;
  if (!strcmp(key, "forced_bos_token_id")) return c->forced_bos_token_id == d->forced_bos_token_id;
  if (!strcmp(key, "forced_eos_token_id")) return c->forced_eos_token_id_count == 0;
  if (!strcmp(key, "decoder_start_token_id"))
    return c->decoder_start_token_id == d->decoder_start_token_id;
  if (!strcmp(key, "bad_words_ids")) return c->bad_word_count == 0;
  return c->no_repeat_ngram_size == d->no_repeat_ngram_size;
}

static const char *const k_fields[] = {
    "eos_token_id",
    "bos_token_id",
    "pad_token_id",
    "max_length",
    "max_new_tokens",
    "do_sample",
    "temperature",
    "top_k",
    "top_p",
    "repetition_penalty",
    "no_repeat_ngram_size",
    "num_beams",
    "length_penalty",
    "early_stopping",
    "min_length",
    "min_new_tokens",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "decoder_start_token_id",
    "bad_words_ids",
};
enum { FIELD_COUNT = sizeof k_fields / sizeof k_fields[0] };

/* Reads the fields of `obj` into `c`; with only_defaults, just those still at their default. */
static vkf_status read_fields(const char *file, const cJSON *obj, bool only_defaults,
                              vkf_generation_config *c) {
  if (!only_defaults) VKF_RETURN_IF_ERROR(refuse_unsupported(file, obj));
  for (int f = 0; f < FIELD_COUNT; f++) {
    const char *key = k_fields[f];
    const cJSON *item = vkf_json_field(obj, key);
    if (!item || (only_defaults && !at_default(c, key))) continue;
    if (!strcmp(key, "eos_token_id")) {
      VKF_RETURN_IF_ERROR(get_id_list(file, item, key, c->eos_token_ids, &c->eos_token_id_count));
    } else if (!strcmp(key, "forced_eos_token_id")) {
      VKF_RETURN_IF_ERROR(
          get_id_list(file, item, key, c->forced_eos_token_ids, &c->forced_eos_token_id_count));
    } else if (!strcmp(key, "bad_words_ids")) {
      VKF_RETURN_IF_ERROR(get_bad_words(file, item, c));
    } else if (!strcmp(key, "early_stopping")) {
      VKF_RETURN_IF_ERROR(get_early_stopping(file, item, &c->early_stopping));
    } else if (!strcmp(key, "length_penalty")) {
      VKF_RETURN_IF_ERROR(get_number(file, item, key, &c->length_penalty));
    } else if (!strcmp(key, "do_sample")) {
      if (!cJSON_IsBool(item))
        return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"do_sample\" must be true or false",
                               file);
      c->do_sample = cJSON_IsTrue(item);
    } else if (!strcmp(key, "temperature")) {
      VKF_RETURN_IF_ERROR(get_number(file, item, key, &c->temperature));
    } else if (!strcmp(key, "top_p")) {
      VKF_RETURN_IF_ERROR(get_number(file, item, key, &c->top_p));
    } else if (!strcmp(key, "repetition_penalty")) {
      VKF_RETURN_IF_ERROR(get_number(file, item, key, &c->repetition_penalty));
    } else {
      int64_t *dst = !strcmp(key, "bos_token_id")             ? &c->bos_token_id
                     : !strcmp(key, "pad_token_id")           ? &c->pad_token_id
                     : !strcmp(key, "max_length")             ? &c->max_length
                     : !strcmp(key, "max_new_tokens")         ? &c->max_new_tokens
                     : !strcmp(key, "top_k")                  ? &c->top_k
                     : !strcmp(key, "num_beams")              ? &c->num_beams
                     : !strcmp(key, "min_length")             ? &c->min_length
                     : !strcmp(key, "min_new_tokens")         ? &c->min_new_tokens
                     : !strcmp(key, "forced_bos_token_id")    ? &c->forced_bos_token_id
                     : !strcmp(key, "decoder_start_token_id") ? &c->decoder_start_token_id
                                                              : &c->no_repeat_ngram_size;
      VKF_RETURN_IF_ERROR(get_int(file, item, key, dst));
      /* -1 is only the "unset" this struct uses; a file's -1 is a value like 0, and refused. */
      if (dst == &c->max_new_tokens && !cJSON_IsNull(item) && c->max_new_tokens < 1)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "%s: field \"max_new_tokens\" is %lld, must be >= 1", file,
                               (long long)c->max_new_tokens);
    }
  }
  return VKF_OK;
}

/* PretrainedConfig._get_generation_defaults(): a config.json value that differs from one of these
 * (Python equality: null is None, true == 1) makes generate() rebuild the generation config from
 * config.json when generation_config.json was itself made from it. NAN marks a None default. */
static const struct {
  const char *key;
  double value;
} k_model_defaults[] = {
    {"max_length", 20},
    {"min_length", 0},
    {"do_sample", 0},
    {"early_stopping", 0},
    {"num_beams", 1},
    {"num_beam_groups", 1},
    {"diversity_penalty", 0},
    {"temperature", 1},
    {"top_k", 50},
    {"top_p", 1},
    {"typical_p", 1},
    {"repetition_penalty", 1},
    {"length_penalty", 1},
    {"no_repeat_ngram_size", 0},
    {"encoder_no_repeat_ngram_size", 0},
    {"bad_words_ids", NAN},
    {"num_return_sequences", 1},
    {"output_scores", 0},
    {"return_dict_in_generate", 0},
    {"forced_bos_token_id", NAN},
    {"forced_eos_token_id", NAN},
    {"remove_invalid_values", 0},
    {"exponential_decay_length_penalty", NAN},
    {"suppress_tokens", NAN},
    {"begin_suppress_tokens", NAN},
};

static bool has_non_default_generation_parameters(const cJSON *root) {
  for (size_t i = 0; i < sizeof k_model_defaults / sizeof k_model_defaults[0]; i++) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, k_model_defaults[i].key);
    if (!item) continue; /* absent: the class default */
    const double d = k_model_defaults[i].value;
    if (cJSON_IsNull(item)) {
      if (!isnan(d)) return true;
    } else if (isnan(d)) {
      return true;
    } else if (cJSON_IsBool(item)) {
      if ((cJSON_IsTrue(item) ? 1.0 : 0.0) != d) return true;
    } else if (!cJSON_IsNumber(item) || item->valuedouble != d) {
      return true;
    }
  }
  return false;
}

/* GenerationConfig.from_model_config: top-level fields, then nested decoder configs fill what is
 * still at its default. */
static vkf_status from_model_config(const char *file, const cJSON *root, vkf_generation_config *c) {
  VKF_RETURN_IF_ERROR(read_fields(file, root, false, c));
  static const char *const nested[] = {"decoder", "generator", "text_config"};
  for (int i = 0; i < 3; i++) {
    const cJSON *sub = vkf_json_field(root, nested[i]);
    if (sub && cJSON_IsObject(sub)) VKF_RETURN_IF_ERROR(read_fields(file, sub, true, c));
  }
  return VKF_OK;
}

/* ---- checks ---- */

static vkf_status check_token(const char *file, const char *key, int64_t id, int64_t vocab_size) {
  if (id < 0 || id >= vocab_size)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" %lld is outside the vocabulary of %lld", file, key,
                           (long long)id, (long long)vocab_size);
  return VKF_OK;
}

static vkf_status check(const char *file, int64_t vocab_size, const vkf_generation_config *c) {
  for (size_t i = 0; i < c->eos_token_id_count; i++)
    VKF_RETURN_IF_ERROR(check_token(file, "eos_token_id", c->eos_token_ids[i], vocab_size));
  if (c->bos_token_id != -1)
    VKF_RETURN_IF_ERROR(check_token(file, "bos_token_id", c->bos_token_id, vocab_size));
  if (c->pad_token_id != -1)
    VKF_RETURN_IF_ERROR(check_token(file, "pad_token_id", c->pad_token_id, vocab_size));
  if (c->max_length < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"max_length\" is %lld, must be "
                           ">= 1",
                           file, (long long)c->max_length);
  if (c->max_new_tokens != -1 && c->max_new_tokens < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"max_new_tokens\" is %lld, must be >= 1", file,
                           (long long)c->max_new_tokens);
  /* TemperatureLogitsWarper exists only when sampling; greedy configs with 0 are common. */
  if (!isfinite(c->temperature) || (c->do_sample && !(c->temperature > 0)))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"temperature\" is %g, must be > 0 when do_sample is true",
                           file, c->temperature);
  if (c->top_k < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: field \"top_k\" is %lld, must be >= 0",
                           file, (long long)c->top_k);
  if (!(c->top_p >= 0 && c->top_p <= 1))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"top_p\" is %g, must be in [0, 1]", file, c->top_p);
  if (!(c->repetition_penalty > 0) || !isfinite(c->repetition_penalty))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"repetition_penalty\" is %g, must be > 0", file,
                           c->repetition_penalty);
  if (c->no_repeat_ngram_size < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"no_repeat_ngram_size\" is %lld, must be >= 0", file,
                           (long long)c->no_repeat_ngram_size);
  if (c->num_beams < 1 || c->num_beams > 1024)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"num_beams\" is %lld, must be in 1..1024", file,
                           (long long)c->num_beams);
  if (!isfinite(c->length_penalty))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"length_penalty\" is %g, must be finite", file,
                           c->length_penalty);
  if (c->min_length < 0 || c->min_new_tokens < -1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: field \"%s\" is %lld, must be >= 0",
                           file, c->min_length < 0 ? "min_length" : "min_new_tokens",
                           (long long)(c->min_length < 0 ? c->min_length : c->min_new_tokens));
  if (c->forced_bos_token_id != -1)
    VKF_RETURN_IF_ERROR(
        check_token(file, "forced_bos_token_id", c->forced_bos_token_id, vocab_size));
  for (size_t i = 0; i < c->forced_eos_token_id_count; i++)
    VKF_RETURN_IF_ERROR(
        check_token(file, "forced_eos_token_id", c->forced_eos_token_ids[i], vocab_size));
  if (c->decoder_start_token_id != -1)
    VKF_RETURN_IF_ERROR(
        check_token(file, "decoder_start_token_id", c->decoder_start_token_id, vocab_size));
  /* SequenceBiasLogitsProcessor refuses ids past the vocabulary */
  size_t total = 0;
  for (size_t s = 0; s < c->bad_word_count; s++) total += c->bad_word_lens[s];
  for (size_t i = 0; i < total; i++)
    VKF_RETURN_IF_ERROR(check_token(file, "bad_words_ids", c->bad_words[i], vocab_size));
  return VKF_OK;
}

/* ---- public ---- */

vkf_status vkf_generation_config_parse(const char *json, size_t size, const char *name,
                                       int64_t vocab_size, vkf_generation_config *out_config) {
  VKF_ASSERT(json && name && out_config && vocab_size > 0);
  memset(out_config, 0, sizeof *out_config);
  cJSON *root;
  VKF_RETURN_IF_ERROR(vkf_json_parse_object(json, size, name, &root));
  vkf_generation_config c = k_defaults;
  c.source = VKF_GENERATION_FROM_GENERATION_CONFIG;
  vkf_status status = read_fields(name, root, false, &c);
  cJSON_Delete(root);
  if (!status) status = check(name, vocab_size, &c);
  if (!status) *out_config = c;
  return status;
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *path = malloc(n);
  if (path) snprintf(path, n, "%s/%s", dir, name);
  return path;
}

vkf_status vkf_generation_config_load(const char *dir, int64_t vocab_size,
                                      vkf_generation_config *out_config) {
  VKF_ASSERT(dir && out_config && vocab_size > 0);
  memset(out_config, 0, sizeof *out_config);
  char *gen_path = join(dir, "generation_config.json"), *model_path = join(dir, "config.json");
  char *gen_text = NULL, *model_text = NULL;
  size_t gen_size = 0, model_size = 0;
  cJSON *gen = NULL, *model = NULL;
  vkf_generation_config c = k_defaults;
  const char *used = NULL; /* the file the values came from, for the range messages */
  vkf_status status = VKF_OK;
  if (!gen_path || !model_path)
    status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for a path", dir);
  if (!status) status = read_optional_file(gen_path, &gen_text, &gen_size);
  if (!status) status = read_optional_file(model_path, &model_text, &model_size);
  if (!status && gen_text) status = vkf_json_parse_object(gen_text, gen_size, gen_path, &gen);
  if (!status && model_text)
    status = vkf_json_parse_object(model_text, model_size, model_path, &model);
  if (!status) {
    bool legacy = gen && model &&
                  cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(gen, "_from_model_config")) &&
                  has_non_default_generation_parameters(model);
    if (gen && !legacy) {
      used = gen_path;
      c.source = VKF_GENERATION_FROM_GENERATION_CONFIG;
      status = read_fields(gen_path, gen, false, &c);
    } else if (model) {
      used = model_path;
      c.source = VKF_GENERATION_FROM_MODEL_CONFIG;
      status = from_model_config(model_path, model, &c);
    }
  }
  if (!status && used) status = check(used, vocab_size, &c);
  if (!status) *out_config = c;
  cJSON_Delete(gen);
  cJSON_Delete(model);
  free(gen_text);
  free(model_text);
  free(gen_path);
  free(model_path);
  return status;
}

void vkf_generation_config_sampling(const vkf_generation_config *config,
                                    vkf_sampling_options *out_options) {
  VKF_ASSERT(config && out_options);
  *out_options = (vkf_sampling_options){
      .do_sample = config->do_sample,
      .repetition_penalty = config->repetition_penalty,
      .no_repeat_ngram_size = config->no_repeat_ngram_size,
      .temperature = config->temperature,
      .top_k = config->top_k,
      .top_p = config->top_p == 0 ? VKF_SAMPLING_TOP_P_ZERO : config->top_p,
      .min_length = config->min_length,
      .min_new_tokens = config->min_new_tokens > 0 ? config->min_new_tokens : 0,
      .eos_ids = config->eos_token_ids,
      .eos_id_count = config->eos_token_id_count,
      .forced_bos = config->forced_bos_token_id >= 0,
      .forced_bos_token_id = config->forced_bos_token_id,
      .forced_eos_ids = config->forced_eos_token_ids,
      .forced_eos_id_count = config->forced_eos_token_id_count,
      .bad_words = config->bad_words,
      .bad_word_lens = config->bad_word_lens,
      .bad_word_count = config->bad_word_count,
  };
  /* A greedy config may carry temperature 0, which the options would read as "off" anyway. */
  if (!config->do_sample) out_options->temperature = 0;
}

size_t vkf_generation_config_new_token_limit(const vkf_generation_config *config,
                                             size_t prompt_count) {
  VKF_ASSERT(config);
  if (config->max_new_tokens > 0) return (size_t)config->max_new_tokens;
  if ((uint64_t)config->max_length <= prompt_count) return 1;
  return (size_t)config->max_length - prompt_count;
}

void vkf_generation_config_stop_criteria(const vkf_generation_config *config, size_t prompt_count,
                                         vkf_stop_criteria *out_criteria) {
  VKF_ASSERT(config && out_criteria);
  *out_criteria = (vkf_stop_criteria){
      .eos_ids = config->eos_token_ids,
      .eos_id_count = config->eos_token_id_count,
      .max_new_tokens = vkf_generation_config_new_token_limit(config, prompt_count),
  };
}
