// requant_tb.cpp - self-checking block test of rtl/npu_requant.sv against
// loom_requant() of common/isa.c: edge values crossed with each other, then
// millions of random vectors from mixed distributions. One vector enters per
// cycle; the result is checked Latency = 2 cycles later.
//
// Build and run (from /work/main):
//   verilator --cc --exe --build -O3 -j 2 -Wall --assert --top-module npu_requant \
//     -Mdir /tmp/rqtb -CFLAGS "-I/work/main/include" \
//     rtl/npu_requant.sv verilator_tb/blocks/requant_tb.cpp common/isa.c common/hwcfg.c
//   /tmp/rqtb/Vnpu_requant [random_vectors (default 20000000)] [seed]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>

#include "Vnpu_requant.h"
#include "verilated.h"

// Verilator's make compiles the listed .c files with the C++ compiler, so
// isa.h is included without extern "C".
#include "loom/isa.h"

namespace {

struct Vec {
	int32_t acc, bias, mult, shift;
	int8_t zp, lo, hi;
};

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint64_t rnd()
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

int32_t pick32(int kind)
{
	static const int32_t edge[] = {INT32_MIN, INT32_MIN + 1, -65536, -1, 0, 1, 65535,
				       INT32_MAX - 1, INT32_MAX, 1 << 30, -(1 << 30)};
	switch (kind) {
	case 0: return (int32_t)rnd();
	case 1: return edge[rnd() % (sizeof edge / sizeof edge[0])];
	case 2: return (int32_t)(rnd() % 20001) - 10000;
	case 3: return (int32_t)((rnd() & 1) ? INT32_MAX - rnd() % 1000 : INT32_MIN + rnd() % 1000);
	default: return (int32_t)(rnd() >> 40) - (1 << 23);
	}
}

// srdhm rounding boundaries: mult = +-2^k and acc chosen so that p + nudge
// is (near) a multiple of 2^31, where floor and truncation differ by one
Vec boundary_vec()
{
	Vec v{};
	unsigned k = (unsigned)(rnd() % 31);
	int64_t j = (int64_t)(rnd() % 5) - 2;
	int64_t d = (int64_t)(rnd() % 3) - 1;
	int64_t a = (rnd() % 4 == 0) ? -(1ll << 30) - 1 + d             /* p < 0, k = 0 */
				     : j * (1ll << (31 - k)) - (1ll << (30 - k)) + d;
	if (a < INT32_MIN || a > INT32_MAX)
		a = d;
	v.acc = (int32_t)a;
	v.bias = 0;
	v.mult = (int32_t)(1u << k);
	if (k == 0 && (rnd() & 1))
		v.mult = -1, v.acc = (int32_t)(-(int64_t)v.acc == 2147483648ll ? v.acc : -v.acc);
	v.shift = (int32_t)(rnd() % 32);
	v.zp = (int8_t)rnd();
	v.lo = -128;
	v.hi = 127;
	return v;
}

Vec random_vec()
{
	if (rnd() % 10 == 0)
		return boundary_vec();
	Vec v;
	v.acc = pick32(rnd() % 5);
	v.bias = pick32(rnd() % 5);
	switch (rnd() % 4) {
	case 0: v.mult = (int32_t)((1u << 30) + (rnd() % (1u << 30))); break; // normal [2^30, 2^31)
	case 1: v.mult = pick32(1); break;
	default: v.mult = (int32_t)rnd(); break;
	}
	switch (rnd() % 4) {
	case 0: v.shift = (int32_t)rnd(); break; // > 31: only bits 4:0 count
	case 1: v.shift = (rnd() & 1) ? 0 : 31; break;
	default: v.shift = (int32_t)(rnd() % 32); break;
	}
	v.zp = (int8_t)rnd();
	int8_t a = (int8_t)rnd(), b = (int8_t)rnd();
	if (rnd() % 8) { // mostly legal clip bounds, sometimes lo > hi
		v.lo = a < b ? a : b;
		v.hi = a < b ? b : a;
	} else {
		v.lo = a;
		v.hi = b;
	}
	if (rnd() % 8 == 0) { v.lo = -128; v.hi = 127; }
	return v;
}

} // namespace

