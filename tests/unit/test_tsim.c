/* test_tsim.c - the timing model of whole programs (loom_tsim_run,
 * common/tsim.c, common/tsim_prog.c) gives the same cycles as before: a
 * regression guard for its speed work, which must not change a result.
 *
 * For seven configurations (small, default, large, odd, a DRAM-bound
 * default with dram_bw=4, dram_latency=200, small with 4 write bursts
 * waiting for their response, dma_wr_outstanding=4, and small with 5
 * multipliers a vector lane, vec_macs=5) and SEEDS random legal
 * programs each (the co-simulation generator, cosim/gen.c: LOADs with
 * padding, STOREs of every SOURCE, MATMUL, the vector unit, MARKs, tokens),
 * runs loom_tsim_run and folds its end cycle and every MARK's cycle into
 * an FNV-1a hash per configuration, compared with the line of
 * tests/unit/tsim_golden.txt recorded from the model before the change
 * (those cycles are the RTL's: random cosim checks the C model, which runs
 * the same tsim, against Verilator). `test_tsim --write FILE` writes the
 * golden lines (scripts/tsim_golden.sh).
 *
 * Also: the first SHIFTED programs of each configuration started in cycle
 * 2^40 + 12345 (loom_tsim_run_at, as a long-lived C model starts a job)
 * end and mark exactly that much later. The calendars' rings must follow
 * the clock: a ring kept from cycle 0 would need 2^40 bits there, which
 * fails (out of memory: no end). Ends with "N passed, M failed". */
#include "common/tsim.h"
#include "cosim/cosim.h"
#include "loom/hwcfg.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEEDS 400
#define NMARKS 64
#define SHIFTED 40
#define SHIFT ((1ull << 40) + 12345)

static const char *const cfgs[] = {"small", "default", "large", "odd", "default:dram_bw=4,dram_latency=200",
				   "small:dma_wr_outstanding=4", "small:vec_macs=5"};
#define NCFG (sizeof cfgs / sizeof cfgs[0])

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int k = 0; k < 8; k++) {
		h ^= (v >> (8 * k)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* hash, programs and the sum of their cycles for configuration k; -1 on error */
static int run_cfg(size_t k, uint64_t *hash, uint64_t *sum)
{
	loom_hwcfg cfg;
	char err[512];
	if (loom_hwcfg_load(&cfg, cfgs[k], loom_root_dir(), err, sizeof err)) {
		CHECK_FAIL("config %s: %s", cfgs[k], err);
		return -1;
	}
	loom_timing t;
	loom_timing_init(&t, &cfg, 0, 0);
	uint64_t h = 0xcbf29ce484222325ull, s = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		loom_cosim_prog p;
		if (loom_cosim_gen(&cfg, seed * 104729 + k, &p, err, sizeof err)) {
			CHECK_FAIL("%s seed %llu: %s", cfgs[k], (unsigned long long)seed, err);
			return -1;
		}
		uint64_t marks[NMARKS];
		memset(marks, 0xff, sizeof marks);
		uint64_t end = loom_tsim_run(&t, p.insns, p.ninsns, marks, NMARKS);
		if (end == LOOM_TDMA_NEVER)
			CHECK_FAIL("%s seed %llu: no end (deadlock or out of memory)", cfgs[k], (unsigned long long)seed);
		h = fnv(h, end);
		for (int m = 0; m < NMARKS; m++)
			h = fnv(h, marks[m]);
		if (seed <= SHIFTED && end != LOOM_TDMA_NEVER) {
			uint64_t sm[NMARKS];
			memset(sm, 0xff, sizeof sm);
			uint64_t se = loom_tsim_run_at(&t, SHIFT, p.insns, p.ninsns, sm, NMARKS);
			int same = se == end + SHIFT;
			for (int m = 0; m < NMARKS && same; m++)
				same = marks[m] == UINT64_MAX ? sm[m] == UINT64_MAX : sm[m] == marks[m] + SHIFT;
			CHECK(same, "%s seed %llu: started in cycle %llu, ends %llu cycles later (from 0: %llu) with its marks shifted",
			      cfgs[k], (unsigned long long)seed, (unsigned long long)SHIFT,
			      (unsigned long long)(se == LOOM_TDMA_NEVER ? 0 : se - SHIFT), (unsigned long long)end);
		}
		s += end;
		loom_cosim_free(&p);
	}
	*hash = h;
	*sum = s;
	return 0;
}

int main(int argc, char **argv)
{
	check_init(0);
	int write = argc == 3 && !strcmp(argv[1], "--write");
	const char *path = write ? argv[2] : argc > 1 ? argv[1] : "tests/unit/tsim_golden.txt";
	FILE *f = fopen(path, write ? "w" : "r");
	if (!f) {
		CHECK_FAIL("cannot open %s", path);
		return check_report();
	}
	for (size_t k = 0; k < NCFG; k++) {
		uint64_t h, s;
		if (run_cfg(k, &h, &s))
			continue;
		if (write) {
			fprintf(f, "%s %016llx %llu\n", cfgs[k], (unsigned long long)h, (unsigned long long)s);
			continue;
		}
		char name[128];
		unsigned long long gh = 0, gs = 0;
		if (fscanf(f, "%127s %llx %llu", name, &gh, &gs) != 3 || strcmp(name, cfgs[k])) {
			CHECK_FAIL("%s: line %zu of %s is not this configuration's", cfgs[k], k + 1, path);
			continue;
		}
		CHECK(h == gh && s == gs, "%s: %d programs' cycles and marks as recorded (hash %016llx, %llu cycles; recorded %016llx, %llu)",
		      cfgs[k], SEEDS, (unsigned long long)h, (unsigned long long)s, gh, gs);
	}
	fclose(f);
	return check_report();
}
