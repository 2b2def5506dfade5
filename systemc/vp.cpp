// vp.cpp - the reference virtual platform and the "systemc" backend of
// include/loom/hw.h (build/systemc/libloom_systemc.so, opened by hw/hw.c).
//
// One platform per opened device, in a SystemC simulation context of its
// own (several devices live in one process; a mutex lets one of them run
// at a time):
//   host   an SC_THREAD that makes the backend's calls: a register access
//          is a b_transport on the NPU's register socket (with the host's
//          own quantum keeper), waiting for the interrupt is a wait on the
//          line's rising edge or the timeout; host DRAM copies use the
//          memory's debug transport (no simulated time, as on the other
//          backends, whose host DRAM access takes no device time either)
//   npu    loom_sc::npu_lt (loom_npu_sc.h): the NPU on the C model
//   dram   loom_sc::memory (loom_mem_sc.h) with the DRAM latency and
//          bandwidth of the configuration or of loom_hw_opts
//   irq    the sc_signal<bool> between them.
// libloom runs outside the simulation: each call posts its request to the
// host thread and runs the kernel (sc_start) until the host thread has
// served it and paused the kernel (sc_pause). So the simulation stands
// still while the host's C code runs, and the device's time is the
// kernel's.
//
// The global quantum is LOOM_SYSTEMC_QUANTUM cycles (default 100: 100 ns at
// the platform's 1 GHz clock): a host access lands up to a quantum late
// while the device runs (loom_npu_sc.h); docs/PERFORMANCE.md has its
// measured effect on speed and on the device cycles the host sees.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "loom_mem_sc.h"
#include "loom_npu_sc.h"
#include "loom/isa.h"

using namespace sc_core;

namespace {

enum op_kind { OP_READ, OP_WRITE, OP_RUN };

struct host : sc_module {
	tlm_utils::simple_initiator_socket<host> regs;
	tlm_utils::simple_initiator_socket<host> mem;
	sc_in<bool> irq;
	tlm_utils::tlm_quantumkeeper qk;
	sc_event req;
	uint64_t clk;
	op_kind op = OP_READ;
	uint32_t off = 0, val = 0;
	uint64_t max = 0;
	int result = 0;
	bool served = false;

	SC_HAS_PROCESS(host);
	host(sc_module_name name, const sc_time &clock) : sc_module(name), regs("regs"), mem("mem"), irq("irq")
	{
		clk = clock.value();
		SC_THREAD(main);
	}

	void main()
	{
		for (;;) {
			wait(req);
			if (op == OP_RUN)
				run();
			else
				reg_access();
			served = true;
			sc_pause();
		}
	}

