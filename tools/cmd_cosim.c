/* cmd_cosim.c - `loom cosim`: random co-simulation of two backends (by
 * default the RTL against the C model) on programs from cosim/gen.c.
 *
 * For program i (seed S+i) every region is written into both DRAMs, the
 * program runs on both with loom_hw_exec and a cycle bound, both must finish
 * (or, with --bad, both must stop with the predicted ERR_CAUSE/PC/INFO and a
 * legal program run right after must pass), then every compared byte of
 * every region and the deterministic counters (MACS, DRAM bytes, INSNS) must
 * match. A failure prints one report naming the seed, the first differing
 * address, its region, the instruction that wrote it and a command line that
 * reproduces it. The output ends with "N/N bit-exact" and
 * "cosim: P passed, F failed"; exit status 0 only when nothing failed.
 *
 * The C model also comes as cmodel-generic (its plain C kernels even on a
 * CPU with AVX2 or AVX-512; cmodel takes the best SIMD path the CPU has, or
 * the one LOOM_CMODEL_SIMD names) and cmodel-nomemo (tsim run for every job, no timing memo):
 * two C models must agree on the cycle counters too (CYCLES, BUSY_*,
 * STALL_*, the run's cycles), since neither choice may change the timing.
 * --repeat N runs each program N times on each backend, so the timing memo
 * answers the later runs. The systemc backend (the C model as a SystemC
 * module, its DRAM a TLM memory reached through the module's initiator
 * socket) must agree with a C model on those counters too; only the run's
 * cycles as the host sees them differ (register accesses take time there). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cosim/cosim.h"
#include "loom/hw.h"
#include "loom/isa.h"

typedef struct cosim_opts {
	const char *hw, *a, *b;
	uint64_t count, seed, repeat;
	int bad, verbose;
	long long dump; /* program index to dump, -1: none */
	uint32_t dram_latency, dram_bw; /* 0: the configuration's */
	int count_set, seed_set;
} cosim_opts;

typedef struct cosim_run {
	const cosim_opts *o;
	loom_hw *hw[2];
	const char *name[2];  /* backend names */
	const char *label[2]; /* how reports call them */
	uint64_t rtl_cycles, other_cycles;
	uint64_t rtl_busy, rtl_ctr_cycles, rtl_bank; /* RTL engine overlap */
	uint8_t *buf[2];
	size_t buflen;
	uint64_t nop[256]; /* instructions generated, per opcode */
	int both_cmodel;   /* two C models: the cycle counters must match too */
	int both_rtl;      /* rtl and systemc-rtl: every counter and the runs' cycles too */
	int same_clock;    /* two C models and no systemc, or both_rtl: the runs' cycles too */
} cosim_run;

/* the backends that run the verilated RTL */
static int is_rtl(const char *backend)
{
	return !strcmp(backend, "rtl") || !strcmp(backend, "systemc-rtl");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: loom cosim --hw CONFIG --count N --seed S [--a BACKEND] [--b BACKEND]\n"
		"                  [--bad] [--verbose] [--dump-program K] [--dram-latency N] [--dram-bw N]\n"
		"                  [--repeat N]\n"
		"\n"
		"Runs N random legal, race-free programs (seeds S..S+N-1) on two backends\n"
		"and compares every region of DRAM byte for byte.\n"
		"\n"
		"  --hw CONFIG        hardware configuration (configs/CONFIG.cfg, or overrides)\n"
		"  --count N          number of programs (default 1)\n"
		"  --seed S           seed of the first program (default 1)\n"
		"  --a BACKEND        first backend, rtl or cmodel (default rtl); also\n"
		"                     cmodel-generic (its plain C kernels, no SIMD) and\n"
		"                     cmodel-nomemo (no timing memo), systemc (the C model\n"
		"                     as a SystemC module), systemc-rtl (the RTL as a\n"
		"                     cycle-accurate SystemC module); two C models, and\n"
		"                     rtl with systemc-rtl, must agree on every cycle\n"
		"                     counter as well (rtl with systemc-rtl: and on the\n"
		"                     cycles of each run)\n"
		"  --b BACKEND        second backend (default cmodel)\n"
		"  --repeat N         run each program N times on each backend (default 1)\n"
		"  --bad              bad programs: both backends must report the predicted\n"
		"                     error, then a legal program must run bit-exact\n"
		"  --bad-kinds        print the number of bad-program kinds and exit\n"
		"                     (with --bad, program i has kind (S+i) mod that)\n"
		"  --verbose          one line per program\n"
		"  --dump-program K   print program K (0-based) before running it\n"
		"  --dram-latency N   simulated DRAM latency in cycles (both backends)\n"
		"  --dram-bw N        simulated DRAM bytes per cycle (both backends)\n"
		"\n"
		"Ends with \"N/N bit-exact\" and \"cosim: P passed, F failed\"; exit status 0\n"
		"when every program passed, 1 on a mismatch, 2 on bad options.\n");
}

