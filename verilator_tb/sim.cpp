// sim.cpp - the Verilator harness of the Loom NPU and the "rtl" backend of
// include/loom/hw.h. Built once per hardware configuration into
// build/hw/NAME/libloom_rtl.so (see the Makefile), loaded by hw/hw.c.
//
// A Sim owns one verilated tb_top (NPU + simulated DRAM) in its own
// VerilatedContext, so several can live in one process. It does reset,
// clocking (inputs change between cycles; the rising edge evaluated, the
// falling one set: "The falling edge" below), the MMIO bridge (through
// tb_top's DPI-C export tb_mmio), the cycle bound of run(),
// and FST waveforms on demand for a window of cycles. The DRAM bytes live
// here and are read/written by tb_dram.sv through DPI-C,
// which answers the beats that touch the bus-error range of the options
// (loom_hw_opts.bus_err_*) with an error response.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "Vtb_top.h"
#include "Vtb_top__Dpi.h"
#include "Vtb_top___024root.h"
#include "loom_clocks.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

extern "C" {
#include "loom/hw.h"
#include "loom/isa.h"
#include "loom_cfg.h"
}

namespace {

// The falling edge. The rising edge is evaluated: it runs every process of
// the design, the clock gates first (rtl/npu_icg.sv's simulation model
// takes each engine's enable as clk_i rises, before any flop changes). The
// falling edge is not: nothing in the design acts on it, and all it changes
// are the clocks, which fall() sets low, clk_i with Verilator's record of
// its last value, as an evaluation would (the gated clocks are listed by
// scripts/rtl_clocks.sh in the generated loom_clocks.h). Where that header
// finds a model it does not expect (LOOM_FAST_FALL 0), and while a waveform
// is written, the falling edge is evaluated. Inputs change between cycles,
// before the rising edge.

constexpr unsigned kBeat = LOOM_CFG_DRAM_BEAT_BYTES;

struct Sim {
	loom_hw hw;  // must stay first: loom_hw * <-> Sim *
	std::unique_ptr<VerilatedContext> ctx;
	std::unique_ptr<Vtb_top> top;
	uint8_t *dram = nullptr;
	uint64_t dram_bytes = 0;
	uint64_t cycles = 0;
	uint64_t berr_lo = 0, berr_hi = 0;  // bus-error range, [lo, hi)
#if VM_TRACE
	std::unique_ptr<VerilatedFstC> tfp;
#endif
	uint64_t wave_from = 0, wave_to = 0;
	bool waves = false;
	svScope scope = nullptr;  // tb_top's, for its DPI-C export tb_mmio

	// the MMIO request (tb_top.sv: a DPI-C export, not input ports)
	void mmio(bool req, bool we, uint32_t addr, uint32_t wdata)
	{
		svSetScope(scope);
		tb_mmio(req, we, addr & 0xfff, wdata);
	}

	void eval_half(int clk)
	{
		top->clk_i = clk;
		top->eval();
#if VM_TRACE
		if (waves && cycles >= wave_from && (!wave_to || cycles <= wave_to))
			tfp->dump(2 * cycles + (clk ? 0 : 1));  // rising edge first
#endif
	}
	void fall()
	{
#if LOOM_FAST_FALL
		if (!waves) {
			Vtb_top___024root *r = top->rootp;
			r->clk_i = 0;
			r->__Vtrigrprev__TOP__clk_i = 0;
#define LOOM_CLOCK_LOW(c) r->c = 0;
			LOOM_GATED_CLOCKS(LOOM_CLOCK_LOW)
#undef LOOM_CLOCK_LOW
			return;
		}
#endif
		eval_half(0);
	}
	void tick()
	{
		eval_half(1);
		fall();
		cycles++;
	}
};

Sim *sim_of(loom_hw *hw) { return reinterpret_cast<Sim *>(hw); }

uint32_t mmio_read(loom_hw *hw, uint32_t off)
{
	Sim *s = sim_of(hw);
	s->mmio(true, false, off, 0);
	s->top->eval();
	uint32_t v = s->top->mmio_rdata_o;
	s->mmio(false, false, 0, 0);
	s->top->eval();
	return v;
}

void mmio_write(loom_hw *hw, uint32_t off, uint32_t val)
{
	Sim *s = sim_of(hw);
	s->mmio(true, true, off, val);
	s->top->eval();  // the clock gates' latches take the request (npu_cc's cclk)
	s->tick();
	s->mmio(false, false, 0, 0);
	s->top->eval();
}

int dram_rw(loom_hw *hw, uint64_t addr, void *buf, const void *src, size_t len)
{
	Sim *s = sim_of(hw);
	if (addr > s->dram_bytes || len > s->dram_bytes - addr) {
		snprintf(hw->err, sizeof hw->err, "DRAM access [0x%llx, +%zu) is outside the %llu-byte DRAM",
			 (unsigned long long)addr, len, (unsigned long long)s->dram_bytes);
		return -1;
	}
	if (buf)
		memcpy(buf, s->dram + addr, len);
	else
		memcpy(s->dram + addr, src, len);
	return 0;
}

int dram_read(loom_hw *hw, uint64_t addr, void *buf, size_t len) { return dram_rw(hw, addr, buf, nullptr, len); }
int dram_write(loom_hw *hw, uint64_t addr, const void *buf, size_t len) { return dram_rw(hw, addr, nullptr, buf, len); }

int run(loom_hw *hw, uint64_t max_cycles)
{
	Sim *s = sim_of(hw);
	for (uint64_t i = 0; i < max_cycles; i++) {
		if (s->top->irq_o)
			return LOOM_HW_IRQ;
		s->tick();
	}
	return s->top->irq_o ? LOOM_HW_IRQ : LOOM_HW_TIMEOUT;
}

int irq(loom_hw *hw) { return sim_of(hw)->top->irq_o; }
uint64_t cycles(loom_hw *hw) { return sim_of(hw)->cycles; }

void close_sim(loom_hw *hw)
{
	Sim *s = sim_of(hw);
	s->top->final();
#if VM_TRACE
	if (s->tfp)
		s->tfp->close();
#endif
	free(s->dram);
	delete s;
}

const loom_hw_ops ops = {mmio_read, mmio_write, dram_read, dram_write, run, irq, cycles, close_sim};

}  // namespace

