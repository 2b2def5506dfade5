/* test_hw.c - tests of the hardware-access layer on both backends and of
 * configuration handling: configuration read-back registers, host DRAM
 * range errors, the run bound (a program longer than the bound ends with a
 * clear timeout, is aborted, and the next program runs), FST waveforms on
 * demand with a cycle window (rtl; such a run evaluates every falling
 * edge, the others set it, and both take the same cycles), configurations
 * that must be refused with a message naming the parameter, and bus errors
 * (loom_hw_opts.bus_err_*): a fetch, LOAD, STORE or MARK that meets the
 * error range ends with BUS_ERROR at that instruction, the RTL and the C
 * model with the same ERR_*, INSNS and DRAM byte counters, and the next
 * program runs.
 * Usage: test_hw [--hw CONFIG]; ends with "N passed, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loom/hw.h"
#include "loom/isa.h"
#include "check.h"

#define SET(in, f, v) loom_insn_set(&(in), LOOM_F_##f, (v))

/* LOAD 64 lines -> MATMUL (big when long) -> STORE -> FINISH at addr */
static void write_prog(loom_hw *hw, const loom_hwcfg *c, uint64_t addr, int long_run)
{
	loom_insn p[4];
	memset(p, 0, sizeof p);
	SET(p[0], ANY_OPCODE, LOOM_OP_LOAD);
	SET(p[0], LOAD_ROW_WORDS, c->array_rows / 4);
	SET(p[0], LOAD_DRAM_ADDR, 0x10000);
	SET(p[0], LOAD_STRIDE1, c->array_rows);
	SET(p[0], LOAD_N1, 64);
	SET(p[0], LOAD_N2, 1);
	SET(p[0], LOAD_N3, 1);
	SET(p[0], LOAD_PUSH_NEXT, 1);
	SET(p[1], ANY_OPCODE, LOOM_OP_MATMUL);
	SET(p[1], MATMUL_POP_PREV, 1);
	SET(p[1], MATMUL_PUSH_NEXT, 1);
	SET(p[1], MATMUL_WGT_ADDR, 64);
	SET(p[1], MATMUL_IN_W, 64);
	SET(p[1], MATMUL_IN_H, 1);
	SET(p[1], MATMUL_OUT_W, 64);
	SET(p[1], MATMUL_OUT_H, 1);
	SET(p[1], MATMUL_NCB, 1);
	/* a long run: the same 64 lines read with a 15x15 kernel of dilation 1
	 * over a 1-row image is not legal, so repeat channel blocks instead */
	SET(p[1], MATMUL_KW, 1);
	SET(p[1], MATMUL_KH, 1);
	SET(p[1], MATMUL_SW, 1);
	SET(p[1], MATMUL_SH, 1);
	SET(p[1], MATMUL_DW, 1);
	SET(p[1], MATMUL_DH, 1);
	if (long_run) {
		/* NCB blocks of 1 line each: 255 folds of 1 line, each a bubble-bound fold */
		SET(p[1], MATMUL_IN_W, 1);
		SET(p[1], MATMUL_OUT_W, 1);
		SET(p[1], MATMUL_NCB, 64);
	}
	SET(p[2], ANY_OPCODE, LOOM_OP_STORE);
	SET(p[2], STORE_POP_PREV, 1);
	SET(p[2], STORE_SOURCE, LOOM_MEM_ACC);
	SET(p[2], STORE_ROW_WORDS, c->array_cols);
	SET(p[2], STORE_DRAM_ADDR, 0x20000);
	SET(p[2], STORE_STRIDE1, 4 * c->array_cols);
	SET(p[2], STORE_N1, long_run ? 1 : 64);
	SET(p[2], STORE_N2, 1);
	SET(p[2], STORE_N3, 1);
	SET(p[3], ANY_OPCODE, LOOM_OP_FINISH);
	for (int i = 0; i < 4; i++) {
		uint32_t f;
		if (loom_insn_check(c, &p[i], &f) != LOOM_ERR_NONE) {
			fprintf(stderr, "test_hw: bad test program at %d (%s)\n", i, loom_field_name(f));
			exit(2);
		}
	}
	loom_hw_dram_write(hw, addr, p, sizeof p);
}

