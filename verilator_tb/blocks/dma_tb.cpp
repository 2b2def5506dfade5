// dma_tb.cpp - self-checking block test of rtl/npu_dma_load.sv and
// rtl/npu_dma_store.sv (with rtl/npu_requant.sv) through dma_tb_top.sv.
//
// The C++ side is the whole environment: a behavioural DRAM (AXI slave with
// random AR/AW/W ready, random read and write-response latency and random
// gaps in r_valid / b_valid), a scratchpad with random grant refusals (one
// write client = load, one read client = store, data the cycle after the
// grant) and an accumulator (load writes, store reads, data next cycle). A C
// reference of the LOAD / STORE / MARK pseudo-code of docs/ISA.md (requant
// through loom_requant of common/isa.c) runs at each done_o and the SP / ACC
// (load) or DRAM (store) is compared then, so done_o is also checked to come
// only after the instruction's last write (load) or last B response (store).
// Every instruction is validated by loom_insn_check first.
//
// Each engine may hold two instructions (the next one is accepted while the
// previous one still has data in flight); the bench offers the next one as
// soon as it can and tracks what each engine holds: done_o must come once
// per instruction, in acceptance order; busy_o exactly while something is
// held; insn_ready_o never with two held (load: exactly then, outside an
// abort). Bus bursts are tagged with their instruction, so done_o is also
// checked against bursts of that instruction still on the bus. The DRAM
// writes of a store are logged per instruction and applied to the compared
// image ("commit") at its done_o, since the next store may already write.
//
// Checked on every cycle: AR/AW/W payload stable while valid and not ready;
// SP requests held until granted (except after abort); W never before its
// AW; each AR/AW burst equal to the expected one, in order (loads: aligned
// contiguous rows coalesced into bursts of up to 16 beats within a 4 KiB
// page, see ld_bursts); at most DmaOutstanding read bursts in flight and
// DmaWrOutstanding write bursts waiting for their B response; W strobes
// exactly the row's bytes and w_last on the last beat; no output of either engine changes when the inputs of the same
// cycle change (no combinational input-to-output path). (done_o may be high
// in consecutive cycles, for consecutive instructions.)
//
// abort_i aborts everything an engine holds. The bench does not offer an
// instruction while one that will be aborted is held, nor such an
// instruction while another is held (as the command processor, which aborts
// only at the end of a run), except for items marked overlap, which test an
// abort hitting two instructions.
//
// Memory regions keep the two engines independent so that they can run
// concurrently: loads read DRAM [0, 1 MiB) and write the lower half of SP and
// ACC; stores and MARK read the upper half of SP and ACC and write DRAM
// [1 MiB, 2 MiB).
//
// The configuration is that of the npu_pkg.sv the model was built with
// (found by its fingerprint among configs/*.cfg and tests/configs/*.cfg, or
// the spec in $LOOM_HW,
// e.g. LOOM_HW=default:dma_outstanding=32). Build and run from /work/main;
// PKG is the generated package, build/hw/default/npu_pkg.sv for default, or
// another config's, e.g. small:
//   make build/bin/gen_hw
//   mkdir -p /tmp/pkg_small && build/bin/gen_hw small /tmp/pkg_small
//   PKG=/tmp/pkg_small/npu_pkg.sv
//   verilator --cc --exe --build -O3 -j 2 -Wall --assert --top-module dma_tb_top \
//     -Mdir /tmp/dtb_small -CFLAGS "-I$PWD/include" $PWD/verilator_tb/lint.vlt \
//     $PKG $PWD/rtl/npu_requant.sv $PWD/rtl/npu_dma_load.sv $PWD/rtl/npu_dma_store.sv \
//     $PWD/verilator_tb/blocks/dma_tb_top.sv $PWD/verilator_tb/blocks/dma_tb.cpp \
//     $PWD/verilator_tb/blocks/dma_tb_ref.cpp $PWD/verilator_tb/blocks/dma_tb_bench.cpp \
//     $PWD/common/isa.c $PWD/common/hwcfg.c
//   /tmp/dtb_small/Vdma_tb_top [seed (1)] [random_programs (60)]
// Absolute source paths: Verilator's make runs inside -Mdir. lint.vlt holds
// the project's waiver for the generated package's unused parameters.
// (make block BLK=dma HW=small does all this into build/blocks/small/dma_tb.)
//
// This file holds the cases, the throughput measurements and main;
// dma_tb_ref.cpp the reference and the generators, dma_tb_bench.cpp the
// bench (dma_tb.h).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <glob.h>
#include <memory>
#include <string>
#include <vector>

