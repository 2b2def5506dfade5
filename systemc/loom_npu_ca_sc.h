/* loom_npu_ca_sc.h - the Loom NPU as a cycle-accurate SystemC TLM-2.0
 * module (issue 13's second fidelity): the verilated RTL (the files of rtl/npu.f, the
 * same model as the rtl backend's, with its simulated DRAM tb_dram) behind
 * the same three ports as the loosely timed npu_lt of loom_npu_sc.h:
 *   regs  TLM-2.0 target socket: the MMIO registers at offsets 0 .. 0xfff
 *         (32-bit little-endian words; the same error responses as npu_lt);
 *   dram  TLM-2.0 initiator socket: every byte the NPU reads or writes in
 *         device DRAM (instruction fetch, DMA rows, MARK records, the
 *         control core's DRAM window). Each AXI burst the RTL issues is one
 *         b_transport with the burst's byte count as length and streaming
 *         width (writes carry the burst's strobes as byte enables); DRAM
 *         byte 0 is at address npu_params::dram_base;
 *   irq   sc_out<bool>, the RTL's interrupt output.
 * The module is built per hardware configuration, into
 * build/hw/NAME/libloom_systemc_rtl.so with the reference virtual platform
 * (make systemc-rtl HW=NAME; systemc/vp.cpp, backend "systemc-rtl").
 *
 * Timing: the RTL's clock runs with simulation time, one rising edge per
 * npu_params::clock, at the middle of each period (times (k + 1/2) *
 * clock); cycle() counts the edges, the five of reset (done at
 * construction, at time 0) included. The DRAM timing is the RTL's own:
 * tb_dram's latency and bandwidth (npu_params::dram_latency, dram_bw; 0:
 * the configuration's) decide when data moves, so device cycles are the
 * rtl backend's. A burst's bytes move through the socket when its first
 * read beat is taken, or when its last write beat is; the delay the memory
 * annotates is not used, and the memory's b_transport is called from the
 * module's clock thread. An error response to a burst (counted in
 * traffic().errors; a read burst's bytes then read as zeros) is the
 * burst's RRESP on every beat, or its BRESP, SLVERR: the fetch, LOAD,
 * STORE or MARK it belongs to ends the run with BUS_ERROR (docs/ISA.md,
 * "Bus errors"); the control core's accesses ignore it.
 *
 * A register read is served at the caller's time (after waiting out the
 * caller's delay), without a clock edge, as the rtl backend's MMIO read;
 * a write is taken by the next rising edge, and its delay ends half a
 * period after that edge. npu_params::cmodel_flags and reg_cycles do not
 * apply. */
#ifndef LOOM_NPU_CA_SC_H
#define LOOM_NPU_CA_SC_H

#include <cstdint>

#include "loom_npu_sc.h"

namespace loom_sc {

/* what went through the dram socket */
struct npu_ca_traffic {
	uint64_t read_bursts = 0, read_bytes = 0;
	uint64_t write_bursts = 0, write_bytes = 0;
	uint64_t errors = 0;         /* bursts answered with an error response */
};

class npu_ca : public sc_core::sc_module {
public:
	tlm_utils::simple_target_socket<npu_ca> regs;
	tlm_utils::simple_initiator_socket<npu_ca> dram;
	sc_core::sc_out<bool> irq;

	SC_HAS_PROCESS(npu_ca);
	/* cfg: the configuration this library was built for (its fingerprint
	 * is checked; a mismatch is an SC_REPORT_ERROR) */
	npu_ca(sc_core::sc_module_name name, const loom_hwcfg &cfg, const npu_params &p = npu_params());
	~npu_ca() override;
	npu_ca(const npu_ca &) = delete;
	npu_ca &operator=(const npu_ca &) = delete;

	uint64_t cycle() const;      /* rising edges so far, reset's included */
	const npu_ca_traffic &traffic() const;
	const loom_hwcfg &config() const { return m_cfg; }

	struct impl;                 /* the verilated model and the burst buffers */

private:
	loom_hwcfg m_cfg;
	npu_params m_p;
	impl *m;

	void clock_thread();
	void reg_b_transport(tlm::tlm_generic_payload &t, sc_core::sc_time &delay);
	unsigned reg_dbg(tlm::tlm_generic_payload &t);
};

} // namespace loom_sc

#endif
