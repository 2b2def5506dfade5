// dma_tb.h - what the three files of the DMA block test share
// (dma_tb.cpp: the cases, throughput and main; dma_tb_ref.cpp: the C
// reference of LOAD / STORE / MARK, the expected bursts, the instruction
// generators and bus profiles; dma_tb_bench.cpp: the bench, i.e. the
// behavioural DRAM, SP and ACC around dma_tb_top and the per-cycle checks).
// dma_tb.cpp's opening comment describes the test.
#ifndef LOOM_DMA_TB_H
#define LOOM_DMA_TB_H

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Vdma_tb_top.h"
#include "verilated.h"

// Verilator's make compiles the listed .c files with the C++ compiler, so
// isa.h is included without extern "C".
#include "loom/isa.h"

namespace dma_tb {

// ------------------------------------------------------------ random
extern uint64_t rs; // the state (main seeds it)
uint64_t rnd();
inline uint32_t rn(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }              // 0..n-1
inline uint32_t rr(uint32_t lo, uint32_t hi) { return lo + rn(hi - lo + 1); }          // lo..hi
inline bool chance(double p) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0) < p; }

// ------------------------------------------------------------ configuration
extern loom_hwcfg cfg;
extern unsigned R, C, B, NCTR;
const uint32_t DRAM_WIN = 2u << 20;      // modelled DRAM bytes
const uint32_t LD_DRAM_END = 1u << 20;   // loads read [0, 1 MiB)
const uint32_t ST_DRAM_BASE = 1u << 20;  // stores write [1 MiB, 2 MiB)

struct Mem {
	std::vector<uint8_t> dram, sp;
	std::vector<uint32_t> acc;
};

// ------------------------------------------------------------ instructions
#define LF(f) LOOM_F_LOAD_##f
#define SF(f) LOOM_F_STORE_##f
inline uint32_t fget(const loom_insn &in, enum loom_field f) { return loom_insn_get(&in, f); }
void fset(loom_insn &in, enum loom_field f, uint32_t v);

struct Row { // one DRAM row of a STORE/MARK (for AW and strobe checks)
	uint32_t a, n0;
};
struct Burst {
	uint32_t addr, len;
	Row row;
	long seq;  // the instruction (acceptance number in its engine)
};

const uint32_t MAX_BURST = 16; // beats of a coalesced load burst

// coverage of the bursts and overlap the cases produce (all runs together)
struct Cov {
	long multi_row = 0;   // AR bursts of several rows
	long full = 0;        // ... of MAX_BURST beats
	long page_split = 0;  // a row continuing a burst but starting a new 4 KiB page
	long overlap_ld = 0;  // accepts while the engine held another instruction
	long overlap_st = 0;
	long abort_two = 0;   // aborts of two instructions held at once
};
extern Cov cov;

// the expected AR bursts of a LOAD, AW bursts of a STORE / MARK
void ld_bursts(const loom_insn &in, long seq, std::deque<Burst> &out);
void st_bursts(const loom_insn &in, long seq, std::deque<Burst> &out);
// LOAD, STORE / MARK of docs/ISA.md on m
void ref_load(Mem &m, const loom_insn &in);
void ref_store(Mem &m, const loom_insn &in, const uint8_t *rec,
	       std::vector<std::pair<uint32_t, uint8_t>> *writes = nullptr);

// ------------------------------------------------------------ generators
struct Item {
	loom_insn in{};
	int abort_after = -1;  // cycles after accept to assert abort_i, -1: none
	bool abort_level = false;
	bool overlap = false;  // may be held together with another one when aborted
	int gap = 0;           // cycles before offering the instruction
};

// exit 2 unless loom_insn_check accepts in
void check_legal(const loom_insn &in);

struct LoadShape {
	int tgt = -1;          // -1 random
	int rw = -1;
	uint32_t n1max = 6, n2max = 4, n3max = 3, padmax = 2;
	bool aligned = false;  // DRAM_ADDR and strides multiples of B
	bool pads = true;
};
loom_insn gen_load(const LoadShape &sh);

struct StoreShape {
	int src = -1;
	int rw = -1;
	uint32_t n1max = 6, n2max = 4, n3max = 3;
	bool aligned = false;
};

// ACC lines [acc_lines/2, +3*NPARAM) hold NPARAM parameter sets
const unsigned NPARAM = 4;

loom_insn gen_store(const StoreShape &sh);
loom_insn gen_mark(int off);       // off < 0: a random offset in the beat
loom_insn gen_empty(bool store);   // one of N1, N2, N3 is 0