static void set_win(loom_hw *hw, unsigned i, uint32_t base, uint32_t size)
{
	loom_hw_mmio_write(hw, LOOM_REG_WIN0_BASE + 8 * i, base);
	loom_hw_mmio_write(hw, LOOM_REG_WIN0_SIZE + 8 * i, size);
}

/* DMA windows (docs/ISA.md): the program of write_prog(.., 0) at 0x2000
 * fetches 0x2000..0x2080, loads from 0x10000.., stores to 0x20000.. */
static void window_tests(loom_hw *hw, const char *be)
{
	const loom_hwcfg *c = &hw->cfg;
	uint64_t ld_end = 0x10000 + 64u * c->array_rows, st_end = 0x20000 + 64u * 4 * c->array_cols;
	loom_hw_result r;
	set_win(hw, 0, 0x2000, 0x80);
	set_win(hw, 1, 0x10000, (uint32_t)(ld_end - 0x10000));
	set_win(hw, 2, 0x20000, (uint32_t)(st_end - 0x20000));
	set_win(hw, 3, 0, 0);
	loom_hw_mmio_write(hw, LOOM_REG_WIN_CTRL, 1);
	CHECK(loom_hw_mmio_read(hw, LOOM_REG_WIN_CTRL) == 1 && loom_hw_mmio_read(hw, LOOM_REG_WIN1_BASE) == 0x10000,
	      "%s: window registers read back", be);
	int rc = loom_hw_exec(hw, 0x2000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_DONE, "%s: a program inside its windows completes", be);
	/* the store window one byte short: STORE refused, naming its DRAM_ADDR */
	set_win(hw, 2, 0x20000, (uint32_t)(st_end - 0x20000 - 1));
	rc = loom_hw_exec(hw, 0x2000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_ERROR && r.cause == LOOM_ERR_DMA_WINDOW &&
		      r.pc == 0x2040 && r.info == LOOM_F_STORE_DRAM_ADDR,
	      "%s: STORE one byte past its window: %s at 0x%x (%s)", be, loom_err_name(r.cause), r.pc,
	      loom_field_name(r.info));
	/* the load window moved: LOAD refused */
	set_win(hw, 2, 0x20000, (uint32_t)(st_end - 0x20000));
	set_win(hw, 1, 0x10004, (uint32_t)(ld_end - 0x10000));
	rc = loom_hw_exec(hw, 0x2000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.cause == LOOM_ERR_DMA_WINDOW && r.pc == 0x2000 && r.info == LOOM_F_LOAD_DRAM_ADDR,
	      "%s: LOAD starting before its window: %s at 0x%x (%s)", be, loom_err_name(r.cause), r.pc,
	      loom_field_name(r.info));
	/* the code window ends before FINISH: the fetch is refused, nothing read */
	set_win(hw, 1, 0x10000, (uint32_t)(ld_end - 0x10000));
	set_win(hw, 0, 0x2000, 0x60);
	rc = loom_hw_exec(hw, 0x2000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.cause == LOOM_ERR_DMA_WINDOW && r.pc == 0x2060 && r.info == LOOM_INFO_NONE,
	      "%s: fetch past the code window: %s at 0x%x", be, loom_err_name(r.cause), r.pc);
	/* disabled: the same windows do not matter */
	loom_hw_mmio_write(hw, LOOM_REG_WIN_CTRL, 0);
	rc = loom_hw_exec(hw, 0x2000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_DONE, "%s: windows disabled: completes", be);
}

/* Bus errors: every DRAM beat in [BE_BASE, BE_BASE + BE_SIZE) is answered
 * with an error response. A copy program (LOAD of BE_LINES lines, ELTWISE
 * handshake, STORE, MARK, FINISH; long enough that the fetcher waits at the
 * MARK when the LOAD ends, so the counters do not depend on timing) with
 * one of its accesses in the range. */
#define BE_BASE 0x80000u
#define BE_SIZE 0x1000u
#define BE_LINES 1024u
enum { BE_LOAD, BE_STORE, BE_MARK, BE_FETCH, BE_NONE, BE_CASES };
static const char *const be_case[BE_CASES] = {"LOAD", "STORE", "MARK", "fetch", "none"};
typedef struct be_res {
	uint32_t status, cause, pc, info, insns, rd, wr;
	uint32_t out_sum; /* a checksum of the STORE's output region */
} be_res;

