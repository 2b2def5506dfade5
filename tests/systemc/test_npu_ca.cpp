// test_npu_ca.cpp - the cycle-accurate SystemC module of
// systemc/loom_npu_ca_sc.h on its own, in a platform this program builds
// (a tester thread as the host; between the module's DRAM socket and the
// memory of loom_mem_sc.h, a probe that records every transaction and can
// answer one address with an error):
//   - the register socket: ID and fingerprint read, unmapped and misaligned
//     offsets, bursts and byte enables refused with the base protocol's
//     error responses, every response status set;
//   - a program (LOAD of 37 contiguous rows, a vector op, STORE, MARK,
//     FINISH) started through the registers: the copy lands in the memory;
//     each transaction is a whole AXI burst (length = streaming width, whole
//     beats, writes with byte enables), some of several beats; the bytes
//     read add up to DRAM_RD_BYTES and those written to DRAM_WR_BYTES; the
//     interrupt rises on a clock edge (mid-period) and cycle() counts the
//     edges of simulation time;
//   - bus errors: a memory that answers the read of one beat of the LOAD
//     with an error: the module counts the error response and the run ends
//     with STATUS ERROR, ERR_CAUSE BUS_ERROR, ERR_PC the LOAD; one that
//     answers a write burst of the STORE with an error: BUS_ERROR at the
//     STORE; then, without errors, the same program copies its bytes again.
// Built per configuration with the module (Makefile: systemc-rtl); ends with
// "N passed, M failed" (tests/unit/check.h).
#include <cstdio>
#include <cstring>
#include <vector>

#include "systemc/loom_mem_sc.h"
#include "tests/systemc/sc_regs.h"
#include "systemc/loom_npu_ca_sc.h"

extern "C" {
#include "loom/isa.h"
#include "tests/unit/check.h"
}

using namespace sc_core;

namespace {

#define SET(in, f, v) loom_insn_set(&(in), LOOM_F_##f, (v))

const uint64_t IN = 0x1000, OUT = 0x2000, MARKA = 0x3000, PROG = 0x4000;

// every transaction of the NPU's DRAM socket, passed on to the memory
struct probe : sc_module {
	tlm_utils::simple_target_socket<probe> in;
	tlm_utils::simple_initiator_socket<probe> out;
	struct rec {
		bool write;
		uint64_t addr;
		unsigned len, sw, bel;
		bool be;
	};
	std::vector<rec> log;
	uint64_t fail_addr = ~0ull;  // reads covering it get TLM_ADDRESS_ERROR_RESPONSE
	uint64_t fail_waddr = ~0ull; // writes covering it get TLM_GENERIC_ERROR_RESPONSE

	explicit probe(sc_module_name n) : sc_module(n), in("in"), out("out")
	{
		in.register_b_transport(this, &probe::b_transport);
	}
	void b_transport(tlm::tlm_generic_payload &t, sc_time &delay)
	{
		log.push_back(rec{t.is_write(), t.get_address(), t.get_data_length(), t.get_streaming_width(),
				  t.get_byte_enable_length(), t.get_byte_enable_ptr() != nullptr});
		if (t.is_read() && fail_addr >= t.get_address() && fail_addr < t.get_address() + t.get_data_length()) {
			t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
			return;
		}
		if (t.is_write() && fail_waddr >= t.get_address() && fail_waddr < t.get_address() + t.get_data_length()) {
			t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
			return;
		}
		out->b_transport(t, delay);
	}
};

struct result {
	uint32_t status = 0, cause = 0, pc = 0, cycles = 0, rd = 0, wr = 0;
	uint64_t irq_ps = 0, edges = 0;
	bool copied = false;
	size_t first = 0, last = 0; // the probe's log entries of this run
};


struct tester : sc_module {
	tlm_utils::simple_initiator_socket<tester> regs;
	sc_in<bool> irq;
	loom_sc::memory *mem;
	loom_sc::npu_ca *npu;
	probe *pr;
	const loom_hwcfg &cfg;
	result res, bad, bad_st, after;
	sc_time clk = sc_time(1, SC_NS);

