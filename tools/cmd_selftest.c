/* cmd_selftest.c - `loom selftest --backend rtl|cmodel|systemc|systemc-rtl [--hw CONFIG]
 * [--fw ELF]`: the driver/firmware protocol suite (docs/FIRMWARE.md) through
 * libloom (include/loom/loom.h) on one backend. Groups:
 *   boot      handshake, reply fields, an empty job and its counters
 *   wrap      more than 3x the ring size of jobs through a small ring,
 *             EBUSY exactly when the ring is full, each job completed
 *             exactly once, matched by id, output bytes compared
 *   mixed     many jobs in flight, good ones between bad ones (illegal
 *             instruction, DMA outside the job's windows, a job longer
 *             than its watchdog, an invalid descriptor): each bad job gets
 *             its own completion with the right cause, every good job's
 *             output is correct
 *   buserr    a device whose DRAM answers a range with error responses
 *             (loom_hw_opts.bus_err_*): jobs whose LOAD, STORE or
 *             instruction fetch meets it complete ENGINE_ERROR BUS_ERROR
 *             at that instruction, the good job after them runs correctly
 *   hang      LOOM_JOB_F_TEST_HANG: loom_wait times out, loom_reset, the
 *             jobs in flight come back LOST, the next job succeeds
 *   firmware  bad ELF files (truncated, wrong class, machine, type, entry,
 *             segments outside the TCMs or overlapping), a firmware that
 *             never replies, a wrong ABI version both ways
 *   calls     bad arguments and states: NULL, misaligned, out of range,
 *             unknown ids, before boot
 *   threads   two devices in one process, one thread each
 * Each check prints "ok" or "FAIL" with what it checked; the output ends
 * with "N passed, M failed" and the exit status is 1 on any failure. */
#include <elf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "loom/isa.h"
#include "loom/loom.h"

typedef struct st_opts {
	const char *backend, *hw, *fw;
	int verbose;
} st_opts;

typedef struct st {
	st_opts o;
	int npass, nfail;
	uint8_t *fw;      /* the firmware ELF's bytes */
	size_t fw_len;
	char fw_path[1024];
} st;