extern "C" {

// the configuration this library was built for, checked by hw/hw.c
extern const uint32_t loom_rtl_fingerprint;
const uint32_t loom_rtl_fingerprint = LOOM_CFG_FINGERPRINT;

loom_hw *loom_rtl_open(const loom_hwcfg *cfg, const loom_hw_opts *opts, char *err, size_t errlen)
{
	if (cfg->fingerprint != LOOM_CFG_FINGERPRINT) {
		snprintf(err, errlen, "RTL built for fingerprint %08x, asked for %08x", LOOM_CFG_FINGERPRINT,
			 cfg->fingerprint);
		return nullptr;
	}
	Sim *s = new Sim();
	memset(&s->hw, 0, sizeof s->hw);
	s->hw.ops = &ops;
	s->hw.cfg = *cfg;
	s->hw.backend = "rtl";
	s->dram_bytes = cfg->dram_bytes;
	if (opts && opts->bus_err_size) {
		s->berr_lo = opts->bus_err_base;
		s->berr_hi = opts->bus_err_base + opts->bus_err_size;
	}
	s->dram = static_cast<uint8_t *>(calloc(1, cfg->dram_bytes + kBeat));
	if (!s->dram) {
		snprintf(err, errlen, "cannot allocate %llu bytes of simulated DRAM",
			 (unsigned long long)cfg->dram_bytes);
		delete s;
		return nullptr;
	}
	s->ctx.reset(new VerilatedContext);
	s->ctx->randReset(0);
	s->top.reset(new Vtb_top(s->ctx.get(), "tb_top"));
	s->top->dram_handle_i = reinterpret_cast<uint64_t>(s);
	s->top->dram_latency_i = opts && opts->dram_latency ? opts->dram_latency : cfg->dram_latency;
	s->top->dram_bw_i = opts && opts->dram_bw ? opts->dram_bw : cfg->dram_bw;
	if (s->top->dram_bw_i > kBeat)
		s->top->dram_bw_i = kBeat;
	if (opts && opts->wave_path) {
#if VM_TRACE
		s->ctx->traceEverOn(true);
		s->tfp.reset(new VerilatedFstC);
		s->top->trace(s->tfp.get(), 99);
		s->tfp->open(opts->wave_path);
		s->waves = true;
		s->wave_from = opts->wave_from;
		s->wave_to = opts->wave_to;
#else
		snprintf(err, errlen, "this RTL build has no waveform support");
		delete s;
		return nullptr;
#endif
	}
	Verilated::threadContextp(s->ctx.get());  // (scopes are looked up in it)
	s->scope = svGetScopeFromName("tb_top.tb_top");
	if (!s->scope) {
		snprintf(err, errlen, "the verilated model has no scope tb_top.tb_top (tb_mmio)");
		delete s;
		return nullptr;
	}
	s->mmio(false, false, 0, 0);
	s->top->clk_i = 0;
	s->top->rst_ni = 0;
	s->top->eval();
	for (int i = 0; i < 4; i++)
		s->tick();
	s->top->rst_ni = 1;
	s->top->eval();
	s->tick();
	(void)err;
	(void)errlen;
	return &s->hw;
}

// DPI-C: one beat of the simulated DRAM (tb_dram.sv); addresses past the end
// read as zero and are not written (the NPU's range checks prevent them).
// 1: the beat touches the bus-error range (its data still moves).
svBit tb_dram_read(unsigned long long h, unsigned long long addr, svBitVecVal *data)
{
	Sim *s = reinterpret_cast<Sim *>(h);
	if (addr + kBeat <= s->dram_bytes)
		memcpy(data, s->dram + addr, kBeat);
	else
		memset(data, 0, kBeat);
	return addr < s->berr_hi && addr + kBeat > s->berr_lo;
}

svBit tb_dram_write(unsigned long long h, unsigned long long addr, const svBitVecVal *data,
		    const svBitVecVal *strb)
{
	Sim *s = reinterpret_cast<Sim *>(h);
	if (addr + kBeat > s->dram_bytes)
		return 0;
	const uint8_t *d = reinterpret_cast<const uint8_t *>(data);
	for (unsigned i = 0; i < kBeat; i++)
		if ((strb[i / 32] >> (i % 32)) & 1u)
			s->dram[addr + i] = d[i];
	return addr < s->berr_hi && addr + kBeat > s->berr_lo;
}
}