	SC_HAS_PROCESS(tester);
	tester(sc_module_name n, const loom_hwcfg &c, loom_sc::memory *m, loom_sc::npu_ca *u, probe *p)
		: sc_module(n), regs("regs"), irq("irq"), mem(m), npu(u), pr(p), cfg(c)
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
		uint64_t c0 = npu->cycle();
		v = 0x12340;
		r = access(tlm::TLM_WRITE_COMMAND, LOOM_REG_INSN_BASE, v);
		CHECK(r == tlm::TLM_OK_RESPONSE && rd(LOOM_REG_INSN_BASE) == 0x12340 && npu->cycle() == c0 + 1,
		      "regs: a write takes one clock edge (%llu) and reads back: %s",
		      (unsigned long long)(npu->cycle() - c0), resp_name(r));
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
		wr(LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
		wr(LOOM_REG_INSN_BASE, (uint32_t)prog);
		r.first = pr->log.size();
		wr(LOOM_REG_CTRL, LOOM_CTRL_START);
		wait(irq.posedge_event());
		r.irq_ps = sc_time_stamp().value();
		r.edges = npu->cycle();
		r.last = pr->log.size();
		r.status = rd(LOOM_REG_STATUS);
		r.cause = rd(LOOM_REG_ERR_CAUSE);
		r.pc = rd(LOOM_REG_ERR_PC);
		r.cycles = rd(LOOM_REG_CTR_BASE + 4 * LOOM_CTR_CYCLES);
		r.rd = rd(LOOM_REG_CTR_BASE + 4 * LOOM_CTR_DRAM_RD_BYTES);
		r.wr = rd(LOOM_REG_CTR_BASE + 4 * LOOM_CTR_DRAM_WR_BYTES);
		wr(LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	}

	void main()
	{
		check_protocol();
		const uint32_t R = cfg.array_rows, lines = 37;
		for (uint32_t i = 0; i < R * lines; i++)
			mem->data()[IN + i] = (uint8_t)(i * 7 + 3);
		loom_insn p[5];
		copy_program(p, R, lines, (uint32_t)IN, (uint32_t)OUT, (uint32_t)MARKA);
		put_prog(PROG, p, 5);
		run(PROG, res);
		res.copied = !memcmp(mem->data() + IN, mem->data() + OUT, R * lines);
		// again, with the memory failing reads of the LOAD's tenth beat
		memset(mem->data() + OUT, 0xee, R * lines);
		pr->fail_addr = IN + 9 * cfg.dram_beat_bytes;
		run(PROG, bad);
		bad.copied = !memcmp(mem->data() + IN, mem->data() + OUT, R * lines);
		// a write burst of the STORE failed, then no failures
		pr->fail_addr = ~0ull;
		pr->fail_waddr = OUT + 9 * cfg.dram_beat_bytes;
		run(PROG, bad_st);
		pr->fail_waddr = ~0ull;
		memset(mem->data() + OUT, 0xee, R * lines);
		run(PROG, after);
		after.copied = !memcmp(mem->data() + IN, mem->data() + OUT, R * lines);
		sc_stop();
	}
};

} // namespace

int sc_main(int, char *[])
{
	check_init(0);
	loom_hwcfg cfg;
	char err[512];
	if (loom_hwcfg_load(&cfg, "default", nullptr, err, sizeof err)) {
		CHECK_FAIL("configuration default: %s", err);
		return check_report();
	}
	loom_sc::memory_params mp;
	mp.latency = cfg.dram_latency;
	mp.bytes_per_cycle = cfg.dram_bw;
	loom_sc::memory mem("dram", cfg.dram_bytes, mp);
	loom_sc::npu_ca npu("npu", cfg);
	probe pr("probe");
	tester host("host", cfg, &mem, &npu, &pr);
	sc_signal<bool> irq("irq");
	host.regs.bind(npu.regs);
	npu.dram.bind(pr.in);
	pr.out.bind(mem.socket);
	npu.irq(irq);
	host.irq(irq);
	sc_start();

	const result &r = host.res;
	const unsigned B = cfg.dram_beat_bytes;
	CHECK(r.status == LOOM_STATUS_DONE, "STATUS 0x%x (DONE), ERR_CAUSE %u", r.status, r.cause);
	CHECK(r.copied, "the copied bytes are in the memory");
	uint64_t rdb = 0, wrb = 0, multi = 0, bad_shape = 0, n = r.last - r.first;
	for (size_t i = r.first; i < r.last; i++) {
		const probe::rec &x = pr.log[i];
		(x.write ? wrb : rdb) += x.len;
		if (x.len > B)
			multi++;
		if (x.sw != x.len || x.len % B || x.addr % B || x.be != x.write || (x.write && x.bel != x.len))
			bad_shape++;
	}
	CHECK(n > 0 && bad_shape == 0,
	      "%llu transactions, each a whole burst: length = streaming width, whole aligned beats, writes with "
	      "byte enables (%llu not)",
	      (unsigned long long)n, (unsigned long long)bad_shape);
	CHECK(multi > 0, "%llu of them bursts of several beats", (unsigned long long)multi);
	CHECK(rdb == r.rd, "bytes read through the socket %llu = DRAM_RD_BYTES %u", (unsigned long long)rdb, r.rd);
	CHECK(wrb == r.wr, "bytes written through the socket %llu = DRAM_WR_BYTES %u", (unsigned long long)wrb, r.wr);
	CHECK(r.irq_ps % 1000 == 500, "the interrupt rose on a clock edge, mid-period (%llu ps)",
	      (unsigned long long)r.irq_ps);
	CHECK(r.edges == 5 + (r.irq_ps + 500) / 1000, "cycle() %llu = 5 reset edges + the edges up to %llu ps",
	      (unsigned long long)r.edges, (unsigned long long)r.irq_ps);
	const result &b = host.bad;
	CHECK(npu.traffic().errors == 2, "the memory's two error responses counted (%llu)",
	      (unsigned long long)npu.traffic().errors);
	CHECK(b.status == LOOM_STATUS_ERROR && b.cause == LOOM_ERR_BUS_ERROR && b.pc == PROG && !b.copied,
	      "a LOAD beat answered with an error: STATUS 0x%x, %s at 0x%x (want BUS_ERROR at the LOAD, 0x%llx), "
	      "nothing stored",
	      b.status, loom_err_name(b.cause), b.pc, (unsigned long long)PROG);
	const result &bs = host.bad_st;
	CHECK(bs.status == LOOM_STATUS_ERROR && bs.cause == LOOM_ERR_BUS_ERROR && bs.pc == PROG + 2 * LOOM_INSN_BYTES,
	      "a STORE burst answered with an error: STATUS 0x%x, %s at 0x%x (want BUS_ERROR at the STORE, 0x%llx)",
	      bs.status, loom_err_name(bs.cause), bs.pc, (unsigned long long)(PROG + 2 * LOOM_INSN_BYTES));
	const result &af = host.after;
	CHECK(af.status == LOOM_STATUS_DONE && af.copied && af.cycles == r.cycles,
	      "then without errors: the program completes (STATUS 0x%x) with the right bytes in the same %u cycles "
	      "as the first run (%u)",
	      af.status, af.cycles, r.cycles);
	return check_report();
}