static int parse_u64(const char *opt, const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-') {
		fprintf(stderr, "loom cosim: %s needs a non-negative number, got '%s'\n", opt, s ? s : "");
		return -1;
	}
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "loom cosim: %s: '%s' is not a number\n", opt, s);
		return -1;
	}
	*v = x;
	return 0;
}

/* 0 ok, 1 --help, -1 error (message printed) */
static int parse(int argc, char **argv, cosim_opts *o)
{
	memset(o, 0, sizeof *o);
	o->a = "rtl";
	o->b = "cmodel";
	o->count = 1;
	o->seed = 1;
	o->repeat = 1;
	o->dump = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t x;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return 1;
		if (!strcmp(a, "--bad")) {
			o->bad = 1;
			continue;
		}
		if (!strcmp(a, "--bad-kinds")) {
			/* how many kinds of bad program exist (seed % kinds picks one) */
			printf("%u\n", loom_cosim_bad_kinds());
			exit(0);
		}
		if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			o->verbose = 1;
			continue;
		}
		if (strcmp(a, "--hw") && strcmp(a, "--count") && strcmp(a, "--seed") && strcmp(a, "--a") &&
		    strcmp(a, "--b") && strcmp(a, "--dump-program") && strcmp(a, "--dram-latency") &&
		    strcmp(a, "--dram-bw") && strcmp(a, "--repeat")) {
			fprintf(stderr, "loom cosim: unknown option '%s'\n", a);
			return -1;
		}
		if (!v) {
			fprintf(stderr, "loom cosim: %s needs a value\n", a);
			return -1;
		}
		i++;
		if (!strcmp(a, "--hw")) {
			o->hw = v;
		} else if (!strcmp(a, "--a") || !strcmp(a, "--b")) {
			if (strcmp(v, "rtl") && strcmp(v, "cmodel") && strcmp(v, "cmodel-generic") &&
			    strcmp(v, "cmodel-nomemo") && strcmp(v, "systemc") && strcmp(v, "systemc-rtl")) {
				fprintf(stderr, "loom cosim: %s: unknown backend '%s' (rtl or cmodel; cmodel-generic, "
						"cmodel-nomemo, systemc, systemc-rtl)\n", a, v);
				return -1;
			}
			if (a[2] == 'a')
				o->a = v;
			else
				o->b = v;
		} else {
			if (parse_u64(a, v, &x))
				return -1;
			if (!strcmp(a, "--count")) {
				if (x == 0 || x > 100000000) {
					fprintf(stderr, "loom cosim: --count must be 1..100000000\n");
					return -1;
				}
				o->count = x;
			} else if (!strcmp(a, "--seed")) {
				o->seed = x;
			} else if (!strcmp(a, "--repeat")) {
				if (x == 0 || x > 100) {
					fprintf(stderr, "loom cosim: --repeat must be 1..100\n");
					return -1;
				}
				o->repeat = x;
			} else if (!strcmp(a, "--dram-latency") || !strcmp(a, "--dram-bw")) {
				if (x == 0 || x > (strcmp(a, "--dram-bw") ? 1000u : 64u)) {
					fprintf(stderr, "loom cosim: %s must be 1..%u\n", a, strcmp(a, "--dram-bw") ? 1000u : 64u);
					return -1;
				}
				if (!strcmp(a, "--dram-bw"))
					o->dram_bw = (uint32_t)x;
				else
					o->dram_latency = (uint32_t)x;
			} else {
				o->dump = (long long)x;
			}
		}
	}
	if (!o->hw) {
		fprintf(stderr, "loom cosim: --hw CONFIG is required\n");
		return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void repro(const cosim_run *r, uint64_t seed, int bad)
{
	const cosim_opts *o = r->o;
	printf("  reproduce: loom cosim --hw %s --count 1 --seed %" PRIu64 " --dump-program 0%s", o->hw, seed,
	       bad ? " --bad" : "");
	if (strcmp(o->a, "rtl") || strcmp(o->b, "cmodel"))
		printf(" --a %s --b %s", o->a, o->b);
	if (o->repeat > 1)
		printf(" --repeat %" PRIu64, o->repeat);
	if (o->dram_latency)
		printf(" --dram-latency %u", o->dram_latency);
	if (o->dram_bw)
		printf(" --dram-bw %u", o->dram_bw);
	printf("\n");
}

static const char *what(const loom_cosim_prog *p)
{
	return p->bad ? p->what : "legal";
}

static int load_regions(cosim_run *r, const loom_cosim_prog *p)
{
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < p->nregions; i++)
			if (loom_hw_dram_write(r->hw[k], p->regions[i].addr, p->regions[i].init, p->regions[i].len)) {
				printf("FAIL seed %" PRIu64 " (%s): writing region %zu to %s: %s\n", p->seed, what(p), i,
				       r->name[k], loom_hw_error(r->hw[k]));
				return -1;
			}
	return 0;
}

