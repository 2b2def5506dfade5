/* test_area.c - the area and energy model of sweep/ (sweep/tech.h,
 * sweep/area.h, sweep/energy.h):
 *   - the technology file: configs/tech/45nm.txt reads back its figures
 *     (units converted), and broken copies of it fail with a message naming
 *     the file, the line and the key (a bad unit, a missing key, a negative
 *     value, an unknown or repeated key, no source, no unit, no number);
 *   - the SRAM energy interpolation meets the technology's points;
 *   - energy: each event class priced as docs/DSE.md says, the breakdown
 *     adds up, events scale linearly;
 *   - area with tests/unit/yosys_stub.sh as Yosys (LOOM_YOSYS): cell types
 *     priced, a bigger configuration has more area, the second call is
 *     served from the cache without running Yosys, an unknown cell type and
 *     a wrong macro count are errors;
 *   - with --yosys: the same ordering and cache with the real Yosys on two
 *     configurations (minutes; make test-full).
 * Ends with "N passed, M failed". */
#include "check.h"
#include "sweep/area.h"
#include "sweep/energy.h"
#include "sweep/tech.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[256];

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-12; }

/* the default technology file with line `from` replaced by `to` (NULL: dropped) */
static const char *variant(const char *name, const char *from, const char *to)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s.txt", tmpdir, name);
	FILE *in = fopen(sweep_tech_default(), "r"), *out = fopen(path, "w");
	char line[1024];
	int hit = 0;
	while (in && out && fgets(line, sizeof line, in)) {
		if (!hit && !strncmp(line, from, strlen(from))) {
			hit = 1;
			if (to)
				fprintf(out, "%s\n", to);
			continue;
		}
		fputs(line, out);
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	CHECK(hit, "test setup: '%s' is a line of %s", from, sweep_tech_default());
	return path;
}

/* loading file fails, and the message names each of want[] */
static void bad_file(const char *what, const char *path, const char *const *want, size_t n)
{
	sweep_tech t;
	char err[2048] = "";
	int rc = sweep_tech_load(&t, path, err, sizeof err);
	int all = rc == -1 && strstr(err, path);
	for (size_t i = 0; i < n; i++)
		all = all && strstr(err, want[i]);
	CHECK(all, "%s: refused with a message naming the file and %s... (%s)", what, want[0], err);
}

static void test_tech(sweep_tech *t)
{
	char err[2048] = "";
	CHECK(sweep_tech_load(t, NULL, err, sizeof err) == 0, "the default technology file loads (%s)",
	      sweep_tech_load(t, NULL, err, sizeof err) ? err : sweep_tech_default());
	CHECK(near(t->nand2, 0.798) && near(t->dff, 4.522) && near(t->dffr, 5.32) && near(t->mux2, 1.862) &&
		      near(t->latch, 2.66),
	      "standard cells in um^2 (NAND2 %g, DFF %g, DFFR %g, MUX2 %g, latch %g)", t->nand2, t->dff, t->dffr, t->mux2,
	      t->latch);
	CHECK(near(t->sram_bit, 1.0 / 0.826), "0.826 Mbit/mm2 -> %g um^2 per bit", t->sram_bit);
	CHECK(near(t->mul8, 0.2) && near(t->add32, 0.1) && near(t->mul32, 3.1) && near(t->sram64_8k, 10) &&
		      near(t->sram64_32k, 20) && near(t->sram64_1m, 100),
	      "Horowitz's energies in pJ");
	CHECK(near(t->dram64, 1300), "1.3 nJ -> %g pJ", t->dram64);

	const char *p = variant("unit", "area.inv", "area.inv = 0.532 pJ   # a wrong unit");
	bad_file("an energy unit on an area", p, (const char *[]){"area.inv", "unit 'pJ'", ":13:", "um2"}, 4);
	p = variant("nounit", "energy.mul8", "energy.mul8 = 0.2   # no unit");
	bad_file("no unit", p, (const char *[]){"energy.mul8", "no unit", "pJ"}, 3);
	p = variant("missing", "energy.mul32", NULL);
	bad_file("a missing key", p, (const char *[]){"energy.mul32", "missing"}, 2);
	p = variant("negative", "energy.mul8", "energy.mul8 = -0.2 pJ   # negative");
	bad_file("a negative value", p, (const char *[]){"energy.mul8", "not positive"}, 2);
	p = variant("zero", "sram.density", "sram.density = 0 Mbit/mm2   # zero");
	bad_file("a zero density", p, (const char *[]){"sram.density", "not positive"}, 2);
	p = variant("nan", "area.dff", "area.dff = big um2   # text");
	bad_file("not a number", p, (const char *[]){"area.dff", "not a number"}, 2);
	p = variant("unknown", "area.xor2", "area.xor3 = 1.6 um2   # a typo");
	bad_file("an unknown key", p, (const char *[]){"area.xor3", "unknown key"}, 2);
	p = variant("nosource", "energy.dram64", "energy.dram64 = 1.3 nJ");
	bad_file("a figure without its source", p, (const char *[]){"energy.dram64", "no source"}, 2);
	p = variant("twice", "area.or2", "area.or2 = 1.064 um2   # once\narea.or2 = 1.1 um2   # twice");
	bad_file("a key twice", p, (const char *[]){"area.or2", "already set on line"}, 2);
	p = variant("density", "sram.density", "sram.density = 0.826 um2   # an area, not a density");
	bad_file("an area unit on a density", p, (const char *[]){"sram.density", "unit 'um2'", "Mbit/mm2"}, 3);
	bad_file("a file that is not there", "/nonexistent/tech.txt", (const char *[]){"No such file"}, 1);
}

