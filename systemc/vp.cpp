// vp.cpp - the reference virtual platform and the "systemc" backend of
// include/loom/hw.h (build/systemc/libloom_systemc.so, opened by hw/hw.c);
// compiled with LOOM_VP_RTL (systemc/vp_rtl.cpp) it is the "systemc-rtl"
// backend instead, the platform around the cycle-accurate module
// (loom_npu_ca_sc.h), built per configuration into
// build/hw/NAME/libloom_systemc_rtl.so.
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
//   npu    loom_sc::npu_lt (loom_npu_sc.h): the NPU on the C model; or
//          loom_sc::npu_ca (loom_npu_ca_sc.h): the NPU's verilated RTL
//   dram   loom_sc::memory (loom_mem_sc.h) with the DRAM latency and
//          bandwidth of the configuration or of loom_hw_opts, and its
//          bus-error range (TLM_GENERIC_ERROR_RESPONSE)
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
//
// On the cycle-accurate module the host is not decoupled: it waits out
// each access's delay at once, so the RTL's clock ticks exactly as in the
// rtl backend: a register read takes no time, a write one clock edge, a
// run() the edges until the interrupt (the host then waits the half period
// to the end of that cycle) or max_cycles edges; between calls the clock
// stands still. So device cycles are the rtl backend's.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "loom_mem_sc.h"
#include "loom_npu_sc.h"
#include "loom/isa.h"
#ifdef LOOM_VP_RTL
#include "loom_npu_ca_sc.h"
#endif

using namespace sc_core;

namespace {

#ifdef LOOM_VP_RTL
using npu_model = loom_sc::npu_ca;
constexpr bool kDecoupled = false;
constexpr const char *kBackend = "systemc-rtl";
#else
using npu_model = loom_sc::npu_lt;
constexpr bool kDecoupled = true;
constexpr const char *kBackend = "systemc";
#endif

enum op_kind { OP_READ, OP_WRITE, OP_RUN };

struct host : sc_module {
	tlm_utils::simple_initiator_socket<host> regs;
	tlm_utils::simple_initiator_socket<host> mem;
	sc_in<bool> irq;
	tlm_utils::tlm_quantumkeeper qk;
	sc_event req;
	uint64_t clk;
	sc_time period;
	op_kind op = OP_READ;
	uint32_t off = 0, val = 0;
	uint64_t max = 0;
	int result = 0;
	bool served = false;

	SC_HAS_PROCESS(host);
	host(sc_module_name name, const sc_time &clock) : sc_module(name), regs("regs"), mem("mem"), irq("irq")
	{
		clk = clock.value();
		period = clock;
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
		if (kDecoupled) {
			qk.set(delay);
			if (qk.need_sync())
				qk.sync();
		} else {
			wait(delay);
		}
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
		// the cycle-accurate module's edges are mid-period: end the cycle
		if (!kDecoupled && result == LOOM_HW_IRQ)
			wait(period / 2);
	}

	uint64_t cycles() const { return (sc_time_stamp() + qk.get_local_time()).value() / clk; }
};

struct platform {
	loom_hw hw; // first: the backend's handle
	sc_simcontext *ctx = nullptr;
	loom_sc::memory *mem = nullptr;
	npu_model *npu = nullptr;
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
#ifdef LOOM_VP_RTL
	return p->npu->cycle();
#else
	return p->h->cycles();
#endif
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

#ifdef LOOM_VP_RTL
#define VP_OPEN loom_systemc_rtl_open
#else
#define VP_OPEN loom_systemc_open
#endif

extern "C" __attribute__((visibility("default"))) loom_hw *VP_OPEN(const loom_hwcfg *cfg, const loom_hw_opts *opts,
								 char *err, size_t errlen)
{
	setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
	loom_hw_opts def{};
	if (!opts)
		opts = &def;
	platform *p = new platform();
	p->hw.ops = &vp_ops;
	p->hw.cfg = *cfg;
	p->hw.backend = kBackend;
	const sc_time clock(1, SC_NS);
	uint64_t quantum = 100;
	const char *q = kDecoupled ? getenv("LOOM_SYSTEMC_QUANTUM") : nullptr;
	if (q) {
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
		if (kDecoupled)
			tlm::tlm_global_quantum::instance().set(static_cast<double>(quantum) * clock);
		loom_sc::memory_params mp;
		mp.clock = clock;
		mp.latency = opts->dram_latency ? opts->dram_latency : cfg->dram_latency;
		mp.bytes_per_cycle = opts->dram_bw ? opts->dram_bw : cfg->dram_bw;
		mp.err_base = opts->bus_err_base;
		mp.err_size = opts->bus_err_size;
		loom_sc::npu_params np;
		np.clock = clock;
		np.dram_latency = mp.latency;
		np.dram_bw = mp.bytes_per_cycle;
		np.cmodel_flags = opts->cmodel_flags;
		p->mem = new loom_sc::memory("dram", cfg->dram_bytes, mp);
		p->npu = new npu_model("npu", *cfg, np);
		p->h = new host("host", clock);
		p->irq = new sc_signal<bool>("irq");
		p->h->regs.bind(p->npu->regs);
		p->npu->dram.bind(p->mem->socket);
		p->h->mem.bind(p->mem->socket);
		p->npu->irq(*p->irq);
		p->h->irq(*p->irq);
		sc_start(SC_ZERO_TIME);
	} catch (const std::exception &e) {
		snprintf(err, errlen, "%s: building the platform: %s", kBackend, e.what());
		return nullptr; // the half-built simulation is left alone
	}
	return &p->hw;
}