static void describe_writer(const loom_cosim_prog *p, uint64_t addr)
{
	long w = loom_cosim_writer(p, addr);
	if (w < 0) {
		printf("  no instruction writes this byte (it must keep its initial value)\n");
		return;
	}
	char d[256];
	loom_insn_disasm(&p->insns[w], d, sizeof d);
	printf("  written by instruction %ld @0x%" PRIx64 ": %s\n", w, loom_cosim_pc(p, (size_t)w), d);
}

/* Compare every compared byte of every region; 0 equal, -1 mismatch. */
static int compare(cosim_run *r, const loom_cosim_prog *p, const char *cfgname)
{
	size_t ndiff = 0, nreg = 0;
	int first = 1;
	for (size_t i = 0; i < p->nregions; i++) {
		const loom_cosim_region *rg = &p->regions[i];
		if (rg->len > r->buflen) {
			for (int k = 0; k < 2; k++) {
				uint8_t *nb = realloc(r->buf[k], rg->len);
				if (!nb) {
					printf("FAIL seed %" PRIu64 ": out of memory\n", p->seed);
					return -1;
				}
				r->buf[k] = nb;
			}
			r->buflen = rg->len;
		}
		for (int k = 0; k < 2; k++)
			if (loom_hw_dram_read(r->hw[k], rg->addr, r->buf[k], rg->len)) {
				printf("FAIL seed %" PRIu64 ": reading region %zu from %s: %s\n", p->seed, i, r->name[k],
				       loom_hw_error(r->hw[k]));
				return -1;
			}
		size_t here = 0;
		for (uint32_t off = 0; off < rg->len; off++) {
			if (r->buf[0][off] == r->buf[1][off] || !loom_cosim_compared(rg, off))
				continue;
			here++;
			if (!first)
				continue;
			first = 0;
			uint64_t addr = rg->addr + off;
			printf("FAIL seed %" PRIu64 " (config %s, %s program): DRAM 0x%" PRIx64 " differs: %s=0x%02x %s=0x%02x\n",
			       p->seed, cfgname, what(p), addr, r->label[0], r->buf[0][off], r->label[1], r->buf[1][off]);
			printf("  region %zu (%s, 0x%" PRIx64 "..0x%" PRIx64 ") byte +%u, initially 0x%02x\n", i,
			       loom_cosim_region_kind_name(rg->kind), rg->addr, rg->addr + rg->len, off, rg->init[off]);
			describe_writer(p, addr);
		}
		if (here) {
			ndiff += here;
			nreg++;
		}
	}
	if (ndiff) {
		printf("  %zu differing bytes in %zu regions\n", ndiff, nreg);
		return -1;
	}
	return 0;
}

static uint32_t ctr(loom_hw *hw, unsigned idx) { return loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * idx); }
static uint32_t evt(loom_hw *hw, unsigned idx) { return loom_hw_mmio_read(hw, LOOM_REG_EVT_BASE + 4 * idx); }

/* The counters docs/ISA.md makes exact on both backends: those perf
 * counters and every energy event counter. */
