// test_npu_sc.cpp - the SystemC module of systemc/loom_npu_sc.h on its own,
// in platforms this program builds (a tester thread as the host, the
// memory of loom_mem_sc.h as device DRAM):
//   - the register socket: ID and configuration registers, every response
//     status set; unmapped and misaligned offsets, bursts and byte enables
//     refused with the base protocol's error responses;
//   - the memory: byte enables honoured, the delay (latency + bytes /
//     bandwidth), a streaming width below the length and an access past the
//     end refused;
//   - a program (LOAD, a vector op, STORE, MARK, FINISH) started through the
//     registers: the copy's bytes land in the memory, the interrupt line
//     rises at START + CYCLES (the C model's own count), the bytes of the
//     transactions through the DRAM socket add up to the DRAM_RD_BYTES and
//     DRAM_WR_BYTES counters, per kind;
//   - the same on a memory that refuses DMI (every access a b_transport):
//     the same bytes, counters and interrupt time;
//   - a program with rows smaller than a beat (reads cover whole beats),
//     after the memory withdrew DMI (b_transport again, then DMI again);
//   - bus errors: the memory's error range answers TLM_GENERIC_ERROR_RESPONSE
//     (and grants no DMI); the copy program whose LOAD reads it, then one
//     whose STORE writes it, end with STATUS ERROR, ERR_CAUSE BUS_ERROR at
//     that instruction; with the range removed the copy program runs again
//     and its bytes are right.
// argv[1]: the global quantum in cycles (default 1000): the interrupt's time
// must not depend on it. Ends with "N passed, M failed" (tests/unit/check.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "systemc/loom_mem_sc.h"
#include "tests/systemc/sc_regs.h"
#include "systemc/loom_npu_sc.h"

extern "C" {
#include "loom/isa.h"
#include "tests/unit/check.h"
}

using namespace sc_core;

namespace {

#define SET(in, f, v) loom_insn_set(&(in), LOOM_F_##f, (v))

int finished; // testers done (the last one stops the simulation)
const uint64_t IN = 0x1000, OUT = 0x2000, MARKA = 0x3000, PROG = 0x4000, PROG2 = 0x5000, OUT2 = 0x6000;

struct result {
	uint32_t status = 0, cause = 0, pc = 0, cycles = 0, rd = 0, wr = 0;
	uint64_t start = 0, irq_at = 0;
	loom_sc::npu_traffic traffic;
	bool copied = false;
};

struct tester : sc_module {
	tlm_utils::simple_initiator_socket<tester> regs;
	tlm_utils::simple_initiator_socket<tester> memsock;
	sc_in<bool> irq;
	loom_sc::memory *mem;
	loom_sc::npu_lt *npu;
	const loom_hwcfg &cfg;
	bool protocol;     // check the register protocol too
	result res, res2, res_ld, res_st, res_after;
	uint32_t pc_ld = 0, pc_st = 0;
	sc_time clk = sc_time(1, SC_NS);

	SC_HAS_PROCESS(tester);
	tester(sc_module_name n, const loom_hwcfg &c, loom_sc::memory *m, loom_sc::npu_lt *u, bool proto)
		: sc_module(n), regs("regs"), memsock("memsock"), irq("irq"), mem(m), npu(u), cfg(c), protocol(proto)
	{
		SC_THREAD(main);
	}

	tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t a, uint32_t &v, unsigned len = 4,
					unsigned char *be = nullptr)
	{
		return reg_access(regs, cmd, a, v, len, be);
	}
	uint32_t rd(uint64_t a)
	{
		uint32_t v = 0;
		access(tlm::TLM_READ_COMMAND, a, v);
		return v;
	}
	void wr(uint64_t a, uint32_t v) { access(tlm::TLM_WRITE_COMMAND, a, v); }