static void test_energy(const sweep_tech *t)
{
	CHECK(near(sweep_sram_e64(t, 8192), 10) && near(sweep_sram_e64(t, 32768), 20) &&
		      near(sweep_sram_e64(t, 1048576), 100),
	      "SRAM 64-bit access energy meets 10, 20, 100 pJ at 8 KB, 32 KB, 1 MB");
	CHECK(near(sweep_sram_e64(t, 16384), 10 * sqrt(2.0)) && near(sweep_sram_e64(t, 2048), 5),
	      "log-log interpolation: 16 KB %g pJ (10 sqrt 2), 2 KB %g pJ (extended: 5)", sweep_sram_e64(t, 16384),
	      sweep_sram_e64(t, 2048));
	double prev = 0;
	int mono = 1;
	for (double b = 1024; b <= 16e6; b *= 1.5) {
		mono = mono && sweep_sram_e64(t, b) > prev;
		prev = sweep_sram_e64(t, b);
	}
	CHECK(mono, "SRAM energy grows with the macro");

	loom_hwcfg cfg;
	char err[1024] = "";
	if (!CHECK(loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err) == 0, "configuration default (%s)", err))
		return;
	/* default: 16x16, 4 banks of 64 KB, 1024 accumulator lines of 4 KB per lane */
	sweep_events ev = {.macs = 1000, .dram_rd = 800, .dram_wr = 80, .sp_rd = 10, .sp_wr = 5, .acc_rd = 3,
			   .acc_wr = 4, .vec_lines = 7, .rq_values = 64};
	sweep_energy e;
	sweep_energy_of(t, &cfg, &ev, &e);
	double e64k = sweep_sram_e64(t, 65536), e4k = sweep_sram_e64(t, 4096);
	CHECK(near(e.e_mac, 0.3) && near(e.mac, 300), "MAC: 8-bit multiply + 32-bit add = %g pJ, 1000 MACs %g pJ",
	      e.e_mac, e.mac);
	CHECK(near(e.e_sp_line, 2 * e64k) && near(e.sp, 15 * 2 * e64k),
	      "scratchpad line: 128 bits of a 64 KB bank = %g pJ", e.e_sp_line);
	CHECK(near(e.e_acc_line, 8 * e4k) && near(e.acc, 7 * 8 * e4k),
	      "accumulator line: 16 lanes x 32 bits of a 4 KB lane = %g pJ", e.e_acc_line);
	CHECK(near(e.e_dram_byte, 162.5) && near(e.dram, 880 * 162.5), "DRAM: 1.3 nJ / 8 = %g pJ per byte",
	      e.e_dram_byte);
	CHECK(near(e.e_vec_line, 16 * 0.3) && near(e.e_rq_value, 3.4) && near(e.other, 7 * 4.8 + 64 * 3.4),
	      "vector line %g pJ, requantized value %g pJ", e.e_vec_line, e.e_rq_value);
	CHECK(near(e.total, e.mac + e.sram + e.dram + e.other) && near(e.sram, e.sp + e.acc) &&
		      near(e.other, e.vec + e.rq),
	      "the breakdown adds up to %g pJ", e.total);
	sweep_events ev2 = ev;
	ev2.macs *= 2, ev2.dram_rd *= 2, ev2.dram_wr *= 2, ev2.sp_rd *= 2, ev2.sp_wr *= 2, ev2.acc_rd *= 2,
		ev2.acc_wr *= 2, ev2.vec_lines *= 2, ev2.rq_values *= 2;
	sweep_energy e2;
	sweep_energy_of(t, &cfg, &ev2, &e2);
	CHECK(near(e2.total, 2 * e.total), "twice the events, twice the energy");
	uint32_t ctr[LOOM_FW_CTRS] = {0}, evt[LOOM_FW_EVTS] = {1, 2, 3, 4, 5, 6};
	ctr[LOOM_CTR_MACS_LO] = 5, ctr[LOOM_CTR_MACS_HI] = 1, ctr[LOOM_CTR_DRAM_RD_BYTES] = 7;
	sweep_events j = {0};
	sweep_events_add_job(&j, ctr, evt);
	sweep_events_add_job(&j, ctr, evt);
	CHECK(j.jobs == 2 && j.macs == 2 * ((1ull << 32) + 5) && j.dram_rd == 14 && j.sp_rd == 2 && j.rq_values == 12,
	      "a job's completion counters add up (64-bit MACS, every event counter)");
}

