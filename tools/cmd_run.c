/* cmd_run.c - `loom run`: one tensor-engine program as a job through
 * libloom and the firmware, on either backend; prints the job's status,
 * error cause and perf counters, and the firmware's cycles and
 * instructions for it. The program is either
 *   --cosim-seed S      a random program of the co-simulation generator
 *                       (cosim/cosim.h): its DRAM regions are
 *                       loaded at their addresses, nothing is compared;
 *   --insns FILE        a raw instruction stream (32-byte instructions),
 *                       at --insn-addr ADDR or anywhere, with data files
 *                       --load ADDR:FILE and results --dump ADDR:LEN:FILE.
 * The job's DMA windows cover the program and every region (merged into
 * at most four spans) unless --window BASE:SIZE is given. --repeat N
 * submits the job N times (keeping the ring full) and reports jobs/s and
 * the mean round trip (benchmarks). Exit status 0 when every run ends OK. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cosim/cosim.h"
#include "loom/isa.h"
#include "loom/loom.h"

#define MAX_FILES 16

typedef struct run_file {
	uint64_t addr, len;
	const char *path;
} run_file;

typedef struct run_opts {
	const char *backend, *hw, *fw, *insns;
	uint64_t seed, insn_addr, timeout, wait, repeat;
	uint32_t ring;
	int have_seed, have_insn_addr;
	run_file load[MAX_FILES], dump[MAX_FILES], win[LOOM_FW_JOB_WINDOWS];
	int nload, ndump, nwin;
} run_opts;

typedef struct run_ctx {
	const run_opts *o;
	loom_dev *d;
	loom_bo **bo;      /* the program's buffers */
	loom_window *span; /* every DRAM range of the program */
	int nbo, nspan, cap;
	uint64_t insn_addr;
} run_ctx;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: loom run [--backend rtl|cmodel|systemc|systemc-rtl] [--hw CONFIG] [--fw ELF] PROGRAM [options]\n"
		"  PROGRAM: --cosim-seed S | --insns FILE [--insn-addr ADDR] [--load ADDR:FILE]...\n"
		"  --dump ADDR:LEN:FILE  write DRAM [ADDR, +LEN) to FILE after the job\n"
		"  --window BASE:SIZE    a DMA window of the job (default: cover the program and its data)\n"
		"  --timeout CYCLES      the job's engine watchdog (default: the firmware's)\n"
		"  --wait CYCLES         how long loom_wait runs the device (default 1e9)\n"
		"  --repeat N            submit the job N times, report jobs/s and mean latency\n"
		"  --ring N              ring entries (default 64)\n");
	fprintf(f, "\nloom run MODEL.onnx [--backend ref|cmodel|rtl] ...: an ONNX model (compiled first on cmodel|rtl)\n\n");
	run_model_usage(f);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *e;
	errno = 0;
	*v = strtoull(s, &e, 0);
	return errno || e == s || *e ? -1 : 0;
}

/* "A:B" or "A:B:PATH" (path = NULL: two numbers). */
static int parse_spec(const char *s, int nnum, run_file *f)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", s);
	char *c1 = strchr(buf, ':');
	if (!c1)
		return -1;
	*c1++ = 0;
	memset(f, 0, sizeof *f);
	if (parse_u64(buf, &f->addr))
		return -1;
	if (nnum == 1) {
		f->path = s + (c1 - buf);
		return 0;
	}
	char *c2 = strchr(c1, ':');
	if (c2)
		*c2++ = 0;
	if (parse_u64(c1, &f->len))
		return -1;
	f->path = c2 ? s + (c2 - buf) : NULL;
	return nnum == 3 && !c2 ? -1 : 0;
}

