/* SentencePiece model files (.model / .spm: a serialized ModelProto), read with a small bounded
 * protobuf reader, and the sentencepiece library's own normalisation, Unigram (Viterbi) and BPE
 * (merge by score) encoding to pieces, and piece decoding, as the slow tokenizers use them. */
#ifndef VKF_MODELS_TEXT_SPM_H
#define VKF_MODELS_TEXT_SPM_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_spm vkf_spm;

enum { VKF_SPM_UNIGRAM = 1, VKF_SPM_BPE = 2 };
enum {
  VKF_SPM_NORMAL = 1,
  VKF_SPM_UNKNOWN = 2,
  VKF_SPM_CONTROL = 3,
  VKF_SPM_USER_DEFINED = 4,
  VKF_SPM_UNUSED = 5,
  VKF_SPM_BYTE = 6
};

/* Reads the model file at `path`. Errors: NOT_FOUND/IO for the file; PARSE naming the file for
 * truncated or malformed protobuf (with the byte offset), a piece count or string past the bounds,
 * an unk id outside the pieces; UNSUPPORTED for model types other than UNIGRAM and BPE. */
vkf_status vkf_spm_load(const char *path, vkf_spm **out_spm);
void vkf_spm_destroy(vkf_spm *spm);

size_t vkf_spm_piece_count(const vkf_spm *spm);
const char *vkf_spm_piece(const vkf_spm *spm, int32_t id); /* NULL out of range */
int vkf_spm_piece_type(const vkf_spm *spm, int32_t id);
int32_t vkf_spm_piece_id(const vkf_spm *spm, const char *piece, size_t size); /* -1: absent */
int32_t vkf_spm_unk_id(const vkf_spm *spm);
float vkf_spm_piece_score(const vkf_spm *spm, int32_t id); /* 0 out of range */
int vkf_spm_model_type(const vkf_spm *spm);                /* VKF_SPM_UNIGRAM or VKF_SPM_BPE */
/* normalizer_spec.precompiled_charsmap as the file stores it (NULL and 0 when it has none). */
const uint8_t *vkf_spm_charsmap_bytes(const vkf_spm *spm, size_t *size);

/* The pieces of valid UTF-8 text[0..n) as SentencePieceProcessor.encode(text, out_type=str):
 * normalised (charsmap longest match, whitespace rules, "▁"), segmented, consecutive unknown
 * pieces merged into one piece holding their surface. *out_text receives the pieces back to back
 * and *out_ends each piece's end offset in it (both new arrays the caller frees). */
vkf_status vkf_spm_encode(const vkf_spm *spm, const char *text, size_t n, char **out_text,
                          size_t **out_ends, size_t *out_count);

/* SentencePieceProcessor.decode_pieces: control pieces vanish, the unk piece itself becomes
 * unk_surface (" ⁇ "), an unknown string stays itself, "▁" becomes " ", and the leading space the
 * dummy prefix put there is removed. Appends to the growable *buf (size *size, capacity *cap);
 * returns 0 when memory ran out. */
int vkf_spm_decode_pieces(const vkf_spm *spm, const char *const *pieces, size_t count, char **buf,
                          size_t *size, size_t *cap);

#endif