#include "dma_tb.h"

using namespace dma_tb;

namespace {

// ------------------------------------------------------------ the cases
struct Case {
	const char *name;
	void (*setup)(Bench &b);
	long max_cycles;
};

void add(Bench &b, bool store, const loom_insn &in, int gap = 0, int abort_after = -1, bool level = false,
	 bool overlap = false)
{
	Item it;
	it.in = in;
	it.gap = gap;
	it.abort_after = abort_after;
	it.abort_level = level;
	it.overlap = overlap;
	if (abort_after >= 0)
		b.snapshots = true;
	(store ? b.st : b.ld).q.push_back(it);
}

void case_load_sp_2d(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 0;
		sh.n3max = 1;
		sh.n1max = 7;
		sh.n2max = 5;
		loom_insn in = gen_load(sh);
		// all four paddings, non-zero PAD_VALUE
		fset(in, LF(PAD_TOP), rr(1, 2));
		fset(in, LF(PAD_BOTTOM), rr(1, 2));
		fset(in, LF(PAD_LEFT), rr(1, 2));
		fset(in, LF(PAD_RIGHT), rr(1, 2));
		fset(in, LF(PAD_VALUE), rr(1, 255));
		fset(in, LF(MEM_ADDR), 0);
		check_legal(in);
		add(b, false, in, rn(3));
	}
}

void case_load_sp_3d(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 0;
		sh.n3max = 4;
		sh.n1max = 5;
		sh.padmax = 3;
		loom_insn in = gen_load(sh);
		fset(in, LF(N3), rr(2, 4));
		fset(in, LF(MEM_ADDR), 0);
		check_legal(in);
		add(b, false, in, rn(3));
	}
}

void case_load_small_rows(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 0;
		sh.rw = (int)rr(1, R / 4 > 1 ? R / 4 - 1 : 1);
		sh.n1max = 12;
		loom_insn in = gen_load(sh);
		fset(in, LF(STRIDE1), 4 * rr(1, 3));                // unaligned, overlapping rows
		fset(in, LF(DRAM_ADDR), 4 * rn(4096) + 4 * rr(1, B / 4 - 1));
		check_legal(in);
		add(b, false, in, rn(2));
	}
}

void case_load_acc(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 1;
		if (i < 3)
			sh.rw = (int)C; // whole ACC line, unaligned: widest burst
		loom_insn in = gen_load(sh);
		add(b, false, in, rn(3));
	}
}

void case_store_src(Bench &b, int src)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		StoreShape sh;
		sh.src = src;
		if (i < 3)
			sh.rw = 1000; // clamps to the widest row
		add(b, true, gen_store(sh), rn(3));
	}
}
void case_store_sp(Bench &b) { case_store_src(b, 0); }
void case_store_acc(Bench &b) { case_store_src(b, 1); }
void case_store_requant(Bench &b) { case_store_src(b, 2); }

void case_mark(Bench &b)
{
	b.prof = random_prof();
	for (unsigned off = 0; off < B; off += 4)
		add(b, true, gen_mark((int)off), rn(3));
	for (int i = 0; i < 4; i++) // back to back with stores
		add(b, true, i & 1 ? gen_mark(-1) : gen_store(StoreShape{}));
}

void case_empty(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 4; i++) {
		add(b, false, gen_empty(false), rn(2));
		add(b, true, gen_empty(true), rn(2));
		add(b, false, gen_load(LoadShape{}));
		add(b, true, gen_store(StoreShape{}));
	}
}