	void reg_access()
	{
		tlm::tlm_generic_payload t;
		unsigned char d[4];
		for (int i = 0; i < 4; i++)
			d[i] = (unsigned char)(val >> (8 * i));
		t.set_command(op == OP_READ ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
		t.set_address(off);
		t.set_data_ptr(d);
		t.set_data_length(4);
		t.set_streaming_width(4);
		t.set_byte_enable_ptr(nullptr);
		t.set_dmi_allowed(false);
		t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
		sc_time delay = qk.get_local_time();
		regs->b_transport(t, delay);
		qk.set(delay);
		if (qk.need_sync())
			qk.sync();
		// an unmapped offset reads 0 and ignores writes, as on the other backends
		val = 0;
		if (op == OP_READ && t.is_response_ok())
			val = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
		result = t.is_response_ok() ? 0 : -1;
	}

	void run()
	{
		qk.sync();
		wait(SC_ZERO_TIME); // the line settles after the last register write
		if (irq.read()) {
			result = LOOM_HW_IRQ;
			return;
		}
		if (max >= UINT64_MAX / clk / 2)
			wait(irq.posedge_event());
		else
			wait(sc_time::from_value(max * clk), irq.posedge_event());
		result = irq.read() ? LOOM_HW_IRQ : LOOM_HW_TIMEOUT;
	}

	uint64_t cycles() const { return (sc_time_stamp() + qk.get_local_time()).value() / clk; }
};

struct platform {
	loom_hw hw; // first: the backend's handle
	sc_simcontext *ctx = nullptr;
	loom_sc::memory *mem = nullptr;
	loom_sc::npu_lt *npu = nullptr;
	host *h = nullptr;
	sc_signal<bool> *irq = nullptr;
};

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

// One platform's simulation is the current one while a guard lives.
struct guard {
	explicit guard(sc_simcontext *c)
	{
		pthread_mutex_lock(&g_mu);
		if (c)
			enter(c);
	}
	static void enter(sc_simcontext *c)
	{
		sc_curr_simcontext = c;
		sc_default_global_context = c;
	}
	~guard() { pthread_mutex_unlock(&g_mu); }
	guard(const guard &) = delete;
	guard &operator=(const guard &) = delete;
};

platform *P(loom_hw *hw) { return reinterpret_cast<platform *>(hw); }

void set_err(loom_hw *hw, const char *what, const char *msg)
{
	snprintf(hw->err, sizeof hw->err, "systemc: %s: %s", what, msg);
}

// the host thread serves the request; false (message in hw->err) when the
// kernel failed or stopped without serving it
bool serve(platform *p, op_kind op)
{
	p->h->op = op;
	p->h->served = false;
	try {
		p->h->req.notify(SC_ZERO_TIME);
		sc_start();
	} catch (const std::exception &e) {
		set_err(&p->hw, "simulation", e.what());
		return false;
	}
	if (!p->h->served) {
		set_err(&p->hw, "simulation", "the kernel stopped before the host thread was served");
		return false;
	}
	return true;
}

uint32_t vp_mmio_read(loom_hw *hw, uint32_t off)
{
	platform *p = P(hw);
	guard g(p->ctx);
	p->h->off = off;
	return serve(p, OP_READ) ? p->h->val : 0;
}

void vp_mmio_write(loom_hw *hw, uint32_t off, uint32_t val)
{
	platform *p = P(hw);
	guard g(p->ctx);
	p->h->off = off;
	p->h->val = val;
	serve(p, OP_WRITE);
}

int vp_dram(loom_hw *hw, tlm::tlm_command cmd, uint64_t a, void *buf, size_t n)
{
	platform *p = P(hw);
	guard g(p->ctx);
	uint64_t size = p->mem->size();
	if (a > size || n > size - a) {
		snprintf(hw->err, sizeof hw->err,
			 "systemc: DRAM %s of %zu bytes at 0x%llx is outside the %llu bytes of DRAM",
			 cmd == tlm::TLM_READ_COMMAND ? "read" : "write", n, (unsigned long long)a,
			 (unsigned long long)size);
		return -1;
	}
	for (size_t done = 0; done < n;) {
		size_t k = n - done < ((size_t)1 << 30) ? n - done : (size_t)1 << 30;
		tlm::tlm_generic_payload t;
		t.set_command(cmd);
		t.set_address(a + done);
		t.set_data_ptr(static_cast<unsigned char *>(buf) + done);
		t.set_data_length((unsigned)k);
		t.set_streaming_width((unsigned)k);
		if (p->h->mem->transport_dbg(t) != k) {
			snprintf(hw->err, sizeof hw->err, "systemc: the memory's debug transport moved less than %zu bytes at 0x%llx",
				 k, (unsigned long long)(a + done));
			return -1;
		}
		done += k;
	}
	return 0;
}

int vp_dram_read(loom_hw *hw, uint64_t a, void *buf, size_t n)
{
	return vp_dram(hw, tlm::TLM_READ_COMMAND, a, buf, n);
}

int vp_dram_write(loom_hw *hw, uint64_t a, const void *buf, size_t n)
{
	return vp_dram(hw, tlm::TLM_WRITE_COMMAND, a, const_cast<void *>(buf), n);
}

int vp_run(loom_hw *hw, uint64_t max_cycles)
{
	platform *p = P(hw);
	guard g(p->ctx);
	p->h->max = max_cycles;
	return serve(p, OP_RUN) ? p->h->result : LOOM_HW_FAILED;
}

int vp_irq(loom_hw *hw)
{
	platform *p = P(hw);
	guard g(p->ctx);
	return p->irq->read();
}

uint64_t vp_cycles(loom_hw *hw)
{
	platform *p = P(hw);
	guard g(p->ctx);
	return p->h->cycles();
}

void vp_close(loom_hw *hw)
{
	platform *p = P(hw);
	if (!p)
		return;
	{
		guard g(p->ctx);
		delete p->h;
		delete p->npu;
		delete p->mem;
		delete p->irq;
		delete p->ctx;
		sc_curr_simcontext = nullptr;
		sc_default_global_context = nullptr;
	}
	delete p;
}

const loom_hw_ops vp_ops = {vp_mmio_read, vp_mmio_write, vp_dram_read, vp_dram_write,
			    vp_run,       vp_irq,        vp_cycles,   vp_close};

} // namespace

// libsystemc.so's main() calls sc_main; this library never runs it.
__attribute__((visibility("default"))) int sc_main(int, char *[])
{
	return 1;
}

extern "C" __attribute__((visibility("default"))) loom_hw *loom_systemc_open(const loom_hwcfg *cfg,
									 const loom_hw_opts *opts, char *err,
									 size_t errlen)
{
	setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
	loom_hw_opts def{};
	if (!opts)
		opts = &def;
	platform *p = new platform();
	p->hw.ops = &vp_ops;
	p->hw.cfg = *cfg;
	p->hw.backend = "systemc";
	const sc_time clock(1, SC_NS);
	uint64_t quantum = 100;
	if (const char *q = getenv("LOOM_SYSTEMC_QUANTUM")) {
		char *e;
		unsigned long long v = strtoull(q, &e, 10);
		if (!*q || *e || !v || v > 1000000000ull) {
			snprintf(err, errlen, "systemc: LOOM_SYSTEMC_QUANTUM=%s: a number of cycles, 1 to 1e9", q);
			delete p;
			return nullptr;
		}
		quantum = v;
	}
	try {
		guard g(nullptr);
		p->ctx = new sc_simcontext();
		guard::enter(p->ctx);
		tlm::tlm_global_quantum::instance().set(static_cast<double>(quantum) * clock);
		loom_sc::memory_params mp;
		mp.clock = clock;
		mp.latency = opts->dram_latency ? opts->dram_latency : cfg->dram_latency;
		mp.bytes_per_cycle = opts->dram_bw ? opts->dram_bw : cfg->dram_bw;
		loom_sc::npu_params np;
		np.clock = clock;
		np.dram_latency = mp.latency;
		np.dram_bw = mp.bytes_per_cycle;
		np.cmodel_flags = opts->cmodel_flags;
		p->mem = new loom_sc::memory("dram", cfg->dram_bytes, mp);
		p->npu = new loom_sc::npu_lt("npu", *cfg, np);
		p->h = new host("host", clock);
		p->irq = new sc_signal<bool>("irq");
		p->h->regs.bind(p->npu->regs);
		p->npu->dram.bind(p->mem->socket);
		p->h->mem.bind(p->mem->socket);
		p->npu->irq(*p->irq);
		p->h->irq(*p->irq);
		sc_start(SC_ZERO_TIME);
	} catch (const std::exception &e) {
		snprintf(err, errlen, "systemc: building the platform: %s", e.what());
		return nullptr; // the half-built simulation is left alone
	}
	return &p->hw;
}
