// compute_tb.cpp - self-checking block test of rtl/npu_compute.sv (+ npu_array)
// inside compute_tb_top.sv (behavioural scratchpad and accumulator reached
// through DPI-C). Each case fills SP and ACC with random data, issues MATMUL
// instructions, runs until done_o and compares the whole ACC against a plain
// C implementation of the MATMUL pseudo-code of docs/ISA.md. Every test
// instruction is first checked with loom_insn_check (the decoder's checks).
// Stalls come from the wrapper's random grant refusals (and, optionally,
// npu_sp's act-over-wgt bank priority). One line per case, then
// "N passed, M failed"; exit status 1 on any failure.
//
// Build and run (exact commands used; default config):
//   cd /work/main && verilator --cc --exe --build -O3 -j 4 -Wall --assert \
//     --top-module compute_tb_top -Mdir /tmp/ctb -CFLAGS "-I/work/main/include" \
//     verilator_tb/lint.vlt build/t/npu_pkg.sv rtl/npu_array.sv rtl/npu_compute.sv \
//     verilator_tb/blocks/compute_tb_top.sv /work/main/verilator_tb/blocks/compute_tb.cpp \
//     /work/main/common/isa.c /work/main/common/hwcfg.c
//   /tmp/ctb/Vcompute_tb_top [seed (default 1)] [random_cases (default 60)]
// (the C/C++ files need absolute paths: make runs in the -Mdir; lint.vlt only
// waives UNUSEDPARAM in the generated package.) Other configurations: build
// the package with common/gen_hw (e.g. `gen_hw odd /tmp/odd_pkg`), pass
// /tmp/odd_pkg/npu_pkg.sv instead of build/t/npu_pkg.sv and use another
// -Mdir; the test reads R, C and the memory sizes from the wrapper.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vcompute_tb_top.h"
#include "Vcompute_tb_top__Dpi.h"
#include "svdpi.h"
#include "verilated.h"

// Verilator's make compiles the listed .c files with the C++ compiler, so
// isa.h is included without extern "C".
#include "loom/isa.h"

namespace {

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint32_t rnd()
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}
uint32_t rnd(uint32_t n) { return n ? rnd() % n : 0; }

unsigned R, C, SP_LINES, ACC_LINES, BANK_LINES;

// ---------------------------------------------------------------------------
// MATMUL fields and the reference model (docs/ISA.md, MATMUL pseudo-code)
// ---------------------------------------------------------------------------
struct Mm {
	unsigned act, wgt, acc, in_w, in_h, out_w, out_h, ncb, kw, kh, sw, sh, dw, dh;
	bool accumulate;
};

loom_insn encode(const Mm &m)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	int bad = 0;
	bad |= loom_insn_set(&in, LOOM_F_ANY_OPCODE, LOOM_OP_MATMUL);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_ACCUMULATE, m.accumulate);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_ACT_ADDR, m.act);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_WGT_ADDR, m.wgt);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_ACC_ADDR, m.acc);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_IN_W, m.in_w);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_IN_H, m.in_h);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_OUT_W, m.out_w);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_OUT_H, m.out_h);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_NCB, m.ncb);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_KW, m.kw);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_KH, m.kh);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_SW, m.sw);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_SH, m.sh);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_DW, m.dw);
	bad |= loom_insn_set(&in, LOOM_F_MATMUL_DH, m.dh);
	if (bad) {
		fprintf(stderr, "encode: a field does not fit\n");
		exit(2);
	}
	return in;
}

bool legal(const Mm &m)
{
	loom_hwcfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.array_rows = R;
	cfg.array_cols = C;
	cfg.sp_line_bytes = R;
	cfg.sp_lines = SP_LINES;
	cfg.acc_lines = ACC_LINES;
	loom_insn in = encode(m);
	uint32_t field;
	return loom_insn_check(&cfg, &in, &field) == LOOM_ERR_NONE;
}

std::vector<int8_t> sp;    // SP_LINES * R
std::vector<int32_t> acc;  // ACC_LINES * C