void case_back_to_back(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(1, 8)) : random_prof();
	for (int i = 0; i < 30; i++) {
		add(b, false, gen_load(LoadShape{}));
		add(b, true, chance(0.15) ? gen_mark(-1) : gen_store(StoreShape{}));
	}
}

void case_abort(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 10; i++) {
		LoadShape ls;
		ls.n1max = 12;
		StoreShape ss;
		ss.n1max = 12;
		bool lvl = chance(0.5);
		add(b, false, gen_load(ls), rn(3), (int)rr(1, 150), lvl);
		add(b, false, gen_load(LoadShape{}), rn(3)); // the engine still works
		add(b, true, chance(0.2) ? gen_mark(-1) : gen_store(ss), rn(3), (int)rr(1, 150), !lvl);
		add(b, true, gen_store(StoreShape{}), rn(3));
	}
}

// an abort that hits two instructions held at once (the one before the
// aborting one may still be in flight, the one after may be accepted)
void case_abort_two(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(10, 60)) : random_prof();
	for (int i = 0; i < 10; i++) {
		LoadShape ls;
		ls.n1max = 12;
		StoreShape ss;
		ss.n1max = 12;
		bool lvl = chance(0.5);
		add(b, false, gen_load(ls));
		add(b, false, gen_load(ls), 0, (int)rr(1, 60), lvl, true);
		add(b, false, gen_load(LoadShape{}), 0, -1, false, true);
		add(b, false, gen_load(LoadShape{}), rn(3));
		add(b, true, gen_store(ss));
		add(b, true, chance(0.2) ? gen_mark(-1) : gen_store(ss), 0, (int)rr(1, 60), !lvl, true);
		add(b, true, gen_store(StoreShape{}), 0, -1, false, true);
		add(b, true, gen_store(StoreShape{}), rn(3));
	}
}

// loads whose rows coalesce: beat-aligned rows continuing each other in DRAM
// (within a dimension and across its boundaries), bursts running into the
// 16-beat limit and 4 KiB boundaries, padding between rows, and a few that
// must not coalesce (a gap, an unaligned start or length)
loom_insn gen_load_coalesce()
{
	for (;;) {
		uint32_t tgt = (R >= B && chance(0.5)) ? 0 : 1;
		uint32_t maxw = tgt ? C : R / 4, unit = B / 4; // words of a line, of a beat
		uint32_t rw = unit * rr(1, maxw / unit);
		if (chance(0.1))
			rw = rr(1, maxw);
		uint32_t n0 = 4 * rw;
		uint32_t n1 = rr(1, 40), n2 = rr(1, 4), n3 = rr(1, 3);
		uint32_t pt = 0, pb = 0, pl = 0, pr = 0;
		if (chance(0.3)) {
			pt = rn(2);
			pb = rn(2);
			pl = rn(2);
			pr = rn(2);
		}
		uint64_t lines = (uint64_t)n3 * (pt + n2 + pb) * (pl + n1 + pr);
		uint32_t limit = (tgt ? cfg.acc_lines : cfg.sp_lines) / 2;
		if (lines > limit)
			continue;
		uint32_t s1 = n0, s2 = n1 * n0, s3 = n2 * n1 * n0; // one contiguous block
		switch (rn(6)) {
		case 0: s2 += B * rr(1, 3); s3 = n2 * s2; break; // gap between planes' rows
		case 1: s3 += B; break;                          // gap between planes
		case 2: s1 += B; s2 = n1 * s1; s3 = n2 * s2; break; // no coalescing at all
		default: break;
		}
		uint64_t span = (uint64_t)(n3 - 1) * s3 + (uint64_t)(n2 - 1) * s2 + (uint64_t)(n1 - 1) * s1 + n0;
		if (span + 8192 > LD_DRAM_END)
			continue;
		// start on or a few beats before a 4 KiB boundary
		uint32_t da = 4096 * (1 + rn((uint32_t)((LD_DRAM_END - span - 8192) / 4096))) - B * rn(20);
		if (chance(0.1) && unit > 1)
			da += 4 * rr(1, unit - 1);
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
		fset(in, LF(TARGET), tgt);
		fset(in, LF(PAD_VALUE), tgt ? 0 : rr(1, 255));
		fset(in, LF(ROW_WORDS), rw);
		fset(in, LF(DRAM_ADDR), da);
		fset(in, LF(MEM_ADDR), rn((uint32_t)(limit - lines + 1)));
		fset(in, LF(STRIDE1), s1);
		fset(in, LF(STRIDE2), s2);
		fset(in, LF(STRIDE3), s3);
		fset(in, LF(N1), n1);
		fset(in, LF(N2), n2);
		fset(in, LF(N3), n3);
		fset(in, LF(PAD_TOP), pt);
		fset(in, LF(PAD_BOTTOM), pb);
		fset(in, LF(PAD_LEFT), pl);
		fset(in, LF(PAD_RIGHT), pr);
		check_legal(in);
		return in;
	}
}