	void check_protocol()
	{
		check_id_regs(regs, cfg);
		uint32_t v = 0;
		tlm::tlm_response_status r;
		static const uint64_t unmapped[] = {0x044 + 4 * LOOM_CTR_COUNT, 0x0bc, 0x144, 0x800, 0xffc, 0x1000, 0x2};
		for (uint64_t a : unmapped) {
			r = access(tlm::TLM_READ_COMMAND, a, v);
			CHECK(r == tlm::TLM_ADDRESS_ERROR_RESPONSE, "regs: read of offset 0x%llx: %s",
			      (unsigned long long)a, resp_name(r));
			r = access(tlm::TLM_WRITE_COMMAND, a, v);
			CHECK(r == tlm::TLM_ADDRESS_ERROR_RESPONSE, "regs: write of offset 0x%llx: %s",
			      (unsigned long long)a, resp_name(r));
		}
		r = access(tlm::TLM_READ_COMMAND, LOOM_REG_ID, v, 8);
		CHECK(r == tlm::TLM_BURST_ERROR_RESPONSE, "regs: an 8-byte read: %s", resp_name(r));
		r = access(tlm::TLM_READ_COMMAND, LOOM_REG_ID, v, 2);
		CHECK(r == tlm::TLM_BURST_ERROR_RESPONSE, "regs: a 2-byte read: %s", resp_name(r));
		unsigned char be[4] = {0xff, 0xff, 0, 0};
		r = access(tlm::TLM_WRITE_COMMAND, LOOM_REG_INSN_BASE, v, 4, be);
		CHECK(r == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "regs: a write with byte enables: %s", resp_name(r));
	}

	// the memory's side of the base protocol
	tlm::tlm_response_status mem_access(tlm::tlm_command cmd, uint64_t a, unsigned char *d, unsigned len,
					    unsigned sw, unsigned char *be, unsigned bel, sc_time &delay)
	{
		tlm::tlm_generic_payload t;
		t.set_command(cmd);
		t.set_address(a);
		t.set_data_ptr(d);
		t.set_data_length(len);
		t.set_streaming_width(sw);
		t.set_byte_enable_ptr(be);
		t.set_byte_enable_length(bel);
		t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
		memsock->b_transport(t, delay);
		return t.get_response_status();
	}