static void check(st *s, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(st *s, int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s ", ok ? "ok  " : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	if (ok)
		s->npass++;
	else
		s->nfail++;
}

/* A call's return code was want, with a non-empty message. */
static void check_rc(st *s, loom_dev *d, int rc, int want, const char *what)
{
	const char *m = loom_errmsg(d);
	int ok = rc == want && (want == LOOM_OK || (m && m[0]));
	check(s, ok, "%s: %s%s%s", what, loom_strerror(rc), rc ? " - " : "", rc ? m : "");
	if (!ok && rc != want)
		printf("     expected %s\n", loom_strerror(want));
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ---- device and programs ---- */

static loom_dev *dev_open_opts(st *s, const char *what, const loom_hw_opts *ho)
{
	loom_dev *d = NULL;
	char err[512];
	loom_open_opts oo = {.backend = s->o.backend, .hw = s->o.hw, .hw_opts = ho};
	int rc = loom_open(&oo, &d, err, sizeof err);
	if (rc) {
		check(s, 0, "%s: open %s/%s: %s - %s", what, s->o.backend, s->o.hw, loom_strerror(rc), err);
		return NULL;
	}
	rc = loom_load_firmware_mem(d, s->fw, s->fw_len);
	if (rc) {
		check(s, 0, "%s: load firmware %s: %s - %s", what, s->fw_path, loom_strerror(rc), loom_errmsg(d));
		loom_close(d);
		return NULL;
	}
	return d;
}

static loom_dev *dev_open(st *s, const char *what)
{
	return dev_open_opts(s, what, NULL);
}

static int dev_boot(st *s, loom_dev *d, uint32_t entries, const char *what)
{
	loom_boot_opts bo = {.ring_entries = entries};
	int rc = loom_boot(d, &bo);
	if (rc)
		check(s, 0, "%s: boot: %s - %s", what, loom_strerror(rc), loom_errmsg(d));
	return rc;
}

#define SET(in, f, v) loom_insn_set(&(in), LOOM_F_##f, (v))

/* A copy job: its instructions, input and output in three buffers (three
 * windows). LOAD n lines to SP, a token-relaying ELTWISE of zero planes,
 * STORE them back, FINISH: the output must equal the input. */
typedef struct copy_job {
	loom_bo *code, *in, *out;
	uint32_t bytes;
	uint8_t *data;
	uint64_t id;
} copy_job;

static void copy_free(copy_job *j)
{
	loom_bo_free(j->code);
	loom_bo_free(j->in);
	loom_bo_free(j->out);
	free(j->data);
	memset(j, 0, sizeof *j);
}

/* Buffers, random input, output prefilled with 0xee, the program. */
static int copy_prep(loom_dev *d, copy_job *j, uint32_t lines, uint64_t *seed)
{
	const loom_hwcfg *c = loom_dev_config(d);
	memset(j, 0, sizeof *j);
	j->bytes = lines * c->array_rows;
	j->data = malloc(j->bytes);
	uint8_t *fill = malloc(j->bytes);
	int rc = j->data && fill ? LOOM_OK : LOOM_ENOMEM;
	if (!rc)
		rc = loom_bo_alloc(d, 4 * LOOM_INSN_BYTES, 32, &j->code);
	if (!rc)
		rc = loom_bo_alloc(d, j->bytes, 64, &j->in);
	if (!rc)
		rc = loom_bo_alloc(d, j->bytes, 64, &j->out);
	if (!rc) {
		for (uint32_t i = 0; i < j->bytes; i++)
			j->data[i] = (uint8_t)rnd(seed);
		memset(fill, 0xee, j->bytes);
		loom_insn p[5];
		unsigned n = loom_copy_program(p, c->array_rows, lines, (uint32_t)loom_bo_addr(j->in),
					       (uint32_t)loom_bo_addr(j->out), 0, 0, 0);
		rc = loom_bo_write(j->code, 0, p, n * sizeof *p);
		if (!rc)
			rc = loom_bo_write(j->in, 0, j->data, j->bytes);
		if (!rc)
			rc = loom_bo_write(j->out, 0, fill, j->bytes);
	}
	free(fill);
	if (rc)
		copy_free(j);
	return rc;
}

static loom_job_desc copy_desc(const copy_job *j)
{
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	jd.insn_addr = loom_bo_addr(j->code);
	loom_job_add_window(&jd, j->code);
	loom_job_add_window(&jd, j->in);
	loom_job_add_window(&jd, j->out);
	return jd;
}

/* The output equals the input. */
static int copy_ok(const copy_job *j)
{
	uint8_t *got = malloc(j->bytes);
	int ok = got && !loom_bo_read(j->out, 0, got, j->bytes) && !memcmp(got, j->data, j->bytes);
	free(got);
	return ok;
}

static void print_result(const st *s, const char *what, const loom_result *r)
{
	if (!s->o.verbose)
		return;
	printf("     %s: job %" PRIu64 " %s cause %s pc %#x info %#x, insns %u, fw %u cycles %u insns, latency %" PRIu64
	       " cycles\n",
	       what, r->id, loom_job_status_name(r->status), loom_err_name(r->err_cause), r->err_pc, r->err_info,
	       r->ctr[LOOM_CTR_INSNS], r->fw_cycles, r->fw_insns, r->done_cycle - r->submit_cycle);
}

/* ---- boot ---- */

static void t_boot(st *s)
{
	loom_dev *d = dev_open(s, "boot");
	if (!d || dev_boot(s, d, 0, "boot")) {
		loom_close(d);
		return;
	}
	loom_dev_info in;
	loom_dev_get_info(d, &in);
	const loom_hwcfg *c = loom_dev_config(d);
	check(s, in.booted && in.fw_abi_major == LOOM_FW_ABI_MAJOR,
	      "boot: firmware ABI %u.%u (driver %u.%u), version %#x, caps %#x, %" PRIu64 " cycles", in.fw_abi_major,
	      in.fw_abi_minor, LOOM_FW_ABI_MAJOR, LOOM_FW_ABI_MINOR, in.fw_version, in.caps, in.boot_cycles);
	check(s, in.hw_fingerprint == c->fingerprint && in.hw_array == loom_hw_mmio_read(loom_dev_hw(d), LOOM_REG_HW_ARRAY),
	      "boot: the firmware reports fingerprint %08x and HW_ARRAY %#x of %s", in.hw_fingerprint, in.hw_array,
	      c->name);
	check(s, in.ring_entries == 64, "boot: default ring of %u entries, boot block at %#x", in.ring_entries,
	      in.boot_addr);
	/* an empty job: FINISH only */
	loom_bo *code = NULL;
	loom_insn fin;
	memset(&fin, 0, sizeof fin);
	SET(fin, ANY_OPCODE, LOOM_OP_FINISH);
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	uint64_t id = 0;
	loom_result r;
	memset(&r, 0, sizeof r);
	int rc = loom_bo_alloc(d, sizeof fin, 32, &code);
	if (!rc)
		rc = loom_bo_write(code, 0, &fin, sizeof fin);
	jd.insn_addr = loom_bo_addr(code);
	loom_job_add_window(&jd, code);
	if (!rc)
		rc = loom_submit(d, &jd, 0, &id);
	if (!rc)
		rc = loom_wait(d, id, 10000000, &r);
	check(s, rc == LOOM_OK && r.id == id && r.status == LOOM_JOB_OK && r.ctr[LOOM_CTR_INSNS] == 0 &&
		     r.ctr[LOOM_CTR_DRAM_RD_BYTES] > 0 && r.fw_insns > 0,
	      "empty job: %s, status %s, INSNS %u, DRAM read %u bytes, firmware %u cycles / %u insns, round trip %" PRIu64
	      " cycles",
	      rc ? loom_errmsg(d) : "done", loom_job_status_name(r.status), r.ctr[LOOM_CTR_INSNS],
	      r.ctr[LOOM_CTR_DRAM_RD_BYTES], r.fw_cycles, r.fw_insns, r.done_cycle - r.submit_cycle);
	check_rc(s, d, loom_wait(d, id, 1000, NULL), LOOM_ENOENT, "empty job: waiting for it again");
	loom_close(d);
}

/* ---- ring wrap-around ---- */

static void t_wrap(st *s)
{
	const uint32_t E = 8, N = 4 * E + 3, lines = 4;
	loom_dev *d = dev_open(s, "wrap");
	if (!d || dev_boot(s, d, E, "wrap")) {
		loom_close(d);
		return;
	}
	copy_job *jobs = calloc(N, sizeof *jobs);
	int *seen = calloc(N + 1, sizeof *seen);
	uint64_t seed = 0x1234567;
	uint32_t submitted = 0, reaped = 0, busy_min = E, busy_seen = 0, most = 0, bad_status = 0, order = 1;
	int rc = jobs && seen ? LOOM_OK : LOOM_ENOMEM;
	for (uint32_t i = 0; !rc && i < N; i++)
		rc = copy_prep(d, &jobs[i], lines, &seed);
	while (!rc && reaped < N) {
		if (submitted < N) {
			loom_job_desc jd = copy_desc(&jobs[submitted]);
			int src = loom_submit(d, &jd, 0, &jobs[submitted].id);
			if (src == LOOM_OK) {
				submitted++;
				if (loom_jobs_in_flight(d) > most)
					most = loom_jobs_in_flight(d);
				continue;
			}
			if (src != LOOM_EBUSY) {
				rc = src;
				break;
			}
			busy_seen++;
			if (loom_jobs_in_flight(d) < busy_min)
				busy_min = loom_jobs_in_flight(d);
		}
		loom_result r;
		rc = loom_wait(d, LOOM_JOB_ANY, 10000000, &r);
		if (rc)
			break;
		if (r.id == 0 || r.id > N)
			bad_status++;
		else
			seen[r.id]++;
		if (r.status != LOOM_JOB_OK)
			bad_status++;
		if (r.id != reaped + 1)
			order = 0;
		reaped++;
	}
	check(s, rc == LOOM_OK, "wrap: %u jobs through a %u-entry ring: %s", N, E, rc ? loom_errmsg(d) : "all reaped");
	/* the firmware writes a completion before it frees the job's slot
	 * (sq.head += 1), so a full ring may hold E - 1 jobs in flight */
	check(s, busy_seen > 0 && busy_min >= E - 1 && most == E,
	      "wrap: %u jobs in flight at most; LOOM_EBUSY %u times, each with at least %u in flight", most, busy_seen,
	      busy_min);
	uint32_t once = 0, matched = 0;
	for (uint32_t i = 0; jobs && seen && i < N; i++) {
		once += seen[jobs[i].id] == 1;
		matched += jobs[i].id == i + 1;
	}
	check(s, once == N && matched == N && bad_status == 0,
	      "wrap: every job completed exactly once, matched by id (%u of %u; %u bad status or id)", once, N,
	      bad_status);
	check(s, order, "wrap: completions arrive in submission order (firmware runs jobs in order)");
	uint32_t good = 0;
	for (uint32_t i = 0; jobs && i < N; i++)
		good += jobs[i].code && copy_ok(&jobs[i]);
	check(s, good == N, "wrap: output bytes of %u of %u jobs correct", good, N);
	check_rc(s, d, loom_wait(d, LOOM_JOB_ANY, 1000, NULL), LOOM_ENOENT, "wrap: nothing left to reap");
	for (uint32_t i = 0; jobs && i < N; i++)
		copy_free(&jobs[i]);
	free(jobs);
	free(seen);
	loom_close(d);
}

/* ---- many in flight, good and bad mixed ---- */

enum { K_GOOD, K_ILLEGAL, K_WINDOW, K_LONG, K_BADJOB, K_KINDS };

typedef struct mixed_job {
	int kind;
	copy_job cj;    /* K_GOOD, K_WINDOW */
	loom_bo *code;  /* K_ILLEGAL, K_LONG, K_BADJOB */
	uint64_t id;
	loom_result r;
	int rc;
} mixed_job;

/* A long program: MATMULs of many folds, far beyond its watchdog. */
static int long_prog(loom_dev *d, loom_bo **out)
{
	const loom_hwcfg *c = loom_dev_config(d);
	uint32_t P = c->acc_lines < 256 ? c->acc_lines : 256;
	uint32_t ncb = c->sp_lines / 2 / (P > c->array_cols ? P : c->array_cols);
	if (ncb > 64)
		ncb = 64;
	if (ncb == 0)
		ncb = 1;
	enum { NMM = 200 };
	loom_insn *p = calloc(NMM + 1, sizeof *p);
	if (!p)
		return LOOM_ENOMEM;
	for (int i = 0; i < NMM; i++) {
		SET(p[i], ANY_OPCODE, LOOM_OP_MATMUL);
		SET(p[i], MATMUL_WGT_ADDR, c->sp_lines / 2);
		SET(p[i], MATMUL_IN_W, P);
		SET(p[i], MATMUL_IN_H, 1);
		SET(p[i], MATMUL_OUT_W, P);
		SET(p[i], MATMUL_OUT_H, 1);
		SET(p[i], MATMUL_NCB, ncb);
		SET(p[i], MATMUL_KW, 1);
		SET(p[i], MATMUL_KH, 1);
		SET(p[i], MATMUL_SW, 1);
		SET(p[i], MATMUL_SH, 1);
		SET(p[i], MATMUL_DW, 1);
		SET(p[i], MATMUL_DH, 1);
	}
	SET(p[NMM], ANY_OPCODE, LOOM_OP_FINISH);
	int rc = loom_bo_alloc(d, (NMM + 1) * sizeof *p, 32, out);
	if (!rc)
		rc = loom_bo_write(*out, 0, p, (NMM + 1) * sizeof *p);
	free(p);
	return rc;
}

/* One instruction in a buffer of its own. */
static int one_insn(loom_dev *d, const loom_insn *in, loom_bo **out)
{
	int rc = loom_bo_alloc(d, sizeof *in, 32, out);
	return rc ? rc : loom_bo_write(*out, 0, in, sizeof *in);
}

static int mixed_prep(loom_dev *d, mixed_job *m, uint64_t *seed)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	switch (m->kind) {
	case K_GOOD:
	case K_WINDOW:
		return copy_prep(d, &m->cj, 8, seed);
	case K_ILLEGAL:
		in.w[0] = 0xfd; /* not an opcode */
		return one_insn(d, &in, &m->code);
	case K_LONG:
		return long_prog(d, &m->code);
	default: /* K_BADJOB: a valid program, an invalid descriptor */
		SET(in, ANY_OPCODE, LOOM_OP_FINISH);
		return one_insn(d, &in, &m->code);
	}
}

static int mixed_submit(loom_dev *d, mixed_job *m)
{
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	unsigned fl = LOOM_SUBMIT_WAIT;
	if (m->kind == K_GOOD || m->kind == K_WINDOW) {
		jd = copy_desc(&m->cj);
		if (m->kind == K_WINDOW)
			jd.nwindows = 2; /* the output buffer is not declared */
	} else {
		jd.insn_addr = loom_bo_addr(m->code);
		loom_job_add_window(&jd, m->code);
	}
	if (m->kind == K_LONG)
		jd.timeout_cycles = 20000;
	if (m->kind == K_BADJOB) {
		jd.flags = 0x80000000u; /* unknown flag: the firmware must refuse the descriptor */
		fl |= LOOM_SUBMIT_UNCHECKED;
	}
	return loom_submit(d, &jd, fl, &m->id);
}

static const char *kind_name(int k)
{
	static const char *const n[K_KINDS] = {"good", "illegal instruction", "DMA outside windows",
					       "longer than its watchdog", "invalid descriptor"};
	return n[k];
}

static int mixed_verdict(const loom_hwcfg *c, mixed_job *m)
{
	const loom_result *r = &m->r;
	(void)c;
	if (m->rc || r->id != m->id)
		return 0;
	switch (m->kind) {
	case K_GOOD: /* 8 lines loaded into the scratchpad and stored from it: the completion's event counters */
		return r->status == LOOM_JOB_OK && r->ctr[LOOM_CTR_INSNS] == 3 && copy_ok(&m->cj) &&
		       r->evt[LOOM_EVT_SP_WR] == 8 && r->evt[LOOM_EVT_SP_RD] == 8 && r->evt[LOOM_EVT_ACC_WR] == 0;
	case K_ILLEGAL:
		return r->status == LOOM_JOB_ENGINE_ERROR && r->err_cause == LOOM_ERR_ILLEGAL_OPCODE &&
		       r->err_pc == loom_bo_addr(m->code);
	case K_WINDOW:
		return r->status == LOOM_JOB_ENGINE_ERROR && r->err_cause == LOOM_ERR_DMA_WINDOW &&
		       r->err_pc == loom_bo_addr(m->cj.code) + 2 * LOOM_INSN_BYTES &&
		       r->err_info == LOOM_F_STORE_DRAM_ADDR;
	case K_LONG: return r->status == LOOM_JOB_TIMEOUT;
	default: return r->status == LOOM_JOB_BAD_JOB && r->evt[LOOM_EVT_SP_WR] == 0;
	}
}

static void t_mixed(st *s)
{
	static const int pattern[] = {K_GOOD, K_ILLEGAL, K_GOOD, K_WINDOW, K_GOOD, K_GOOD, K_LONG, K_GOOD,
				      K_BADJOB, K_GOOD, K_ILLEGAL, K_WINDOW, K_GOOD, K_LONG, K_GOOD, K_GOOD};
	enum { NP = sizeof pattern / sizeof pattern[0], N = 3 * NP };
	loom_dev *d = dev_open(s, "mixed");
	if (!d || dev_boot(s, d, 16, "mixed")) {
		loom_close(d);
		return;
	}
	mixed_job *m = calloc(N, sizeof *m);
	uint64_t seed = 0xfeedbeef;
	int rc = m ? LOOM_OK : LOOM_ENOMEM;
	for (int i = 0; !rc && i < N; i++) {
		m[i].kind = pattern[i % NP];
		rc = mixed_prep(d, &m[i], &seed);
	}
	unsigned most = 0;
	for (int i = 0; !rc && i < N; i++) {
		rc = mixed_submit(d, &m[i]);
		if (loom_jobs_in_flight(d) > most)
			most = loom_jobs_in_flight(d);
	}
	check(s, rc == LOOM_OK, "mixed: %d jobs submitted (up to %u in flight): %s", N, most,
	      rc ? loom_errmsg(d) : "ok");
	int ok[K_KINDS] = {0}, cnt[K_KINDS] = {0};
	for (int i = 0; !rc && i < N; i++) {
		m[i].rc = loom_wait(d, m[i].id, 100000000, &m[i].r);
		int v = mixed_verdict(loom_dev_config(d), &m[i]);
		cnt[m[i].kind]++;
		ok[m[i].kind] += v;
		if (!v || s->o.verbose)
			printf("     job %" PRIu64 " (%s): %s, %s cause %s pc %#x info %#x\n", m[i].id, kind_name(m[i].kind),
			       m[i].rc ? loom_errmsg(d) : "completed", loom_job_status_name(m[i].r.status),
			       loom_err_name(m[i].r.err_cause), m[i].r.err_pc, m[i].r.err_info);
	}
	check(s, !rc && most > 1, "mixed: several jobs in flight at once (%u)", most);
	check(s, !rc && ok[K_GOOD] == cnt[K_GOOD],
	      "mixed: %d of %d good jobs OK with correct output bytes and 8 scratchpad lines written and read",
	      ok[K_GOOD], cnt[K_GOOD]);
	check(s, !rc && ok[K_ILLEGAL] == cnt[K_ILLEGAL],
	      "mixed: %d of %d illegal-instruction jobs ENGINE_ERROR ILLEGAL_OPCODE at their first instruction",
	      ok[K_ILLEGAL], cnt[K_ILLEGAL]);
	check(s, !rc && ok[K_WINDOW] == cnt[K_WINDOW],
	      "mixed: %d of %d jobs storing outside their windows ENGINE_ERROR DMA_WINDOW at the STORE", ok[K_WINDOW],
	      cnt[K_WINDOW]);
	check(s, !rc && ok[K_LONG] == cnt[K_LONG], "mixed: %d of %d jobs longer than their watchdog TIMEOUT",
	      ok[K_LONG], cnt[K_LONG]);
	check(s, !rc && ok[K_BADJOB] == cnt[K_BADJOB], "mixed: %d of %d invalid descriptors BAD_JOB", ok[K_BADJOB],
	      cnt[K_BADJOB]);
	for (int i = 0; m && i < N; i++) {
		copy_free(&m[i].cj);
		loom_bo_free(m[i].code);
	}
	free(m);
	loom_close(d);
}

/* ---- bus errors ---- */

/* A buffer at BUSERR_AT that the device's DRAM answers with error
 * responses; copy jobs of 8 lines whose LOAD reads it, whose STORE writes
 * it, whose instructions are in it; then a good copy job. All in flight
 * at once: each completes on its own, in order. */
#define BUSERR_AT 0x400000u
#define BUSERR_SIZE 0x1000u
static void t_buserr(st *s)
{
	enum { B_LOAD, B_STORE, B_FETCH, B_GOOD, B_N };
	static const char *const name[B_N] = {"LOAD reads", "STORE writes", "instructions fetched from",
					      "the good job after them"};
	loom_hw_opts ho = {.bus_err_base = BUSERR_AT, .bus_err_size = BUSERR_SIZE};
	loom_dev *d = dev_open_opts(s, "buserr", &ho);
	if (!d || dev_boot(s, d, 8, "buserr")) {
		loom_close(d);
		return;
	}
	const loom_hwcfg *c = loom_dev_config(d);
	copy_job j[B_N];
	memset(j, 0, sizeof j);
	loom_bo *bad = NULL;
	uint64_t seed = 0xb05e, id[B_N] = {0};
	int rc = loom_bo_alloc_at(d, BUSERR_AT, BUSERR_SIZE, &bad);
	for (int k = 0; !rc && k < B_N; k++) {
		rc = copy_prep(d, &j[k], 8, &seed);
		if (rc || k == B_GOOD)
			continue;
		loom_insn p[5];
		size_t n = loom_copy_program(p, c->array_rows, 8, k == B_LOAD ? BUSERR_AT : (uint32_t)loom_bo_addr(j[k].in),
					     k == B_STORE ? BUSERR_AT : (uint32_t)loom_bo_addr(j[k].out), 0, 0, 0) *
			   sizeof *p;
		rc = k == B_FETCH ? loom_bo_write(bad, 0, p, n) : loom_bo_write(j[k].code, 0, p, n);
	}
	for (int k = 0; !rc && k < B_N; k++) {
		loom_job_desc jd = copy_desc(&j[k]);
		if (k != B_GOOD)
			rc = loom_job_add_window(&jd, bad);
		if (k == B_FETCH)
			jd.insn_addr = BUSERR_AT;
		if (!rc)
			rc = loom_submit(d, &jd, LOOM_SUBMIT_WAIT, &id[k]);
	}
	check(s, rc == LOOM_OK, "buserr: a buffer at 0x%x answered with bus errors, %d jobs submitted: %s", BUSERR_AT,
	      B_N, rc ? loom_errmsg(d) : "ok");
	for (int k = 0; !rc && k < B_N; k++) {
		loom_result r;
		int wrc = loom_wait(d, id[k], 100000000, &r);
		uint64_t pc = k == B_FETCH ? BUSERR_AT : loom_bo_addr(j[k].code) + (k == B_STORE ? 2 * LOOM_INSN_BYTES : 0);
		print_result(s, name[k], &r);
		if (k == B_GOOD)
			check(s, !wrc && r.status == LOOM_JOB_OK && copy_ok(&j[k]),
			      "buserr: %s: %s, output bytes %s", name[k], wrc ? loom_errmsg(d) : loom_job_status_name(r.status),
			      copy_ok(&j[k]) ? "correct" : "WRONG");
		else
			check(s, !wrc && r.status == LOOM_JOB_ENGINE_ERROR && r.err_cause == LOOM_ERR_BUS_ERROR &&
					 r.err_pc == pc && r.err_info == LOOM_INFO_NONE,
			      "buserr: a job whose %s the buffer: %s %s at %#x info %#x (want ENGINE_ERROR BUS_ERROR at %#" PRIx64 ")",
			      name[k], wrc ? loom_errmsg(d) : loom_job_status_name(r.status), loom_err_name(r.err_cause),
			      r.err_pc, r.err_info, pc);
	}
	for (int k = 0; k < B_N; k++)
		copy_free(&j[k]);
	loom_bo_free(bad);
	loom_close(d);
}

/* ---- hang and reset ---- */

static void t_hang(st *s)
{
	loom_dev *d = dev_open(s, "hang");
	if (!d || dev_boot(s, d, 8, "hang")) {
		loom_close(d);
		return;
	}
	loom_dev_info in;
	loom_dev_get_info(d, &in);
	check(s, in.caps & LOOM_FW_CAP_TEST_HANG, "hang: the firmware advertises LOOM_FW_CAP_TEST_HANG (caps %#x)",
	      in.caps);
	copy_job a, b, c;
	memset(&b, 0, sizeof b);
	memset(&c, 0, sizeof c);
	uint64_t seed = 99, hid = 0;
	int rc = copy_prep(d, &a, 4, &seed);
	if (!rc)
		rc = copy_prep(d, &b, 4, &seed);
	if (!rc)
		rc = copy_prep(d, &c, 4, &seed);
	loom_job_desc hj, bj;
	memset(&hj, 0, sizeof hj);
	memset(&bj, 0, sizeof bj);
	if (!rc) {
		hj = copy_desc(&a);
		bj = copy_desc(&b);
	}
	hj.flags = LOOM_JOB_F_TEST_HANG;
	if (!rc)
		rc = loom_submit(d, &hj, 0, &hid);
	if (!rc)
		rc = loom_submit(d, &bj, 0, &b.id);
	check(s, rc == LOOM_OK, "hang: a hanging job and a good one submitted: %s", rc ? loom_errmsg(d) : "ok");
	if (rc)
		goto out;
	check_rc(s, d, loom_wait(d, hid, 200000, NULL), LOOM_ETIMEDOUT, "hang: loom_wait on the hanging job");
	check_rc(s, d, loom_poll(d, b.id, NULL), LOOM_EAGAIN, "hang: the job behind it has not run");
	loom_result r = {0};
	loom_job_desc cj = copy_desc(&c);
	check_rc(s, d, loom_submit(d, &cj, 0, &c.id), LOOM_OK, "hang: one more job queued behind the hang");
	check_rc(s, d, loom_reset(d), LOOM_OK, "hang: loom_reset");
	int lost = 0;
	lost += loom_wait(d, hid, 0, &r) == LOOM_OK && r.status == LOOM_JOB_LOST;
	lost += loom_wait(d, b.id, 0, &r) == LOOM_OK && r.status == LOOM_JOB_LOST;
	lost += loom_wait(d, c.id, 0, &r) == LOOM_OK && r.status == LOOM_JOB_LOST;
	check(s, lost == 3 && loom_jobs_in_flight(d) == 0, "hang: the %d jobs in flight came back LOST", lost);
	rc = loom_submit(d, &cj, 0, &c.id);
	if (!rc)
		rc = loom_wait(d, c.id, 10000000, &r);
	print_result(s, "after reset", &r);
	check(s, rc == LOOM_OK && r.status == LOOM_JOB_OK && copy_ok(&c), "hang: after the reset the next job succeeds: %s",
	      rc ? loom_errmsg(d) : loom_job_status_name(r.status));
out:
	copy_free(&a);
	copy_free(&b);
	copy_free(&c);
	loom_close(d);
}

/* ---- bad firmware ---- */

/* A minimal ELF: one PT_LOAD of code at addr. */
static size_t tiny_elf(uint8_t *buf, uint32_t addr, const uint32_t *code, unsigned n)
{
	Elf32_Ehdr eh;
	Elf32_Phdr ph;
	memset(&eh, 0, sizeof eh);
	memset(&ph, 0, sizeof ph);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_RISCV;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof eh;
	eh.e_ehsize = sizeof eh;
	eh.e_phentsize = sizeof ph;
	eh.e_phnum = 1;
	ph.p_type = PT_LOAD;
	ph.p_offset = sizeof eh + sizeof ph;
	ph.p_vaddr = ph.p_paddr = addr;
	ph.p_filesz = ph.p_memsz = 4 * n;
	ph.p_flags = PF_R | PF_X;
	memcpy(buf, &eh, sizeof eh);
	memcpy(buf + sizeof eh, &ph, sizeof ph);
	memcpy(buf + sizeof eh + sizeof ph, code, 4 * n);
	return sizeof eh + sizeof ph + 4 * n;
}

typedef struct fw_case {
	const char *what, *needle; /* the message must contain needle */
	int code;
	size_t len;
	uint8_t *img;
} fw_case;

static Elf32_Phdr *phdr(uint8_t *img, unsigned i)
{
	Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
	return (Elf32_Phdr *)(img + eh->e_phoff + (size_t)i * eh->e_phentsize);
}

/* Index of the first (which=0) or a second PT_LOAD with memsz > 0, -1 if none. */
static int load_seg(uint8_t *img, int which)
{
	Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (phdr(img, i)->p_type == PT_LOAD && phdr(img, i)->p_memsz && which-- == 0)
			return (int)i;
	return -1;
}

/* Apply mutation k to a copy of the good image; 0 if it does not apply. */
static int fw_mutate(const st *s, int k, fw_case *c)
{
	c->img = malloc(s->fw_len);
	if (!c->img)
		return 0;
	memcpy(c->img, s->fw, s->fw_len);
	c->len = s->fw_len;
	c->code = LOOM_EFW;
	Elf32_Ehdr *eh = (Elf32_Ehdr *)c->img;
	int i0 = load_seg(c->img, 0), other = -1;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if ((int)i != i0)
			other = (int)i;
	Elf32_Phdr *p0 = i0 >= 0 ? phdr(c->img, (unsigned)i0) : NULL;
	switch (k) {
	case 0: c->what = "truncated to 10 bytes"; c->needle = "ELF"; c->len = 10; return 1;
	case 1: c->what = "truncated inside the ELF header"; c->needle = "truncated"; c->len = 40; return 1;
	case 2:
		c->what = "truncated inside the program headers";
		c->needle = "program headers";
		c->len = eh->e_phoff + eh->e_phentsize / 2;
		return 1;
	case 3:
		if (!p0 || !p0->p_filesz)
			return 0;
		c->what = "truncated inside a segment";
		c->needle = "segment";
		c->len = p0->p_offset + p0->p_filesz - 1;
		return 1;
	case 4: c->what = "ELFCLASS64"; c->needle = "EI_CLASS"; eh->e_ident[EI_CLASS] = ELFCLASS64; return 1;
	case 5: c->what = "big endian"; c->needle = "EI_DATA"; eh->e_ident[EI_DATA] = ELFDATA2MSB; return 1;
	case 6: c->what = "e_machine EM_X86_64"; c->needle = "e_machine"; eh->e_machine = EM_X86_64; return 1;
	case 7: c->what = "e_type ET_DYN"; c->needle = "e_type"; eh->e_type = ET_DYN; return 1;
	case 8: c->what = "entry point 0x100"; c->needle = "e_entry"; eh->e_entry = 0x100; return 1;
	case 9:
		if (!p0)
			return 0;
		c->what = "segment in the NPU registers";
		c->needle = "ITCM";
		p0->p_paddr = p0->p_vaddr = 0x20000000u;
		return 1;
	case 10:
		if (!p0)
			return 0;
		c->what = "segment past the end of the DTCM";
		c->needle = "DTCM";
		p0->p_paddr = p0->p_vaddr = 0x10008000u - 4;
		p0->p_memsz = p0->p_memsz > 8 ? p0->p_memsz : 8;
		p0->p_filesz = p0->p_filesz < p0->p_memsz ? p0->p_filesz : p0->p_memsz;
		return 1;
	case 11: {
		if (!p0 || other < 0)
			return 0;
		Elf32_Phdr *q = phdr(c->img, (unsigned)other);
		c->what = "overlapping segments";
		c->needle = "overlap";
		q->p_type = PT_LOAD;
		q->p_offset = p0->p_offset;
		q->p_filesz = 0;
		q->p_memsz = 8;
		q->p_paddr = q->p_vaddr = p0->p_paddr + 4;
		return 1;
	}
	case 12:
		if (!p0)
			return 0;
		c->what = "p_filesz > p_memsz";
		c->needle = "p_filesz";
		p0->p_memsz = p0->p_filesz ? p0->p_filesz - 1 : 0;
		p0->p_filesz = p0->p_memsz + 1;
		return 1;
	case 13:
		if (!p0)
			return 0;
		c->what = "p_offset past the end of the file";
		c->needle = "p_offset";
		p0->p_offset = (Elf32_Off)s->fw_len;
		return 1;
	default: return -1;
	}
}

static void t_firmware(st *s)
{
	loom_dev *d = dev_open(s, "firmware");
	if (!d)
		return;
	int k = 0;
	for (;; k++) {
		fw_case c;
		memset(&c, 0, sizeof c);
		int m = fw_mutate(s, k, &c);
		if (m < 0) {
			free(c.img);
			break;
		}
		if (m == 0) {
			check(s, 0, "firmware: case %d does not apply to %s (too few segments?)", k, s->fw_path);
			free(c.img);
			continue;
		}
		int rc = loom_load_firmware_mem(d, c.img, c.len);
		const char *msg = loom_errmsg(d);
		check(s, rc == c.code && strstr(msg, c.needle), "firmware: %s: %s - %s", c.what, loom_strerror(rc),
		      rc ? msg : "accepted");
		free(c.img);
	}
	check_rc(s, d, loom_load_firmware(d, "/nonexistent/loom_fw.elf"), LOOM_EIO, "firmware: a missing file");
	check_rc(s, d, loom_load_firmware(d, NULL), LOOM_EINVAL, "firmware: NULL path");
	/* the good image is still the one loaded: a boot works */
	check_rc(s, d, loom_boot(d, NULL), LOOM_OK, "firmware: after the bad images the good one still boots");
	/* versions: the firmware refuses abi_major + 1; the driver refuses a reply with major + 1 */
	loom_boot_opts bo = {.test = LOOM_BOOT_TEST_ABI_PLUS1};
	int rc = loom_boot(d, &bo);
	check(s, rc == LOOM_EVERSION && strstr(loom_errmsg(d), "BAD_ABI"),
	      "firmware: boot block with abi_major %u: %s - %s", LOOM_FW_ABI_MAJOR + 1, loom_strerror(rc), loom_errmsg(d));
	bo.test = LOOM_BOOT_TEST_REPLY_ABI;
	rc = loom_boot(d, &bo);
	check(s, rc == LOOM_EVERSION && strstr(loom_errmsg(d), "major versions differ"),
	      "firmware: reply with fw_abi_major %u: %s - %s", LOOM_FW_ABI_MAJOR + 1, loom_strerror(rc), loom_errmsg(d));
	uint64_t id;
	loom_job_desc jd = {.insn_addr = 0};
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_ESTATE, "firmware: submit after a refused boot");
	/* a valid ELF that never answers: `j .` at 0 */
	uint8_t tiny[256];
	const uint32_t spin = 0x0000006fu;
	size_t n = tiny_elf(tiny, 0, &spin, 1);
	check_rc(s, d, loom_load_firmware_mem(d, tiny, n), LOOM_OK, "firmware: a one-instruction ELF is valid");
	bo = (loom_boot_opts){.boot_timeout_cycles = 50000};
	rc = loom_boot(d, &bo);
	check(s, rc == LOOM_EBOOT && strstr(loom_errmsg(d), "no reply"), "firmware: one that never replies: %s - %s",
	      loom_strerror(rc), loom_errmsg(d));
	check_rc(s, d, loom_load_firmware_mem(d, s->fw, s->fw_len), LOOM_OK, "firmware: reload the good image");
	check_rc(s, d, loom_boot(d, NULL), LOOM_OK, "firmware: and boot it");
	loom_close(d);
}