static int parse_opt(run_opts *o, const char *a, const char *v)
{
	run_file f;
	if (!strcmp(a, "--backend"))
		o->backend = v;
	else if (!strcmp(a, "--hw"))
		o->hw = v;
	else if (!strcmp(a, "--fw"))
		o->fw = v;
	else if (!strcmp(a, "--insns"))
		o->insns = v;
	else if (!strcmp(a, "--cosim-seed"))
		return (o->have_seed = 1, parse_u64(v, &o->seed));
	else if (!strcmp(a, "--insn-addr"))
		return (o->have_insn_addr = 1, parse_u64(v, &o->insn_addr));
	else if (!strcmp(a, "--timeout"))
		return parse_u64(v, &o->timeout) || o->timeout > UINT32_MAX ? -1 : 0;
	else if (!strcmp(a, "--wait"))
		return parse_u64(v, &o->wait);
	else if (!strcmp(a, "--repeat"))
		return parse_u64(v, &o->repeat) || !o->repeat ? -1 : 0;
	else if (!strcmp(a, "--ring")) {
		uint64_t n;
		if (parse_u64(v, &n) || n > LOOM_FW_RING_MAX)
			return -1;
		o->ring = (uint32_t)n;
	} else if (!strcmp(a, "--load")) {
		if (o->nload == MAX_FILES || parse_spec(v, 1, &f))
			return -1;
		o->load[o->nload++] = f;
	} else if (!strcmp(a, "--dump")) {
		if (o->ndump == MAX_FILES || parse_spec(v, 3, &f) || !f.len)
			return -1;
		o->dump[o->ndump++] = f;
	} else if (!strcmp(a, "--window")) {
		if (o->nwin == LOOM_FW_JOB_WINDOWS || parse_spec(v, 2, &f) || !f.len || f.path)
			return -1;
		o->win[o->nwin++] = f;
	} else
		return -2;
	return 0;
}

/* 0 ok, 1 help, -1 error (printed) */
static int parse(int argc, char **argv, run_opts *o)
{
	memset(o, 0, sizeof *o);
	o->backend = "cmodel";
	o->hw = "default";
	o->wait = 1000000000ull;
	o->repeat = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
		if (i + 1 >= argc) {
			fprintf(stderr, "loom run: %s needs a value\n", argv[i]);
			return -1;
		}
		int r = parse_opt(o, argv[i], argv[i + 1]);
		if (r) {
			fprintf(stderr, "loom run: %s option '%s'%s%s\n", r == -2 ? "unknown" : "bad value for",
				argv[i], r == -2 ? "" : ": ", r == -2 ? "" : argv[i + 1]);
			return -1;
		}
		i++;
	}
	if (o->have_seed == !!o->insns) {
		fprintf(stderr, "loom run: give exactly one of --cosim-seed S and --insns FILE\n");
		return -1;
	}
	loom_hwcfg cfg;
	if (tool_check_backend("run", o->backend, "cmodel|rtl|systemc|systemc-rtl") || tool_load_hw("run", o->hw, &cfg))
		return -1;
	return 0;
}

/* ---- DRAM ---- */

/* Room for n more buffers and spans. */
static int ctx_reserve(run_ctx *c, int n)
{
	int cap = c->nspan + n;
	loom_bo **nb = realloc(c->bo, (size_t)cap * sizeof *nb);
	if (nb)
		c->bo = nb;
	loom_window *ns = nb ? realloc(c->span, (size_t)cap * sizeof *ns) : NULL;
	if (ns)
		c->span = ns;
	if (!ns) {
		fprintf(stderr, "loom run: out of memory\n");
		return -1;
	}
	c->cap = cap;
	return 0;
}

static void add_span(run_ctx *c, uint64_t base, uint64_t size)
{
	if (c->nspan < c->cap && size)
		c->span[c->nspan++] = (loom_window){base, size};
}

/* Reserve [addr, +len) (already covered by an earlier buffer: nothing to
 * do) and write data there (NULL: just reserve). */