void case_load_coalesce(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(1, 40)) : random_prof();
	for (int i = 0; i < 16; i++)
		add(b, false, gen_load_coalesce(), chance(0.5) ? 0 : (int)rn(3));
}

// many short instructions back to back on a long latency: two held at once
void case_load_overlap(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(20, 60)) : random_prof();
	for (int i = 0; i < 30; i++) {
		LoadShape sh;
		sh.n1max = 3;
		sh.n2max = 2;
		sh.n3max = 2;
		sh.padmax = 1;
		loom_insn in = rn(8) == 0 ? gen_empty(false) : rn(4) == 0 ? gen_load_coalesce() : gen_load(sh);
		add(b, false, in);
	}
}

void case_store_overlap(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(20, 60)) : random_prof();
	for (int i = 0; i < 30; i++) {
		StoreShape sh;
		sh.n1max = 3;
		sh.n2max = 2;
		sh.n3max = 2;
		loom_insn in = rn(8) == 0 ? gen_empty(true) : rn(6) == 0 ? gen_mark(-1) : gen_store(sh);
		add(b, true, in);
	}
}

void case_random(Bench &b)
{
	b.prof = chance(0.2) ? fast_prof(rr(1, 30)) : random_prof();
	int n = (int)rr(5, 25);
	for (int i = 0; i < n; i++) {
		int ab = chance(0.1) ? (int)rr(1, 200) : -1;
		bool ov = chance(0.3);
		if (chance(0.5))
			add(b, false, chance(0.2) ? gen_load_coalesce() : gen_load(LoadShape{}),
			    chance(0.5) ? 0 : (int)rn(10), ab, chance(0.5), ov);
		else
			add(b, true, chance(0.1) ? gen_mark(-1) : gen_store(StoreShape{}), chance(0.5) ? 0 : (int)rn(10),
			    ab, chance(0.5), ov);
	}
}

// ------------------------------------------------------------ throughput
// Instructions on an ideal bus (always ready, fixed latency), offered back
// to back: beats on the bus per cycle from the first accept to the last
// done.
struct Tput {
	std::string what;
	double beats_per_cycle;
	long beats, cycles;
};

Tput measure(VerilatedContext *ctx, const std::string &what, bool store, const std::vector<loom_insn> &ins,
	     unsigned lat)
{
	Bench b(ctx);
	b.init_memories();
	b.reset();
	b.prof = fast_prof(lat);
	for (auto &in : ins)
		add(b, store, in);
	bool ok = b.run(1000000);
	const Bench::Drv &d = store ? b.st : b.ld;
	long cyc = d.last_done - d.first_accept;
	long beats = store ? b.st_beats : b.ld_beats;
	if (!ok)
		for (auto &e : b.errors)
			printf("  %s\n", e.c_str());
	return {what, ok && cyc ? (double)beats / (double)cyc : 0.0, beats, cyc};
}

