/* xcfg_dump.c - what one configuration makes of a model, as text that
 * tests/models/xcfg.sh compares across configurations:
 *
 *   xcfg_dump MODEL.onnx CALIB_DIR DATA_DIR HW [KEEP_FLOAT]
 *
 * compiles MODEL.onnx for HW (calibrated on CALIB_DIR, as loom compile
 * --calib does) twice: as usual, and with every activation in a buffer of
 * its own (loom_compile_opts.arena_no_reuse), runs both on the C model
 * through libloom, the firmware and the runtime (runtime/exec.h) on the
 * inputs of DATA_DIR (input_K.pb), and prints
 *
 *   node NAME OP npu|fused|cpu     where each node runs (the compile report)
 *   tensor NAME HxWxC scale S zp Z [raw] fnv HASH
 *                                  every device tensor that is not a
 *                                  constant: its quantization and a hash
 *                                  (FNV-1a 64) of its image's used bytes
 *                                  (C int8 channels, or 4C bytes of int32
 *                                  accumulators, per pixel) read back from
 *                                  device DRAM after the run (the build
 *                                  without reuse, so nothing was overwritten)
 *   output NAME fnv HASH           every graph output's float32 bytes
 *   info N layers, M instructions, tiles HASH
 *                                  the program, which the configuration
 *                                  does change (not to be compared)
 *
 * KEEP_FLOAT (loom compile --keep-float) is for the suite's control: a
 * node kept in float must change what follows it.
 *
 * The two builds' outputs must be the same bytes (else a FAIL line and
 * exit 1): buffer reuse must not change a result. Nothing here depends on
 * the configuration but what the configuration changes. Exit 2 on bad
 * arguments or a failure to compile or run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler/calib.h"
#include "compiler/compile.h"
#include "compiler/onnx.h"
#include "ir/model.h"
#include "loom/hw.h"
#include "loom/hwcfg.h"
#include "loom/loom.h"
#include "runtime/exec.h"

#define MAX_IN 16

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static const char *where_name(int w) { return w == LOOM_WHERE_NPU ? "npu" : w == LOOM_WHERE_FUSED ? "fused" : "cpu"; }

/* the device image of tensor t, its used bytes hashed: 0 or -1 */
static int hash_image(loom_dev *dev, const loom_model *m, int t, uint64_t *h)
{
	const loom_mtensor *mt = &m->mt[t];
	size_t used = mt->raw ? 4u * mt->c : mt->c, row = (size_t)mt->w * mt->stride;
	uint8_t *buf = malloc(row ? row : 1);
	if (!buf)
		return -1;
	*h = 0xcbf29ce484222325ull;
	for (uint32_t y = 0; y < mt->h; y++) {
		if (loom_hw_dram_read(loom_dev_hw(dev), mt->addr + (uint64_t)y * row, buf, row)) {
			free(buf);
			return -1;
		}
		for (uint32_t x = 0; x < mt->w; x++)
			*h = fnv(*h, buf + (size_t)x * mt->stride, used);
	}
	free(buf);
	return 0;
}

/* compile, run, print (tensors: also the device tensors); the outputs'
 * hashes into out[] (*nout). 0, or -1 with a message */
