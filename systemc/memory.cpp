// memory.cpp - the TLM-2.0 memory of loom_mem_sc.h (the reference virtual
// platform's device DRAM): latency, bandwidth, byte enables, DMI, debug
// transport, the base protocol's error responses, an error range.
#include "loom_mem_sc.h"

#include <cstdlib>
#include <cstring>

using namespace sc_core;

namespace loom_sc {

memory::memory(sc_module_name name, uint64_t bytes, const memory_params &p)
	: sc_module(name), socket("socket"), m_mem(static_cast<uint8_t *>(calloc(1, bytes ? bytes : 1))),
	  m_size(bytes), m_p(p), m_free(SC_ZERO_TIME)
{
	if (!m_mem)
		SC_REPORT_ERROR("loom_memory", "out of memory");
	if (!m_p.bytes_per_cycle)
		m_p.bytes_per_cycle = 1;
	socket.register_b_transport(this, &memory::b_transport);
	socket.register_get_direct_mem_ptr(this, &memory::get_direct_mem_ptr);
	socket.register_transport_dbg(this, &memory::transport_dbg);
}

memory::~memory()
{
	free(m_mem);
}

// The transfer's bytes, byte enables honoured; false: past the end.
bool memory::copy(tlm::tlm_generic_payload &t)
{
	uint64_t a = t.get_address(), n = t.get_data_length();
	if (a > m_size || n > m_size - a)
		return false;
	unsigned char *d = t.get_data_ptr(), *be = t.get_byte_enable_ptr();
	unsigned bel = t.get_byte_enable_length();
	uint8_t *m = m_mem + a;
	if (!be || !bel) {
		if (t.is_read())
			memcpy(d, m, n);
		else
			memcpy(m, d, n);
		return true;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (be[i % bel] != TLM_BYTE_ENABLED)
			continue;
		if (t.is_read())
			d[i] = m[i];
		else
			m[i] = d[i];
	}
	return true;
}

void memory::b_transport(int, tlm::tlm_generic_payload &t, sc_time &delay)
{
	uint64_t n = t.get_data_length();
	if (t.get_command() == tlm::TLM_IGNORE_COMMAND) {
		t.set_response_status(tlm::TLM_OK_RESPONSE);
		return;
	}
	if (t.get_streaming_width() < n) {
		t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
		return;
	}
	if (m_p.err_size && t.get_address() < m_p.err_base + m_p.err_size && t.get_address() + n > m_p.err_base) {
		t.set_response_status(m_p.err_status);
		return;
	}
	if (!copy(t)) {
		t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
		return;
	}
	sc_time start = sc_time_stamp() + delay;
	if (m_free > start)
		start = m_free;
	uint64_t beats = (n + m_p.bytes_per_cycle - 1) / m_p.bytes_per_cycle;
	m_free = start + static_cast<double>(beats) * m_p.clock;
	delay = m_free + static_cast<double>(m_p.latency) * m_p.clock - sc_time_stamp();
	t.set_dmi_allowed(m_p.dmi && !m_p.err_size);
	t.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool memory::get_direct_mem_ptr(int, tlm::tlm_generic_payload &, tlm::tlm_dmi &dmi)
{
	dmi.set_start_address(0);
	dmi.set_end_address(m_size - 1);
	if (!m_p.dmi || m_p.err_size)
		return false;
	dmi.set_dmi_ptr(m_mem);
	dmi.allow_read_write();
	dmi.set_read_latency(static_cast<double>(m_p.latency) * m_p.clock);
	dmi.set_write_latency(static_cast<double>(m_p.latency) * m_p.clock);
	return true;
}

void memory::set_error_range(uint64_t base, uint64_t size, tlm::tlm_response_status status)
{
	m_p.err_base = base;
	m_p.err_size = size;
	m_p.err_status = status;
	if (size)
		invalidate_dmi();
}

void memory::invalidate_dmi()
{
	for (int i = 0; i < static_cast<int>(socket.size()); i++)
		socket[i]->invalidate_direct_mem_ptr(0, m_size - 1);
}

unsigned memory::transport_dbg(int, tlm::tlm_generic_payload &t)
{
	if (t.get_command() == tlm::TLM_IGNORE_COMMAND)
		return 0;
	uint64_t a = t.get_address(), n = t.get_data_length();
	if (a >= m_size)
		return 0;
	if (n > m_size - a)
		n = m_size - a;
	if (t.is_read())
		memcpy(t.get_data_ptr(), m_mem + a, n);
	else
		memcpy(m_mem + a, t.get_data_ptr(), n);
	return static_cast<unsigned>(n);
}

} // namespace loom_sc