static void copy_prog(loom_hw *hw, const loom_hwcfg *c, uint64_t at, uint32_t in, uint32_t out, uint32_t mark)
{
	loom_insn p[5];
	loom_hw_dram_write(hw, at, p, loom_copy_program(p, c->array_rows, BE_LINES, in, out, 1, mark, 5) * sizeof *p);
}

static void bus_tests(const char *be, const loom_hwcfg *c, be_res res[BE_CASES])
{
	char err[512];
	loom_hw_opts o = {.bus_err_base = BE_BASE, .bus_err_size = BE_SIZE};
	loom_hw *hw = loom_hw_open(be, c, &o, err, sizeof err);
	CHECK(hw != NULL, "%s %s: open with a bus-error range (%s)", be, c->name, hw ? "ok" : err);
	if (!hw)
		return;
	const uint32_t n = BE_LINES * c->array_rows;
	uint8_t *data = malloc(n), *back = malloc(n);
	for (uint32_t i = 0; i < n; i++)
		data[i] = (uint8_t)(i * 29 + 7);
	const uint32_t in = 0x100000, out = 0x140000, mark = 0x180000, prog = 0x1000;
	loom_hw_dram_write(hw, in, data, n);
	loom_hw_dram_write(hw, BE_BASE - n / 2, data, n);
	for (int k = 0; k < BE_CASES; k++) {
		/* the LOAD's rows and the STORE's rows straddle the range */
		uint32_t at = k == BE_FETCH ? BE_BASE + 0x100 : prog;
		copy_prog(hw, c, at, k == BE_LOAD ? BE_BASE - n / 2 : in, k == BE_STORE ? BE_BASE - n / 2 : out,
			  k == BE_MARK ? BE_BASE + 0x40 : mark);
		loom_hw_result r;
		int rc = loom_hw_exec(hw, at, 50000000, &r);
		be_res *x = &res[k];
		x->status = r.status;
		x->cause = r.cause;
		x->pc = r.pc;
		x->info = r.info;
		x->insns = loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_INSNS);
		x->rd = loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_DRAM_RD_BYTES);
		x->wr = loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_DRAM_WR_BYTES);
		loom_hw_dram_read(hw, k == BE_STORE ? BE_BASE - n / 2 : out, back, n);
		x->out_sum = 0;
		for (uint32_t i = 0; i < n; i++)
			x->out_sum = x->out_sum * 31 + back[i];
		static const uint32_t want_pc[BE_CASES] = {0, 0x40, 0x60, 0x100, 0};
		if (k == BE_NONE) {
			CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_DONE && !memcmp(back, data, n),
			      "%s: after the bus errors a copy program completes with the right bytes (status 0x%x, %s)",
			      be, r.status, loom_err_name(r.cause));
		} else {
			uint32_t pc = (k == BE_FETCH ? BE_BASE : prog) + want_pc[k];
			CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_ERROR && r.cause == LOOM_ERR_BUS_ERROR &&
				      r.pc == pc && r.info == LOOM_INFO_NONE,
			      "%s: a %s that meets the bus-error range: status 0x%x, %s at 0x%x (want BUS_ERROR at 0x%x), "
			      "info 0x%x",
			      be, be_case[k], r.status, loom_err_name(r.cause), r.pc, pc, r.info);
		}
	}
	free(data);
	free(back);
	loom_hw_close(hw);
}