static int one_build(const char *onnx, const char *calib, const char *keep, const loom_tensor *in, int nin,
		     const loom_hwcfg *cfg, loom_dev *dev, int no_reuse, uint64_t *out, int *nout, char *err, size_t len)
{
	loom_graph *g = NULL;
	loom_model *m = NULL;
	loom_exec *ex = NULL;
	loom_compile_report rep;
	memset(&rep, 0, sizeof rep);
	int rc = -1;
	loom_compile_opts co = {.calib_dir = calib, .source = onnx, .keep_float = keep, .arena_no_reuse = no_reuse};
	if (loom_onnx_load(onnx, NULL, 0, &g, err, len))
		return -1;
	if (loom_compile(g, cfg, &co, &m, &rep, err, len))
		return -1;
	if (loom_calib_bind(m->graph, in, nin, "DATA_DIR", err, len) || loom_exec_new(dev, m, &ex, err, len) ||
	    loom_exec_run(ex, err, len))
		goto out;
	for (int i = 0; no_reuse && i < rep.nnodes; i++)
		printf("node %s %s %s\n", rep.nodes[i].name, rep.nodes[i].op_type, where_name(rep.nodes[i].where));
	uint64_t tiles = 0xcbf29ce484222325ull;
	for (uint32_t l = 0; l < m->nlayers; l++) {
		uint32_t t3[3] = {m->layers[l].tile_h, m->layers[l].tile_w, m->layers[l].tile_c};
		tiles = fnv(tiles, t3, sizeof t3);
	}
	if (no_reuse)
		printf("info %u layers, %u instructions, tiles %016" PRIx64 "\n", m->nlayers, m->ninsn, tiles);
	const loom_graph *cg = m->graph;
	for (int t = 0; no_reuse && t < cg->ntensors; t++) {
		const loom_mtensor *mt = &m->mt[t];
		if (!mt->dev || (mt->addr >= m->const_base && mt->addr < m->const_base + m->const_bytes))
			continue;
		uint64_t h;
		if (hash_image(dev, m, t, &h)) {
			snprintf(err, len, "reading tensor '%s' back: %s", cg->tensors[t].name, loom_errmsg(dev));
			goto out;
		}
		printf("tensor %s %ux%ux%u scale %.9g zp %d%s fnv %016" PRIx64 "\n", cg->tensors[t].name, mt->h, mt->w,
		       mt->c, (double)mt->scale, mt->zp, mt->raw ? " raw" : "", h);
	}
	if (cg->noutputs > 64) {
		snprintf(err, len, "%d graph outputs, more than 64", cg->noutputs);
		goto out;
	}
	*nout = cg->noutputs;
	for (int i = 0; i < cg->noutputs; i++) {
		const loom_tensor *t = &cg->tensors[cg->outputs[i]];
		out[i] = fnv(0xcbf29ce484222325ull, t->data, t->data ? loom_tensor_bytes(t) : 0);
		if (no_reuse)
			printf("output %s fnv %016" PRIx64 "\n", t->name, out[i]);
	}
	rc = 0;
out:
	loom_exec_free(ex);
	loom_compile_report_free(&rep);
	loom_model_free(m);
	return rc;
}

/* DATA_DIR/input_K.pb into in[]: the count, or -1 */
static int load_inputs(const char *dir, loom_tensor *in, char *err, size_t len)
{
	int n = 0;
	for (; n < MAX_IN; n++) {
		char p[4200];
		struct stat st;
		snprintf(p, sizeof p, "%s/input_%d.pb", dir, n);
		if (stat(p, &st))
			break;
		if (loom_onnx_load_tensor(p, &in[n], err, len))
			return -1;
	}
	if (!n)
		snprintf(err, len, "%s: no input_0.pb", dir);
	return n ? n : -1;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: xcfg_dump MODEL.onnx CALIB_DIR DATA_DIR HW [KEEP_FLOAT]\n");
		return 2;
	}
	char err[2048], fw[1024];
	loom_hwcfg cfg;
	loom_tensor in[MAX_IN];
	memset(in, 0, sizeof in);
	loom_dev *dev = NULL;
	int nin = -1, rc = 2;
	if (loom_hwcfg_load(&cfg, argv[4], NULL, err, sizeof err) ||
	    (nin = load_inputs(argv[3], in, err, sizeof err)) < 0 ||
	    loom_open(&(loom_open_opts){.backend = "cmodel", .hw = argv[4]}, &dev, err, sizeof err))
		goto out;
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	if (loom_load_firmware(dev, fw) || loom_boot(dev, NULL)) {
		snprintf(err, sizeof err, "%.1000s: %.1000s", fw, loom_errmsg(dev));
		goto out;
	}
	uint64_t a[64], b[64];
	int na = 0, nb = 0;
	const char *keep = argc == 6 ? argv[5] : NULL;
	if (one_build(argv[1], argv[2], keep, in, nin, &cfg, dev, 1, a, &na, err, sizeof err) ||
	    one_build(argv[1], argv[2], keep, in, nin, &cfg, dev, 0, b, &nb, err, sizeof err))
		goto out;
	rc = 0;
	for (int i = 0; i < na; i++)
		if (na != nb || a[i] != b[i]) {
			printf("FAIL output %d differs between the builds with and without buffer reuse\n", i);
			rc = 1;
		}
out:
	if (rc == 2)
		fprintf(stderr, "xcfg_dump: %s: %s\n", argv[1], err);
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	loom_close(dev);
	return rc;
}
