/* cmd_demo.c - `loom demo`: runs a 56x56x64 -> 64 3x3 convolution and a
 * 256x1024 * 1024x256 GEMM with random int8 data on a backend (RTL by
 * default), checks every output byte against the plain C reference
 * (tools/ref.c) and prints per layer: cycles, MACs, MAC utilization =
 * MACs / (cycles * R * C) over every cycle from START to FINISH, DRAM bytes
 * read/written (perf counters), wall time, simulated MACs/s and cycles/s.
 * Exit status 1 on a mismatch or a failed run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom.h"
#include "loom/hw.h"
#include "loom/isa.h"
#include "loom/kernels.h"
#include "loom/ref.h"

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
		loom_ref_gemm(gp, in, w, bias, mult, shift, want);
	else
		loom_ref_conv(cp, in, w, bias, mult, shift, want);
	size_t bad = 0, rowb = (size_t)cp->cout * (cp->raw ? 4 : 1);
	for (size_t px = 0; px < (size_t)pl.oh * pl.ow; px++)
		for (size_t b = 0; b < rowb; b++)
			bad += got[px * pl.out_stride + b] != want[px * pl.out_stride + b];
	double R = cfg->array_rows, C = cfg->array_cols;
	printf("  cycles %llu%s  MACs %llu (counter %llu)  utilization %.1f%%\n", (unsigned long long)cycles,
	       strcmp(hw->backend, "cmodel") ? "" : " (C model estimate)",
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

static void demo_usage(FILE *f)
{
	fprintf(f, "usage: loom demo [--hw CFG] [--backend rtl|cmodel] [--layer conv|gemm|all] [--seed N] [--wave FILE]\n"
		   "  conv: 56x56x64 -> 64, 3x3, stride 1, pad 1; gemm: 256x1024 * 1024x256\n"
		   "  --wave FILE.fst [--wave-from A] [--wave-to B]  FST waveform of cycles A..B (rtl only)\n");
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
	int do_conv = !strcmp(layer, "conv") || !strcmp(layer, "all");
	int do_gemm = !strcmp(layer, "gemm") || !strcmp(layer, "all");
	if (!do_conv && !do_gemm) {
		demo_usage(stderr);
		return 2;
	}
	char err[512];
	loom_hwcfg cfg;
	if (loom_hwcfg_load(&cfg, hwspec, NULL, err, sizeof err)) {
		fprintf(stderr, "loom demo: %s\n", err);
		return 2;
	}
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
	if (do_conv) {
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
	if (do_gemm) {
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
	loom_hw_close(hw);
	return fails ? 1 : 0;
}