static int place(run_ctx *c, uint64_t addr, uint64_t len, const void *data, const char *what)
{
	loom_bo *bo = NULL;
	for (int i = 0; i < c->nbo; i++)
		if (addr >= loom_bo_addr(c->bo[i]) && addr + len <= loom_bo_addr(c->bo[i]) + loom_bo_size(c->bo[i]))
			bo = c->bo[i];
	if (!bo) {
		int rc = loom_bo_alloc_at(c->d, addr, len, &bo);
		if (rc) {
			fprintf(stderr, "loom run: %s [%#" PRIx64 ", +%#" PRIx64 "): %s - %s\n", what, addr, len,
				loom_strerror(rc), loom_errmsg(c->d));
			return -1;
		}
		c->bo[c->nbo++] = bo;
	}
	add_span(c, addr, len);
	int rc = data ? loom_bo_write(bo, addr - loom_bo_addr(bo), data, len) : 0;
	if (rc)
		fprintf(stderr, "loom run: %s: %s - %s\n", what, loom_strerror(rc), loom_errmsg(c->d));
	return rc ? -1 : 0;
}

/* The cosim program's regions at their addresses. */
static int stage_cosim(run_ctx *c)
{
	loom_cosim_prog p;
	char err[512];
	if (loom_cosim_gen(loom_dev_config(c->d), c->o->seed, &p, err, sizeof err)) {
		fprintf(stderr, "loom run: cosim program of seed %" PRIu64 ": %s\n", c->o->seed, err);
		return -1;
	}
	int rc = ctx_reserve(c, (int)p.nregions);
	for (size_t i = 0; !rc && i < p.nregions; i++)
		rc = place(c, p.regions[i].addr, p.regions[i].len, p.regions[i].init,
			   loom_cosim_region_kind_name(p.regions[i].kind));
	c->insn_addr = p.insn_addr;
	printf("program: cosim seed %" PRIu64 ", %zu instructions at %#" PRIx64 ", %zu regions\n", c->o->seed,
	       p.ninsns, p.insn_addr, p.nregions);
	loom_cosim_free(&p);
	return rc;
}

/* The raw stream and the --load files. */
static int stage_raw(run_ctx *c)
{
	const run_opts *o = c->o;
	size_t n;
	uint8_t *code = (uint8_t *)tool_read_file(o->insns, &n);
	if (!code || !n || n % LOOM_INSN_BYTES) {
		fprintf(stderr, "loom run: %s: %s\n", o->insns,
			!code ? "can not read it" : "not a whole number of 32-byte instructions");
		free(code);
		return -1;
	}
	int rc = ctx_reserve(c, o->nload + o->ndump + 1);
	for (int i = 0; !rc && i < o->nload; i++) {
		size_t len;
		uint8_t *b = (uint8_t *)tool_read_file(o->load[i].path, &len);
		rc = !b || !len ? -1 : place(c, o->load[i].addr, len, b, o->load[i].path);
		if (!b || !len)
			fprintf(stderr, "loom run: %s: can not read it (or empty)\n", o->load[i].path);
		free(b);
	}
	for (int i = 0; !rc && i < o->ndump; i++)
		rc = place(c, o->dump[i].addr, o->dump[i].len, NULL, o->dump[i].path);
	if (!rc && o->have_insn_addr) {
		rc = place(c, o->insn_addr, n, code, o->insns);
		c->insn_addr = o->insn_addr;
	} else if (!rc) {
		loom_bo *bo = NULL;
		rc = loom_bo_alloc(c->d, n, LOOM_INSN_BYTES, &bo);
		if (!rc) {
			c->bo[c->nbo++] = bo;
			c->insn_addr = loom_bo_addr(bo);
			add_span(c, c->insn_addr, n);
			rc = loom_bo_write(bo, 0, code, n);
		}
		if (rc)
			fprintf(stderr, "loom run: instructions: %s - %s\n", loom_strerror(rc), loom_errmsg(c->d));
	}
	if (!rc)
		printf("program: %s, %" PRIu64 " instructions at %#" PRIx64 ", %d data files\n", o->insns,
		       n / LOOM_INSN_BYTES, c->insn_addr, o->nload);
	free(code);
	return rc ? -1 : 0;
}

/* ---- windows ---- */

