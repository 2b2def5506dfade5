/* model.h - a compiled Loom model: what `loom compile` (compiler/compile.c)
 * produces from an ONNX graph, what the .loom ELF file (ir/modelfile.c)
 * stores, and what the runtime (runtime/exec.c) runs through libloom.
 *
 * A model is
 *  - the CPU graph: the simplified float graph (ir/ir.h) with every
 *    tensor of the model (names, logical ONNX shapes) and the nodes that run
 *    on the CPU; nodes lowered to the NPU stay in it only as names (op type
 *    "loom.npu", no inputs), so indices of tensors and nodes are shared with
 *    the steps, the layers and the tensor table;
 *  - the device tensor table: for each tensor that lives in device DRAM, its
 *    int8 image (NHWC: h x w pixels of `stride` bytes, channels 0..c-1 used)
 *    and its affine quantization (real = scale * (q - zp));
 *  - the layers: one NPU kernel each (conv, GEMM, pool, depthwise conv,
 *    elementwise, LUT), with the ONNX nodes it implements and its plan;
 *  - the steps, run in order: a CPU node, a quantization of a host float
 *    tensor into its device image (or into another tensor's image with a
 *    border: an image stem's padded input, loom_step.dst), a
 *    dequantization back, or an NPU job (a
 *    run of consecutive layers: one program in the instruction section);
 *  - the DRAM image, from base = const_base up to dram_end, in this order:
 *    [const_base, + const_bytes) weights, parameters and constant operands,
 *    the arena of activations [arena_base, + arena_bytes) planned by
 *    liveness, the MARK records of the layers [mark_base, + 64 * nlayers),
 *    and the programs [text_base, + text_bytes) (each region 64-byte
 *    aligned).
 *
 * Logical shape -> device image (loom_mt_geom): rank 4 [N,C,H,W] -> h=N*H,
 * w=W, c=C (the batch's images stacked vertically: windowed layers run per
 * image); rank 3 [N,C,L] -> N, L, C; rank 2 [M,K] -> 1, M, K; rank 1 [K]
 * and rank 0 -> 1, 1, K. Rank > 4 has no device image. */
#ifndef LOOM_MODEL_H
#define LOOM_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom/hwcfg.h"
#include "ir/ir.h"
#include "loom/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: QUANT steps may write a padded image of another tensor (loom_step.dst) */
#define LOOM_MODEL_VERSION 2
#define LOOM_NPU_OP "loom.npu"     /* op type of a CPU-graph node lowered to the NPU */

/* A tensor's device image; dev = 0 for tensors that never live on the device. */
typedef struct loom_mtensor {
	int dev;
	uint32_t h, w, c, stride;  /* stride: bytes per pixel, multiple of 4, >= c */
	float scale;
	int32_t zp;                /* -128..127 */
	uint64_t addr;             /* DRAM address of pixel (0, 0) */
	int host;                  /* also needed in float on the host (CPU input / graph output) */
	int rows;                  /* 1: a rank >= 3 tensor laid out as rows (a MatMul's operand):
				      h = product of the leading dims, w = dims[rank-2], c = dims[rank-1],
				      element order as rank 2; 0: loom_mt_geom's [N,C,H,W] image */
	int raw;                   /* 1: the image holds int32 accumulators (little endian, channel
				      ch at byte 4 * ch of a pixel; stride >= 4 * c), dequantized as
				      scale * (value - zp) like int8 ones (the compiler uses 1, 0) */
} loom_mtensor;

enum loom_layer_kind {
	LOOM_LAYER_CONV = 0,
	LOOM_LAYER_GEMM = 1,
	LOOM_LAYER_POOL = 2,
	LOOM_LAYER_DWCONV = 3,
	LOOM_LAYER_ELTWISE = 4,
	LOOM_LAYER_LUT = 5,
};
const char *loom_layer_kind_name(int kind);
/* "cpu", "quant", "dequant", "npu", or NULL */
const char *loom_step_kind_name(int kind);

#define LOOM_LAYER_MAX_NODES 4
typedef struct loom_layer {
	int kind;                   /* enum loom_layer_kind */
	char *name;                 /* the main node's name */
	int nodes[LOOM_LAYER_MAX_NODES]; /* CPU-graph node indices it implements (-1 unused) */
	int in[2], out;             /* tensor indices (in[1] = -1 unless ELTWISE) */
	uint32_t insn_first, insn_count; /* instructions (indices into the model's insn array) */
	uint32_t mark_id;
	uint64_t macs;
	uint64_t est_cycles;
	uint64_t dram_bytes;        /* estimated DRAM traffic */
	uint32_t tile_h, tile_w, tile_c; /* output tile and channels per step */
	uint32_t sp_bytes;          /* scratchpad used */
	uint64_t const_off, const_bytes; /* its weights/params inside the const region */
} loom_layer;

