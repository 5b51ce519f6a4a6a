/* Every VKF_* environment variable is read here, once, and nowhere else. docs/environment.md's
 * table of switches mirrors this struct (tests/docs/test_links.sh checks it lists every name). */
#ifndef VKF_GRAPH_ENV_H
#define VKF_GRAPH_ENV_H

typedef struct vkf_env {
  int validate;               /* VKF_VALIDATE=1: Khronos validation layer + message counter;
                               * 2: its GPU-assisted bounds checks instead of synchronization */
  const char *device;         /* VKF_DEVICE: device index or name substring */
  const char *device_profile; /* VKF_DEVICE_PROFILE: clamp caps to a device class ("mobile") */
  const char *cache_dir;      /* VKF_CACHE_DIR: SPIR-V + pipeline cache directory */
  int no_cache;               /* VKF_NO_CACHE=1: neither read nor write the disk caches */
  int copy_weights;           /* VKF_COPY_WEIGHTS=1: copy constants to device memory even where
                                 the device could read them in place (host/runner.h) */
  int dequantize;             /* VKF_DEQUANTIZE=1: a GGUF's quantised tensors become F32 at load
                                 (the F32 twin of a quantised model, for side-by-side runs) */
  const char *dump;           /* VKF_DUMP: "passes" writes the graph after each pass */
  const char *dump_dir;       /* VKF_DUMP_DIR: where dumps go (default ".") */
  int coopmat;                /* VKF_COOPMAT=0: never pick the cooperative-matrix (tensor-core)
                                 kernels, though the device has them; 1: use them even where the
                                 vendor allowlist says no; unset (-1): the allowlist decides */
  int profile;                /* VKF_PROFILE=1: per-dispatch timestamp table on stderr */
  int check;                  /* VKF_CHECK=1: compare every node with the CPU interpreter */
  const char *no_fuse;        /* VKF_NO_FUSE: comma list of fusions to skip ("attention",...) */
  int log_level;              /* VKF_LOG: 0 error, 1 warn (default), 2 info, 3 debug */
  int update_golden;          /* VKF_UPDATE_GOLDEN=1: tests rewrite their golden files */
  const char *python_site;    /* VKF_PYTHON_SITE: ':' list of site-packages dirs searched first
                                 for pip-installed model packages (models/formats/model_paths.h) */
  const char *model_path;     /* VKF_MODEL_PATH: ':' list of folders searched first for the models
                                 vkformer ships (models/formats/default_models.h) */
  /* Not ours, but read here too so that getenv() has one caller: the default cache location and
   * the search for pip-installed model packages. */
  const char *xdg_cache_home; /* XDG_CACHE_HOME */
  const char *home;           /* HOME */
  const char *virtual_env;    /* VIRTUAL_ENV: an active venv's site-packages holds model packages */
  const char *pyenv_root;     /* PYENV_ROOT: pyenv's versions/ (default ~/.pyenv) */
} vkf_env;

/* Read on first call and cached; the returned pointer stays valid. Not thread-safe on first call. */
const vkf_env *vkf_env_get(void);
/* Re-reads the environment (tests that setenv() between cases). */
void vkf_env_reload(void);
/* Variables set to a value outside the accepted ones at the last (re)load: one line each, naming
 * the variable, the value, the accepted values and what was used instead. */
int vkf_env_warning_count(void);
const char *vkf_env_warning(int index);
/* True when `name` appears in the comma list `list` (NULL list: false). */
int vkf_env_list_has(const char *list, const char *name);

#endif