void ref_matmul(const Mm &m)
{
	std::vector<int32_t> W(R * C);
	unsigned f = 0;
	for (unsigned cb = 0; cb < m.ncb; cb++)
		for (unsigned ky = 0; ky < m.kh; ky++)
			for (unsigned kx = 0; kx < m.kw; kx++, f++) {
				for (unsigned r = 0; r < R; r++)
					for (unsigned c = 0; c < C; c++)
						W[r * C + c] = sp[(size_t)(m.wgt + f * C + c) * R + r];
				for (unsigned oy = 0; oy < m.out_h; oy++)
					for (unsigned ox = 0; ox < m.out_w; ox++) {
						size_t a = m.act + cb * m.in_h * m.in_w +
							   (oy * m.sh + ky * m.dh) * m.in_w + ox * m.sw + kx * m.dw;
						size_t p = m.acc + oy * m.out_w + ox;
						for (unsigned c = 0; c < C; c++) {
							uint32_t s = 0;
							for (unsigned r = 0; r < R; r++)
								s += (uint32_t)((int32_t)sp[a * R + r] * W[r * C + c]);
							uint32_t &d = (uint32_t &)acc[p * C + c];
							d = (f == 0 && !m.accumulate) ? s : d + s;
						}
					}
			}
}

std::string describe(const Mm &m)
{
	char b[200];
	snprintf(b, sizeof b, "in %ux%u out %ux%u k %ux%u s %u,%u d %u,%u ncb %u%s", m.in_w, m.in_h, m.out_w,
		 m.out_h, m.kw, m.kh, m.sw, m.sh, m.dw, m.dh, m.ncb, m.accumulate ? " acc" : "");
	return b;
}

// ---------------------------------------------------------------------------
// Simulation
// ---------------------------------------------------------------------------
struct Sim {
	std::unique_ptr<VerilatedContext> ctx;
	std::unique_ptr<Vcompute_tb_top> top;
	uint64_t cycle = 0;

	Sim()
	{
		ctx = std::make_unique<VerilatedContext>();
		top = std::make_unique<Vcompute_tb_top>(ctx.get(), "TOP");
		svSetScope(svGetScopeFromName("TOP.compute_tb_top"));
		top->clk_i = 0;
		top->rst_ni = 0;
		top->seed_i = 1;
		top->eval();
		for (int i = 0; i < 4; i++)
			step();
		top->rst_ni = 1;
	}
	~Sim() { top->final(); }

	// one cycle: inputs were set with the clock low; returns after the
	// falling edge. Outputs sampled before the rising edge are in `pre`.
	struct Pre {
		bool ready, done, busy;
	} pre;
	void step()
	{
		top->eval();
		pre = {top->insn_ready_o != 0, top->done_o != 0, top->busy_o != 0};
		top->clk_i = 1;
		top->eval();
		top->clk_i = 0;
		top->eval();
		cycle++;
	}
	void set_insn(const loom_insn &in)
	{
		for (int k = 0; k < 8; k++)
			top->insn_i[k] = in.w[k];
	}
};

Sim *sim;
uint32_t min_gap_all = 0xffffffffu;  // over every case

void fill_random(bool extreme = false)
{
	for (size_t l = 0; l < SP_LINES; l++)
		for (unsigned w = 0; w < R / 4; w++) {
			uint32_t v = rnd();
			if (extreme)
				v = (rnd() & 1) ? 0x80808080u : 0x7f7f7f7fu;
			tb_sp_set((int)l, (int)w, (int)v);
			memcpy(&sp[l * R + 4 * w], &v, 4);
		}
	for (size_t l = 0; l < ACC_LINES; l++)
		for (unsigned c = 0; c < C; c++) {
			int32_t v = (int32_t)rnd();
			if (extreme)
				v = (int32_t)(0x7fffff00u + rnd(256));
			tb_acc_set((int)l, (int)c, v);
			acc[l * C + c] = v;
		}
}

// compare the whole ACC with the reference; "" if equal
std::string check_acc()
{
	for (size_t l = 0; l < ACC_LINES; l++)
		for (unsigned c = 0; c < C; c++) {
			int32_t got = tb_acc_get((int)l, (int)c);
			if (got != acc[l * C + c]) {
				char b[160];
				snprintf(b, sizeof b, "acc[%zu][%u] = %" PRId32 ", expected %" PRId32, l, c, got,
					 acc[l * C + c]);
				return b;
			}
		}
	return "";
}

struct RunStats {
	uint32_t busy, lines, first, last, refused, min_gap;
	uint64_t cycles;
};