/* ---- bad calls ---- */

static void t_calls(st *s)
{
	char err[256] = "";
	loom_dev *d = NULL;
	int rc = loom_open(NULL, &d, err, sizeof err);
	check(s, rc == LOOM_EINVAL && !d && err[0], "calls: loom_open(NULL opts): %s - %s", loom_strerror(rc), err);
	rc = loom_open(&(loom_open_opts){.backend = "fpga", .hw = "default"}, &d, err, sizeof err);
	check(s, rc == LOOM_EINVAL && strstr(err, "fpga"), "calls: unknown backend: %s - %s", loom_strerror(rc), err);
	rc = loom_open(&(loom_open_opts){.backend = s->o.backend, .hw = "no-such-config"}, &d, err, sizeof err);
	check(s, rc == LOOM_EINVAL && err[0], "calls: unknown configuration: %s - %s", loom_strerror(rc), err);
	check(s, loom_boot(NULL, NULL) == LOOM_EINVAL && loom_submit(NULL, NULL, 0, NULL) == LOOM_EINVAL &&
		     loom_wait(NULL, 1, 0, NULL) == LOOM_EINVAL && loom_poll(NULL, 1, NULL) == LOOM_EINVAL &&
		     loom_reset(NULL) == LOOM_EINVAL && loom_bo_alloc(NULL, 64, 0, NULL) == LOOM_EINVAL &&
		     loom_bo_write(NULL, 0, err, 1) == LOOM_EINVAL && loom_load_firmware(NULL, "x") == LOOM_EINVAL &&
		     loom_errmsg(NULL)[0],
	      "calls: NULL device everywhere: LOOM_EINVAL");
	int distinct = 1;
	for (int a = 0; a >= LOOM_EPROTO; a--)
		for (int b = a - 1; b >= LOOM_EPROTO; b--)
			distinct &= strcmp(loom_strerror(a), loom_strerror(b)) != 0;
	check(s, distinct && !strcmp(loom_strerror(-99), "unknown error"), "calls: every error code has its own text");

	d = dev_open(s, "calls");
	if (!d)
		return;
	const loom_hwcfg *c = loom_dev_config(d);
	uint64_t id = 7;
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_ESTATE, "calls: submit before boot");
	check(s, id == 0, "calls: a failed submit sets *id to 0");
	check_rc(s, d, loom_reset(d), LOOM_ESTATE, "calls: reset before any boot");
	check_rc(s, d, loom_boot(d, &(loom_boot_opts){.ring_entries = 24}), LOOM_EINVAL, "calls: ring of 24 entries");
	check_rc(s, d, loom_boot(d, &(loom_boot_opts){.ring_entries = 8192}), LOOM_EINVAL, "calls: ring of 8192 entries");
	loom_bo *bo = NULL, *b2 = NULL;
	check_rc(s, d, loom_bo_alloc(d, 0, 0, &bo), LOOM_EINVAL, "calls: buffer of 0 bytes");
	check_rc(s, d, loom_bo_alloc(d, 64, 48, &bo), LOOM_EINVAL, "calls: alignment 48");
	check_rc(s, d, loom_bo_alloc(d, c->dram_bytes + 1, 0, &bo), LOOM_ENOMEM, "calls: buffer larger than DRAM");
	check_rc(s, d, loom_bo_alloc(d, 64, 0, NULL), LOOM_EINVAL, "calls: NULL out");
	check_rc(s, d, loom_bo_alloc_at(d, c->dram_bytes - 32, 64, &bo), LOOM_ERANGE, "calls: fixed buffer past DRAM");
	check_rc(s, d, loom_bo_alloc_at(d, 0x1000, 4096, &bo), LOOM_OK, "calls: fixed buffer at 0x1000");
	check_rc(s, d, loom_bo_alloc_at(d, 0x1800, 64, &b2), LOOM_EBUSY, "calls: fixed buffer overlapping it");
	check_rc(s, d, loom_bo_alloc(d, 100, 4096, &b2), LOOM_OK, "calls: buffer aligned to 4096");
	check(s, b2 && loom_bo_addr(b2) % 4096 == 0 && loom_bo_addr(b2) + 100 <= c->dram_bytes &&
		     (loom_bo_addr(b2) >= 0x2000 || loom_bo_addr(b2) + 100 <= 0x1000),
	      "calls: it is aligned and does not overlap (at %#" PRIx64 ")", loom_bo_addr(b2));
	uint8_t buf[64] = {0};
	check_rc(s, d, loom_bo_write(bo, 4090, buf, 8), LOOM_ERANGE, "calls: write past the end of a buffer");
	check_rc(s, d, loom_bo_read(bo, UINT64_MAX, buf, 1), LOOM_ERANGE, "calls: read at offset 2^64-1");
	check_rc(s, d, loom_bo_read(bo, 0, NULL, 8), LOOM_EINVAL, "calls: read into NULL");
	check_rc(s, d, loom_bo_write(bo, 4088, buf, 8), LOOM_OK, "calls: write of the last 8 bytes");
	check_rc(s, d, loom_boot(d, &(loom_boot_opts){.ring_entries = 4}), LOOM_OK, "calls: boot");
	loom_dev_info in;
	loom_dev_get_info(d, &in);
	check_rc(s, d, loom_bo_alloc_at(d, in.boot_addr, 64, &b2), LOOM_EBUSY, "calls: fixed buffer over the rings");
	check_rc(s, d, loom_submit(d, NULL, 0, &id), LOOM_EINVAL, "calls: NULL job");
	check_rc(s, d, loom_submit(d, &jd, 0, NULL), LOOM_EINVAL, "calls: NULL id");
	check_rc(s, d, loom_submit(d, &jd, 0x40, &id), LOOM_EINVAL, "calls: unknown submission flag");
	jd.insn_addr = loom_bo_addr(bo) + 4;
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_EINVAL, "calls: instructions not 32-byte aligned");
	jd.insn_addr = c->dram_bytes;
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_ERANGE, "calls: instructions past DRAM");
	jd.insn_addr = loom_bo_addr(bo);
	jd.flags = 0x10;
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_EINVAL, "calls: unknown job flag");
	jd.flags = 0;
	jd.nwindows = LOOM_FW_JOB_WINDOWS + 1;
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_EINVAL, "calls: 5 windows");
	jd.nwindows = 1;
	jd.win[0] = (loom_window){c->dram_bytes - 64, 128};
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_ERANGE, "calls: window past DRAM");
	jd.win[0] = (loom_window){0x1000, 0};
	check_rc(s, d, loom_submit(d, &jd, 0, &id), LOOM_EINVAL, "calls: window of 0 bytes");
	jd.nwindows = 0;
	for (unsigned i = 0; i < LOOM_FW_JOB_WINDOWS; i++)
		loom_job_add_window(&jd, bo);
	check(s, loom_job_add_window(&jd, bo) == LOOM_EINVAL, "calls: a fifth window is refused");
	check_rc(s, d, loom_wait(d, 12345, 1000, NULL), LOOM_ENOENT, "calls: wait for a job never submitted");
	check_rc(s, d, loom_poll(d, LOOM_JOB_ANY, NULL), LOOM_ENOENT, "calls: poll with nothing in flight");
	check_rc(s, d, loom_dev_get_info(d, NULL), LOOM_EINVAL, "calls: NULL info");
	loom_bo_free(bo);
	loom_bo_free(b2);
	loom_bo_free(NULL);
	loom_close(d);
	loom_close(NULL);
	check(s, 1, "calls: freeing and closing NULL is harmless");
}

