/* loom_mem_sc.h - a TLM-2.0 memory for the reference virtual platform
 * (systemc/vp.cpp): the NPU's device DRAM, with a latency and a bandwidth.
 * Any number of initiators bind to its one multi-passthrough target socket.
 *
 * b_transport: an access of n bytes starts when the memory is free (it
 * serves one transfer at a time, in the order of their start times as the
 * callers present them) and takes latency + ceil(n / bytes_per_cycle)
 * cycles; the delay argument grows by the wait, the latency and the
 * transfer. Reads and writes, with byte enables (honoured, the pattern
 * repeated over the data); a streaming width below the length, an address
 * range past the end, or a command other than read, write and ignore get
 * the base protocol's error responses. An error range (err_size > 0: a
 * test's bus fault, loom_hw_opts.bus_err_*) answers every read or write
 * that touches it with err_status (TLM_GENERIC_ERROR_RESPONSE unless set)
 * and moves nothing. DMI to the whole array (read and write) when allowed
 * (dmi = true) and no error range is set; debug transport always (it
 * ignores the error range: the host's copies). */
#ifndef LOOM_MEM_SC_H
#define LOOM_MEM_SC_H

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace loom_sc {

struct memory_params {
	sc_core::sc_time clock = sc_core::sc_time(1, sc_core::SC_NS);
	uint32_t latency = 40;         /* cycles from request to the first byte */
	uint32_t bytes_per_cycle = 16; /* bandwidth */
	bool dmi = true;               /* grant DMI */
	uint64_t err_base = 0, err_size = 0; /* the error range, [err_base, err_base + err_size) */
	tlm::tlm_response_status err_status = tlm::TLM_GENERIC_ERROR_RESPONSE;
};

class memory : public sc_core::sc_module {
public:
	tlm_utils::multi_passthrough_target_socket<memory> socket;

	memory(sc_core::sc_module_name name, uint64_t bytes, const memory_params &p = memory_params());
	~memory() override;
	memory(const memory &) = delete;
	memory &operator=(const memory &) = delete;
	uint8_t *data() { return m_mem; }
	/* every initiator's DMI pointer to the memory is withdrawn
	 * (invalidate_direct_mem_ptr over the whole array) */
	void invalidate_dmi();
	uint64_t size() const { return m_size; }
	/* answer [base, base + size) with status from now on (size 0: no
	 * range); withdraws every DMI pointer, DMI is not granted while set */
	void set_error_range(uint64_t base, uint64_t size,
			     tlm::tlm_response_status status = tlm::TLM_GENERIC_ERROR_RESPONSE);

private:
	uint8_t *m_mem;            /* zeroed pages, touched when used */
	uint64_t m_size;
	memory_params m_p;
	sc_core::sc_time m_free;   /* the memory is busy until then */

	void b_transport(int id, tlm::tlm_generic_payload &t, sc_core::sc_time &delay);
	bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload &t, tlm::tlm_dmi &dmi);
	unsigned transport_dbg(int id, tlm::tlm_generic_payload &t);
	bool copy(tlm::tlm_generic_payload &t);
};

} // namespace loom_sc

#endif