// k LOADs of n1 x n2 rows of rw words each (row stride s1, plane stride
// n1 * s1), one after the other in DRAM and in SP/ACC
std::vector<loom_insn> load_seq(uint32_t tgt, uint32_t rw, uint32_t s1, uint32_t n1, uint32_t n2, unsigned k)
{
	std::vector<loom_insn> v;
	for (unsigned i = 0; i < k; i++) {
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
		fset(in, LF(TARGET), tgt);
		fset(in, LF(ROW_WORDS), rw);
		fset(in, LF(DRAM_ADDR), 4096 + i * n2 * n1 * s1);
		fset(in, LF(MEM_ADDR), i * n1 * n2);
		fset(in, LF(STRIDE1), s1);
		fset(in, LF(STRIDE2), n1 * s1);
		fset(in, LF(N1), n1);
		fset(in, LF(N2), n2);
		fset(in, LF(N3), 1);
		check_legal(in);
		v.push_back(in);
	}
	return v;
}

std::vector<loom_insn> store_seq(uint32_t src, uint32_t rw, uint32_t s1, uint32_t n1, uint32_t n2, unsigned k)
{
	std::vector<loom_insn> v;
	uint32_t half = (src ? cfg.acc_lines : cfg.sp_lines) / 2;
	for (unsigned i = 0; i < k; i++) {
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_STORE);
		fset(in, SF(SOURCE), src);
		fset(in, SF(ROW_WORDS), rw);
		fset(in, SF(DRAM_ADDR), ST_DRAM_BASE + i * n2 * n1 * s1);
		fset(in, SF(MEM_ADDR), half + i * n1 * n2);
		fset(in, SF(STRIDE1), s1);
		fset(in, SF(STRIDE2), n1 * s1);
		fset(in, SF(N1), n1);
		fset(in, SF(N2), n2);
		fset(in, SF(N3), 1);
		check_legal(in);
		v.push_back(in);
	}
	return v;
}


// the configuration of the model: the one of configs/ (or $LOOM_HW) whose
// fingerprint it has; false (after the report line) when none
bool find_config(VerilatedContext *ctx)
{
	uint32_t fp;
	{
		Vdma_tb_top probe(ctx);
		probe.eval();
		fp = probe.cfg_fingerprint_o;
		probe.final();
	}
	std::vector<std::string> roots;
	if (getenv("LOOM_ROOT"))
		roots.push_back(getenv("LOOM_ROOT"));
	{
		std::string f = __FILE__; // .../verilator_tb/blocks/dma_tb.cpp
		for (int up = 0; up < 3; up++) {
			size_t s = f.rfind('/');
			f = s == std::string::npos ? "." : f.substr(0, s);
		}
		roots.push_back(f);
	}
	roots.push_back(".");
	char err[256];
	std::vector<std::string> specs;
	if (getenv("LOOM_HW"))
		specs.push_back(getenv("LOOM_HW")); // e.g. default:dma_outstanding=32
	for (const char *name : {"default", "small", "odd", "large"})
		specs.push_back(name);
	for (auto &root : roots) {
		std::vector<std::string> rs = specs;
		// the configurations only the tests use (make block BLK=dma HW=limits)
		glob_t g;
		if (glob((root + "/tests/configs/*.cfg").c_str(), 0, nullptr, &g) == 0)
			for (size_t i = 0; i < g.gl_pathc; i++)
				rs.push_back(g.gl_pathv[i]);
		globfree(&g);
		for (auto &spec : rs)
			if (loom_hwcfg_load(&cfg, spec.c_str(), root.c_str(), err, sizeof err) == 0 &&
			    cfg.fingerprint == fp)
				return true;
	}
	printf("dma_tb: no configs/*.cfg, tests/configs/*.cfg (nor $LOOM_HW) has fingerprint %08x (set LOOM_ROOT, "
	       "LOOM_HW)\n"
	       "0 passed, 1 failed\n",
	       fp);
	return false;
}

struct Tally {
	int passed = 0, failed = 0;
	void count(bool ok)
	{
		if (ok)
			passed++;
		else
			failed++;
	}
};

