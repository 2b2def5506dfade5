// sc_regs.h - what the SystemC module tests (test_npu_sc.cpp for the
// loosely-timed module, test_npu_ca.cpp for the cycle-accurate one) share:
// a 32-bit register access through a TLM initiator socket (with a length
// and byte enables of the caller's choosing, to provoke the base
// protocol's error responses), a response status's name, the first
// register checks both make (ID, HW_FINGERPRINT), and the copy program both
// run.
#ifndef LOOM_TESTS_SC_REGS_H
#define LOOM_TESTS_SC_REGS_H

#include <cstdint>

#include <cstring>

#include <systemc>
#include <tlm>

extern "C" {
#include "loom/hwcfg.h"
#include "loom/isa.h"
#include "loom/regs.h"
#include "tests/unit/check.h"
}

inline const char *resp_name(tlm::tlm_response_status r)
{
	switch (r) {
	case tlm::TLM_OK_RESPONSE: return "TLM_OK_RESPONSE";
	case tlm::TLM_INCOMPLETE_RESPONSE: return "TLM_INCOMPLETE_RESPONSE";
	case tlm::TLM_GENERIC_ERROR_RESPONSE: return "TLM_GENERIC_ERROR_RESPONSE";
	case tlm::TLM_ADDRESS_ERROR_RESPONSE: return "TLM_ADDRESS_ERROR_RESPONSE";
	case tlm::TLM_COMMAND_ERROR_RESPONSE: return "TLM_COMMAND_ERROR_RESPONSE";
	case tlm::TLM_BURST_ERROR_RESPONSE: return "TLM_BURST_ERROR_RESPONSE";
	case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE: return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
	}
	return "?";
}

/* cmd of len bytes (v's 4 little-endian bytes, zeros after) at register
 * offset a through sock, from an SC_THREAD (waits out the annotated
 * delay); a read's first 4 bytes back into v; the response status */
template <class Socket>
tlm::tlm_response_status reg_access(Socket &sock, tlm::tlm_command cmd, uint64_t a, uint32_t &v, unsigned len = 4,
				    unsigned char *be = nullptr)
{
	unsigned char d[8] = {0};
	for (int i = 0; i < 4; i++)
		d[i] = (unsigned char)(v >> (8 * i));
	tlm::tlm_generic_payload t;
	t.set_command(cmd);
	t.set_address(a);
	t.set_data_ptr(d);
	t.set_data_length(len);
	t.set_streaming_width(len);
	t.set_byte_enable_ptr(be);
	t.set_byte_enable_length(be ? len : 0);
	t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
	sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
	sock->b_transport(t, delay);
	sc_core::wait(delay);
	v = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
	return t.get_response_status();
}

/* ID reads LOOM_ID_VALUE and HW_FINGERPRINT cfg's fingerprint, both with
 * TLM_OK_RESPONSE (two checks) */
template <class Socket>
void check_id_regs(Socket &sock, const loom_hwcfg &cfg)
{
	uint32_t v = 0;
	tlm::tlm_response_status r = reg_access(sock, tlm::TLM_READ_COMMAND, LOOM_REG_ID, v);
	CHECK(r == tlm::TLM_OK_RESPONSE && v == LOOM_ID_VALUE, "regs: ID reads 0x%08x with %s", v, resp_name(r));
	v = 0;
	r = reg_access(sock, tlm::TLM_READ_COMMAND, LOOM_REG_HW_FINGERPRINT, v);
	CHECK(r == tlm::TLM_OK_RESPONSE && v == cfg.fingerprint,
	      "regs: HW_FINGERPRINT reads %08x, the configuration's %08x", v, cfg.fingerprint);
}

/* p[0..4]: LOAD lines rows of R bytes from DRAM in into SP, an ELTWISE
 * of no planes between them (the queue's handshake), STORE them to out, a
 * MARK (id 77) at mark, FINISH */
inline void copy_program(loom_insn *p, uint32_t R, uint32_t lines, uint32_t in, uint32_t out, uint32_t mark)
{
	loom_copy_program(p, R, lines, in, out, 1, mark, 77);
}

#endif