/* ---- two devices, two threads ---- */

typedef struct th_arg {
	st *s;
	loom_dev *d;
	uint64_t seed;
	int jobs_ok, rc;
	char msg[256];
} th_arg;

static void *th_main(void *p)
{
	th_arg *a = p;
	enum { NJ = 12 };
	copy_job j[NJ];
	memset(j, 0, sizeof j);
	loom_boot_opts bo = {.ring_entries = 4};
	a->rc = loom_boot(a->d, &bo);
	for (int i = 0; !a->rc && i < NJ; i++) {
		a->rc = copy_prep(a->d, &j[i], 4 + (uint32_t)i % 3, &a->seed);
		loom_job_desc jd = copy_desc(&j[i]);
		if (!a->rc)
			a->rc = loom_submit(a->d, &jd, LOOM_SUBMIT_WAIT, &j[i].id);
	}
	for (int i = 0; !a->rc && i < NJ; i++) {
		loom_result r;
		a->rc = loom_wait(a->d, j[i].id, 10000000, &r);
		a->jobs_ok += !a->rc && r.status == LOOM_JOB_OK && copy_ok(&j[i]);
	}
	if (a->rc)
		snprintf(a->msg, sizeof a->msg, "%s - %s", loom_strerror(a->rc), loom_errmsg(a->d));
	for (int i = 0; i < NJ; i++)
		copy_free(&j[i]);
	return NULL;
}