static void backend_tests(const char *be, const loom_hwcfg *c)
{
	char err[512];
	loom_hw *hw = loom_hw_open(be, c, NULL, err, sizeof err);
	CHECK(hw != NULL, "%s %s: open (%s)", be, c->name, hw ? "ok" : err);
	if (!hw)
		return;
	CHECK(loom_hw_mmio_read(hw, LOOM_REG_ID) == LOOM_ID_VALUE, "%s: ID register", be);
	CHECK(loom_hw_mmio_read(hw, LOOM_REG_VERSION) == (LOOM_ISA_MAJOR << 16 | LOOM_ISA_MINOR), "%s: VERSION", be);
	uint32_t a = loom_hw_mmio_read(hw, LOOM_REG_HW_ARRAY);
	CHECK((a & 0xff) == c->array_rows && ((a >> 8) & 0xff) == c->array_cols &&
		      ((a >> 16) & 0xff) == c->sp_banks && (a >> 24) == c->dma_outstanding,
	      "%s: HW_ARRAY read-back 0x%08x", be, a);
	CHECK(loom_hw_mmio_read(hw, LOOM_REG_HW_SP_BYTES) == c->sp_bytes &&
		      loom_hw_mmio_read(hw, LOOM_REG_HW_ACC_BYTES) == c->acc_bytes &&
		      loom_hw_mmio_read(hw, LOOM_REG_HW_BUS) == (c->dram_beat_bytes | c->dram_mib << 16) &&
		      loom_hw_mmio_read(hw, LOOM_REG_HW_FINGERPRINT) == c->fingerprint,
	      "%s: SP/ACC/BUS/FINGERPRINT read-back", be);
	CHECK(loom_hw_mmio_read(hw, LOOM_REG_IRQ_MASK) == 3 && loom_hw_mmio_read(hw, LOOM_REG_STATUS) == 0,
	      "%s: reset state of IRQ_MASK and STATUS", be);
	uint8_t b[16];
	CHECK(loom_hw_dram_write(hw, c->dram_bytes - 8, b, 16) == -1 && strstr(loom_hw_error(hw), "outside"),
	      "%s: host DRAM write past the end refused (%s)", be, loom_hw_error(hw));

	/* a run longer than its bound: clear timeout, abort, then the next run works */
	uint8_t data[4096];
	for (int i = 0; i < 4096; i++)
		data[i] = (uint8_t)(i * 13 + 1);
	loom_hw_dram_write(hw, 0x10000, data, sizeof data);
	write_prog(hw, c, 0x1000, 1);
	loom_hw_result r;
	int rc = loom_hw_exec(hw, 0x1000, 300, &r);
	CHECK(rc == LOOM_HW_TIMEOUT && r.timed_out && !(r.status & LOOM_STATUS_BUSY) && r.cause == 0,
	      "%s: run past its 300-cycle bound times out and is aborted (status %x)", be, r.status);
	rc = loom_hw_exec(hw, 0x1000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_DONE, "%s: the same program then completes (%llu cycles)",
	      be, (unsigned long long)r.cycles);
	write_prog(hw, c, 0x2000, 0);
	rc = loom_hw_exec(hw, 0x2000, 10000000, &r);
	CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_DONE && r.info == LOOM_INFO_NONE,
	      "%s: next program completes", be);
	window_tests(hw, be);
	loom_hw_close(hw);
}

/* one LOAD -> MATMUL -> STORE program on the RTL, with a waveform or
 * without (sim.cpp then sets the falling edges instead of evaluating them) */
static int wave_run(const loom_hwcfg *c, const loom_hw_opts *o, loom_hw_result *r)
{
	char err[512];
	loom_hw *hw = loom_hw_open("rtl", c, o, err, sizeof err);
	CHECK(hw != NULL, "rtl: open (%s)", hw ? (o->wave_path ? "with waves" : "without") : err);
	if (!hw)
		return -1;
	write_prog(hw, c, 0x1000, 0);
	int rc = loom_hw_exec(hw, 0x1000, 1000000, r);
	loom_hw_close(hw);
	return rc;
}

static void wave_tests(const loom_hwcfg *c)
{
	char path[256];
	snprintf(path, sizeof path, "/tmp/loom_test_hw_%d.fst", (int)getpid());
	unlink(path);
	loom_hw_opts plain = {0}, o = {0};
	o.wave_path = path;
	loom_hw_result r0, r;
	int rc0 = wave_run(c, &plain, &r0);
	/* a waveform of the whole run: every falling edge evaluated */
	int rc = wave_run(c, &o, &r);
	CHECK(rc0 == LOOM_HW_IRQ && rc == LOOM_HW_IRQ && r0.status == LOOM_STATUS_DONE && r.status == LOOM_STATUS_DONE,
	      "rtl: the program completes with and without waves");
	CHECK(r0.cycles == r.cycles, "rtl: falling edges set or evaluated (waves): the same cycles (%llu, %llu)",
	      (unsigned long long)r0.cycles, (unsigned long long)r.cycles);
	unlink(path);
	/* a window: falling edges evaluated inside it, set before and after */
	o.wave_from = 50;
	o.wave_to = 400;
	rc = wave_run(c, &o, &r);
	CHECK(rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_DONE && r0.cycles == r.cycles,
	      "rtl: a waveform of cycles 50-400 (falling edges evaluated there only): the same cycles (%llu, %llu)",
	      (unsigned long long)r0.cycles, (unsigned long long)r.cycles);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size > 1000, "rtl: FST waveform written (%lld bytes)",
	      (long long)(stat(path, &st) == 0 ? st.st_size : -1));
	FILE *f = fopen(path, "rb");
	unsigned char h = 0;
	if (f) {
		if (fread(&h, 1, 1, f) != 1)
			h = 0xff;
		fclose(f);
	}
	CHECK(h == 0, "rtl: the file starts with an FST header block");
	unlink(path);
}