// Issue the instructions back to back (each in the first cycle the engine is
// ready), run until every one has signalled done_o. Returns "" or an error.
std::string run(const std::vector<Mm> &ms, RunStats *st, unsigned stall = 0, bool bank = false,
		unsigned abort_after = 0)
{
	auto *t = sim->top.get();
	t->stall_i = stall;
	t->bank_i = bank;
	t->stat_clr_i = 1;
	sim->step();
	t->stat_clr_i = 0;
	uint32_t err0 = t->stat_errors_o;
	size_t issued = 0, done = 0;
	uint64_t c0 = sim->cycle, limit = 200000;
	for (const Mm &m : ms)
		limit += 4ull * m.ncb * m.kh * m.kw * (m.out_w * m.out_h + R + 2 * C + 8) * (stall ? 4 : 1);
	bool was_busy = false;
	std::string err;
	while (done < ms.size()) {
		if (sim->cycle - c0 > limit) {
			err = "timeout";
			break;
		}
		t->insn_valid_i = issued < ms.size();
		if (issued < ms.size())
			sim->set_insn(encode(ms[issued]));
		t->abort_i = abort_after && sim->cycle - c0 == abort_after;
		sim->step();
		const auto &p = sim->pre;
		if (p.done) {
			if (!was_busy && !p.busy)
				err = "done_o while not busy";
			done++;
		}
		if (abort_after && sim->cycle - c0 > abort_after && !p.busy && issued == ms.size())
			break;  // aborted and idle again
		was_busy = p.busy;
		if (p.ready && t->insn_valid_i)
			issued++;
		if (p.ready && p.busy)
			err = "ready while busy";
	}
	t->insn_valid_i = 0;
	t->abort_i = 0;
	if (abort_after && done)
		err = "done_o after abort";
	// a few idle cycles: nothing may be written after done/idle
	for (int i = 0; i < 8; i++) {
		sim->step();
		if (sim->pre.done)
			err = "spurious done_o";
	}
	if (t->stat_errors_o != err0)
		err = "protocol error(s) flagged by the wrapper";
	st->busy = t->stat_busy_o;
	st->lines = t->stat_lines_o;
	st->first = t->stat_first_o;
	st->last = t->stat_last_o;
	st->refused = t->stat_refused_o;
	st->min_gap = t->stat_min_gap_o;
	if (st->min_gap < min_gap_all)
		min_gap_all = st->min_gap;
	st->cycles = sim->cycle - c0;
	return err;
}

int passed, failed;

void report(const char *name, const std::string &err, const std::string &info)
{
	if (err.empty()) {
		passed++;
		printf("PASS %-22s %s\n", name, info.c_str());
	} else {
		failed++;
		printf("FAIL %-22s %s: %s\n", name, info.c_str(), err.c_str());
	}
	fflush(stdout);
}

uint64_t total_lines(const std::vector<Mm> &ms)
{
	uint64_t n = 0;
	for (const Mm &m : ms)
		n += (uint64_t)m.ncb * m.kh * m.kw * m.out_w * m.out_h;
	return n;
}

// one case: fill, run the instructions on RTL and reference, compare
void run_case(const char *name, std::vector<Mm> ms, unsigned stall = 0, bool bank = false,
	      bool extreme = false, std::string *util = nullptr)
{
	for (const Mm &m : ms)
		if (!legal(m)) {
			report(name, "test instruction fails loom_insn_check", describe(m));
			return;
		}
	fill_random(extreme);
	RunStats st;
	std::string err = run(ms, &st, stall, bank);
	for (const Mm &m : ms)
		ref_matmul(m);
	if (err.empty())
		err = check_acc();
	if (err.empty() && st.lines != total_lines(ms))
		err = "mac_line_o count " + std::to_string(st.lines) + " != " + std::to_string(total_lines(ms));
	char info[300];
	snprintf(info, sizeof info, "%s%s: %u lines in %u busy cycles (%.1f%%), %u refused", describe(ms[0]).c_str(),
		 ms.size() > 1 ? " ..." : "", st.lines, st.busy, 100.0 * st.lines / (st.busy ? st.busy : 1),
		 st.refused);
	if (util) {
		char u[200];
		snprintf(u, sizeof u, "%.2f%% of busy cycles, %.2f%% between first and last line (%u bubbles)",
			 100.0 * st.lines / st.busy, 100.0 * st.lines / (st.last - st.first + 1),
			 st.last - st.first + 1 - st.lines);
		*util = u;
	}
	report(name, err, info);
}

Mm gemm(unsigned M, unsigned ncb, bool accumulate = false)
{
	Mm m{};
	m.act = 0;
	m.wgt = M * ncb;
	m.acc = 0;
	m.in_w = m.out_w = M;
	m.in_h = m.out_h = 1;
	m.ncb = ncb;
	m.kw = m.kh = m.sw = m.sh = m.dw = m.dh = 1;
	m.accumulate = accumulate;
	return m;
}