static int span_cmp(const void *a, const void *b)
{
	const loom_window *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* The spans sorted, merged where they touch, then the closest pairs merged
 * until at most LOOM_FW_JOB_WINDOWS are left. */
static void merge_spans(run_ctx *c, loom_job_desc *jd)
{
	qsort(c->span, (size_t)c->nspan, sizeof c->span[0], span_cmp);
	int n = 0;
	for (int i = 0; i < c->nspan; i++) {
		loom_window w = c->span[i];
		if (n && w.base <= c->span[n - 1].base + c->span[n - 1].size) {
			uint64_t end = w.base + w.size, pend = c->span[n - 1].base + c->span[n - 1].size;
			c->span[n - 1].size = (end > pend ? end : pend) - c->span[n - 1].base;
		} else {
			c->span[n++] = w;
		}
	}
	while (n > (int)LOOM_FW_JOB_WINDOWS) {
		int best = 0;
		for (int i = 1; i + 1 < n; i++)
			if (c->span[i + 1].base - (c->span[i].base + c->span[i].size) <
			    c->span[best + 1].base - (c->span[best].base + c->span[best].size))
				best = i;
		c->span[best].size = c->span[best + 1].base + c->span[best + 1].size - c->span[best].base;
		memmove(&c->span[best + 1], &c->span[best + 2], (size_t)(n - best - 2) * sizeof c->span[0]);
		n--;
	}
	jd->nwindows = (uint32_t)n;
	for (int i = 0; i < n; i++)
		jd->win[i] = c->span[i];
}

/* ---- running ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_result(const loom_result *r)
{
	printf("job %" PRIu64 ": %s", r->id, loom_job_status_name(r->status));
	if (r->status == LOOM_JOB_ENGINE_ERROR)
		printf(", cause %s (%u) at pc %#x, field %s", loom_err_name(r->err_cause), r->err_cause, r->err_pc,
		       loom_field_name(r->err_info));
	printf("\n  counters:");
	for (unsigned i = 0; i < LOOM_FW_CTRS; i++)
		printf("%s %s %u", i % 5 == 0 && i ? "\n           " : "", loom_ctr_name(i), r->ctr[i]);
	printf("\n  energy events:");
	for (unsigned i = 0; i < LOOM_FW_EVTS; i++)
		printf(" %s %u", loom_evt_name(i), r->evt[i]);
	printf("\n  firmware: %u cycles, %u instructions for the job; round trip %" PRIu64 " device cycles\n",
	       r->fw_cycles, r->fw_insns, r->done_cycle - r->submit_cycle);
}

static int dump_outputs(run_ctx *c)
{
	const run_opts *o = c->o;
	for (int i = 0; i < o->ndump; i++) {
		uint8_t *b = malloc(o->dump[i].len);
		FILE *f = b ? fopen(o->dump[i].path, "wb") : NULL;
		int ok = f && !loom_hw_dram_read(loom_dev_hw(c->d), o->dump[i].addr, b, o->dump[i].len) &&
			 fwrite(b, 1, o->dump[i].len, f) == o->dump[i].len;
		if (f && fclose(f))
			ok = 0;
		free(b);
		if (!ok) {
			fprintf(stderr, "loom run: --dump %s: write failed\n", o->dump[i].path);
			return -1;
		}
		printf("dumped [%#" PRIx64 ", +%#" PRIx64 ") to %s\n", o->dump[i].addr, o->dump[i].len, o->dump[i].path);
	}
	return 0;
}

/* Submit the job `repeat` times (the ring kept full), reap every one. */
static int run_jobs(run_ctx *c, const loom_job_desc *jd)
{
	const run_opts *o = c->o;
	uint64_t done = 0, sent = 0, bad = 0, lat = 0;
	double t0 = now_s();
	uint64_t c0 = loom_hw_cycles(loom_dev_hw(c->d));
	loom_result r;
	memset(&r, 0, sizeof r);
	while (done < o->repeat) {
		uint64_t id;
		int rc = sent < o->repeat ? loom_submit(c->d, jd, 0, &id) : LOOM_EBUSY;
		if (rc == LOOM_OK) {
			sent++;
			continue;
		}
		if (rc == LOOM_EBUSY)
			rc = loom_wait(c->d, LOOM_JOB_ANY, o->wait, &r);
		if (rc) {
			fprintf(stderr, "loom run: %s - %s\n", loom_strerror(rc), loom_errmsg(c->d));
			return -1;
		}
		done++;
		bad += r.status != LOOM_JOB_OK;
		lat += r.done_cycle - r.submit_cycle;
		if (o->repeat == 1 || r.status != LOOM_JOB_OK)
			print_result(&r);
	}
	double wall = now_s() - t0;
	uint64_t cyc = loom_hw_cycles(loom_dev_hw(c->d)) - c0;
	if (o->repeat > 1) {
		print_result(&r);
		printf("%" PRIu64 " jobs, %" PRIu64 " not OK: %.1f jobs/s wall, %.1f us wall per job, %.0f device cycles per "
		       "job, mean round trip %.0f cycles\n",
		       done, bad, done / wall, 1e6 * wall / done, (double)cyc / done, (double)lat / done);
	} else {
		printf("wall %.3f ms, %" PRIu64 " device cycles\n", 1e3 * wall, cyc);
	}
	return bad ? 1 : 0;
}

int cmd_run(int argc, char **argv)
{
	/* an ONNX model runs on the reference executor (tools/cmd_test_onnx.c) */
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (n > 5 && !strcmp(argv[i] + n - 5, ".onnx"))
			return cmd_run_onnx(argc, argv);
		if (n > 5 && !strcmp(argv[i] + n - 5, ".loom"))
			return cmd_run_model(argc, argv);
	}
	run_opts o;
	int pr = parse(argc, argv, &o);
	if (pr) {
		usage(pr > 0 ? stdout : stderr);
		return pr > 0 ? 0 : 2;
	}
	char err[512], fwpath[1024];
	snprintf(fwpath, sizeof fwpath, "%s", o.fw ? o.fw : "");
	if (!o.fw)
		snprintf(fwpath, sizeof fwpath, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	run_ctx c;
	memset(&c, 0, sizeof c);
	c.o = &o;
	int rc = loom_open(&(loom_open_opts){.backend = o.backend, .hw = o.hw}, &c.d, err, sizeof err);
	if (rc) {
		fprintf(stderr, "loom run: %s - %s\n", loom_strerror(rc), err);
		return 1;
	}
	int ret = 1;
	rc = loom_load_firmware(c.d, fwpath);
	if (rc) {
		fprintf(stderr, "loom run: %s - %s\n", loom_strerror(rc), loom_errmsg(c.d));
		goto out;
	}
	/* the program's buffers first: the boot puts the rings around them */
	if (o.have_seed ? stage_cosim(&c) : stage_raw(&c))
		goto out;
	rc = loom_boot(c.d, &(loom_boot_opts){.ring_entries = o.ring});
	if (rc) {
		fprintf(stderr, "loom run: %s - %s\n", loom_strerror(rc), loom_errmsg(c.d));
		goto out;
	}
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	jd.insn_addr = c.insn_addr;
	jd.timeout_cycles = (uint32_t)o.timeout;
	if (o.nwin) {
		jd.nwindows = (uint32_t)o.nwin;
		for (int i = 0; i < o.nwin; i++)
			jd.win[i] = (loom_window){o.win[i].addr, o.win[i].len};
	} else {
		merge_spans(&c, &jd);
	}
	printf("backend %s, configuration %s, firmware %s; windows:", o.backend, loom_dev_config(c.d)->name, fwpath);
	for (unsigned i = 0; i < jd.nwindows; i++)
		printf(" [%#" PRIx64 ", +%#" PRIx64 ")", jd.win[i].base, jd.win[i].size);
	printf("\n");
	ret = run_jobs(&c, &jd);
	if (!ret && dump_outputs(&c))
		ret = 1;
out:
	loom_close(c.d);
	free(c.bo);
	free(c.span);
	return ret;
}
