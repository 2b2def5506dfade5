// bench_array.cpp - simulation-speed baseline for `make bench`: the bare
// MAC array (npu_array, only the PE grid) verilated with the same flags as
// the whole NPU, streaming one activation line per cycle with a weight
// column loaded every cycle, as in steady-state compute. Prints cycles per
// second and simulated MACs per second. One evaluation per cycle: the
// inputs and the rising clock edge together, then Verilator's previous
// clock value set low (the array has no clock gate, nothing of it acts on
// the falling edge). sim.cpp, the whole NPU's harness, evaluates both edges
// for its engines' clock gates and pays for it in the comparison.
// Usage: bench_array [cycles]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "Vnpu_array.h"
#include "Vnpu_array___024root.h"
#include "verilated.h"
#include "loom_cfg.h"

// wide ports are VlWide<N>, narrow ones plain integers
template <std::size_t N> static void set_lo(VlWide<N> &w, uint32_t v) { w[0] = v; }
template <typename T> static void set_lo(T &w, uint32_t v) { w = static_cast<T>(v); }

// as in sim.cpp: false where this Verilator names the previous clock value
// differently (then the falling edge is evaluated)
template <typename Root>
static auto clock_seen_low(Root *r, int) -> decltype(r->__Vtrigrprev__TOP__clk_i = 0, true)
{
	r->__Vtrigrprev__TOP__clk_i = 0;
	return true;
}
template <typename Root> static bool clock_seen_low(Root *, long) { return false; }

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], nullptr, 0) : 2000000;
	auto ctx = std::make_unique<VerilatedContext>();
	auto top = std::make_unique<Vnpu_array>(ctx.get(), "npu_array");
	uint32_t x = 12345;
	top->rst_ni = 0;
	top->clk_i = 0;
	top->eval();
	top->clk_i = 1;
	top->eval();
	top->rst_ni = 1;
	auto t0 = std::chrono::steady_clock::now();
	for (uint64_t i = 0; i < n; i++) {
		// inputs change on the falling edge
		top->clk_i = 0;
		if (!clock_seen_low(top->rootp, 0))
			top->eval();
		x = x * 1664525u + 1013904223u;
		top->act_valid_i = 1;
		top->act_sel_i = (i >> 10) & 1;
		set_lo(top->act_data_i, x);
		top->act_addr_i = i & 0xff;
		top->wload_valid_i = 1;
		top->wload_buf_i = !((i >> 10) & 1);
		top->wload_col_i = i % LOOM_CFG_ARRAY_COLS;
		set_lo(top->wload_data_i, x ^ 0x5a5a5a5au);
		top->clk_i = 1;
		top->eval();
	}
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	double macs = (double)n * LOOM_CFG_ARRAY_ROWS * LOOM_CFG_ARRAY_COLS;
	printf("bare array %ux%u: %llu cycles in %.3f s: %.0f cycles/s, %.3g MACs/s\n", LOOM_CFG_ARRAY_ROWS,
	       LOOM_CFG_ARRAY_COLS, (unsigned long long)n, s, n / s, macs / s);
	top->final();
	return 0;
}