// ------------------------------------------------------------ bus profile
struct Prof {
	double p_ar = 1, p_r = 1, p_aw = 1, p_w = 1, p_b = 1, p_gnt = 1;
	unsigned lat_min = 1, lat_max = 1, blat_min = 1, blat_max = 1;
};
Prof fast_prof(unsigned lat); // always ready, fixed latency
Prof random_prof();

// ------------------------------------------------------------ the bench
class Bench {
public:
	explicit Bench(VerilatedContext *ctx) : top(new Vdma_tb_top(ctx)) {}
	~Bench() { top->final(); }

	std::unique_ptr<Vdma_tb_top> top;
	Mem rtl, ref;
	// DRAM with the writes of completed (or aborted) stores only; the W
	// writes of each store instruction wait in wlog until then
	std::vector<uint8_t> commit;
	std::map<long, std::vector<std::pair<uint32_t, uint8_t>>> wlog;
	Prof prof;
	long now = 0;
	std::vector<std::string> errors;
	bool snapshots = false;   // keep pre-states for abort checks
	// throughput bookkeeping
	long ld_beats = 0, st_beats = 0;

	void error(const char *fmt, ...);

	// --- per-engine driver
	struct Held {              // an instruction the engine holds
		Item it;
		long seq = 0;
		long acc_cycle = 0;
		uint8_t rec[64];       // MARK record expected
	};
	struct Drv {
		Drv(bool s, const char *n) : store(s), name(n) {}
		bool store;
		const char *name;
		std::deque<Item> q;
		bool have_next = false;
		Item next;
		int gap = 0;
		std::deque<Held> held;    // accepted, no done_o yet (oldest first)
		bool aborting = false;    // abort_i was asserted: everything held is aborted
		bool abort_now = false;   // abort_i this cycle
		std::deque<Burst> expect; // bursts of the held instructions not yet on the bus
		long next_seq = 0;
		Mem pre;                  // SP/ACC when the oldest held one became the oldest (load)
		long done_count = 0, abort_count = 0;
		long first_accept = -1, last_done = 0;
		size_t max_held = 0;
	} ld{false, "load"}, st{true, "store"};

	// --- DRAM model state
	struct RB {
		uint32_t addr, len, beat;
		long t, seq;
	};
	std::deque<RB> rq;
	bool r_hold = false;
	struct WB {
		uint32_t addr, len, beat;
		long t_acc;
		Row row;
		long seq;
	};
	std::deque<WB> awq;
	struct BR {
		long t, seq;
	};
	std::deque<BR> bq;
	bool b_hold = false;
	// SP / ACC read pipelines of the store client
	bool sp_rd_pend = false, acc_rd_pend = false;
	std::vector<uint8_t> sp_rd_line, acc_rd_line;
	// previous-cycle values for stability checks
	bool p_ar_v = false, p_ar_r = false, p_aw_v = false, p_aw_r = false, p_w_v = false, p_w_r = false;
	uint32_t p_ar_addr = 0, p_ar_len = 0, p_aw_addr = 0, p_aw_len = 0;
	std::vector<uint8_t> p_w_sig;
	bool p_ldsp_req = false, p_ldsp_gnt = false, p_stsp_req = false, p_stsp_gnt = false;
	std::vector<uint8_t> p_ldsp_sig;
	uint32_t p_stsp_addr = 0;
	std::vector<uint8_t> ctr_now;

	// the bench (dma_tb_bench.cpp): reset, one cycle with its checks and
	// models, running the queued items to the end
	void reset();
	void zero_inputs();
	std::vector<uint8_t> out_sig();
	void garbage(uint8_t *b, unsigned n);
	static bool may_offer(const Drv &d);
	void drive(Drv &d, bool busy);
	bool mem_equal(const Mem &a, const Mem &b, bool store, std::string &what);
	void disasm(const loom_insn &in, char *b, size_t n) { loom_insn_disasm(&in, b, n); }
	void snapshot(Drv &d);
	void commit_writes(long seq);
	void check_abort(Drv &d);
	void track(Drv &d, bool valid, bool ready, bool done, bool busy);
	void cycle();
	void checks_and_models(bool ld_gnt, bool st_gnt, bool rv, bool bv);
	void check_load(bool ld_gnt, bool rv);
	void check_store_reads(bool st_gnt);
	void check_store_bus(bool bv);
	bool idle() const;
	bool run(long max_cycles);
	void init_memories();
};

} // namespace dma_tb

#endif