static int area_of(const char *spec, const sweep_tech *t, const char *cache, sweep_area_t *a, char *err, size_t len)
{
	loom_hwcfg cfg;
	if (loom_hwcfg_load(&cfg, spec, NULL, err, len))
		return -1;
	return sweep_area(&cfg, t, cache, a, err, len);
}

static long runs(const char *file)
{
	FILE *f = fopen(file, "r");
	long n = 0;
	for (int c; f && (c = fgetc(f)) != EOF;)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* two configurations, small first, through whichever Yosys is set */
static void area_pair(const char *what, const sweep_tech *t, const char *cache, const char *a_spec,
		      const char *b_spec, const char *runs_file)
{
	sweep_area_t a, b, a2;
	char err[2048] = "";
	if (!CHECK(area_of(a_spec, t, cache, &a, err, sizeof err) == 0, "%s: area of %s (%s)", what, a_spec,
		   err) ||
	    !CHECK(area_of(b_spec, t, cache, &b, err, sizeof err) == 0, "%s: area of %s (%s)", what, b_spec, err))
		return;
	printf("     %s: %llu gates, %llu flops, logic %.4f mm2, SRAM %llu bits %.4f mm2, total %.4f mm2, %.1f s\n",
	       a.config, (unsigned long long)a.logic_cells, (unsigned long long)a.flops, a.logic_um2 / 1e6,
	       (unsigned long long)a.sram_bits, a.sram_um2 / 1e6, a.total_mm2, a.synth_s);
	printf("     %s: %llu gates, %llu flops, logic %.4f mm2, SRAM %llu bits %.4f mm2, total %.4f mm2, %.1f s\n",
	       b.config, (unsigned long long)b.logic_cells, (unsigned long long)b.flops, b.logic_um2 / 1e6,
	       (unsigned long long)b.sram_bits, b.sram_um2 / 1e6, b.total_mm2, b.synth_s);
	CHECK(a.logic_cells > 0 && a.flops > 0 && a.logic_um2 > a.flop_um2 && a.flop_um2 > 0 &&
		      near(a.total_mm2, (a.logic_um2 + a.sram_um2) / 1e6),
	      "%s: cells, flops and the total of %s are consistent", what, a.config);
	CHECK(b.logic_cells > a.logic_cells && b.flops > a.flops && b.logic_um2 > a.logic_um2 &&
		      b.sram_bits > a.sram_bits && b.total_mm2 > a.total_mm2,
	      "%s: the bigger array and SRAM of %s have more area than %s (%.4f > %.4f mm2)", what, b.config,
	      a.config, b.total_mm2, a.total_mm2);
	long n0 = runs_file ? runs(runs_file) : 0;
	clock_t c0 = clock();
	double w0 = (double)time(NULL);
	int rc = area_of(a_spec, t, cache, &a2, err, sizeof err);
	double w1 = (double)time(NULL) - w0 + (double)(clock() - c0) / CLOCKS_PER_SEC;
	CHECK(rc == 0 && a2.cached && near(a2.total_mm2, a.total_mm2) && a2.logic_cells == a.logic_cells &&
		      (!runs_file || runs(runs_file) == n0) && w1 < 2,
	      "%s: the second call for %s comes from the cache %s (no Yosys run, %.2f s)", what, a.config,
	      a2.cache_file, w1);
	CHECK(!a.cached && a2.cached && !strcmp(a.source, a2.source) && strstr(a2.source, a2.cache_file) &&
		      strstr(a2.source, t->path),
	      "%s: the source says where the numbers come from: %s", what, a2.source);
}

static void test_area_stub(const sweep_tech *t)
{
	char cache[300], runs_file[300], stub[1024];
	snprintf(cache, sizeof cache, "%s/area", tmpdir);
	snprintf(runs_file, sizeof runs_file, "%s/yosys_runs", tmpdir);
	snprintf(stub, sizeof stub, "%s/tests/unit/yosys_stub.sh", loom_root_dir());
	setenv("LOOM_YOSYS", stub, 1);
	setenv("YOSYS_STUB_RUNS", runs_file, 1);
	area_pair("stub Yosys", t, cache, "small", "default", runs_file);
	CHECK(runs(runs_file) == 2, "stub Yosys: one run per configuration (%ld)", runs(runs_file));

	/* small's counts by hand: 8x8 */
	sweep_area_t a;
	char err[2048] = "";
	if (area_of("small", t, cache, &a, err, sizeof err) == 0) {
		double logic = (1000 + 300 * 64) * t->xor2 + (2000 + 350 * 64) * t->nand2;
		double flops = (900 + 40 * 64) * t->dff + (100 + 8 * 64) * (t->dffr + t->mux2) +
			       100 * (t->dff + t->mux2 + t->and2) + 4 * t->latch;
		uint64_t bits = 8ull * (65536 + 16384 + 65536 + 32768);
		CHECK(a.logic_cells == 1000 + 300 * 64 + 2000 + 350 * 64 && a.flops == 900 + 40 * 64 + 100 + 8 * 64 + 100 + 4 &&
			      near(a.flop_um2, flops) && near(a.logic_um2, logic + flops) && a.sram_bits == bits &&
			      near(a.sram_um2, (double)bits * t->sram_bit),
		      "small priced cell by cell: %.1f um2 logic (%.1f flops), %llu SRAM bits", a.logic_um2, a.flop_um2,
		      (unsigned long long)a.sram_bits);
	}
	/* errors; a fresh cache directory so that the stub runs */
	snprintf(cache, sizeof cache, "%s/area2", tmpdir);
	setenv("YOSYS_STUB_EXTRA", "$_AOI3_                      12", 1);
	int rc = area_of("odd", t, cache, &a, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "$_AOI3_"), "a cell type without an area is an error naming it (%s)", err);
	snprintf(cache, sizeof cache, "%s/area3", tmpdir);
	setenv("YOSYS_STUB_EXTRA", "npu_tcm                      1", 1);
	rc = area_of("odd", t, cache, &a, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "npu_tcm"), "macros that do not match the configuration are an error (%s)", err);
	unsetenv("YOSYS_STUB_EXTRA");
	setenv("LOOM_YOSYS", "/nonexistent/yosys", 1);
	snprintf(cache, sizeof cache, "%s/area4", tmpdir);
	rc = area_of("odd", t, cache, &a, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "Yosys failed"), "no Yosys: an error saying so (%s)", err);
	unsetenv("LOOM_YOSYS");
	unsetenv("YOSYS_STUB_RUNS");
}

int main(int argc, char **argv)
{
	check_init(0);
	snprintf(tmpdir, sizeof tmpdir, "/tmp/loom_test_sweep.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	sweep_tech t;
	test_tech(&t);
	test_energy(&t);
	test_area_stub(&t);
	if (argc > 1 && !strcmp(argv[1], "--yosys")) /* the real thing, cached in build/area */
		area_pair("Yosys", &t, NULL, "small", "small:array_rows=16,array_cols=16,sp_bytes=131072,acc_bytes=65536",
			  NULL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_report();
}