	void check_memory()
	{
		unsigned char d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, be[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
		uint64_t a = 0x7000;
		memset(mem->data() + a, 0xee, 8);
		sc_time delay = SC_ZERO_TIME;
		tlm::tlm_response_status r = mem_access(tlm::TLM_WRITE_COMMAND, a, d, 8, 8, be, 2, delay);
		const uint8_t *m = mem->data() + a;
		CHECK(r == tlm::TLM_OK_RESPONSE && m[0] == 1 && m[1] == 0xee && m[2] == 3 && m[7] == 0xee,
		      "memory: a write with byte enables 1,0 (repeated) writes bytes 0, 2, 4, 6 only: %s", resp_name(r));
		uint64_t want = (uint64_t)(cfg.dram_latency + (8 + cfg.dram_bw - 1) / cfg.dram_bw) * 1000;
		CHECK(delay.value() == want, "memory: the delay is latency + bytes / bandwidth: %llu ps (%llu)",
		      (unsigned long long)delay.value(), (unsigned long long)want);
		delay = SC_ZERO_TIME;
		r = mem_access(tlm::TLM_READ_COMMAND, a, d, 8, 4, nullptr, 0, delay);
		CHECK(r == tlm::TLM_BURST_ERROR_RESPONSE, "memory: streaming width 4 of 8 bytes: %s", resp_name(r));
		r = mem_access(tlm::TLM_READ_COMMAND, mem->size() - 4, d, 8, 8, nullptr, 0, delay);
		CHECK(r == tlm::TLM_ADDRESS_ERROR_RESPONSE, "memory: a read past the end: %s", resp_name(r));
		r = mem_access(tlm::TLM_IGNORE_COMMAND, a, d, 8, 8, nullptr, 0, delay);
		CHECK(r == tlm::TLM_OK_RESPONSE, "memory: an ignore command: %s", resp_name(r));
		mem->set_error_range(a + 4, 4);
		memset(d, 0x55, sizeof d);
		r = mem_access(tlm::TLM_READ_COMMAND, a, d, 8, 8, nullptr, 0, delay);
		tlm::tlm_response_status r2 = mem_access(tlm::TLM_WRITE_COMMAND, a + 4, d, 4, 4, nullptr, 0, delay);
		tlm::tlm_response_status r3 = mem_access(tlm::TLM_READ_COMMAND, a, d, 4, 4, nullptr, 0, delay);
		CHECK(r == tlm::TLM_GENERIC_ERROR_RESPONSE && r2 == tlm::TLM_GENERIC_ERROR_RESPONSE &&
			      r3 == tlm::TLM_OK_RESPONSE && m[4] != 0x55,
		      "memory: an error range of 4 bytes: a read and a write touching it %s, %s (nothing written), "
		      "a read beside it %s",
		      resp_name(r), resp_name(r2), resp_name(r3));
		mem->set_error_range(0, 0);
		wait(delay);
	}


	void put_prog(uint64_t at, const loom_insn *p, int n)
	{
		for (int i = 0; i < n; i++)
			for (int w = 0; w < LOOM_INSN_WORDS; w++)
				for (int b = 0; b < 4; b++)
					mem->data()[at + 32 * i + 4 * w + b] = (uint8_t)(p[i].w[w] >> (8 * b));
	}

	// START at prog, wait for the interrupt; what happened
	void run(uint64_t prog, result &r)
	{
		loom_sc::npu_traffic t0 = npu->traffic();
		wr(LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
		wr(LOOM_REG_INSN_BASE, (uint32_t)prog);
		// the idle model takes the START at the tester's time
		r.start = sc_time_stamp().value() / clk.value();
		wr(LOOM_REG_CTRL, LOOM_CTRL_START);
		wait(irq.posedge_event());
		r.irq_at = sc_time_stamp().value() / clk.value();
		r.status = rd(LOOM_REG_STATUS);
		r.cause = rd(LOOM_REG_ERR_CAUSE);
		r.pc = rd(LOOM_REG_ERR_PC);
		r.cycles = rd(LOOM_REG_CTR_BASE + 4 * LOOM_CTR_CYCLES);
		r.rd = rd(LOOM_REG_CTR_BASE + 4 * LOOM_CTR_DRAM_RD_BYTES);
		r.wr = rd(LOOM_REG_CTR_BASE + 4 * LOOM_CTR_DRAM_WR_BYTES);
		r.traffic = npu->traffic();
		for (int k = 0; k < 5; k++) {
			r.traffic.bytes[k] -= t0.bytes[k];
			r.traffic.transactions[k] -= t0.transactions[k];
		}
		r.traffic.dmi_accesses -= t0.dmi_accesses;
		wr(LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	}

	// The copy program with its LOAD, then its STORE, in the memory's error
	// range (no DMI while it is set); then without the range
	void bus_errors()
	{
		const uint32_t R = cfg.array_rows, lines = 37;
		const uint64_t BAD = 0x8000, PROG3 = 0x9000;
		loom_insn p[5];
		mem->set_error_range(BAD, 0x1000);
		copy_program(p, R, lines, (uint32_t)BAD, (uint32_t)OUT, (uint32_t)MARKA);
		put_prog(PROG3, p, 5);
		pc_ld = (uint32_t)PROG3;
		run(PROG3, res_ld);
		copy_program(p, R, lines, (uint32_t)IN, (uint32_t)BAD, (uint32_t)MARKA);
		put_prog(PROG3, p, 5);
		pc_st = (uint32_t)PROG3 + 2 * LOOM_INSN_BYTES;
		run(PROG3, res_st);
		mem->set_error_range(0, 0);
		memset(mem->data() + OUT, 0, R * lines);
		copy_program(p, R, lines, (uint32_t)IN, (uint32_t)OUT, (uint32_t)MARKA);
		put_prog(PROG3, p, 5);
		run(PROG3, res_after);
		res_after.copied = !memcmp(mem->data() + IN, mem->data() + OUT, R * lines);
	}

	void main()
	{
		if (protocol) {
			check_protocol();
			check_memory();
		}
		const uint32_t R = cfg.array_rows, lines = 37;
		for (uint32_t i = 0; i < R * lines; i++)
			mem->data()[IN + i] = (uint8_t)(i * 7 + 3);
		loom_insn p[5];
		copy_program(p, R, lines, (uint32_t)IN, (uint32_t)OUT, (uint32_t)MARKA);
		put_prog(PROG, p, 5);
		run(PROG, res);
		res.copied = !memcmp(mem->data() + IN, mem->data() + OUT, R * lines);
		// rows of one word, 12 bytes apart: each row's read covers its beat(s)
		memset(p, 0, sizeof p);
		SET(p[0], ANY_OPCODE, LOOM_OP_LOAD);
		SET(p[0], LOAD_ROW_WORDS, 1);
		SET(p[0], LOAD_DRAM_ADDR, (uint32_t)IN + 4);
		SET(p[0], LOAD_STRIDE1, 12);
		SET(p[0], LOAD_STRIDE2, 12 * 9 + 8);
		SET(p[0], LOAD_N1, 9);
		SET(p[0], LOAD_N2, 3);
		SET(p[0], LOAD_N3, 1);
		SET(p[0], LOAD_PUSH_NEXT, 1);
		SET(p[1], ANY_OPCODE, LOOM_OP_ELTWISE);
		SET(p[1], ELTWISE_POP_PREV, 1);
		SET(p[1], ELTWISE_PUSH_NEXT, 1);
		SET(p[2], ANY_OPCODE, LOOM_OP_STORE);
		SET(p[2], STORE_POP_PREV, 1);
		SET(p[2], STORE_SOURCE, LOOM_MEM_SP);
		SET(p[2], STORE_ROW_WORDS, 1);
		SET(p[2], STORE_DRAM_ADDR, (uint32_t)OUT2);
		SET(p[2], STORE_STRIDE1, 4);
		SET(p[2], STORE_N1, 27);
		SET(p[2], STORE_N2, 1);
		SET(p[2], STORE_N3, 1);
		SET(p[3], ANY_OPCODE, LOOM_OP_FINISH);
		put_prog(PROG2, p, 4);
		if (protocol)
			mem->invalidate_dmi(); // the next run must go back to b_transport, then DMI
		run(PROG2, res2);
		bool ok = true;
		for (int y = 0; y < 3; y++)
			for (int x = 0; x < 9; x++)
				ok = ok && !memcmp(mem->data() + OUT2 + 4 * (9 * y + x),
						   mem->data() + IN + 4 + y * (12 * 9 + 8) + 12 * x, 4);
		res2.copied = ok;
		if (protocol)
			bus_errors();
		if (++finished == 2)
			sc_stop();
	}
};

struct platform {
	loom_sc::memory mem;
	loom_sc::npu_lt npu;
	tester host;
	sc_signal<bool> irq;
	platform(const char *n, const loom_hwcfg &cfg, bool dmi, bool proto)
		: mem((std::string(n) + "_dram").c_str(), cfg.dram_bytes, mp(cfg, dmi)),
		  npu((std::string(n) + "_npu").c_str(), cfg, np(cfg)),
		  host((std::string(n) + "_host").c_str(), cfg, &mem, &npu, proto), irq((std::string(n) + "_irq").c_str())
	{
		host.regs.bind(npu.regs);
		host.memsock.bind(mem.socket);
		npu.dram.bind(mem.socket);
		npu.irq(irq);
		host.irq(irq);
	}
	static loom_sc::memory_params mp(const loom_hwcfg &cfg, bool dmi)
	{
		loom_sc::memory_params p;
		p.latency = cfg.dram_latency;
		p.bytes_per_cycle = cfg.dram_bw;
		p.dmi = dmi;
		return p;
	}
	static loom_sc::npu_params np(const loom_hwcfg &) { return loom_sc::npu_params(); }
};

void check_run(const char *what, const result &r, const loom_hwcfg &cfg)
{
	const loom_sc::npu_traffic &t = r.traffic;
	CHECK(r.status == LOOM_STATUS_DONE, "%s: STATUS 0x%x (DONE), ERR_CAUSE %u", what, r.status, r.cause);
	CHECK(r.copied, "%s: the copied bytes are in the memory", what);
	CHECK(r.irq_at == r.start + r.cycles, "%s: the interrupt rose at cycle %llu = START %llu + CYCLES %u", what,
	      (unsigned long long)r.irq_at, (unsigned long long)r.start, r.cycles);
	uint64_t rdb = t.bytes[LOOM_CMODEL_PORT_FETCH] + t.bytes[LOOM_CMODEL_PORT_LOAD];
	CHECK(rdb == r.rd && rdb > 0, "%s: fetch %llu + load %llu bytes through the socket = DRAM_RD_BYTES %u", what,
	      (unsigned long long)t.bytes[LOOM_CMODEL_PORT_FETCH], (unsigned long long)t.bytes[LOOM_CMODEL_PORT_LOAD],
	      r.rd);
	CHECK(t.transactions[LOOM_CMODEL_PORT_FETCH] > 0 && t.bytes[LOOM_CMODEL_PORT_FETCH] %
			cfg.dram_beat_bytes == 0,
	      "%s: %llu fetch transactions of whole beats", what,
	      (unsigned long long)t.transactions[LOOM_CMODEL_PORT_FETCH]);
	CHECK(t.errors == 0, "%s: no error responses", what);
}

} // namespace

int sc_main(int argc, char *argv[])
{
	check_init(0);
	loom_hwcfg cfg;
	char err[512];
	if (loom_hwcfg_load(&cfg, "default", nullptr, err, sizeof err)) {
		CHECK_FAIL("configuration default: %s", err);
		return check_report();
	}
	double quantum = argc > 1 ? atof(argv[1]) : 1000;
	tlm::tlm_global_quantum::instance().set(sc_time(quantum, SC_NS));
	printf("global quantum %.0f cycles\n", quantum);
	platform a("a", cfg, true, true), b("b", cfg, false, false);
	sc_start();
	check_run("dmi", a.host.res, cfg);
	check_run("no dmi", b.host.res, cfg);
	const loom_sc::npu_traffic &ta = a.host.res.traffic, &tb = b.host.res.traffic;
	CHECK(ta.bytes[LOOM_CMODEL_PORT_STORE] + ta.bytes[LOOM_CMODEL_PORT_MARK] == a.host.res.wr,
	      "dmi: store %llu + MARK %llu bytes through the socket = DRAM_WR_BYTES %u (whole-beat rows)",
	      (unsigned long long)ta.bytes[LOOM_CMODEL_PORT_STORE], (unsigned long long)ta.bytes[LOOM_CMODEL_PORT_MARK],
	      a.host.res.wr);
	CHECK(ta.transactions[LOOM_CMODEL_PORT_MARK] == 1 && ta.bytes[LOOM_CMODEL_PORT_MARK] == LOOM_MARK_BYTES,
	      "dmi: one MARK record of %u bytes", LOOM_MARK_BYTES);
	CHECK(ta.transactions[LOOM_CMODEL_PORT_LOAD] == 1,
	      "dmi: the LOAD's contiguous rows in one transaction (%llu)",
	      (unsigned long long)ta.transactions[LOOM_CMODEL_PORT_LOAD]);
	CHECK(ta.dmi_accesses > 0 && tb.dmi_accesses == 0, "DMI used when granted (%llu accesses), never when refused",
	      (unsigned long long)ta.dmi_accesses);
	CHECK(a.host.res.cycles == b.host.res.cycles && a.host.res.irq_at - a.host.res.start ==
							      b.host.res.irq_at - b.host.res.start,
	      "DMI or not: the same CYCLES (%u, %u) and interrupt time", a.host.res.cycles, b.host.res.cycles);
	check_run("sub-beat rows", a.host.res2, cfg);
	const loom_sc::npu_traffic &t2 = a.host.res2.traffic;
	uint64_t n2 = 0;
	for (int k = 0; k < 5; k++)
		n2 += t2.transactions[k];
	CHECK(n2 > t2.dmi_accesses && t2.dmi_accesses > 0,
	      "DMI withdrawn by the memory: %llu of %llu accesses by b_transport, then DMI again",
	      (unsigned long long)(n2 - t2.dmi_accesses), (unsigned long long)n2);
	const loom_sc::npu_traffic &t1 = a.host.res.traffic;
	uint64_t n1 = 0;
	for (int k = 0; k < 5; k++)
		n1 += t1.transactions[k];
	CHECK(n1 - t1.dmi_accesses == 1, "DMI kept: one b_transport (the first access) in the first run, %llu",
	      (unsigned long long)(n1 - t1.dmi_accesses));
	const tester &h = a.host;
	CHECK(h.res_ld.status == LOOM_STATUS_ERROR && h.res_ld.cause == LOOM_ERR_BUS_ERROR && h.res_ld.pc == h.pc_ld &&
		      h.res_ld.traffic.errors > 0,
	      "bus error: a LOAD from the memory's error range: STATUS 0x%x, %s at 0x%x (want BUS_ERROR at 0x%x), %llu "
	      "error responses",
	      h.res_ld.status, loom_err_name(h.res_ld.cause), h.res_ld.pc, h.pc_ld,
	      (unsigned long long)h.res_ld.traffic.errors);
	CHECK(h.res_st.status == LOOM_STATUS_ERROR && h.res_st.cause == LOOM_ERR_BUS_ERROR && h.res_st.pc == h.pc_st,
	      "bus error: a STORE into the memory's error range: STATUS 0x%x, %s at 0x%x (want BUS_ERROR at 0x%x)",
	      h.res_st.status, loom_err_name(h.res_st.cause), h.res_st.pc, h.pc_st);
	CHECK(h.res_after.status == LOOM_STATUS_DONE && h.res_after.copied,
	      "bus error: then, without the error range, the copy program completes with the right bytes (STATUS 0x%x)",
	      h.res_after.status);
	CHECK(a.host.res2.traffic.bytes[LOOM_CMODEL_PORT_STORE] == 27 * 4,
	      "sub-beat rows: the STORE writes its 108 bytes, contiguous rows merged (%llu transactions)",
	      (unsigned long long)a.host.res2.traffic.transactions[LOOM_CMODEL_PORT_STORE]);
	return check_report();
}
