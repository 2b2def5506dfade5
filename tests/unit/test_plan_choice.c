/* test_plan_choice.c - the tile planners' choice among their timed
 * finalists (compiler/npu/npu_internal.h, npu_choose; docs/ARCHITECTURE.md,
 * "One timing model"): of the finalists within NPU_CYCLE_TOL_PERMIL
 * thousandths of the fastest, the one that moves the fewest DRAM bytes.
 *
 *  - the rule on hand-made cycles and bytes: a slower finalist inside the
 *    tolerance with fewer bytes wins, one just outside does not (the bound
 *    exact), equal bytes go to the fewer cycles, equal both to the earlier,
 *    untimed finalists (0 cycles) never, none timed gives -1;
 *  - real layers on "default" (ResNet-50's 56x56x256 -> 128 and 56x56x64 ->
 *    64 3x3): npu_conv_finalists' finalists timed with npu_conv_cycles, the
 *    plan of loom_conv_plan_make is the finalist the rule picks; it is not
 *    the fastest (a finalist within the tolerance is faster), it moves
 *    fewer DRAM bytes than the fastest, no finalist within the tolerance
 *    moves fewer, and it is the lean finalist (the one added for the
 *    fewest bytes among the tilings rated within NPU_LEAN_RATING_TOL:
 *    fewer bytes than every best-rated one). The plan memo's deferred
 *    timing (memo.c) on 1 and 3 threads gives the same plan.
 *
 * Prints one line per check and ends with "N passed, M failed"; exit
 * status 1 on any failure. */
#include "compiler/npu/npu_internal.h"
#include "loom/hwcfg.h"
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void test_rule(void)
{
	/* 1000 fastest; 1010 is exactly 1% slower (in), 1011 beyond (out) */
	static const struct {
		uint64_t cyc[4], by[4];
		int n, want;
		const char *what;
	} c[] = {
		{{1000, 1010, 1011, 0}, {300, 200, 100, 0}, 3, 1, "within 1% and fewer bytes wins; 1.1% slower does not"},
		{{1011, 1000, 0, 0}, {100, 300, 0, 0}, 2, 1, "beyond the tolerance: the fastest"},
		{{1005, 1000, 1008, 0}, {200, 300, 200, 0}, 3, 0, "equal bytes: the fewer cycles"},
		{{1000, 1004, 1004, 0}, {300, 200, 200, 0}, 3, 1, "equal bytes and cycles: the earlier"},
		{{0, 1000, 1009, 0}, {1, 300, 400, 0}, 3, 1, "an untimed finalist (0 cycles) is never chosen"},
		{{0, 0, 0, 0}, {1, 2, 3, 0}, 3, -1, "none timed: -1"},
		{{500000, 504000, 505000, 505001}, {9, 8, 7, 1}, 4, 2, "the bound at 1% of the fastest's cycles"},
	};
	CHECK(NPU_CYCLE_TOL_PERMIL == 10, "the tolerance is 1%% (%d per mil; the cases below assume it)",
	      NPU_CYCLE_TOL_PERMIL);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		int got = npu_choose(c[i].cyc, c[i].by, c[i].n);
		CHECK(got == c[i].want, "npu_choose: %s (chose %d, want %d)", c[i].what, got, c[i].want);
	}
}

/* the plan of p through the memo, deferred, timed on threads */
static int memo_plan(const loom_hwcfg *cfg, const loom_conv_params *p, int threads, loom_conv_plan *pl)
{
	char err[256];
	loom_plan_memo *m = loom_plan_memo_new(cfg);
	if (!m)
		return -1;
	loom_plan_memo_defer(m);
	int rc = loom_plan_memo_conv(m, cfg, p, pl, err, sizeof err) || loom_plan_memo_time(m, threads) ||
		 loom_plan_memo_conv(m, cfg, p, pl, err, sizeof err);
	loom_plan_memo_free(m);
	return rc;
}

