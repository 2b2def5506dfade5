// npu_lt.cpp - the loosely timed NPU module of loom_npu_sc.h: the C model
// (include/loom/hw.h) behind a register target socket, a DRAM initiator
// socket and an interrupt line. The header's top comment says how model
// cycles map to simulation time and where the loosely timed error lies.
#include "loom_npu_sc.h"

#include <cstring>

#include "loom/isa.h"

using namespace sc_core;

namespace loom_sc {

tlm::tlm_response_status npu_reg_check(const tlm::tlm_generic_payload &t)
{
	if (t.get_byte_enable_ptr())
		return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
	if (t.get_data_length() != 4 || t.get_streaming_width() < 4)
		return tlm::TLM_BURST_ERROR_RESPONSE;
	if (!npu_reg_mapped(t.get_address()))
		return tlm::TLM_ADDRESS_ERROR_RESPONSE;
	return tlm::TLM_OK_RESPONSE;
}

bool npu_reg_mapped(uint64_t off)
{
	if (off & 3)
		return false;
	if (off >= LOOM_REG_CTR_BASE && off < LOOM_REG_CTR_BASE + 4u * LOOM_CTR_COUNT)
		return true;
	if (off >= LOOM_REG_EVT_BASE && off < LOOM_REG_EVT_BASE + 4u * LOOM_EVT_COUNT)
		return true;
	switch (off) {
#define LOOM_REG(n, o, acc, doc) case o:
#include "loom/regs.def"
#undef LOOM_REG
		return true;
	default:
		return false;
	}
}

npu_lt::npu_lt(sc_module_name name, const loom_hwcfg &cfg, const npu_params &p)
	: sc_module(name), regs("regs"), dram("dram"), irq("irq"), m_cfg(cfg), m_p(p)
{
	m_clk = p.clock.value();
	if (!m_clk)
		SC_REPORT_ERROR("loom_npu", "the clock period is below the time resolution");
	loom_hw_opts o{};
	o.dram_latency = p.dram_latency;
	o.dram_bw = p.dram_bw;
	o.cmodel_flags = p.cmodel_flags;
	char err[512];
	m_hw = loom_cmodel_open(&cfg, &o, err, sizeof err);
	if (!m_hw)
		SC_REPORT_ERROR("loom_npu", err);
	loom_cmodel_port port = {this, port_read, port_write};
	loom_cmodel_set_port(m_hw, &port);
	regs.register_b_transport(this, &npu_lt::reg_b_transport);
	regs.register_transport_dbg(this, &npu_lt::reg_dbg);
	dram.register_invalidate_direct_mem_ptr(this, &npu_lt::invalidate_dmi);
	SC_THREAD(run_thread);
	SC_METHOD(irq_method);
	sensitive << m_irq_ev;
	dont_initialize();
}

npu_lt::~npu_lt()
{
	loom_hw_close(m_hw);
}

sc_time npu_lt::time_of(uint64_t c) const
{
	return sc_time::from_value(c * m_clk);
}

uint64_t npu_lt::cycle_at(const sc_time &t) const
{
	return t.value() / m_clk;
}

uint64_t npu_lt::cycle() const
{
	return loom_hw_cycles(m_hw);
}

// Queue the line's level at the model's cycle when it changed; irq_method
// drives it at that time.
void npu_lt::note_irq()
{
	bool l = loom_hw_irq(m_hw) != 0;
	if (l == m_irq_level)
		return;
	m_irq_level = l;
	uint64_t c = loom_hw_cycles(m_hw);
	m_irq_q.emplace_back(c, l);
	sc_time t = time_of(c), now = sc_time_stamp();
	m_irq_ev.notify(t > now ? t - now : SC_ZERO_TIME);
}

void npu_lt::irq_method()
{
	uint64_t now = cycle_at(sc_time_stamp());
	bool any = false, l = false;
	while (!m_irq_q.empty() && m_irq_q.front().first <= now) {
		l = m_irq_q.front().second;
		m_irq_q.pop_front();
		any = true;
	}
	if (any)
		irq.write(l);
	if (!m_irq_q.empty())
		m_irq_ev.notify(time_of(m_irq_q.front().first) - sc_time_stamp());
}

// Bring a model that is behind cycle c up to it (in the caller's context:
// the model's DRAM transactions carry their own times).
void npu_lt::catch_up(uint64_t c)
{
	for (uint64_t now = loom_hw_cycles(m_hw); now < c; now = loom_hw_cycles(m_hw)) {
		loom_cmodel_advance(m_hw, c - now);
		note_irq();
	}
}

void npu_lt::run_thread()
{
	for (;;) {
		catch_up(cycle_at(sc_time_stamp()));
		uint64_t now = loom_hw_cycles(m_hw), q = loom_cmodel_quiet(m_hw);
		if (q > now) {
			// nothing to do before q: sleep until then or a register write
			if (q == UINT64_MAX)
				wait(m_wake);
			else
				wait(time_of(q) - sc_time_stamp(), m_wake);
			continue;
		}
		// run ahead to the end of the quantum, or to the interrupt's rise
		uint64_t end = cycle_at(sc_time_stamp() + tlm::tlm_global_quantum::instance().compute_local_quantum());
		if (end <= now)
			end = now + 1;
		loom_cmodel_advance(m_hw, end - now);
		note_irq();
		m_qk.set(time_of(loom_hw_cycles(m_hw)) - sc_time_stamp());
		m_qk.sync();
	}
}

void npu_lt::reg_b_transport(tlm::tlm_generic_payload &t, sc_time &delay)
{
	uint64_t a = t.get_address();
	tlm::tlm_response_status rs = npu_reg_check(t);
	if (rs != tlm::TLM_OK_RESPONSE) {
		t.set_response_status(rs);
		return;
	}
	if (t.is_write() || t.is_read()) {
		catch_up(cycle_at(sc_time_stamp() + delay));
		unsigned char *d = t.get_data_ptr();
		uint32_t v;
		if (t.is_read()) {
			v = loom_hw_mmio_read(m_hw, (uint32_t)a);
			for (int i = 0; i < 4; i++)
				d[i] = (unsigned char)(v >> (8 * i));
		} else {
			v = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
			loom_hw_mmio_write(m_hw, (uint32_t)a, v);
			m_wake.notify(SC_ZERO_TIME);
		}
		note_irq();
		// a model ahead of the caller served the access at its own time
		sc_time mt = time_of(loom_hw_cycles(m_hw));
		if (mt > sc_time_stamp() + delay)
			delay = mt - sc_time_stamp();
	}
	delay += m_p.reg_cycles * m_p.clock;
	t.set_response_status(tlm::TLM_OK_RESPONSE);
}

// Debug reads of the registers (no time, no side effects: reads only).
unsigned npu_lt::reg_dbg(tlm::tlm_generic_payload &t)
{
	uint64_t a = t.get_address();
	if (!t.is_read() || t.get_data_length() != 4 || !npu_reg_mapped(a))
		return 0;
	uint32_t v = loom_hw_mmio_read(m_hw, (uint32_t)a);
	for (int i = 0; i < 4; i++)
		t.get_data_ptr()[i] = (unsigned char)(v >> (8 * i));
	return 4;
}

void npu_lt::invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end)
{
	if (m_dmi_ok && start <= m_dmi.get_end_address() && end >= m_dmi.get_start_address())
		m_dmi_ok = false;
}