// convolution with the tile placed at random legal addresses
Mm conv(unsigned ow, unsigned oh, unsigned k, unsigned s, unsigned d, unsigned ncb, bool accumulate = false,
	unsigned extra = 0)
{
	Mm m{};
	m.out_w = ow;
	m.out_h = oh;
	m.kw = m.kh = k;
	m.sw = m.sh = s;
	m.dw = m.dh = d;
	m.in_w = (ow - 1) * s + (k - 1) * d + 1 + extra;
	m.in_h = (oh - 1) * s + (k - 1) * d + 1 + extra;
	m.ncb = ncb;
	m.accumulate = accumulate;
	unsigned act_lines = ncb * m.in_w * m.in_h, wgt_lines = ncb * k * k * C;
	m.act = rnd(SP_LINES - act_lines + 1);
	m.wgt = rnd(SP_LINES - wgt_lines + 1);
	m.acc = rnd(ACC_LINES - ow * oh + 1);
	return m;
}

Mm random_mm()
{
	for (;;) {
		Mm m{};
		m.kw = 1 + rnd(rnd(4) ? 3 : 6);
		m.kh = 1 + rnd(rnd(4) ? 3 : 6);
		m.sw = 1 + rnd(3);
		m.sh = 1 + rnd(3);
		m.dw = 1 + rnd(2);
		m.dh = 1 + rnd(2);
		m.out_w = 1 + rnd(rnd(3) ? 12 : 48);
		m.out_h = 1 + rnd(6);
		m.ncb = 1 + rnd(3);
		m.in_w = (m.out_w - 1) * m.sw + (m.kw - 1) * m.dw + 1 + rnd(3);
		m.in_h = (m.out_h - 1) * m.sh + (m.kh - 1) * m.dh + 1 + rnd(3);
		m.accumulate = rnd(2);
		unsigned act_lines = m.ncb * m.in_w * m.in_h, wgt_lines = m.ncb * m.kh * m.kw * C;
		unsigned p = m.out_w * m.out_h;
		if (act_lines > SP_LINES || wgt_lines > SP_LINES || p > ACC_LINES)
			continue;
		m.act = rnd(SP_LINES - act_lines + 1);
		m.wgt = rnd(SP_LINES - wgt_lines + 1);
		m.acc = rnd(ACC_LINES - p + 1);
		if (legal(m))
			return m;
	}
}

void abort_case(unsigned stall)
{
	const char *name = stall ? "abort_stalls" : "abort";
	fill_random();
	unsigned M = ACC_LINES;
	Mm big = gemm(M, 4);
	RunStats st;
	std::string err = run({big}, &st, stall, false, 300 + rnd(200));
	// whatever the aborted instruction wrote is now the reference
	for (size_t l = 0; l < ACC_LINES; l++)
		for (unsigned c = 0; c < C; c++)
			acc[l * C + c] = tb_acc_get((int)l, (int)c);
	if (err.empty() && st.lines >= total_lines({big}))
		err = "abort did not stop the instruction";
	if (err.empty()) {
		for (int i = 0; i < 200; i++)
			sim->step();
		err = check_acc();
		if (!err.empty())
			err = "ACC written after the aborted engine went idle: " + err;
	}
	if (err.empty()) {
		Mm m = conv(5, 4, 3, 1, 1, 2);
		RunStats st2;
		err = run({m}, &st2, stall);
		ref_matmul(m);
		if (err.empty())
			err = check_acc();
	}
	char info[160];
	snprintf(info, sizeof info, "aborted after %u of %" PRIu64 " lines, then a conv runs correctly", st.lines,
		 total_lines({big}));
	report(name, err, info);
}

}  // namespace

