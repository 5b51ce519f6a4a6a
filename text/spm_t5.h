/* A T5 folder that ships spiece.model but no tokenizer.json, read as transformers 4.38 reads it:
 * AutoTokenizer builds T5TokenizerFast by converting the SentencePiece model
 * (convert_slow_tokenizer.T5Converter), so the fast tokenizer of the converted document is the
 * reference, which this builds and loads with the one tokenizer.json loader. */
#ifndef VKF_MODELS_TEXT_SPM_T5_H
#define VKF_MODELS_TEXT_SPM_T5_H

#include "graph/base/status.h"
#include "text/bpe.h"

/* Whether `model_dir` has a spiece.model. */
int vkf_spm_t5_present(const char *model_dir);

/* Converts model_dir/spiece.model with model_dir/tokenizer_config.json (extra_ids, legacy,
 * add_prefix_space, added_tokens_decoder; T5Tokenizer's defaults without them). Only T5's
 * tokenizer: tokenizer_config.json's tokenizer_class T5Tokenizer(Fast), or config.json's
 * model_type t5, mt5 or umt5; anything else is UNSUPPORTED naming the class. A BPE-type
 * SentencePiece model is UNSUPPORTED too (T5's are Unigram). */
vkf_status vkf_spm_t5_load(const char *model_dir, vkf_bpe **out_bpe);

#endif
