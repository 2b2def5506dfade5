/* loom_npu_sc.h - the Loom NPU as a SystemC TLM-2.0 module, for virtual
 * platforms (issue 13; the reference platform is systemc/vp.cpp). A user
 * includes this header, links build/systemc/libloom_npu_sc.a and
 * -lsystemc, and binds three things:
 *   regs  a TLM-2.0 target socket for the MMIO registers of
 *         include/loom/regs.def, at offsets 0 .. 0xfff of the socket (32-bit
 *         little-endian words; anything else gets an error response);
 *   dram  a TLM-2.0 initiator socket for device DRAM: every memory access
 *         of the NPU goes through it - instruction fetch, the LOAD and
 *         STORE rows of the DMA engines, MARK records, the control core's
 *         DRAM window. Device DRAM byte 0 is at address dram_base;
 *   irq   the interrupt line (sc_out<bool>), high while an enabled
 *         IRQ_STATUS or HOST_IRQ_STATUS bit is set.
 *
 * Fidelity: loosely timed (npu_lt), backed by the bit-exact C model
 * (cmodel/, through include/loom/hw.h): the same firmware, ISA and results
 * as the other backends. Time is the C model's cycle count times the clock
 * period: model cycle c is simulation time c * clock. The module runs the
 * model ahead of the kernel by up to the global quantum
 * (tlm::tlm_global_quantum; temporal decoupling through a
 * tlm_utils::tlm_quantumkeeper) and then synchronizes; it stops early, and
 * synchronizes, at each rising edge of the interrupt line, so the line
 * rises at the model's own cycle. While the tensor engine is idle and the
 * control core sleeps in WFI it does not run ahead at all: it waits for a
 * register write or the core's timer. A register access at time t first
 * brings a model that is behind t up to t; one that is ahead (by at most a
 * quantum) takes the access at its own time, and the access's delay grows
 * to that time, so a caller never sees the device's state before the
 * device's own time - the loosely timed error: an access takes effect up
 * to a quantum late. A register access adds reg_cycles to the delay.
 *
 * DRAM transactions carry the model's cycle of the access as the b_transport
 * delay (relative to the kernel's time). The delay the memory adds is not
 * used: the C model's own DRAM timing (latency and bandwidth, npu_params)
 * already decides when the engines finish; the reference platform gives its
 * memory the same two numbers. DMI is asked for when the memory allows it
 * and used for every access it covers; invalidate_direct_mem_ptr drops it.
 * A transaction answered with an error response is counted in
 * traffic().errors and is the C model port's error: the fetch, LOAD, STORE
 * or MARK it belongs to ends the run with BUS_ERROR (docs/ISA.md, "Bus
 * errors"); for the control core's window it is ignored. */
#ifndef LOOM_NPU_SC_H
#define LOOM_NPU_SC_H

#include <cstdint>
#include <deque>
#include <utility>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

/* C headers without their own extern "C" (hwcfg.h first: hw.h includes it) */
extern "C" {
#include "loom/hwcfg.h"
}
#include "loom/cmodel_port.h"
#include "loom/hw.h"

namespace loom_sc {

struct npu_params {
	sc_core::sc_time clock = sc_core::sc_time(1, sc_core::SC_NS); /* one NPU cycle */
	uint64_t dram_base = 0;      /* address of device DRAM byte 0 on the dram socket */
	uint32_t dram_latency = 0;   /* the C model's DRAM latency in cycles; 0: the configuration's */
	uint32_t dram_bw = 0;        /* its bytes per cycle; 0: the configuration's */
	uint32_t cmodel_flags = 0;   /* LOOM_CMODEL_* of include/loom/hw.h */
	uint32_t reg_cycles = 1;     /* cycles a register access adds to the caller's delay */
};

/* what went through the dram socket, per LOOM_CMODEL_PORT_* kind */
struct npu_traffic {
	uint64_t bytes[5] = {0, 0, 0, 0, 0};
	uint64_t transactions[5] = {0, 0, 0, 0, 0};
	uint64_t dmi_accesses = 0;   /* of them, done through a DMI pointer */
	uint64_t errors = 0;         /* transactions answered with an error response */
};

class npu_lt : public sc_core::sc_module {
public:
	tlm_utils::simple_target_socket<npu_lt> regs;
	tlm_utils::simple_initiator_socket<npu_lt> dram;
	sc_core::sc_out<bool> irq;

	SC_HAS_PROCESS(npu_lt);
	/* cfg: a finished configuration (loom_hwcfg_load); its DRAM size is
	 * the span of dram the NPU addresses */
	npu_lt(sc_core::sc_module_name name, const loom_hwcfg &cfg, const npu_params &p = npu_params());
	~npu_lt() override;

	uint64_t cycle() const;                  /* the model's cycle (may be ahead of the kernel) */
	const npu_traffic &traffic() const { return m_traffic; }
	const loom_hwcfg &config() const { return m_cfg; }

private:
	loom_hwcfg m_cfg;
	npu_params m_p;
	loom_hw *m_hw = nullptr;
	uint64_t m_clk = 1;                      /* the clock period in time resolution units */
	tlm_utils::tlm_quantumkeeper m_qk;
	sc_core::sc_event m_wake;                /* a register write: the model may have work */
	sc_core::sc_event m_irq_ev;              /* the next change of m_irq_q is due */
	std::deque<std::pair<uint64_t, bool>> m_irq_q; /* (cycle, level) the line takes */
	bool m_irq_level = false;                /* the level last queued */
	tlm::tlm_generic_payload m_trans;
	tlm::tlm_dmi m_dmi;
	bool m_dmi_ok = false;
	npu_traffic m_traffic;

	sc_core::sc_time time_of(uint64_t c) const;
	uint64_t cycle_at(const sc_core::sc_time &t) const;
	void catch_up(uint64_t c);
	void note_irq();
	void run_thread();
	void irq_method();
	void reg_b_transport(tlm::tlm_generic_payload &t, sc_core::sc_time &delay);
	unsigned reg_dbg(tlm::tlm_generic_payload &t);
	void invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end);
	int dram_access(tlm::tlm_command cmd, unsigned kind, uint64_t addr, void *buf, size_t n, uint64_t cycle);
	static int port_read(void *ctx, unsigned kind, uint64_t addr, void *buf, size_t n, uint64_t cycle);
	static int port_write(void *ctx, unsigned kind, uint64_t addr, const void *buf, size_t n, uint64_t cycle);
};

/* an offset of the register block that regs.def maps (a register, a perf
 * counter or an energy event counter) */
bool npu_reg_mapped(uint64_t off);

/* the base-protocol check of a register transaction, the same on both
 * fidelities: no byte enables (BYTE_ENABLE_ERROR), one 32-bit word
 * (BURST_ERROR), a mapped offset (ADDRESS_ERROR); else TLM_OK_RESPONSE */
tlm::tlm_response_status npu_reg_check(const tlm::tlm_generic_payload &t);

} // namespace loom_sc

#endif