enum loom_step_kind {
	LOOM_STEP_CPU = 0,      /* run CPU-graph node `node` in float */
	LOOM_STEP_QUANT = 1,    /* host float tensor -> its device image */
	LOOM_STEP_DEQUANT = 2,  /* device image -> host float tensor */
	LOOM_STEP_NPU = 3,      /* one job: layers [layer, layer + nlayers) */
};

typedef struct loom_step {
	int kind;
	int node;                /* CPU */
	int tensor;              /* QUANT, DEQUANT */
	uint32_t layer, nlayers; /* NPU */
	uint64_t insn_addr;      /* NPU: DRAM address of the job's program */
	/* QUANT into another tensor's image (-1: tensor's own): dst, a rank-4
	 * image [N,C,H+pad[0]+pad[2],W+pad[1]+pad[3]] of tensor [N,C,H,W]
	 * (same channels, scale and zero point), its interior tensor quantized,
	 * its border of pad[0] rows on top, pad[1] pixels on the left, pad[2]
	 * rows at the bottom and pad[3] on the right (per image) the byte fill;
	 * the bytes past the channels are the zero point as in every image.
	 * tensor then has no device image of its own (the compiler's padded
	 * copy of an image stem's input, written by the host). dst = -1: pad
	 * and fill 0. */
	int dst;
	uint32_t pad[4];         /* top, left, bottom, right */
	int32_t fill;            /* -128..127 */
} loom_step;

typedef struct loom_model {
	uint32_t version;
	loom_hwcfg cfg;             /* the configuration compiled for */
	char *options;              /* the compile options, as text */
	char *source;               /* the ONNX file name */
	loom_graph *graph;          /* the CPU graph (owned) */
	loom_mtensor *mt;           /* graph->ntensors entries */
	loom_layer *layers;
	uint32_t nlayers;
	loom_step *steps;
	uint32_t nsteps;
	loom_insn *insn;            /* every program, back to back */
	uint32_t ninsn;
	uint8_t *consts;            /* the const region's bytes */
	uint64_t base, text_bytes, const_base, const_bytes, arena_base, arena_bytes, mark_base;
	uint64_t text_base;         /* the programs (step insn_addr values point inside) */
	uint64_t dram_end;          /* first byte past the model's DRAM image */
	uint64_t arena_bytes_noreuse; /* the arena without buffer reuse (report) */
} loom_model;

/* The device image of a logical shape: 0, or -1 when it has none. */
int loom_mt_geom(int rank, const int64_t *dims, uint32_t *h, uint32_t *w, uint32_t *c);

void loom_model_free(loom_model *m);

/* ---- the .loom file (ir/modelfile.c) ---- */
/* Write m as an ELF file: 0 or -1 + message. */
int loom_model_write(const loom_model *m, const char *path, char *err, size_t errlen);
/* Read and validate a .loom file. cfg non-NULL: refuse a model compiled
 * for another configuration, naming the differing parameter. */
int loom_model_read(const char *path, const loom_hwcfg *cfg, loom_model **out, char *err, size_t errlen);
int loom_model_read_mem(const void *buf, size_t len, const char *name, const loom_hwcfg *cfg, loom_model **out,
			char *err, size_t errlen);
/* Check that a model fits the configuration: -1 + "compiled for X = a, configuration has b". */
int loom_model_check_cfg(const loom_model *m, const loom_hwcfg *cfg, char *err, size_t errlen);
/* Host float (ONNX order) <-> device int8 image of a tensor (ir/model.c). */
void loom_mt_quantize(const loom_tensor *t, const loom_mtensor *mt, const float *src, int8_t *img);
void loom_mt_dequantize(const loom_tensor *t, const loom_mtensor *mt, const int8_t *img, float *dst);
/* The device tensor a QUANT or DEQUANT step writes or reads: s->dst when
 * set, else s->tensor. */
static inline int loom_step_dev(const loom_step *s) { return s->dst >= 0 ? s->dst : s->tensor; }
/* A QUANT step's conversion: host tensor s->tensor (ONNX order, src) into
 * the image of loom_step_dev(s), padded as s says (img: that image's bytes). */
void loom_step_quantize(const loom_model *m, const loom_step *s, const float *src, int8_t *img);

#ifdef __cplusplus
}
#endif
#endif