static void t_threads(st *s)
{
	th_arg a[2];
	memset(a, 0, sizeof a);
	pthread_t t[2];
	int started[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		a[i].s = s;
		a[i].seed = 1000 + (uint64_t)i;
		a[i].d = dev_open(s, "threads");
		if (a[i].d)
			started[i] = !pthread_create(&t[i], NULL, th_main, &a[i]);
	}
	for (int i = 0; i < 2; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		check(s, started[i] && a[i].rc == LOOM_OK && a[i].jobs_ok == 12,
		      "threads: device %d in its own thread: %d of 12 jobs correct%s%s", i, a[i].jobs_ok,
		      a[i].msg[0] ? ": " : "", a[i].msg);
		loom_close(a[i].d);
	}
}

/* ---- driver ---- */

static int read_fw(st *s)
{
	FILE *f = fopen(s->fw_path, "rb");
	if (!f) {
		fprintf(stderr, "loom selftest: firmware %s not found (build it: make; or pass --fw ELF)\n", s->fw_path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s->fw = n > 0 ? malloc((size_t)n) : NULL;
	s->fw_len = s->fw && fread(s->fw, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
	fclose(f);
	if (!s->fw_len) {
		fprintf(stderr, "loom selftest: can not read %s\n", s->fw_path);
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: loom selftest --backend rtl|cmodel|systemc|systemc-rtl [--hw CONFIG] [--fw ELF] [--only GROUP] [-v]\n"
		   "  the driver/firmware protocol suite through libloom; groups: boot wrap mixed buserr hang firmware\n"
		   "  calls threads. --fw defaults to build/firmware/loom_fw.elf. Ends with \"N passed, M failed\".\n");
}

int cmd_selftest(int argc, char **argv)
{
	st s;
	memset(&s, 0, sizeof s);
	s.o.hw = "default";
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			s.o.verbose = 1;
			continue;
		}
		if (!v || (strcmp(a, "--backend") && strcmp(a, "--hw") && strcmp(a, "--fw") && strcmp(a, "--only"))) {
			fprintf(stderr, "loom selftest: %s '%s'\n", v ? "unknown option" : "missing value for", a);
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--backend"))
			s.o.backend = v;
		else if (!strcmp(a, "--hw"))
			s.o.hw = v;
		else if (!strcmp(a, "--fw"))
			s.o.fw = v;
		else
			only = v;
	}
	if (!s.o.backend) {
		usage(stderr);
		return 2;
	}
	static const struct {
		const char *name;
		void (*fn)(st *);
	} groups[] = {{"boot", t_boot},         {"wrap", t_wrap},   {"mixed", t_mixed},    {"buserr", t_buserr}, {"hang", t_hang},
		      {"firmware", t_firmware}, {"calls", t_calls}, {"threads", t_threads}};
	const size_t ngroups = sizeof groups / sizeof groups[0];
	size_t known = 0;
	while (only && known < ngroups && strcmp(only, groups[known].name))
		known++;
	if (only && known == ngroups) {
		fprintf(stderr, "loom selftest: --only %s: unknown group; groups:", only);
		for (size_t i = 0; i < ngroups; i++)
			fprintf(stderr, " %s", groups[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	loom_hwcfg cfg;
	if (tool_check_backend("selftest", s.o.backend, "cmodel|rtl|systemc|systemc-rtl") || tool_load_hw("selftest", s.o.hw, &cfg))
		return 2;
	if (s.o.fw)
		snprintf(s.fw_path, sizeof s.fw_path, "%s", s.o.fw);
	else
		snprintf(s.fw_path, sizeof s.fw_path, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	if (read_fw(&s))
		return 1;
	printf("loom selftest: backend %s, configuration %s, firmware %s (%zu bytes)\n", s.o.backend, s.o.hw,
	       s.fw_path, s.fw_len);
	for (size_t i = 0; i < ngroups; i++)
		if (!only || !strcmp(only, groups[i].name))
			groups[i].fn(&s);
	free(s.fw);
	printf("%d passed, %d failed\n", s.npass, s.nfail);
	return s.nfail ? 1 : 0;
}