int main(int argc, char **argv)
{
	Verilated::commandArgs(argc, argv);
	uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
	unsigned nrand = argc > 2 ? (unsigned)strtoul(argv[2], nullptr, 0) : 60;
	rng_state ^= seed * 0x2545f4914f6cdd1dull;
	for (int i = 0; i < 10; i++)
		rnd();

	Sim s;
	sim = &s;
	R = tb_param(0);
	C = tb_param(1);
	SP_LINES = tb_param(2);
	ACC_LINES = tb_param(3);
	BANK_LINES = tb_param(4);
	sp.assign((size_t)SP_LINES * R, 0);
	acc.assign((size_t)ACC_LINES * C, 0);
	printf("compute_tb: array %ux%u, %u SP lines (banks of %u), %u ACC lines, seed %" PRIu64 "\n", R, C,
	       SP_LINES, BANK_LINES, ACC_LINES, seed);

	// GEMM (1x1 kernel), NCB > 1
	run_case("gemm_1x1", {gemm(100, 3)});
	run_case("gemm_1x1_accumulate", {gemm(77, 2, true)});
	// 3x3 convolution, stride 2, dilation 2, two channel blocks
	run_case("conv3x3_s2_d2", {conv(6, 5, 3, 2, 2, 2)});
	run_case("conv3x3_s2_d2_acc", {conv(7, 3, 3, 2, 2, 3, true, 2)});
	run_case("conv_ncb4_accumulate", {conv(5, 4, 2, 1, 1, 4, true)});
	// short folds: P < R (and P = 1)
	run_case("short_folds_p3", {conv(3, 1, 3, 1, 1, 3)});
	run_case("short_folds_p1", {conv(1, 1, 3, 2, 2, 2, true)});
	run_case("short_folds_p_r-1", {conv(R - 1, 1, 2, 1, 1, 2)});
	// int32 wrap-around: extreme bytes, ACC near INT32_MAX, accumulate
	run_case("wrap_accumulate", {gemm(40, 4, true)}, 0, false, true);
	run_case("wrap_overwrite", {gemm(40, 4)}, 0, false, true);
	// back-to-back instructions (the next one issued in the first ready cycle)
	{
		Mm a = conv(6, 3, 3, 1, 1, 2);
		Mm b = a;
		b.accumulate = true;  // adds onto a's results
		b.wgt = (a.wgt + 7 * C) % (SP_LINES - 2 * 9 * C);
		Mm c = gemm(50, 2);
		c.acc = ACC_LINES - 50;
		run_case("back_to_back_3", {a, b, c});
		run_case("back_to_back_stalls", {b, c, a, b}, 100, true);
	}
	// random stalls on both ports, and npu_sp's bank priority
	run_case("stalls_gemm", {gemm(64, 3)}, 90, true);
	run_case("stalls_conv", {conv(6, 5, 3, 2, 2, 2)}, 128, false);
	run_case("stalls_short_folds", {conv(2, 2, 3, 1, 1, 3, true)}, 60, true);
	run_case("bank_conflicts_only", {gemm(200, 2), conv(4, 4, 3, 1, 2, 2, true)}, 0, true);
	run_case("stalls_heavy", {conv(9, 2, 2, 1, 1, 2)}, 220, true);
	// abort: stop, drain, idle without done; the engine works afterwards
	abort_case(0);
	abort_case(80);

	// throughput: a fold streams back to back when P >= R + C - 2
	{
		std::string u;
		unsigned p = R + C - 2;
		Mm m = gemm(p, 6);
		run_case("full_rate_p=R+C-2", {m}, 0, false, false, &u);
		printf("     P = %u, 6 folds: %s\n", p, u.c_str());
		if (u.find("(0 bubbles)") == std::string::npos) {
			failed++;
			printf("FAIL full_rate_p=R+C-2   folds did not stream back to back\n");
		}
		m = gemm(p - 1, 6);
		run_case("p=R+C-3", {m}, 0, false, false, &u);
		printf("     P = %u, 6 folds: %s\n", p - 1, u.c_str());
	}
	// utilization of a long GEMM without stalls
	{
		std::string u;
		unsigned M = ACC_LINES, ncb = 8;
		while (ncb > 1 && ncb * (M + C) > SP_LINES)
			ncb--;
		run_case("long_gemm_util", {gemm(M, ncb)}, 0, false, false, &u);
		printf("     UTILIZATION long GEMM M=%u NCB=%u (%u lines): %s\n", M, ncb, M * ncb, u.c_str());
	}

	// random instructions, random stalls, sometimes back to back
	for (unsigned i = 0; i < nrand; i++) {
		std::vector<Mm> ms{random_mm()};
		while (rnd(3) == 0 && ms.size() < 4)
			ms.push_back(random_mm());
		unsigned stall = rnd(2) ? 0 : rnd(160);
		char name[32];
		snprintf(name, sizeof name, "random_%u", i);
		run_case(name, ms, stall, rnd(2));
	}

	printf("     ACC: fewest cycles between two writes of one lane word, over all cases: %u\n",
	       (unsigned)min_gap_all);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