static void config_tests(void)
{
	static const struct {
		const char *spec, *needle;
	} bad[] = {
		{"default:array_rows=6", "array_rows"},
		{"default:array_cols=100", "array_cols"},
		{"default:sp_banks=3", "sp_banks"},
		{"default:sp_bytes=100000", "sp_bytes"},
		{"default:acc_bytes=1000", "acc_bytes"},
		{"default:dram_beat_bytes=24", "dram_beat_bytes"},
		{"default:dram_bw=64", "dram_bw"},
		{"default:no_such_thing=1", "no_such_thing"},
		{"default:array_rows=abc", "array_rows"},
		{"nonexistent_config", "nonexistent_config"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		loom_hwcfg c;
		char err[512] = "";
		int rc = loom_hwcfg_load(&c, bad[i].spec, NULL, err, sizeof err);
		CHECK(rc == -1 && strstr(err, bad[i].needle), "config '%s' refused: %s", bad[i].spec, err);
	}
	loom_hwcfg c;
	char err[512] = "";
	int rc = loom_hwcfg_load(&c, "default:array_cols=20,acc_bytes=81920", NULL, err, sizeof err);
	CHECK(rc == 0 && c.array_rows == 16 && c.array_cols == 20 && !strncmp(c.name, "custom-", 7),
	      "overrides give a custom configuration (%s)", rc ? err : c.name);
	/* a file with a missing parameter names it */
	char path[128];
	snprintf(path, sizeof path, "/tmp/loom_test_hw_%d.cfg", (int)getpid());
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("array_rows = 8\narray_cols = 8\n", f);
		fclose(f);
	}
	rc = loom_hwcfg_load(&c, path, NULL, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "missing") && strstr(err, path), "incomplete file refused: %s", err);
	unlink(path);
}

int main(int argc, char **argv)
{
	check_init(0);
	const char *spec = "default";
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--hw") && i + 1 < argc)
			spec = argv[++i];
	loom_hwcfg c;
	char err[512];
	if (loom_hwcfg_load(&c, spec, NULL, err, sizeof err)) {
		fprintf(stderr, "test_hw: %s\n", err);
		return 2;
	}
	config_tests();
	backend_tests("cmodel", &c);
	backend_tests("rtl", &c);
	be_res bc[BE_CASES], br[BE_CASES];
	memset(bc, 0xff, sizeof bc);
	memset(br, 0, sizeof br);
	bus_tests("cmodel", &c, bc);
	bus_tests("rtl", &c, br);
	for (int k = 0; k < BE_CASES; k++)
		CHECK(!memcmp(&bc[k], &br[k], sizeof bc[k]),
		      "bus error at the %s: rtl and cmodel agree: status %x/%x cause %u/%u pc 0x%x/0x%x info 0x%x/0x%x "
		      "INSNS %u/%u DRAM_RD_BYTES %u/%u DRAM_WR_BYTES %u/%u output 0x%08x/0x%08x",
		      be_case[k], br[k].status, bc[k].status, br[k].cause, bc[k].cause, br[k].pc, bc[k].pc, br[k].info,
		      bc[k].info, br[k].insns, bc[k].insns, br[k].rd, bc[k].rd, br[k].wr, bc[k].wr, br[k].out_sum,
		      bc[k].out_sum);
	wave_tests(&c);
	return check_report();
}