static void layer_case(const loom_hwcfg *cfg, uint32_t hw, uint32_t cin, uint32_t cout, uint32_t k)
{
	char L[96], err[256] = "";
	snprintf(L, sizeof L, "%ux%ux%u -> %u %ux%u on %s", hw, hw, cin, cout, k, k, cfg->name);
	loom_conv_params p;
	loom_conv_init(&p);
	p.h = p.w = hw, p.cin = cin, p.cout = cout, p.kh = p.kw = k;
	p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = k / 2;
	layer Ly;
	loom_conv_plan fin[NPU_CONV_FINALISTS], plan;
	uint64_t cyc[NPU_CONV_FINALISTS], by[NPU_CONV_FINALISTS];
	int n = 0;
	memset(&plan, 0, sizeof plan);
	if (!CHECK(!npu_conv_finalists(cfg, &p, &Ly, fin, &n, err, sizeof err) &&
			   !loom_conv_plan_make(cfg, &p, &plan, err, sizeof err),
		   "%s: planned %s", L, err))
		return;
	int fast = 0;
	for (int i = 0; i < n; i++) {
		cyc[i] = npu_conv_cycles(cfg, &p, &Ly, &fin[i], 0);
		by[i] = fin[i].dram_rd_est + fin[i].dram_wr_est;
		if (cyc[i] && cyc[i] < cyc[fast])
			fast = i;
		printf("     finalist %d: %" PRIu64 " cycles, %" PRIu64 " DRAM bytes (g %u, kc %u, tile %ux%u%s)\n", i, cyc[i],
		       by[i], fin[i].g, fin[i].kc, fin[i].th, fin[i].tw, fin[i].wchunk ? ", streamed weights" : "");
	}
	int ch = npu_choose(cyc, by, n);
	if (!CHECK(ch >= 0, "%s: a finalist chosen", L))
		return;
	uint64_t pby = plan.dram_rd_est + plan.dram_wr_est;
	CHECK(plan.est_cycles == cyc[ch] && pby == by[ch] && plan.g == fin[ch].g && plan.kc == fin[ch].kc &&
		      plan.th == fin[ch].th && plan.tw == fin[ch].tw && plan.wchunk == fin[ch].wchunk,
	      "%s: the plan is finalist %d (%" PRIu64 " cycles, %" PRIu64 " bytes)", L, ch, plan.est_cycles, pby);
	CHECK(cyc[fast] < plan.est_cycles && plan.est_cycles * 1000 <= cyc[fast] * (1000 + NPU_CYCLE_TOL_PERMIL),
	      "%s: a faster finalist exists (%" PRIu64 " cycles), within the tolerance of the plan's %" PRIu64, L,
	      cyc[fast], plan.est_cycles);
	CHECK(pby < by[fast], "%s: the plan moves fewer DRAM bytes than the fastest (%" PRIu64 " < %" PRIu64 ")", L, pby,
	      by[fast]);
	int fewest = 1;
	for (int i = 0; i < n; i++)
		fewest &= !cyc[i] || cyc[i] * 1000 > cyc[fast] * (1000 + NPU_CYCLE_TOL_PERMIL) || by[i] >= pby;
	CHECK(fewest, "%s: no finalist within the tolerance moves fewer bytes", L);
	int lean = n == NPU_CONV_FINALISTS && ch == n - 1;
	for (int i = 0; i < n - 1; i++)
		lean &= by[i] > pby;
	CHECK(lean, "%s: the plan is the lean finalist (the last of %d, fewer bytes than every best rated one)", L, n);
	for (int t = 1; t <= 3; t += 2) {
		loom_conv_plan mp;
		memset(&mp, 0, sizeof mp);
		loom_conv_plan want = plan;
		want.est_first = 0;
		CHECK(!memo_plan(cfg, &p, t, &mp) && !memcmp(&mp, &want, sizeof want),
		      "%s: the memo's deferred timing on %d thread%s gives the same plan", L, t, t > 1 ? "s" : "");
	}
}

int main(void)
{
	check_init(0);
	test_rule();
	loom_hwcfg cfg;
	char err[256];
	if (CHECK(!loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err), "configuration default loaded%s%s", *err ? ": " : "", err)) {
		layer_case(&cfg, 56, 256, 128, 1);
		layer_case(&cfg, 56, 64, 64, 3);
	}
	return check_report();
}