int main(int argc, char **argv)
{
	long nrand = argc > 1 ? atol(argv[1]) : 20000000;
	if (argc > 2)
		rng_state ^= strtoull(argv[2], nullptr, 0) * 0x2545f4914f6cdd1dull;
	auto ctx = std::make_unique<VerilatedContext>();
	auto top = std::make_unique<Vnpu_requant>(ctx.get());

	// the vector list: edge crosses first, then random ones
	static const int32_t e32[] = {INT32_MIN, INT32_MIN + 1, -1073741824, -2, -1, 0, 1, 2,
				      1073741823, 1073741824, INT32_MAX - 1, INT32_MAX};
	static const int32_t esh[] = {0, 1, 2, 15, 30, 31, 32, 33, 63, -1, INT32_MIN, INT32_MAX};
	static const int8_t e8[] = {-128, -127, -1, 0, 1, 126, 127};
	std::deque<Vec> todo;
	for (int32_t a : e32)
		for (int32_t b : e32)
			for (int32_t m : e32)
				for (int32_t s : esh)
					todo.push_back({a, b, m, s, e8[rnd() % 7], -128, 127});
	for (int32_t a : e32)
		for (int32_t m : e32)
			for (int8_t z : e8)
				for (int8_t lo : e8)
					for (int8_t hi : e8)
						todo.push_back({a, 0, m, (int32_t)(rnd() % 32), z, lo, hi});
	// a fixed share of rounding-boundary vectors
	for (int i = 0; i < 20000; i++)
		todo.push_back(boundary_vec());
	long nedge = (long)todo.size();

	long passed = 0, failed = 0, cycle = 0, checked = 0, failed_edge = 0;
	std::deque<std::pair<bool, Vec>> pipe; // what entered 0, 1 cycles ago
	top->rst_ni = 0;
	top->clk_i = 0;
	top->valid_i = 0;
	top->eval();
	top->clk_i = 1;
	top->eval();
	top->clk_i = 0;
	top->rst_ni = 1;
	top->eval();
	long total = nedge + nrand;
	long issued = 0;
	while (issued < total || !pipe.empty()) {
		// a bubble now and then checks that valid_o follows valid_i
		bool v = issued < total && rnd() % 16 != 0;
		Vec x{};
		if (v) {
			if (!todo.empty()) {
				x = todo.front();
				todo.pop_front();
			} else {
				x = random_vec();
			}
			issued++;
		}
		top->valid_i = v;
		top->acc_i = (uint32_t)x.acc;
		top->bias_i = (uint32_t)x.bias;
		top->mult_i = (uint32_t)x.mult;
		top->shift_i = (uint32_t)x.shift;
		top->zp_i = (uint8_t)x.zp;
		top->lo_i = (uint8_t)x.lo;
		top->hi_i = (uint8_t)x.hi;
		top->eval();
		// result of the vector that entered two cycles ago
		if (pipe.size() == 2) {
			auto [pv, px] = pipe.front();
			pipe.pop_front();
			if ((bool)top->valid_o != pv) {
				if (failed++ < 10)
					printf("FAIL cycle %ld: valid_o=%d, expected %d\n", cycle, top->valid_o, pv);
			} else if (pv) {
				if (checked++ < nedge && (int8_t)top->q_o != loom_requant(px.acc, px.bias, px.mult, px.shift,
											    px.zp, px.lo, px.hi))
					failed_edge++;
				int8_t want = loom_requant(px.acc, px.bias, px.mult, px.shift, px.zp, px.lo, px.hi);
				if ((int8_t)top->q_o != want) {
					if (failed++ < 10)
						printf("FAIL requant(acc=%" PRId32 ", bias=%" PRId32 ", mult=%" PRId32
						       ", shift=%" PRId32 ", zp=%d, lo=%d, hi=%d) = %d, expected %d\n",
						       px.acc, px.bias, px.mult, px.shift, px.zp, px.lo, px.hi,
						       (int8_t)top->q_o, want);
				} else {
					passed++;
				}
			}
		}
		pipe.push_back({v, x});
		if (issued >= total && pipe.size() <= 2 && !v) {
			// drain: keep clocking bubbles until the last vector is checked
			bool any = false;
			for (auto &p : pipe)
				any |= p.first;
			if (!any)
				break;
		}
		top->clk_i = 1;
		top->eval();
		top->clk_i = 0;
		top->eval();
		cycle++;
	}
	top->final();
	/* two cases: the edge vectors and the random ones (each vector is
	 * checked; the counts of vectors are information) */
	long failed_rand = failed - failed_edge;
	printf("%s edge vectors: %ld (%ld wrong)\n", failed_edge ? "FAIL" : "ok  ", nedge, failed_edge);
	printf("%s random vectors: %ld (%ld wrong; %ld vectors passed in all)\n", failed_rand ? "FAIL" : "ok  ", nrand,
	       failed_rand, passed);
	printf("%d passed, %d failed\n", !failed_edge + !failed_rand, !!failed_edge + !!failed_rand);
	return failed ? 1 : 0;
}
