// npu_ca.cpp - the cycle-accurate NPU module of loom_npu_ca_sc.h: the
// verilated tb_top (the NPU and tb_dram's timing, as the rtl backend's
// verilator_tb/sim.cpp runs it) clocked by a SystemC thread, its MMIO port
// behind the register socket, and tb_dram's data calls (DPI-C) turned into
// one TLM transaction per AXI burst on the DRAM socket; the bursts' address
// and length come from verilator_tb/tb_dram_tap.sv. An error response to a
// burst's transaction answers every beat of a read burst (RRESP) or the
// write burst (BRESP) with SLVERR, and the NPU ends the run with BUS_ERROR
// (docs/ISA.md). Built with the model of one configuration (Makefile:
// systemc-rtl).
// the verilated model first: verilated.h takes the simulation time from
// SystemC when SystemC's headers come before it (this module keeps its own)
#include "Vtb_top.h"
#include "Vtb_top__Dpi.h"
#include "loom_clocks.h"
#include "verilated.h"

#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "loom_npu_ca_sc.h"

extern "C" {
#include "loom_cfg.h"
}

using namespace sc_core;

namespace loom_sc {

namespace {
constexpr unsigned kBeat = LOOM_CFG_DRAM_BEAT_BYTES;
}

struct npu_ca::impl {
	npu_ca *self;
	std::unique_ptr<VerilatedContext> ctx;
	std::unique_ptr<Vtb_top> top;
	svScope scope = nullptr;              // tb_top's, for its DPI-C export tb_mmio
	uint64_t cycles = 0;
	uint64_t dram_bytes = 0;
	sc_time next_edge;                    // the next rising edge not yet taken
	std::deque<std::pair<uint32_t, uint32_t>> writes; // (offset, value) for the next edges
	struct burst {
		uint32_t addr, beats;
	};
	std::deque<burst> rq, wq;             // bursts accepted, not yet moved
	std::vector<uint8_t> rbuf, wbuf, wbe;
	uint32_t rnext = 0, rleft = 0;        // the read burst being served: next beat address, beats left
	bool rerr = false;                    // its transaction had an error response
	uint32_t waddr = 0, wgot = 0, wbeats = 0;
	tlm::tlm_generic_payload trans;
	npu_ca_traffic traffic;