// the directed cases, nrandom random programs, the coverage they reached
void run_cases(VerilatedContext *ctx, int nrandom, Tally &n)
{
	static const Case cases[] = {
		{"load sp 2-D, four paddings, pad value", case_load_sp_2d, 2000000},
		{"load sp 3-D strided", case_load_sp_3d, 2000000},
		{"load sp short unaligned rows", case_load_small_rows, 2000000},
		{"load acc", case_load_acc, 2000000},
		{"store sp strided", case_store_sp, 2000000},
		{"store acc raw", case_store_acc, 2000000},
		{"store acc requant", case_store_requant, 2000000},
		{"mark at every offset", case_mark, 2000000},
		{"empty instructions", case_empty, 2000000},
		{"back to back, both engines", case_back_to_back, 4000000},
		{"abort mid-instruction", case_abort, 4000000},
		{"abort with two instructions held", case_abort_two, 4000000},
		{"load coalesced bursts, 4 KiB and 16-beat limits", case_load_coalesce, 4000000},
		{"load short instructions overlapped", case_load_overlap, 4000000},
		{"store short instructions overlapped", case_store_overlap, 4000000},
	};
	size_t max_held = 0;
	auto run_case = [&](const char *name, void (*setup)(Bench &), long maxc) {
		Bench b(ctx);
		b.init_memories();
		b.reset();
		setup(b);
		bool ok = b.run(maxc);
		max_held = std::max(max_held, std::max(b.ld.max_held, b.st.max_held));
		if (ok && b.ld.done_count + b.ld.abort_count + b.st.done_count + b.st.abort_count == 0) {
			b.error("no instruction completed");
			ok = false;
		}
		n.count(ok);
		if (!ok) {
			printf("FAIL %s\n", name);
			for (size_t i = 0; i < b.errors.size() && i < 8; i++)
				printf("  %s\n", b.errors[i].c_str());
		}
		return ok;
	};
	for (const Case &c : cases) {
		if (run_case(c.name, c.setup, c.max_cycles))
			printf("PASS %s\n", c.name);
	}
	int rfail = 0;
	for (int i = 0; i < nrandom; i++) {
		char name[64];
		snprintf(name, sizeof name, "random program %d", i);
		if (!run_case(name, case_random, 4000000))
			rfail++;
	}
	printf("%s %d random programs\n", rfail ? "FAIL" : "PASS", nrandom);
	Cov c = cov;
	bool ok = max_held == 2 && c.multi_row && c.full && c.page_split && c.overlap_ld && c.overlap_st && c.abort_two;
	printf("%s coverage: multi-row bursts %ld, %u-beat %ld, split at 4 KiB %ld; accepted while "
	       "holding one: load %ld, store %ld; aborts of two held %ld\n",
	       ok ? "PASS" : "FAIL", c.multi_row, MAX_BURST, c.full, c.page_split, c.overlap_ld, c.overlap_st,
	       c.abort_two);
	n.count(ok);
}

