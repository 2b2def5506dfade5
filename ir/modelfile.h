/* modelfile.h - what the writer (model_write.c) and the reader
 * (model_read.c) of the .loom file share: section and note numbers, the
 * hardware parameters by name, the DRAM map's keys. The format itself is
 * described in modelfile.c. Internal to ir/. */
#ifndef LOOM_IR_MODELFILE_H
#define LOOM_IR_MODELFILE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/model.h"

#define NOTE_OWNER "Loom"
/* note types of owner "Loom": 0x4c4f00NN ("LO"), numbers no tool gives a
 * meaning of its own (readelf -n calls 1, 2 and 4 NT_VERSION, NT_ARCH and GO
 * BUILDID whatever the owner) */
#define NT_LOOM(n) (0x4c4f0000u + (n))
enum {
	NT_LOOM_VERSION = 1, /* u32 LOOM_MODEL_VERSION */
	NT_LOOM_HWCFG = 2,   /* text: config=NAME, fingerprint=0xHEX, PARAM=VALUE lines */
	NT_LOOM_OPTIONS = 3, /* text: the compile options (absent: NULL) */
	NT_LOOM_SOURCE = 4,  /* text: the source file name (absent: NULL) */
	NT_LOOM_DRAM = 5,    /* text: KEY=VALUE lines of the DRAM map */
	NT_LOOM_MAX = 5,
};

#define STR_NULL 0xffffffffu
#define MAX_SECTIONS 64

enum sec_id { S_TEXT, S_CONST, S_TENSORS, S_GRAPH, S_CDATA, S_LAYERS, S_STEPS, S_NOTE, S_COUNT };
typedef struct mf_sec {
	const char *name;
	uint32_t type;
} mf_sec;
extern const mf_sec mf_sec_info[S_COUNT];

/* the hardware parameters, by name */
typedef struct mf_hwparam {
	const char *name;
	size_t off;
} mf_hwparam;
enum {
#define LOOM_HWPARAM(n, sv, lo, hi, doc) MF_HWPARAM_##n,
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
	MF_NHWPARAMS
};
extern const mf_hwparam mf_hwparams[MF_NHWPARAMS];
uint32_t mf_hw_get(const loom_hwcfg *c, size_t i);
void mf_hw_set(loom_hwcfg *c, size_t i, uint32_t v);
/* Parameters that change the compiled program: all but the simulated DRAM's
 * latency and bandwidth (the ones common/hwcfg.c leaves out of the
 * fingerprint). */
int mf_hw_program(size_t i);

/* the DRAM map note's keys, and the model field of each */
#define MF_DRAM_KEYS(X)                                                                                                \
	X(base) X(const_base) X(const_bytes) X(arena_base) X(arena_bytes) X(mark_base) X(text_base) X(text_bytes)     \
		X(dram_end) X(arena_bytes_noreuse)
enum {
#define X(k) MF_DRAM_##k,
	MF_DRAM_KEYS(X)
#undef X
	MF_NDRAM_KEYS
};
extern const char *const mf_dram_keys[MF_NDRAM_KEYS];
uint64_t *mf_dram_slot(loom_model *m, size_t i);

/* -1, with the message in err */
int mf_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