int npu_lt::dram_access(tlm::tlm_command cmd, unsigned kind, uint64_t addr, void *buf, size_t n, uint64_t cycle)
{
	uint64_t ga = m_p.dram_base + addr;
	bool rd = cmd == tlm::TLM_READ_COMMAND;
	m_traffic.bytes[kind] += n;
	m_traffic.transactions[kind]++;
	if (m_dmi_ok && ga >= m_dmi.get_start_address() && ga + n - 1 <= m_dmi.get_end_address() &&
	    (rd ? m_dmi.is_read_allowed() : m_dmi.is_write_allowed())) {
		unsigned char *p = m_dmi.get_dmi_ptr() + (ga - m_dmi.get_start_address());
		if (rd)
			memcpy(buf, p, n);
		else
			memcpy(p, buf, n);
		m_traffic.dmi_accesses++;
		return 0;
	}
	tlm::tlm_generic_payload &t = m_trans;
	t.set_command(cmd);
	t.set_address(ga);
	t.set_data_ptr(static_cast<unsigned char *>(buf));
	t.set_data_length((unsigned)n);
	t.set_streaming_width((unsigned)n);
	t.set_byte_enable_ptr(nullptr);
	t.set_byte_enable_length(0);
	t.set_dmi_allowed(false);
	t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
	sc_time at = time_of(cycle), now = sc_time_stamp();
	sc_time delay = at > now ? at - now : SC_ZERO_TIME;
	dram->b_transport(t, delay);
	if (t.is_response_error()) {
		m_traffic.errors++;
		return -1;
	}
	if (t.is_dmi_allowed() && !m_dmi_ok) {
		m_dmi.init();
		t.set_address(ga);
		m_dmi_ok = dram->get_direct_mem_ptr(t, m_dmi);
	}
	return 0;
}

int npu_lt::port_read(void *ctx, unsigned kind, uint64_t addr, void *buf, size_t n, uint64_t cycle)
{
	return static_cast<npu_lt *>(ctx)->dram_access(tlm::TLM_READ_COMMAND, kind, addr, buf, n, cycle);
}

int npu_lt::port_write(void *ctx, unsigned kind, uint64_t addr, const void *buf, size_t n, uint64_t cycle)
{
	return static_cast<npu_lt *>(ctx)->dram_access(tlm::TLM_WRITE_COMMAND, kind, addr, const_cast<void *>(buf), n,
						       cycle);
}

} // namespace loom_sc