static int compare_counters(cosim_run *r, const loom_cosim_prog *p, const char *cfgname)
{
	static const unsigned idx[] = {LOOM_CTR_MACS_LO, LOOM_CTR_MACS_HI, LOOM_CTR_DRAM_RD_BYTES,
				       LOOM_CTR_DRAM_WR_BYTES, LOOM_CTR_INSNS};
	int bad = 0;
	for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++) {
		uint32_t a = ctr(r->hw[0], idx[i]), b = ctr(r->hw[1], idx[i]);
		if (a != b) {
			printf("FAIL seed %" PRIu64 " (config %s, %s program): counter %s differs: %s=%u %s=%u\n", p->seed,
			       cfgname, what(p), loom_ctr_name(idx[i]), r->label[0], a, r->label[1], b);
			bad = 1;
		}
	}
	if (r->both_cmodel || r->both_rtl)
		for (unsigned i = 0; i < LOOM_CTR_COUNT; i++) {
			uint32_t a = ctr(r->hw[0], i), b = ctr(r->hw[1], i);
			if (a != b) {
				printf("FAIL seed %" PRIu64 " (config %s, %s program): %s' counter %s differs: %s=%u "
				       "%s=%u\n",
				       p->seed, cfgname, what(p), r->both_rtl ? "the RTLs" : "C models", loom_ctr_name(i),
				       r->label[0], a, r->label[1], b);
				bad = 1;
			}
		}
	for (unsigned i = 0; i < LOOM_EVT_COUNT; i++) {
		uint32_t a = evt(r->hw[0], i), b = evt(r->hw[1], i);
		if (a != b) {
			printf("FAIL seed %" PRIu64 " (config %s, %s program): event counter %s differs: %s=%u %s=%u\n",
			       p->seed, cfgname, what(p), loom_evt_name(i), r->label[0], a, r->label[1], b);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

static void describe_pc(const loom_cosim_prog *p, uint32_t pc)
{
	long i = loom_cosim_insn_at(p, pc);
	if (i >= 0) {
		char d[256];
		loom_insn_disasm(&p->insns[i], d, sizeof d);
		printf("    pc 0x%x is instruction %ld: %s\n", pc, i, d);
	}
}

/* Run p on both backends and check the outcome; 0 pass, -1 fail. */
static int run_prog(cosim_run *r, const loom_cosim_prog *p, const char *cfgname)
{
	loom_hw_result res[2];
	uint64_t maxc = loom_cosim_max_cycles(p);
	int fail = 0;
	if (load_regions(r, p))
		return -1;
	for (int k = 0; k < 2; k++) {
		int rc = loom_hw_exec(r->hw[k], p->insn_addr, maxc, &res[k]);
		if (rc == LOOM_HW_FAILED) {
			printf("FAIL seed %" PRIu64 " (%s): backend %s failed: %s\n", p->seed, what(p), r->name[k],
			       loom_hw_error(r->hw[k]));
			return -1;
		}
		if (is_rtl(r->name[k])) {
			r->rtl_cycles += res[k].cycles;
			r->rtl_ctr_cycles += ctr(r->hw[k], LOOM_CTR_CYCLES);
			r->rtl_busy += (uint64_t)ctr(r->hw[k], LOOM_CTR_BUSY_LOAD) + ctr(r->hw[k], LOOM_CTR_BUSY_COMPUTE) +
				       ctr(r->hw[k], LOOM_CTR_BUSY_STORE);
			r->rtl_bank += ctr(r->hw[k], LOOM_CTR_BANK_CONFLICTS);
		} else {
			r->other_cycles += res[k].cycles;
		}
	}
	if (r->same_clock && res[0].cycles != res[1].cycles) {
		printf("FAIL seed %" PRIu64 " (config %s, %s program): the %s' runs took %" PRIu64 " (%s) and %" PRIu64
		       " (%s) cycles\n",
		       p->seed, cfgname, what(p), r->both_rtl ? "RTLs" : "C models", res[0].cycles, r->label[0], res[1].cycles, r->label[1]);
		fail = 1;
	}
	for (int k = 0; k < 2; k++) {
		const loom_hw_result *x = &res[k];
		if (x->timed_out) {
			printf("FAIL seed %" PRIu64 " (config %s, %s program): timeout: %s did not finish within %" PRIu64
			       " cycles\n",
			       p->seed, cfgname, what(p), r->name[k], maxc);
			fail = 1;
			continue;
		}
		uint32_t st = x->status & (LOOM_STATUS_BUSY | LOOM_STATUS_DONE | LOOM_STATUS_ERROR);
		if (!p->bad || p->expect_done) {
			if (st != LOOM_STATUS_DONE || x->cause) {
				printf("FAIL seed %" PRIu64 " (config %s, %s program): %s did not finish: STATUS 0x%x, "
				       "ERR_CAUSE %s, ERR_PC 0x%x, ERR_INFO %s\n",
				       p->seed, cfgname, what(p), r->name[k], x->status, loom_err_name(x->cause), x->pc,
				       x->info == LOOM_INFO_NONE ? "0xffff" : loom_field_name(x->info));
				describe_pc(p, x->pc);
				fail = 1;
			}
			continue;
		}
		int ok = st == LOOM_STATUS_ERROR && x->cause == p->expect_cause;
		if ((p->expect_mask & LOOM_COSIM_EXPECT_PC) && x->pc != p->expect_pc)
			ok = 0;
		if ((p->expect_mask & LOOM_COSIM_EXPECT_INFO) && x->info != p->expect_info)
			ok = 0;
		if (!ok) {
			printf("FAIL seed %" PRIu64 " (config %s, bad program '%s'): %s reports STATUS 0x%x %s pc 0x%x info %s; "
			       "expected ERROR %s pc 0x%x info %s\n",
			       p->seed, cfgname, p->what, r->name[k], x->status, loom_err_name(x->cause), x->pc,
			       x->info == LOOM_INFO_NONE ? "0xffff" : loom_field_name(x->info),
			       loom_err_name(p->expect_cause), p->expect_pc,
			       p->expect_info == LOOM_INFO_NONE ? "0xffff" : loom_field_name(p->expect_info));
			describe_pc(p, p->expect_pc);
			fail = 1;
		}
	}
	if (!fail && compare(r, p, cfgname))
		fail = 1;
	if (!fail && compare_counters(r, p, cfgname))
		fail = 1;
	if (r->o->verbose)
		printf("  seed %" PRIu64 " %-20s %3zu insns  %s %" PRIu64 " cycles  %s %" PRIu64 " cycles  %s\n", p->seed,
		       what(p), p->ninsns, r->name[0], res[0].cycles, r->name[1], res[1].cycles, fail ? "FAIL" : "ok");
	return fail ? -1 : 0;
}

int cmd_cosim(int argc, char **argv)
{
	cosim_opts o;
	int pr = parse(argc, argv, &o);
	if (pr == 1) {
		usage(stdout);
		return 0;
	}
	if (pr < 0) {
		fprintf(stderr, "usage: loom cosim --hw CONFIG --count N --seed S [--a B] [--b B] [--bad] [--verbose] "
				"[--dump-program K]\n       (loom cosim --help for details)\n");
		return 2;
	}
	char err[512];
	loom_hwcfg cfg;
	if (tool_load_hw("cosim", o.hw, &cfg))
		return 2;
	cosim_run r;
	memset(&r, 0, sizeof r);
	r.o = &o;
	r.name[0] = r.label[0] = o.a;
	r.name[1] = r.label[1] = o.b;
	if (!strcmp(o.a, o.b)) {
		r.label[0] = "a";
		r.label[1] = "b";
	}
	loom_hw_opts hopts;
	memset(&hopts, 0, sizeof hopts);
	hopts.dram_latency = o.dram_latency;
	hopts.dram_bw = o.dram_bw;
	r.both_cmodel = !is_rtl(o.a) && !is_rtl(o.b);
	r.both_rtl = is_rtl(o.a) && is_rtl(o.b);
	r.same_clock = (r.both_cmodel && strcmp(o.a, "systemc") && strcmp(o.b, "systemc")) || r.both_rtl;
	for (int k = 0; k < 2; k++) {
		/* cmodel-generic, cmodel-nomemo: the C model with a flag */
		hopts.cmodel_flags = !strcmp(r.name[k], "cmodel-generic")  ? LOOM_CMODEL_GENERIC
				     : !strcmp(r.name[k], "cmodel-nomemo") ? LOOM_CMODEL_NO_MEMO
									   : 0;
		r.hw[k] = loom_hw_open(strncmp(r.name[k], "cmodel", 6) ? r.name[k] : "cmodel", &cfg, &hopts, err,
				       sizeof err);
		if (!r.hw[k]) {
			printf("loom cosim: cannot open backend %s for %s: %s\n", r.name[k], cfg.name, err);
			printf("0/%" PRIu64 " bit-exact\n", o.count);
			printf("cosim: 0 passed, %" PRIu64 " failed\n", o.count);
			loom_hw_close(r.hw[0]);
			return 1;
		}
	}
	double t0 = now_s();
	uint64_t passed = 0, failed = 0;
	for (uint64_t i = 0; i < o.count; i++) {
		uint64_t seed = o.seed + i;
		loom_cosim_prog p, q;
		int fail = 0;
		int rc = o.bad ? loom_cosim_gen_bad(&cfg, seed, &p, err, sizeof err)
			       : loom_cosim_gen(&cfg, seed, &p, err, sizeof err);
		if (rc) {
			printf("FAIL seed %" PRIu64 ": generator: %s\n", seed, err);
			failed++;
			continue;
		}
		if ((long long)i == o.dump)
			loom_cosim_dump(&p, stdout);
		for (size_t k = 0; k < p.ninsns; k++)
			r.nop[loom_insn_opcode(&p.insns[k])]++;
		for (uint64_t rep = 0; rep < o.repeat && !fail; rep++)
			if (run_prog(&r, &p, cfg.name))
				fail = 1;
		if (o.bad) {
			/* a legal program right after the bad one must run bit-exact */
			if (loom_cosim_gen(&cfg, seed, &q, err, sizeof err)) {
				printf("FAIL seed %" PRIu64 ": generator: %s\n", seed, err);
				fail = 1;
			} else {
				if ((long long)i == o.dump)
					loom_cosim_dump(&q, stdout);
				for (uint64_t rep = 0; rep < o.repeat && !fail; rep++)
					if (run_prog(&r, &q, cfg.name)) {
						printf("  (the legal program after bad program '%s')\n", p.what);
						fail = 1;
					}
				loom_cosim_free(&q);
			}
		}
		if (fail) {
			repro(&r, seed, o.bad);
			failed++;
		} else {
			passed++;
		}
		loom_cosim_free(&p);
		if ((i + 1) % 50 == 0 && i + 1 < o.count) {
			printf("cosim: %" PRIu64 "/%" PRIu64 " programs, %" PRIu64 " bit-exact, %.1f s\n", i + 1, o.count,
			       passed, now_s() - t0);
			fflush(stdout);
		}
	}
	double wall = now_s() - t0;
	printf("instructions: %" PRIu64 " LOAD, %" PRIu64 " MATMUL, %" PRIu64 " STORE, %" PRIu64 " MARK; vector unit %" PRIu64
	       " ELTWISE, %" PRIu64 " POOL, %" PRIu64 " DWCONV, %" PRIu64 " LUT\n",
	       r.nop[LOOM_OP_LOAD], r.nop[LOOM_OP_MATMUL], r.nop[LOOM_OP_STORE], r.nop[LOOM_OP_MARK], r.nop[LOOM_OP_ELTWISE],
	       r.nop[LOOM_OP_POOL], r.nop[LOOM_OP_DWCONV], r.nop[LOOM_OP_LUT]);
	if (r.rtl_cycles)
		printf("total: %" PRIu64 " RTL cycles in %.1f s wall (%.0f RTL cycles/s); engines busy %.2fx the cycles, "
		       "%" PRIu64 " bank conflicts\n",
		       r.rtl_cycles, wall, wall > 0 ? (double)r.rtl_cycles / wall : 0.0,
		       r.rtl_ctr_cycles ? (double)r.rtl_busy / (double)r.rtl_ctr_cycles : 0.0, r.rtl_bank);
	else
		printf("total: %" PRIu64 " estimated cycles in %.1f s wall\n", r.other_cycles, wall);
	printf("%" PRIu64 "/%" PRIu64 " bit-exact\n", passed, o.count);
	printf("cosim: %" PRIu64 " passed, %" PRIu64 " failed\n", passed, failed);
	free(r.buf[0]);
	free(r.buf[1]);
	loom_hw_close(r.hw[0]);
	loom_hw_close(r.hw[1]);
	return failed ? 1 : 0;
}