	// one clock cycle: the rising edge evaluated, the falling one set
	// without an evaluation where the model allows it (loom_fall() of
	// loom_clocks.h, scripts/rtl_clocks.sh; as verilator_tb/sim.cpp)
	void edge()
	{
		top->clk_i = 1;
		top->eval();
#if LOOM_FAST_FALL
		loom_fall(top->rootp);
#else
		top->clk_i = 0;
		top->eval();
#endif
		cycles++;
	}
	// the MMIO request (tb_top.sv: a DPI-C export, not input ports, as in
	// verilator_tb/sim.cpp); set with the clock low
	void mmio(bool req, bool we, uint32_t addr, uint32_t wdata)
	{
		svSetScope(scope);
		tb_mmio(req, we, addr & 0xfff, wdata);
	}
	void write_edge(uint32_t off, uint32_t val)
	{
		mmio(true, true, off, val);
		top->eval();  // the request settles before the edge, where npu_cc's clock gate takes it
		edge();
		mmio(false, false, 0, 0);
		top->eval();
	}
	uint32_t read(uint32_t off)
	{
		mmio(true, false, off, 0);
		top->eval();
		uint32_t v = top->mmio_rdata_o;
		mmio(false, false, 0, 0);
		top->eval();
		return v;
	}
	// one burst through the socket: n bytes at DRAM address a; the part
	// past the end of DRAM is not moved (reads zeros, as in the rtl backend).
	// true: an error response (a read's bytes are zeros)
	bool transport(tlm::tlm_command cmd, uint32_t a, uint8_t *d, uint8_t *be, uint32_t n)
	{
		uint32_t in = a >= dram_bytes ? 0 : (uint32_t)(dram_bytes - a < n ? dram_bytes - a : n);
		in -= in % kBeat;
		if (cmd == tlm::TLM_READ_COMMAND)
			memset(d + in, 0, n - in);
		if (!in)
			return false;
		tlm::tlm_generic_payload &t = trans;
		t.set_command(cmd);
		t.set_address(self->m_p.dram_base + a);
		t.set_data_ptr(d);
		t.set_data_length(in);
		t.set_streaming_width(in);
		t.set_byte_enable_ptr(be);
		t.set_byte_enable_length(be ? in : 0);
		t.set_dmi_allowed(false);
		t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
		sc_time delay = SC_ZERO_TIME;
		self->dram->b_transport(t, delay);
		if (t.is_response_error()) {
			traffic.errors++;
			if (cmd == tlm::TLM_READ_COMMAND)
				memset(d, 0, in);
			return true;
		}
		return false;
	}
	void burst_accepted(bool write, uint32_t addr, uint32_t len)
	{
		(write ? wq : rq).push_back(burst{addr, len + 1});
	}
	bool read_beat(uint64_t addr, uint8_t *data)
	{
		if (!rleft || addr != rnext) {
			burst b{(uint32_t)addr, 1};
			if (!rq.empty()) {
				b = rq.front();
				rq.pop_front();
			}
			if (b.addr != addr) {
				fprintf(stderr, "loom_npu_ca: read beat at 0x%llx, the burst accepted is at 0x%x\n",
					(unsigned long long)addr, b.addr);
				b = burst{(uint32_t)addr, 1};
			}
			rbuf.resize((size_t)b.beats * kBeat);
			rerr = transport(tlm::TLM_READ_COMMAND, b.addr, rbuf.data(), nullptr, b.beats * kBeat);
			traffic.read_bursts++;
			traffic.read_bytes += (uint64_t)b.beats * kBeat;
			rnext = b.addr;
			rleft = b.beats;
		}
		memcpy(data, rbuf.data() + (rbuf.size() - (size_t)rleft * kBeat), kBeat);
		rnext += kBeat;
		rleft--;
		return rerr;
	}
	// true on the last beat of a burst whose transaction had an error response
	bool write_beat(uint64_t addr, const uint8_t *data, const svBitVecVal *strb)
	{
		if (!wbeats) {
			burst b{(uint32_t)addr, 1};
			if (!wq.empty()) {
				b = wq.front();
				wq.pop_front();
			}
			waddr = b.addr;
			wbeats = b.beats;
			wgot = 0;
			wbuf.assign((size_t)b.beats * kBeat, 0);
			wbe.assign((size_t)b.beats * kBeat, 0);
		}
		uint32_t o = wgot * kBeat;
		if (addr != waddr + o)
			fprintf(stderr, "loom_npu_ca: write beat at 0x%llx, the burst expects 0x%x\n",
				(unsigned long long)addr, waddr + o);
		memcpy(wbuf.data() + o, data, kBeat);
		for (unsigned i = 0; i < kBeat; i++)
			wbe[o + i] = ((strb[i / 32] >> (i % 32)) & 1u) ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
		bool bad = false;
		if (++wgot == wbeats) {
			bad = transport(tlm::TLM_WRITE_COMMAND, waddr, wbuf.data(), wbe.data(), wbeats * kBeat);
			traffic.write_bursts++;
			traffic.write_bytes += (uint64_t)wbeats * kBeat;
			wbeats = 0;
		}
		return bad;
	}
};

npu_ca::npu_ca(sc_module_name name, const loom_hwcfg &cfg, const npu_params &p)
	: sc_module(name), regs("regs"), dram("dram"), irq("irq"), m_cfg(cfg), m_p(p), m(new impl())
{
	if (cfg.fingerprint != LOOM_CFG_FINGERPRINT) {
		char msg[160];
		snprintf(msg, sizeof msg, "this RTL was built for configuration fingerprint %08x, asked for %08x",
			 (unsigned)LOOM_CFG_FINGERPRINT, (unsigned)cfg.fingerprint);
		SC_REPORT_ERROR("loom_npu_ca", msg);
	}
	m->self = this;
	m->dram_bytes = cfg.dram_bytes;
	m->ctx.reset(new VerilatedContext);
	m->ctx->randReset(0);
	m->top.reset(new Vtb_top(m->ctx.get(), "tb_top"));
	Vtb_top *top = m->top.get();
	top->dram_handle_i = reinterpret_cast<uint64_t>(m);
	top->dram_latency_i = p.dram_latency ? p.dram_latency : cfg.dram_latency;
	top->dram_bw_i = p.dram_bw ? p.dram_bw : cfg.dram_bw;
	if (top->dram_bw_i > kBeat)
		top->dram_bw_i = kBeat;
	// reset as the rtl backend does: four edges in reset, one after
	Verilated::threadContextp(m->ctx.get());  // (scopes are looked up in it)
	m->scope = svGetScopeFromName("tb_top.tb_top");
	if (!m->scope)
		SC_REPORT_ERROR("loom_npu_ca", "the verilated model has no scope tb_top.tb_top (tb_mmio)");
	m->mmio(false, false, 0, 0);
	top->clk_i = 0;
	top->rst_ni = 0;
	top->eval();
	for (int i = 0; i < 4; i++)
		m->edge();
	top->rst_ni = 1;
	top->eval();
	m->edge();
	m->next_edge = p.clock / 2;
	regs.register_b_transport(this, &npu_ca::reg_b_transport);
	regs.register_transport_dbg(this, &npu_ca::reg_dbg);
	SC_THREAD(clock_thread);
}

npu_ca::~npu_ca()
{
	m->top->final();
	delete m;
}

uint64_t npu_ca::cycle() const
{
	return m->cycles;
}

const npu_ca_traffic &npu_ca::traffic() const
{
	return m->traffic;
}

void npu_ca::clock_thread()
{
	bool level = false;
	irq.write(false);
	for (;;) {
		sc_time now = sc_core::sc_time_stamp();
		if (m->next_edge > now)
			wait(m->next_edge - now);
		if (m->writes.empty()) {
			m->edge();
		} else {
			m->write_edge(m->writes.front().first, m->writes.front().second);
			m->writes.pop_front();
		}
		m->next_edge += m_p.clock;
		bool l = m->top->irq_o != 0;
		if (l != level) {
			level = l;
			irq.write(l);
		}
	}
}

void npu_ca::reg_b_transport(tlm::tlm_generic_payload &t, sc_time &delay)
{
	uint64_t a = t.get_address();
	tlm::tlm_response_status rs = npu_reg_check(t);
	if (rs != tlm::TLM_OK_RESPONSE) {
		t.set_response_status(rs);
		return;
	}
	if (t.is_write() || t.is_read()) {
		// the access happens at the caller's time
		if (delay > SC_ZERO_TIME) {
			wait(delay);
			delay = SC_ZERO_TIME;
		}
		unsigned char *d = t.get_data_ptr();
		if (t.is_read()) {
			uint32_t v = m->read((uint32_t)a);
			for (int i = 0; i < 4; i++)
				d[i] = (unsigned char)(v >> (8 * i));
		} else {
			uint32_t v = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
			m->writes.emplace_back((uint32_t)a, v);
			// taken by the edge after those of the writes queued before it
			sc_time edge = m->next_edge + static_cast<double>(m->writes.size() - 1) * m_p.clock;
			delay = edge + m_p.clock / 2 - sc_core::sc_time_stamp();
		}
	}
	t.set_response_status(tlm::TLM_OK_RESPONSE);
}

// Debug reads of the registers (no time, no clock edge: reads only).
unsigned npu_ca::reg_dbg(tlm::tlm_generic_payload &t)
{
	uint64_t a = t.get_address();
	if (!t.is_read() || t.get_data_length() != 4 || !npu_reg_mapped(a))
		return 0;
	uint32_t v = m->read((uint32_t)a);
	for (int i = 0; i < 4; i++)
		t.get_data_ptr()[i] = (unsigned char)(v >> (8 * i));
	return 4;
}

} // namespace loom_sc

// DPI-C of tb_dram.sv and tb_dram_tap.sv; h is the module's impl
extern "C" {

void tb_dram_burst(unsigned long long h, svBit write, unsigned addr, unsigned len)
{
	reinterpret_cast<loom_sc::npu_ca::impl *>(h)->burst_accepted(write != 0, addr, len);
}

svBit tb_dram_read(unsigned long long h, unsigned long long addr, svBitVecVal *data)
{
	return reinterpret_cast<loom_sc::npu_ca::impl *>(h)->read_beat(addr, reinterpret_cast<uint8_t *>(data));
}

svBit tb_dram_write(unsigned long long h, unsigned long long addr, const svBitVecVal *data, const svBitVecVal *strb)
{
	return reinterpret_cast<loom_sc::npu_ca::impl *>(h)->write_beat(addr, reinterpret_cast<const uint8_t *>(data),
									 strb);
}
}