// throughput on an ideal bus
void tput_ideal(VerilatedContext *ctx, Tally &n)
{
	LoadShape ls;
	ls.tgt = 0;
	ls.rw = (int)(R / 4);
	ls.pads = false;
	loom_insn in = gen_load(ls);
	fset(in, LF(N1), 64);
	fset(in, LF(N2), 8);
	fset(in, LF(N3), 1);
	fset(in, LF(MEM_ADDR), 0);
	fset(in, LF(STRIDE1), R);
	fset(in, LF(STRIDE2), 64 * R);
	fset(in, LF(DRAM_ADDR), 4096);
	check_legal(in);
	loom_insn ina = in;
	fset(ina, LF(TARGET), 1);
	fset(ina, LF(PAD_VALUE), 0);
	fset(ina, LF(ROW_WORDS), C);
	fset(ina, LF(STRIDE1), 4 * C);
	fset(ina, LF(STRIDE2), 64 * 4 * C);
	fset(ina, LF(N2), 2);
	check_legal(ina);
	StoreShape ss;
	ss.src = 0;
	loom_insn st = gen_store(ss);
	fset(st, SF(ROW_WORDS), R / 4);
	fset(st, SF(N1), 64);
	fset(st, SF(N2), 8);
	fset(st, SF(N3), 1);
	fset(st, SF(STRIDE1), R);
	fset(st, SF(STRIDE2), 64 * R);
	fset(st, SF(DRAM_ADDR), ST_DRAM_BASE + 4);
	fset(st, SF(MEM_ADDR), cfg.sp_lines / 2);
	check_legal(st);
	loom_insn sq = st;
	fset(sq, SF(SOURCE), 2);
	fset(sq, SF(ROW_WORDS), C / 4);
	fset(sq, SF(STRIDE1), C);
	fset(sq, SF(STRIDE2), 64 * C);
	fset(sq, SF(MEM_ADDR), cfg.acc_lines / 2);
	fset(sq, SF(N2), 2);
	fset(sq, SF(PARAM_ADDR), cfg.acc_lines / 2);
	fset(sq, SF(CLIP_LO), 0x80);
	fset(sq, SF(CLIP_HI), 0x7f);
	check_legal(sq);
	loom_insn sa = st;
	fset(sa, SF(SOURCE), 1);
	fset(sa, SF(ROW_WORDS), C);
	fset(sa, SF(STRIDE1), 4 * C);
	fset(sa, SF(STRIDE2), 64 * 4 * C);
	fset(sa, SF(MEM_ADDR), cfg.acc_lines / 2);
	fset(sa, SF(N2), 2);
	check_legal(sa);
	char d1[64], d2[64], d3[64], d4[64], d5[64], d6[64], d7[64];
	snprintf(d1, sizeof d1, "load sp  %u-byte rows, latency 2", R);
	snprintf(d2, sizeof d2, "load acc %u-byte rows, latency 2", 4 * C);
	snprintf(d3, sizeof d3, "store sp %u-byte rows +4, latency 2", R);
	snprintf(d4, sizeof d4, "store acc %u-byte rows +4, latency 2", 4 * C);
	snprintf(d5, sizeof d5, "store requant %u-byte rows +4, latency 2", C);
	snprintf(d6, sizeof d6, "load sp  %u-byte rows, latency %u", R, cfg.dram_latency);
	snprintf(d7, sizeof d7, "store sp %u-byte rows +4, latency %u", R, cfg.dram_latency);
	Tput t[] = {measure(ctx, d1, false, {in}, 2), measure(ctx, d2, false, {ina}, 2),
		    measure(ctx, d3, true, {st}, 2), measure(ctx, d4, true, {sa}, 2),
		    measure(ctx, d5, true, {sq}, 2), measure(ctx, d6, false, {in}, cfg.dram_latency),
		    measure(ctx, d7, true, {st}, cfg.dram_latency)};
	for (auto &x : t) {
		bool ok = x.beats_per_cycle > 0.0;
		printf("%s throughput %-40s %ld beats / %ld cycles = %.3f beats/cycle\n", ok ? "INFO" : "FAIL",
		       x.what.c_str(), x.beats, x.cycles, x.beats_per_cycle);
		n.count(ok);
	}
}

