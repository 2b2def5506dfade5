/* cmd_demo.c - `loom demo`: runs benchmark layers with random int8 data
 * (fixed seed) on a backend (RTL by default), checks every output byte
 * against the plain C reference (cosim/golden.c) and prints per layer the
 * cycles from START to FINISH (perf counter CYCLES; an estimate on the C
 * model), DRAM bytes read/written and scratchpad bank conflicts (perf
 * counters), a utilization, wall time and simulated cycles per second.
 * Layers (--layer, a comma-separated list; default all):
 *   tensor engine (array):
 *     conv     56x56x64 -> 64 3x3 convolution, stride 1, pad 1
 *     gemm     256x1024 * 1024x256 GEMM
 *   vector unit:
 *     dwconv   depthwise 3x3, stride 1, pad 1 on 56x56x128, per-channel
 *              requantization and ReLU6 clip (MobileNet)
 *     maxpool  3x3 max pooling, stride 2, pad 1 on 112x112x64 (ResNet stem)
 *     add      residual add of two 56x56x64 tensors of different scales
 *   vec: the three vector layers; all: every layer (about 2 s on the RTL).
 *   By name only (not in vec or all):
 *     dwconv2  depthwise 3x3, stride 2, pad 1 on 112x112x96 -> 56x56x96
 *              (MobileNetV2's features.2)
 * Utilization: tensor engine, MAC utilization = MACs / (cycles * R * C);
 * vector unit, lane utilization = useful lane operations / (cycles * R)
 * (R = array rows = vector lanes; a dwconv's: / (cycles * R *
 * vec_macs), the multipliers of its input reuse): DWCONV multiply-accumulates, POOL window
 * elements, ELTWISE output elements. Both count every cycle from START to
 * FINISH, DMA included.
 * Exit status 1 on a mismatch or a failed run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "loom/hw.h"
#include "loom/isa.h"
#include "compiler/npu/npu.h"
#include "cosim/golden.h"

typedef struct demo_rng {
	uint64_t s;
} demo_rng;

static uint32_t demo_rnd(demo_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 2685821657736338717ull) >> 32);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint32_t ctr(loom_hw *hw, unsigned idx) { return loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * idx); }

/* One layer (a GEMM is given as its 1x1 conv). 0 ok, 1 mismatch/failure. */
static int run_layer(loom_hw *hw, const char *title, const loom_conv_params *cp, const loom_gemm_params *gp,
		     uint64_t seed)
{
	const loom_hwcfg *cfg = &hw->cfg;
	char err[512];
	loom_conv_plan pl;
	if (loom_conv_plan_make(cfg, cp, &pl, err, sizeof err)) {
		fprintf(stderr, "loom demo: %s: %s\n", title, err);
		return 1;
	}
	demo_rng r = {seed * 0x9e3779b97f4a7c15ull + 7};
	uint32_t kk = cp->kh * cp->kw;
	size_t nin = (size_t)pl.in_bytes, nw = (size_t)cp->cout * kk * cp->cin;
	int8_t *in = malloc(nin), *w = malloc(nw);
	int32_t *bias = malloc(cp->cout * 4), *mult = malloc(cp->cout * 4), *shift = malloc(cp->cout * 4);
	int8_t *got = malloc(pl.out_bytes), *want = malloc(pl.out_bytes);
	loom_prog prog;
	loom_prog_init(&prog);
	int rc = 1;
	if (!in || !w || !bias || !mult || !shift || !got || !want) {
		fprintf(stderr, "loom demo: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < nin; i++)
		in[i] = (int8_t)demo_rnd(&r);
	for (size_t i = 0; i < nw; i++)
		w[i] = (int8_t)demo_rnd(&r);
	double accstd = sqrt((double)cp->cin * kk) * 73.9 * 73.9;
	int sh = (int)lround(log2(0.75 * accstd / 40.0));
	for (uint32_t i = 0; i < cp->cout; i++) {
		bias[i] = (int32_t)(demo_rnd(&r) % 20001) - 10000;
		mult[i] = (int32_t)(0x40000000u + (demo_rnd(&r) & 0x3fffffffu));
		shift[i] = sh > 0 ? sh : 0;
	}
	loom_dram_layout lay;
	uint64_t prog_addr;
	if (loom_layer_stage(hw, cp, gp, &pl, in, w, bias, mult, shift, (uint32_t)seed, 0, &lay, &prog, &prog_addr,
			     err, sizeof err)) {
		fprintf(stderr, "loom demo: %s: %s\n", title, err);
		goto out;
	}
	printf("%s\n  plan: %u tiles of %ux%u, %u pass(es) of %u output blocks, %u chunk(s) of %u input blocks%s%s, "
	       "%u instructions\n",
	       title, pl.ntiles, pl.th, pl.tw, pl.npass, pl.g, pl.nk, pl.kc,
	       pl.nky > 1 ? ", kernel rows chunked" : "",
	       pl.wchunk ? ", weights streamed" : ", weights resident", pl.insns + 1);
	fflush(stdout);
	loom_hw_result res;
	double t0 = now_s();
	int xr = loom_hw_exec(hw, prog_addr, 50 * pl.est_cycles + 10000000, &res);
	double wall = now_s() - t0;
	if (xr != LOOM_HW_IRQ || !(res.status & LOOM_STATUS_DONE) || (res.status & LOOM_STATUS_ERROR)) {
		fprintf(stderr, "loom demo: %s: run failed: %s, status %#x, cause %s at pc %#x (field %s)\n", title,
			xr == LOOM_HW_TIMEOUT ? "timeout" : xr == LOOM_HW_FAILED ? loom_hw_error(hw) : "irq",
			res.status, loom_err_name(res.cause), res.pc, loom_field_name(res.info));
		goto out;
	}
	uint64_t cycles = ctr(hw, LOOM_CTR_CYCLES);
	uint64_t macs_ctr = ctr(hw, LOOM_CTR_MACS_LO) | (uint64_t)ctr(hw, LOOM_CTR_MACS_HI) << 32;
	uint32_t rd = ctr(hw, LOOM_CTR_DRAM_RD_BYTES), wr = ctr(hw, LOOM_CTR_DRAM_WR_BYTES);
	uint32_t bank = ctr(hw, LOOM_CTR_BANK_CONFLICTS);
	if (loom_hw_dram_read(hw, lay.out_addr, got, pl.out_bytes)) {
		fprintf(stderr, "loom demo: %s: reading DRAM: %s\n", title, loom_hw_error(hw));
		goto out;
	}
	if (gp)
		loom_golden_gemm(gp, in, w, bias, mult, shift, want);
	else
		loom_golden_conv(cp, in, w, bias, mult, shift, want);
	size_t bad = 0, rowb = (size_t)cp->cout * (cp->raw ? 4 : 1);
	for (size_t px = 0; px < (size_t)pl.oh * pl.ow; px++)
		for (size_t b = 0; b < rowb; b++)
			bad += got[px * pl.out_stride + b] != want[px * pl.out_stride + b];
	double R = cfg->array_rows, C = cfg->array_cols;
	printf("  cycles %llu%s  MACs %llu (counter %llu)  utilization %.1f%%\n", (unsigned long long)cycles,
	       strcmp(hw->backend, "rtl") ? " (C model estimate)" : "",
	       (unsigned long long)pl.macs, (unsigned long long)macs_ctr,
	       100.0 * (double)pl.macs / ((double)cycles * R * C));
	printf("  DRAM read %u bytes, written %u bytes, bank conflicts %u\n", rd, wr, bank);
	printf("  wall %.3f s: %.1f M simulated MAC/s, %.3f M cycles/s\n", wall, pl.macs / wall / 1e6,
	       cycles / wall / 1e6);
	if (bad) {
		printf("  output MISMATCH: %zu of %zu bytes differ from the reference\n", bad,
		       (size_t)pl.oh * pl.ow * rowb);
		goto out;
	}
	printf("  output matches the reference (%zu bytes)\n", (size_t)pl.oh * pl.ow * rowb);
	rc = 0;
out:
	loom_prog_free(&prog);
	free(in);
	free(w);
	free(bias);
	free(mult);
	free(shift);
	free(got);
	free(want);
	return rc;
}

/* One vector-unit layer: random input(s) (and, DWCONV, weights and
 * per-channel parameters), run, check every output byte. 0 ok, 1 failure. */
static int run_vec_layer(loom_hw *hw, const char *title, const loom_vec_params *p, uint64_t seed)
{
	const loom_hwcfg *cfg = &hw->cfg;
	char err[512];
	loom_vec_plan pl;
	if (loom_vec_plan_make(cfg, p, &pl, err, sizeof err)) {
		fprintf(stderr, "loom demo: %s: %s\n", title, err);
		return 1;
	}
	demo_rng r = {seed * 0x9e3779b97f4a7c15ull + 7};
	uint32_t kk = p->kh * p->kw, c = p->c;
	int dw = p->kind == LOOM_VEC_DWCONV;
	size_t nin = (size_t)pl.in_bytes, nin2 = (size_t)pl.in2_bytes, nw = dw ? (size_t)kk * c : 0;
	int8_t *in = malloc(nin), *in2 = malloc(nin2 + 1), *w = malloc(nw + 1);
	int32_t *bias = malloc(c * 4), *mult = malloc(c * 4), *shift = malloc(c * 4);
	int8_t *got = malloc(pl.out_bytes), *want = malloc(pl.out_bytes);
	loom_prog prog;
	loom_prog_init(&prog);
	int rc = 1;
	if (!in || !in2 || !w || !bias || !mult || !shift || !got || !want) {
		fprintf(stderr, "loom demo: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < nin; i++)
		in[i] = (int8_t)demo_rnd(&r);
	for (size_t i = 0; i < nin2; i++)
		in2[i] = (int8_t)demo_rnd(&r);
	for (size_t i = 0; i < nw; i++)
		w[i] = (int8_t)demo_rnd(&r);
	if (dw) {
		/* outputs spread over int8 (std about 40 before the clip) */
		double accstd = sqrt((double)kk) * 73.9 * 73.9;
		int sh = (int)lround(log2(0.75 * accstd / 40.0));
		for (uint32_t i = 0; i < c; i++) {
			bias[i] = (int32_t)(demo_rnd(&r) % 20001) - 10000;
			mult[i] = (int32_t)(0x40000000u + (demo_rnd(&r) & 0x3fffffffu));
			shift[i] = sh > 0 ? sh : 0;
		}
	}
	loom_vec_layout lay;
	uint64_t prog_addr;
	if (loom_vec_stage(hw, p, &pl, in, in2, dw ? w : NULL, dw ? bias : NULL, dw ? mult : NULL,
			   dw ? shift : NULL, NULL, (uint32_t)seed, 0, &lay, &prog, &prog_addr, err, sizeof err)) {
		fprintf(stderr, "loom demo: %s: %s\n", title, err);
		goto out;
	}
	printf("%s\n  plan: %u tiles of %ux%u, %u chunk(s) of %u channel blocks, %s%s, %zu instructions\n", title,
	       pl.ntiles, pl.th, pl.tw, pl.nk, pl.kc, pl.nbuf == 2 ? "double-buffered" : "single buffer",
	       pl.inplace ? ", in place" : "", prog.n);
	fflush(stdout);
	loom_hw_result res;
	double t0 = now_s();
	int xr = loom_hw_exec(hw, prog_addr, 50 * pl.est_cycles + 10000000, &res);
	double wall = now_s() - t0;
	if (xr != LOOM_HW_IRQ || !(res.status & LOOM_STATUS_DONE) || (res.status & LOOM_STATUS_ERROR)) {
		fprintf(stderr, "loom demo: %s: run failed: %s, status %#x, cause %s at pc %#x (field %s)\n", title,
			xr == LOOM_HW_TIMEOUT ? "timeout" : xr == LOOM_HW_FAILED ? loom_hw_error(hw) : "irq",
			res.status, loom_err_name(res.cause), res.pc, loom_field_name(res.info));
		goto out;
	}
	uint64_t cycles = ctr(hw, LOOM_CTR_CYCLES);
	uint32_t rd = ctr(hw, LOOM_CTR_DRAM_RD_BYTES), wr = ctr(hw, LOOM_CTR_DRAM_WR_BYTES);
	uint32_t bank = ctr(hw, LOOM_CTR_BANK_CONFLICTS);
	if (loom_hw_dram_read(hw, lay.out_addr, got, pl.out_bytes)) {
		fprintf(stderr, "loom demo: %s: reading DRAM: %s\n", title, loom_hw_error(hw));
		goto out;
	}
	switch (p->kind) {
	case LOOM_VEC_POOL: loom_golden_pool(p, in, want); break;
	case LOOM_VEC_DWCONV: loom_golden_dwconv(p, in, w, bias, mult, shift, want); break;
	default: loom_golden_eltwise(p, in, in2, want); break;
	}
	size_t npx = (size_t)pl.oh * pl.ow, bad = 0;
	for (size_t px = 0; px < npx; px++)
		for (size_t b = 0; b < c; b++)
			bad += got[px * pl.out_stride + b] != want[px * pl.out_stride + b];
	/* useful lane operations: DWCONV MACs, POOL window elements (padding
	 * taps included, as the conv layers' MACs), ELTWISE output elements */
	uint64_t ops = (uint64_t)npx * c * (p->kind == LOOM_VEC_ELTWISE ? 1 : kk);
	const char *what = p->kind == LOOM_VEC_DWCONV ? "MACs" : p->kind == LOOM_VEC_POOL ? "window elements"
											  : "output elements";
	/* a dwconv's peak: vec_macs multipliers a lane (input reuse) */
	unsigned R = cfg->array_rows, mul = p->kind == LOOM_VEC_DWCONV ? cfg->vec_macs : 1;
	printf("  cycles %llu%s  %s %llu  lane utilization %.1f%% (%s / (cycles * %u %s))\n",
	       (unsigned long long)cycles, strcmp(hw->backend, "rtl") ? " (C model estimate)" : "", what,
	       (unsigned long long)ops, 100.0 * (double)ops / ((double)cycles * R * mul), what, R * mul,
	       mul > 1 ? "multipliers" : "lanes");
	printf("  DRAM read %u bytes, written %u bytes, bank conflicts %u\n", rd, wr, bank);
	printf("  wall %.3f s: %.1f M simulated %s/s, %.3f M cycles/s\n", wall, ops / wall / 1e6, what,
	       cycles / wall / 1e6);
	if (bad) {
		printf("  output MISMATCH: %zu of %zu bytes differ from the reference\n", bad, npx * c);
		goto out;
	}
	printf("  output matches the reference (%zu bytes)\n", npx * c);
	rc = 0;
out:
	loom_prog_free(&prog);
	free(in);
	free(in2);
	free(w);
	free(bias);
	free(mult);
	free(shift);
	free(got);
	free(want);
	return rc;
}

/* the demo's depthwise 3x3 (MobileNet's): an h x h x c input, pad 1, this
 * stride; ReLU6 clips to [q(0), q(6)] = [out_zp, out_zp + 6 / scale] with
 * an output scale of 6/100 */
static void demo_dwconv(loom_vec_params *v, uint32_t h, uint32_t c, uint32_t stride)
{
	loom_vec_init(v, LOOM_VEC_DWCONV);
	v->h = v->w = h;
	v->c = c;
	v->kh = v->kw = 3;
	v->sh = v->sw = stride;
	v->pad_top = v->pad_bottom = v->pad_left = v->pad_right = 1;
	v->in_zp = -3;
	v->out_zp = -60;
	v->clip_lo = -60;
	v->clip_hi = 40;
}

/* the layers of --layer */
enum { L_CONV = 1, L_GEMM = 2, L_DWCONV = 4, L_MAXPOOL = 8, L_ADD = 16, L_DWCONV2 = 32 };
#define L_VEC (L_DWCONV | L_MAXPOOL | L_ADD)
#define L_ALL (L_CONV | L_GEMM | L_VEC)

static void demo_usage(FILE *f)
{
	fprintf(f, "usage: loom demo [--hw CFG] [--backend rtl|cmodel|systemc] [--layer L[,L...]] [--seed N] [--wave FILE]\n"
		   "  Runs layers with random int8 data (fixed seed), checks every output byte against the C\n"
		   "  reference and prints cycles, DRAM bytes, bank conflicts, utilization and simulation speed.\n"
		   "  --layer (default all), a comma-separated list of:\n"
		   "    conv     tensor engine: 56x56x64 -> 64, 3x3, stride 1, pad 1\n"
		   "    gemm     tensor engine: 256x1024 * 1024x256\n"
		   "    dwconv   vector unit: depthwise 3x3, stride 1, pad 1 on 56x56x128, per-channel\n"
		   "             requantization, ReLU6 clip (MobileNet)\n"
		   "    maxpool  vector unit: 3x3 max pooling, stride 2, pad 1 on 112x112x64 (ResNet stem)\n"
		   "    add      vector unit: residual add of two 56x56x64 int8 tensors of different scales\n"
		   "    vec      dwconv,maxpool,add\n"
		   "    all      every layer above\n"
		   "    dwconv2  vector unit: depthwise 3x3, stride 2, pad 1 on 112x112x96 -> 56x56x96\n"
		   "             (MobileNetV2's features.2; only by name, not in vec or all)\n"
		   "  Utilization counts every cycle from START to FINISH, DMA included:\n"
		   "    tensor engine: MAC utilization = MACs / (cycles * R * C), R x C the array\n"
		   "    vector unit:   lane utilization = useful lane operations / (cycles * R), R = array rows\n"
		   "                   = vector lanes (dwconv: cycles * R * the lane's multipliers); operations:\n"
		   "                   dwconv multiply-accumulates, maxpool window elements (padding included),\n"
		   "                   add output elements\n"
		   "  --backend cmodel, systemc: cycles are the C model's estimate\n"
		   "  --wave FILE.fst [--wave-from A] [--wave-to B]  FST waveform of cycles A..B (rtl only)\n");
}

/* --layer: a comma-separated list of layer names -> bit set, 0 if invalid */
static unsigned parse_layers(const char *s)
{
	static const struct {
		const char *name;
		unsigned set;
	} names[] = {{"conv", L_CONV}, {"gemm", L_GEMM}, {"dwconv", L_DWCONV}, {"maxpool", L_MAXPOOL},
		     {"add", L_ADD},   {"vec", L_VEC},   {"all", L_ALL},        {"dwconv2", L_DWCONV2}};
	unsigned set = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		unsigned one = 0;
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (strlen(names[i].name) == n && !strncmp(s, names[i].name, n))
				one = names[i].set;
		if (!one)
			return 0;
		set |= one;
		s += n;
		if (*s)
			s++;
	}
	return set;
}

int cmd_demo(int argc, char **argv)
{
	const char *hwspec = "default", *backend = "rtl", *layer = "all";
	uint64_t seed = 1;
	loom_hw_opts hopts = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wave") && i + 1 < argc)
			hopts.wave_path = argv[++i];
		else if (!strcmp(argv[i], "--wave-from") && i + 1 < argc)
			hopts.wave_from = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--wave-to") && i + 1 < argc)
			hopts.wave_to = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--hw") && i + 1 < argc)
			hwspec = argv[++i];
		else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			backend = argv[++i];
		else if (!strcmp(argv[i], "--layer") && i + 1 < argc)
			layer = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			demo_usage(stdout);
			return 0;
		} else {
			demo_usage(stderr);
			return 2;
		}
	}
	unsigned layers = parse_layers(layer);
	if (!layers) {
		fprintf(stderr, "loom demo: unknown layer in '%s'\n", layer);
		demo_usage(stderr);
		return 2;
	}
	char err[512];
	loom_hwcfg cfg;
	if (tool_load_hw("demo", hwspec, &cfg))
		return 2;
	loom_hw *hw = loom_hw_open(backend, &cfg, &hopts, err, sizeof err);
	if (!hw) {
		fprintf(stderr, "loom demo: %s\n", err);
		return 2;
	}
	printf("loom demo: configuration %s (%ux%u array, %u KiB scratchpad in %u banks, %u KiB accumulator), "
	       "backend %s\n",
	       cfg.name, cfg.array_rows, cfg.array_cols, cfg.sp_bytes / 1024, cfg.sp_banks, cfg.acc_bytes / 1024,
	       backend);
	int fails = 0;
	if (layers & L_CONV) {
		loom_conv_params c;
		loom_conv_init(&c);
		c.h = c.w = 56;
		c.cin = c.cout = 64;
		c.kh = c.kw = 3;
		c.pad_top = c.pad_bottom = c.pad_left = c.pad_right = 1;
		c.in_zp = -3;
		c.out_zp = 2;
		fails += run_layer(hw, "conv 56x56x64 -> 64, 3x3, stride 1, pad 1", &c, NULL, seed);
	}
	if (layers & L_GEMM) {
		loom_gemm_params g;
		loom_gemm_init(&g);
		g.m = 256;
		g.k = 1024;
		g.n = 256;
		g.a_zp = 1;
		g.out_zp = -5;
		loom_conv_params c;
		loom_gemm_to_conv(&g, &c);
		fails += run_layer(hw, "gemm 256x1024 * 1024x256", &c, &g, seed + 1);
	}
	if (layers & L_DWCONV) {
		loom_vec_params v;
		demo_dwconv(&v, 56, 128, 1);
		fails += run_vec_layer(hw, "dwconv 56x56x128, depthwise 3x3, stride 1, pad 1, per-channel requant, ReLU6",
				       &v, seed + 2);
	}
	if (layers & L_DWCONV2) {
		loom_vec_params v;
		demo_dwconv(&v, 112, 96, 2);
		fails += run_vec_layer(hw, "dwconv2 112x112x96 -> 56x56x96, depthwise 3x3, stride 2, pad 1, per-channel "
				       "requant, ReLU6", &v, seed + 5);
	}
	if (layers & L_MAXPOOL) {
		loom_vec_params v;
		loom_vec_init(&v, LOOM_VEC_POOL);
		v.func = LOOM_POOL_MAX;
		v.h = v.w = 112;
		v.c = 64;
		v.kh = v.kw = 3;
		v.sh = v.sw = 2;
		v.pad_top = v.pad_bottom = v.pad_left = v.pad_right = 1;
		fails += run_vec_layer(hw, "maxpool 112x112x64 -> 56x56x64, 3x3, stride 2, pad 1", &v, seed + 3);
	}
	if (layers & L_ADD) {
		/* out = a + b in real numbers: a scale 0.05, b scale 0.08, out 0.1 */
		loom_vec_params v;
		loom_vec_init(&v, LOOM_VEC_ELTWISE);
		v.func = LOOM_ELT_ADD;
		v.bcast = LOOM_BCAST_NONE;
		v.h = v.w = 56;
		v.c = 64;
		v.in_zp = 3;
		v.in2_zp = -7;
		v.out_zp = 5;
		if (loom_quant_add(0.05, 0.08, 0.1, &v)) {
			fprintf(stderr, "loom demo: add: scales out of range\n");
			fails++;
		} else
			fails += run_vec_layer(hw, "add 56x56x64 + 56x56x64 (scales 0.05, 0.08 -> 0.1)", &v, seed + 4);
	}
	loom_hw_close(hw);
	return fails ? 1 : 0;
}