// throughput at latency 40 with one-beat beat-aligned rows: strided (one
// burst per row: DmaOutstanding bursts per latency at most) and
// contiguous (coalesced into 16-beat bursts); one long instruction and
// the same rows as up to 8 instructions back to back (overlapped)
void tput_lat40(VerilatedContext *ctx, Tally &n)
{
	const unsigned lat = 40;
	uint32_t ltgt = R >= B ? 0 : 1, lrw = B / 4;
	uint32_t lim = (ltgt ? cfg.acc_lines : cfg.sp_lines) / 2, n2 = std::min(8u, lim / 64);
	uint32_t ssrc = R >= B ? 0 : 1;
	uint32_t slim = (ssrc ? cfg.acc_lines : cfg.sp_lines) / 2, sn2 = std::min(8u, slim / 64);
	// one instruction of 64 x n2 rows, or k of 64 x n2 / k rows (at least 64)
	unsigned k = std::max(2u, std::min(8u, n2)), sk = std::max(2u, std::min(8u, sn2));
	char what[6][96];
	snprintf(what[0], 96, "load %uB rows stride %uB, 1 insn, lat %u", B, 2 * B, lat);
	snprintf(what[1], 96, "load %uB rows stride %uB, %u insns, lat %u", B, 2 * B, k, lat);
	snprintf(what[2], 96, "load %uB rows contiguous, 1 insn, lat %u", B, lat);
	snprintf(what[3], 96, "load %uB rows contiguous, %u insns, lat %u", B, k, lat);
	snprintf(what[4], 96, "store %uB rows stride %uB, 1 insn, lat %u", B, 2 * B, lat);
	snprintf(what[5], 96, "store %uB rows stride %uB, %u insns, lat %u", B, 2 * B, sk, lat);
	Tput t[] = {
		measure(ctx, what[0], false, load_seq(ltgt, lrw, 2 * B, 64, n2, 1), lat),
		measure(ctx, what[1], false, load_seq(ltgt, lrw, 2 * B, 64 * n2 / k, 1, k), lat),
		measure(ctx, what[2], false, load_seq(ltgt, lrw, B, 64, n2, 1), lat),
		measure(ctx, what[3], false, load_seq(ltgt, lrw, B, 64 * n2 / k, 1, k), lat),
		measure(ctx, what[4], true, store_seq(ssrc, lrw, 2 * B, 64, sn2, 1), lat),
		measure(ctx, what[5], true, store_seq(ssrc, lrw, 2 * B, 64 * sn2 / sk, 1, sk), lat),
	};
	// floors: bursts in flight per latency (reads: DmaOutstanding,
	// writes: DmaWrOutstanding) for one-row bursts; for
	// coalesced rows the bus, less the first burst's latency (and the 16
	// rows it gathers); the instruction boundaries of the overlapped runs
	// cost little
	double bound = std::min(1.0, (double)cfg.dma_outstanding / (lat + 4));
	double wbound = std::min(1.0, (double)cfg.dma_wr_outstanding / (lat + 4));
	double beats = 64.0 * n2, cbound = beats / (beats + lat + 2 * MAX_BURST);
	double floor[] = {0.9 * bound, 0.85 * bound, 0.95 * cbound, 0.85 * cbound, 0.85 * wbound, 0.8 * wbound};
	for (unsigned i = 0; i < 6; i++) {
		bool ok = t[i].beats_per_cycle >= floor[i];
		printf("%s throughput %-40s %ld beats / %ld cycles = %.3f beats/cycle (floor %.2f)\n",
		       ok ? "INFO" : "FAIL", t[i].what.c_str(), t[i].beats, t[i].cycles, t[i].beats_per_cycle,
		       floor[i]);
		n.count(ok);
	}
}

} // namespace

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
	int nrandom = argc > 2 ? atoi(argv[2]) : 60;
	rs ^= seed * 0x9e3779b97f4a7c15ull;
	if (!rs)
		rs = 1;
	for (int i = 0; i < 8; i++)
		rnd();

	auto ctx = std::make_unique<VerilatedContext>();
	ctx->commandArgs(argc, argv);
	if (!find_config(ctx.get()))
		return 1;
	R = cfg.array_rows;
	C = cfg.array_cols;
	B = cfg.dram_beat_bytes;
	printf("dma_tb: config %s (R=%u C=%u B=%u outstanding=%u, writes %u), seed %" PRIu64 "\n", cfg.name, R, C,
	       B, cfg.dma_outstanding, cfg.dma_wr_outstanding, seed);

	Tally n;
	run_cases(ctx.get(), nrandom, n);
	tput_ideal(ctx.get(), n);
	tput_lat40(ctx.get(), n);
	printf("%d passed, %d failed\n", n.passed, n.failed);
	return n.failed ? 1 : 0;
}
