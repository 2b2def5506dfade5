// dma_tb.cpp - self-checking block test of rtl/npu_dma_load.sv and
// rtl/npu_dma_store.sv (with rtl/npu_requant.sv) through dma_tb_top.sv.
//
// The C++ side is the whole environment: a behavioural DRAM (AXI slave with
// random AR/AW/W ready, random read and write-response latency and random
// gaps in r_valid / b_valid), a scratchpad with random grant refusals (one
// write client = load, one read client = store, data the cycle after the
// grant) and an accumulator (load writes, store reads, data next cycle). A C
// reference of the LOAD / STORE / MARK pseudo-code of docs/ISA.md (requant
// through loom_requant of common/isa.c) runs at each done_o and the whole
// SP / ACC / DRAM is compared then, so done_o is also checked to come only
// after the instruction's last write (load) or last B response (store).
// Every instruction is validated by loom_insn_check first.
//
// Checked on every cycle: AR/AW/W payload stable while valid and not ready;
// SP requests held until granted (except after abort); W never before its
// AW; each AR/AW burst equal to the expected one, in order; W strobes exactly
// the row's bytes and w_last on the last beat; no output of either engine
// changes when the inputs of the same cycle change (no combinational
// input-to-output path); done_o one cycle, with insn_ready_o.
//
// Memory regions keep the two engines independent so that they can run
// concurrently: loads read DRAM [0, 1 MiB) and write the lower half of SP and
// ACC; stores and MARK read the upper half of SP and ACC and write DRAM
// [1 MiB, 2 MiB).
//
// The configuration is that of the npu_pkg.sv the model was built with
// (found by its fingerprint among configs/*.cfg). Build and run from
// /work/main; PKG is the generated package, build/t/npu_pkg.sv for default,
// or another config's, e.g. small:
//   gcc -Iinclude -o /tmp/gen_hw tools/gen_hw.c common/isa.c common/hwcfg.c
//   mkdir -p /tmp/pkg_small && /tmp/gen_hw small /tmp/pkg_small
//   PKG=/tmp/pkg_small/npu_pkg.sv
//   verilator --cc --exe --build -O3 -j 2 -Wall --assert --top-module dma_tb_top \
//     -Mdir /tmp/dtb_small -CFLAGS "-I$PWD/include" $PWD/verilator_tb/lint.vlt \
//     $PKG $PWD/rtl/npu_requant.sv $PWD/rtl/npu_dma_load.sv $PWD/rtl/npu_dma_store.sv \
//     $PWD/verilator_tb/blocks/dma_tb_top.sv $PWD/verilator_tb/blocks/dma_tb.cpp \
//     $PWD/common/isa.c $PWD/common/hwcfg.c
//   /tmp/dtb_small/Vdma_tb_top [seed (1)] [random_programs (60)]
// Absolute source paths: Verilator's make runs inside -Mdir. lint.vlt holds
// the project's waiver for the generated package's unused parameters.
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vdma_tb_top.h"
#include "verilated.h"

// Verilator's make compiles the listed .c files with the C++ compiler, so
// isa.h is included without extern "C".
#include "loom/isa.h"

namespace {

// ------------------------------------------------------------ port helpers
template <typename T> void put(T &s, const uint8_t *b, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n && i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	s = (T)v;
}
template <std::size_t W> void put(VlWide<W> &s, const uint8_t *b, unsigned n)
{
	for (std::size_t w = 0; w < W; w++) {
		uint32_t v = 0;
		for (unsigned i = 0; i < 4; i++)
			if (4 * w + i < n)
				v |= (uint32_t)b[4 * w + i] << (8 * i);
		s[w] = v;
	}
}
template <typename T> void get(const T &s, uint8_t *b, unsigned n)
{
	uint64_t v = (uint64_t)s;
	for (unsigned i = 0; i < n; i++)
		b[i] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
}
template <std::size_t W> void get(const VlWide<W> &s, uint8_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b[i] = i / 4 < W ? (uint8_t)(s[i / 4] >> (8 * (i % 4))) : 0;
}
template <typename T> void sig_add(std::vector<uint8_t> &v, const T &s)
{
	uint8_t b[8];
	get(s, b, sizeof(T));
	v.insert(v.end(), b, b + sizeof(T));
}
template <std::size_t W> void sig_add(std::vector<uint8_t> &v, const VlWide<W> &s)
{
	for (std::size_t w = 0; w < W; w++)
		for (int i = 0; i < 4; i++)
			v.push_back((uint8_t)(s[w] >> (8 * i)));
}

// ------------------------------------------------------------ random
uint64_t rs = 0x853c49e6748fea9bull;
uint64_t rnd()
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}
uint32_t rn(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }              // 0..n-1
uint32_t rr(uint32_t lo, uint32_t hi) { return lo + rn(hi - lo + 1); }          // lo..hi
bool chance(double p) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0) < p; }

// ------------------------------------------------------------ configuration
loom_hwcfg cfg;
unsigned R, C, B, NCTR = LOOM_CTR_COUNT;
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
uint32_t fget(const loom_insn &in, enum loom_field f) { return loom_insn_get(&in, f); }
void fset(loom_insn &in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(&in, f, v)) {
		fprintf(stderr, "tb bug: field %s value %u\n", loom_field_name(f), v);
		exit(2);
	}
}

struct Row { // one DRAM row of a STORE/MARK (for AW and strobe checks)
	uint32_t a, n0;
};
struct Burst {
	uint32_t addr, len;
	Row row;
};

bool is_data(uint32_t pt, uint32_t n2, uint32_t pl, uint32_t n1, uint32_t y, uint32_t x)
{
	return y >= pt && y < pt + n2 && x >= pl && x < pl + n1;
}

// The LOAD of docs/ISA.md on m; bursts (if given) gets its AR bursts in order.
void ref_load(Mem &m, const loom_insn &in, std::vector<Burst> *bursts)
{
	uint32_t tgt = fget(in, LF(TARGET)), pv = fget(in, LF(PAD_VALUE)), n0 = 4 * fget(in, LF(ROW_WORDS));
	uint32_t da = fget(in, LF(DRAM_ADDR)), line = fget(in, LF(MEM_ADDR));
	uint32_t s1 = fget(in, LF(STRIDE1)), s2 = fget(in, LF(STRIDE2)), s3 = fget(in, LF(STRIDE3));
	uint32_t n1 = fget(in, LF(N1)), n2 = fget(in, LF(N2)), n3 = fget(in, LF(N3));
	uint32_t pt = fget(in, LF(PAD_TOP)), pb = fget(in, LF(PAD_BOTTOM)), pl = fget(in, LF(PAD_LEFT)),
		 pr = fget(in, LF(PAD_RIGHT));
	if (!n1 || !n2 || !n3)
		return;
	for (uint32_t i3 = 0; i3 < n3; i3++)
		for (uint32_t y = 0; y < pt + n2 + pb; y++)
			for (uint32_t x = 0; x < pl + n1 + pr; x++, line++) {
				if (is_data(pt, n2, pl, n1, y, x)) {
					uint32_t src = da + i3 * s3 + (y - pt) * s2 + (x - pl) * s1;
					if (bursts)
						bursts->push_back({src & ~(B - 1), (src + n0 - 1) / B - src / B, {src, n0}});
					if (tgt == LOOM_MEM_SP) {
						for (uint32_t k = 0; k < R; k++)
							m.sp[line * R + k] = k < n0 ? m.dram[src + k] : 0;
					} else {
						for (uint32_t c = 0; c < C; c++) {
							uint32_t v = 0;
							if (4 * c < n0)
								memcpy(&v, &m.dram[src + 4 * c], 4);
							m.acc[line * C + c] = v;
						}
					}
				} else if (tgt == LOOM_MEM_SP) {
					memset(&m.sp[line * R], (int)pv, R);
				} else {
					for (uint32_t c = 0; c < C; c++)
						m.acc[line * C + c] = 0;
				}
			}
}

// The STORE / MARK of docs/ISA.md on m (rec = the 64-byte MARK record).
void ref_store(Mem &m, const loom_insn &in, const uint8_t *rec, std::vector<Burst> *bursts,
	       std::vector<std::pair<uint32_t, uint8_t>> *writes = nullptr)
{
	if (loom_insn_opcode(&in) == LOOM_OP_MARK) {
		uint32_t a = loom_insn_get(&in, LOOM_F_MARK_DRAM_ADDR);
		if (bursts)
			bursts->push_back({a & ~(B - 1), (a + 63) / B - a / B, {a, 64}});
		memcpy(&m.dram[a], rec, 64);
		for (uint32_t k = 0; writes && k < 64; k++)
			writes->push_back({a + k, rec[k]});
		return;
	}
	uint32_t src = fget(in, SF(SOURCE)), n0 = 4 * fget(in, SF(ROW_WORDS));
	uint32_t da = fget(in, SF(DRAM_ADDR)), line = fget(in, SF(MEM_ADDR));
	uint32_t s1 = fget(in, SF(STRIDE1)), s2 = fget(in, SF(STRIDE2)), s3 = fget(in, SF(STRIDE3));
	uint32_t n1 = fget(in, SF(N1)), n2 = fget(in, SF(N2)), n3 = fget(in, SF(N3));
	uint32_t pa = fget(in, SF(PARAM_ADDR));
	int8_t zp = (int8_t)fget(in, SF(ZERO_POINT)), lo = (int8_t)fget(in, SF(CLIP_LO)),
	       hi = (int8_t)fget(in, SF(CLIP_HI));
	for (uint32_t i3 = 0; i3 < n3; i3++)
		for (uint32_t i2 = 0; i2 < n2; i2++)
			for (uint32_t i1 = 0; i1 < n1; i1++, line++) {
				uint32_t dst = da + i3 * s3 + i2 * s2 + i1 * s1;
				if (bursts)
					bursts->push_back({dst & ~(B - 1), (dst + n0 - 1) / B - dst / B, {dst, n0}});
				for (uint32_t c = 0; c < n0; c++) {
					uint8_t v;
					if (src == LOOM_MEM_SP)
						v = m.sp[line * R + c];
					else if (src == LOOM_MEM_ACC)
						v = (uint8_t)(m.acc[line * C + c / 4] >> (8 * (c % 4)));
					else
						v = (uint8_t)loom_requant((int32_t)m.acc[line * C + c], (int32_t)m.acc[pa * C + c],
									  (int32_t)m.acc[(pa + 1) * C + c],
									  (int32_t)m.acc[(pa + 2) * C + c], zp, lo, hi);
					m.dram[dst + c] = v;
					if (writes)
						writes->push_back({dst + c, v});
				}
			}
}

// ------------------------------------------------------------ generators
struct Item {
	loom_insn in{};
	int abort_after = -1;  // cycles after accept to assert abort_i, -1: none
	bool abort_level = false;
	int gap = 0;           // cycles before offering the instruction
};

void check_legal(const loom_insn &in)
{
	uint32_t field;
	unsigned e = loom_insn_check(&cfg, &in, &field);
	if (e) {
		char d[256];
		loom_insn_disasm(&in, d, sizeof d);
		fprintf(stderr, "tb bug: illegal instruction (%s, %s): %s\n", loom_err_name(e),
			loom_field_name(field), d);
		exit(2);
	}
}

uint32_t pick_stride(uint32_t n0, uint32_t inner_span)
{
	switch (rn(6)) {
	case 0: return inner_span;                        // contiguous
	case 1: return inner_span + 4 * rr(1, 8);          // gap
	case 2: return 4 * rn(64);                         // anything, overlaps too
	case 3: return 0;
	case 4: return inner_span + 4 * rr(0, B);         // drifting alignment
	default: return (inner_span + 4 * rn(3) + n0) & ~3u;
	}
}

struct LoadShape {
	int tgt = -1;          // -1 random
	int rw = -1;
	uint32_t n1max = 6, n2max = 4, n3max = 3, padmax = 2;
	bool aligned = false;  // DRAM_ADDR and strides multiples of B
	bool pads = true;
};

loom_insn gen_load(const LoadShape &sh)
{
	for (;;) {
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
		uint32_t tgt = sh.tgt >= 0 ? (uint32_t)sh.tgt : rn(2);
		uint32_t maxw = tgt ? C : R / 4;
		uint32_t rw = sh.rw > 0 ? (uint32_t)sh.rw : (chance(0.3) ? maxw : rr(1, maxw));
		if (rw > maxw)
			rw = maxw;
		uint32_t n0 = 4 * rw;
		uint32_t n1 = rr(1, sh.n1max), n2 = rr(1, sh.n2max), n3 = rr(1, sh.n3max);
		uint32_t pt = 0, pb = 0, pl = 0, pr = 0;
		if (sh.pads) {
			pt = rn(sh.padmax + 1);
			pb = rn(sh.padmax + 1);
			pl = rn(sh.padmax + 1);
			pr = rn(sh.padmax + 1);
		}
		uint64_t lines = (uint64_t)n3 * (pt + n2 + pb) * (pl + n1 + pr);
		uint32_t limit = (tgt ? cfg.acc_lines : cfg.sp_lines) / 2;
		if (lines > limit)
			continue;
		uint32_t s1 = pick_stride(n0, n0), s2 = pick_stride(n0, s1 * n1), s3 = pick_stride(n0, s2 * n2);
		if (sh.aligned) {
			s1 = (s1 + B - 1) & ~(B - 1);
			s2 = (s2 + B - 1) & ~(B - 1);
			s3 = (s3 + B - 1) & ~(B - 1);
		}
		uint64_t span = (uint64_t)(n3 - 1) * s3 + (uint64_t)(n2 - 1) * s2 + (uint64_t)(n1 - 1) * s1 + n0;
		if (span > LD_DRAM_END)
			continue;
		uint32_t da = 4 * rn((uint32_t)((LD_DRAM_END - span) / 4 + 1));
		if (sh.aligned)
			da &= ~(B - 1);
		fset(in, LF(TARGET), tgt);
		fset(in, LF(PAD_VALUE), tgt ? 0 : (chance(0.1) ? 0 : rr(1, 255)));
		fset(in, LF(ROW_WORDS), rw);
		fset(in, LF(DRAM_ADDR), da);
		fset(in, LF(MEM_ADDR), rn((uint32_t)(limit - lines + 1)));
		fset(in, LF(STRIDE1), s1);
		fset(in, LF(STRIDE2), s2);
		fset(in, LF(STRIDE3), s3);
		fset(in, LF(N1), n1);
		fset(in, LF(N2), n2);
		fset(in, LF(N3), n3);
		fset(in, LF(PAD_TOP), pt);
		fset(in, LF(PAD_BOTTOM), pb);
		fset(in, LF(PAD_LEFT), pl);
		fset(in, LF(PAD_RIGHT), pr);
		if (chance(0.3))
			fset(in, LF(POP_NEXT), 1);
		if (chance(0.3))
			fset(in, LF(PUSH_NEXT), 1);
		check_legal(in);
		return in;
	}
}

struct StoreShape {
	int src = -1;
	int rw = -1;
	uint32_t n1max = 6, n2max = 4, n3max = 3;
	bool aligned = false;
};

// ACC lines [acc_lines/2, +3*NPARAM) hold NPARAM parameter sets
const unsigned NPARAM = 4;

loom_insn gen_store(const StoreShape &sh)
{
	for (;;) {
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_STORE);
		uint32_t src = sh.src >= 0 ? (uint32_t)sh.src : rn(3);
		uint32_t maxw = src == 0 ? R / 4 : src == 1 ? C : C / 4;
		uint32_t rw = sh.rw > 0 ? (uint32_t)sh.rw : (chance(0.3) ? maxw : rr(1, maxw));
		if (rw > maxw)
			rw = maxw;
		uint32_t n0 = 4 * rw;
		uint32_t n1 = rr(1, sh.n1max), n2 = rr(1, sh.n2max), n3 = rr(1, sh.n3max);
		uint32_t n = n1 * n2 * n3;
		uint32_t lines = src == 0 ? cfg.sp_lines : cfg.acc_lines, half = lines / 2;
		if (n > half)
			continue;
		uint32_t s1 = pick_stride(n0, n0), s2 = pick_stride(n0, s1 * n1), s3 = pick_stride(n0, s2 * n2);
		if (sh.aligned) {
			s1 = (s1 + B - 1) & ~(B - 1);
			s2 = (s2 + B - 1) & ~(B - 1);
			s3 = (s3 + B - 1) & ~(B - 1);
		}
		uint64_t span = (uint64_t)(n3 - 1) * s3 + (uint64_t)(n2 - 1) * s2 + (uint64_t)(n1 - 1) * s1 + n0;
		if (span > DRAM_WIN - ST_DRAM_BASE)
			continue;
		uint32_t da = ST_DRAM_BASE + 4 * rn((uint32_t)((DRAM_WIN - ST_DRAM_BASE - span) / 4 + 1));
		if (sh.aligned)
			da &= ~(B - 1);
		fset(in, SF(SOURCE), src);
		fset(in, SF(ROW_WORDS), rw);
		fset(in, SF(DRAM_ADDR), da);
		fset(in, SF(MEM_ADDR), half + rn(half - n + 1));
		fset(in, SF(STRIDE1), s1);
		fset(in, SF(STRIDE2), s2);
		fset(in, SF(STRIDE3), s3);
		fset(in, SF(N1), n1);
		fset(in, SF(N2), n2);
		fset(in, SF(N3), n3);
		if (src == 2) {
			int8_t lo = (int8_t)rnd(), hi = (int8_t)rnd();
			if (lo > hi) {
				int8_t t = lo;
				lo = hi;
				hi = t;
			}
			if (chance(0.3)) {
				lo = -128;
				hi = 127;
			}
			fset(in, SF(ZERO_POINT), (uint8_t)rnd());
			fset(in, SF(PARAM_ADDR), cfg.acc_lines / 2 + 3 * rn(NPARAM));
			fset(in, SF(CLIP_LO), (uint8_t)lo);
			fset(in, SF(CLIP_HI), (uint8_t)hi);
		}
		if (chance(0.3))
			fset(in, SF(POP_PREV), 1);
		if (chance(0.3))
			fset(in, SF(PUSH_PREV), 1);
		check_legal(in);
		return in;
	}
}

loom_insn gen_mark(int off)
{
	loom_insn in{};
	fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_MARK);
	uint32_t a = ST_DRAM_BASE + B * rn((DRAM_WIN - ST_DRAM_BASE - 128) / B);
	a += off >= 0 ? (uint32_t)off : 4 * rn(B / 4);
	fset(in, LOOM_F_MARK_DRAM_ADDR, a);
	fset(in, LOOM_F_MARK_MARK_ID, (uint32_t)rnd());
	check_legal(in);
	return in;
}

loom_insn gen_empty(bool store)
{
	loom_insn in = store ? gen_store(StoreShape{}) : gen_load(LoadShape{});
	enum loom_field f[3] = {store ? SF(N1) : LF(N1), store ? SF(N2) : LF(N2), store ? SF(N3) : LF(N3)};
	fset(in, f[rn(3)], 0);
	return in;
}

// ------------------------------------------------------------ bus profile
struct Prof {
	double p_ar = 1, p_r = 1, p_aw = 1, p_w = 1, p_b = 1, p_gnt = 1;
	unsigned lat_min = 1, lat_max = 1, blat_min = 1, blat_max = 1;
};

Prof fast_prof(unsigned lat)
{
	Prof p;
	p.lat_min = p.lat_max = lat;
	p.blat_min = p.blat_max = lat;
	return p;
}

Prof random_prof()
{
	Prof p;
	auto pr = []() { return chance(0.3) ? 1.0 : 0.2 + 0.8 * (double)rn(1000) / 1000.0; };
	p.p_ar = pr();
	p.p_r = pr();
	p.p_aw = pr();
	p.p_w = pr();
	p.p_b = pr();
	p.p_gnt = pr();
	p.lat_min = rr(1, 20);
	p.lat_max = p.lat_min + rn(60);
	p.blat_min = rr(1, 20);
	p.blat_max = p.blat_min + rn(60);
	return p;
}

// ------------------------------------------------------------ the bench
class Bench {
public:
	explicit Bench(VerilatedContext *ctx) : top(new Vdma_tb_top(ctx)) {}
	~Bench() { top->final(); }

	std::unique_ptr<Vdma_tb_top> top;
	Mem rtl, ref;
	Prof prof;
	long now = 0;
	std::vector<std::string> errors;
	// throughput bookkeeping
	long ld_beats = 0, st_beats = 0;

	void error(const char *fmt, ...)
	{
		char b[512];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(b, sizeof b, fmt, ap);
		va_end(ap);
		errors.push_back(std::string("cycle ") + std::to_string(now) + ": " + b);
	}

	// --- per-engine driver
	struct Drv {
		bool store;
		std::deque<Item> q;
		bool have_next = false;
		Item next;
		int gap = 0;
		bool running = false;     // an accepted instruction has not completed
		Item cur;
		long acc_cycle = 0;
		bool aborting = false;    // abort_i was asserted for cur
		bool abort_now = false;   // abort_i this cycle
		std::vector<Burst> expect;  // bursts not yet seen on the bus
		size_t expect_pos = 0;
		Mem pre;                  // state at accept (abort items only)
		uint8_t rec[64];          // MARK record expected
		long done_count = 0, abort_count = 0;
		long last_accept = 0, last_done = 0;
	} ld{false}, st{true};

	// --- DRAM model state
	struct RB {
		uint32_t addr, len, beat;
		long t;
	};
	std::deque<RB> rq;
	bool r_hold = false;
	struct WB {
		uint32_t addr, len, beat;
		long t_acc;
		Row row;
	};
	std::deque<WB> awq;
	std::deque<long> bq;
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
	bool p_ld_done = false, p_st_done = false;
	std::vector<uint8_t> ctr_now;

	void reset()
	{
		top->clk_i = 0;
		top->rst_ni = 0;
		zero_inputs();
		top->eval();
		for (int i = 0; i < 3; i++) {
			top->clk_i = 1;
			top->eval();
			top->clk_i = 0;
			top->eval();
		}
		top->rst_ni = 1;
		top->eval();
	}

	void zero_inputs()
	{
		uint8_t z[256] = {0};
		top->ld_insn_valid_i = 0;
		put(top->ld_insn_i, z, 32);
		top->ld_abort_i = 0;
		top->ld_ar_ready_i = 0;
		top->ld_r_valid_i = 0;
		put(top->ld_r_data_i, z, B);
		top->ld_r_last_i = 0;
		top->ld_sp_gnt_i = 0;
		top->st_insn_valid_i = 0;
		put(top->st_insn_i, z, 32);
		top->st_abort_i = 0;
		top->st_aw_ready_i = 0;
		top->st_w_ready_i = 0;
		top->st_b_valid_i = 0;
		top->st_sp_gnt_i = 0;
		top->st_sp_rvalid_i = 0;
		put(top->st_sp_rdata_i, z, R);
		put(top->st_acc_rdata_i, z, 4 * C);
		put(top->st_ctr_snapshot_i, z, 4 * NCTR);
	}

	std::vector<uint8_t> out_sig()
	{
		std::vector<uint8_t> v;
		sig_add(v, top->ld_insn_ready_o);
		sig_add(v, top->ld_done_o);
		sig_add(v, top->ld_busy_o);
		sig_add(v, top->ld_ar_valid_o);
		sig_add(v, top->ld_ar_addr_o);
		sig_add(v, top->ld_ar_len_o);
		sig_add(v, top->ld_r_ready_o);
		sig_add(v, top->ld_sp_req_o);
		sig_add(v, top->ld_sp_we_o);
		sig_add(v, top->ld_sp_addr_o);
		sig_add(v, top->ld_sp_wdata_o);
		sig_add(v, top->ld_acc_we_o);
		sig_add(v, top->ld_acc_addr_o);
		sig_add(v, top->ld_acc_wdata_o);
		sig_add(v, top->st_insn_ready_o);
		sig_add(v, top->st_done_o);
		sig_add(v, top->st_busy_o);
		sig_add(v, top->st_aw_valid_o);
		sig_add(v, top->st_aw_addr_o);
		sig_add(v, top->st_aw_len_o);
		sig_add(v, top->st_w_valid_o);
		sig_add(v, top->st_w_data_o);
		sig_add(v, top->st_w_strb_o);
		sig_add(v, top->st_w_last_o);
		sig_add(v, top->st_b_ready_o);
		sig_add(v, top->st_sp_req_o);
		sig_add(v, top->st_sp_addr_o);
		sig_add(v, top->st_acc_re_o);
		sig_add(v, top->st_acc_addr_o);
		return v;
	}

	void garbage(uint8_t *b, unsigned n)
	{
		for (unsigned i = 0; i < n; i++)
			b[i] = (uint8_t)rnd();
	}

	// offer instructions / abort for one engine (before eval)
	void drive(Drv &d, bool busy)
	{
		if (!d.have_next && !d.q.empty()) {
			d.next = d.q.front();
			d.q.pop_front();
			d.have_next = true;
			d.gap = d.next.gap;
		}
		bool valid = false;
		if (d.have_next) {
			if (d.gap > 0)
				d.gap--;
			else
				valid = true;
		}
		d.abort_now = false;
		if (d.running && d.cur.abort_after >= 0 && busy) {
			long t = now - d.acc_cycle;
			if (t == d.cur.abort_after || (d.cur.abort_level && d.aborting))
				d.abort_now = true;
		}
		uint8_t ib[32];
		if (valid)
			memcpy(ib, d.next.in.w, 32);
		else
			garbage(ib, 32);
		if (d.store) {
			top->st_insn_valid_i = valid;
			put(top->st_insn_i, ib, 32);
			top->st_abort_i = d.abort_now;
		} else {
			top->ld_insn_valid_i = valid;
			put(top->ld_insn_i, ib, 32);
			top->ld_abort_i = d.abort_now;
		}
	}

	bool mem_equal(const Mem &a, const Mem &b, bool store, std::string &what)
	{
		if (store) {
			if (a.dram != b.dram) {
				for (size_t i = 0; i < a.dram.size(); i++)
					if (a.dram[i] != b.dram[i]) {
						char s[128];
						snprintf(s, sizeof s, "DRAM[0x%zx] = 0x%02x, expected 0x%02x", i, a.dram[i], b.dram[i]);
						what = s;
						break;
					}
				return false;
			}
		} else {
			if (a.sp != b.sp) {
				for (size_t i = 0; i < a.sp.size(); i++)
					if (a.sp[i] != b.sp[i]) {
						char s[128];
						snprintf(s, sizeof s, "SP line %zu byte %zu = 0x%02x, expected 0x%02x", i / R, i % R,
							 a.sp[i], b.sp[i]);
						what = s;
						break;
					}
				return false;
			}
			if (a.acc != b.acc) {
				for (size_t i = 0; i < a.acc.size(); i++)
					if (a.acc[i] != b.acc[i]) {
						char s[128];
						snprintf(s, sizeof s, "ACC line %zu word %zu = 0x%08x, expected 0x%08x", i / C, i % C,
							 a.acc[i], b.acc[i]);
						what = s;
						break;
					}
				return false;
			}
		}
		return true;
	}

	void disasm(const loom_insn &in, char *b, size_t n) { loom_insn_disasm(&in, b, n); }

	// accept / done / abort bookkeeping for one engine (after eval)
	void track(Drv &d, bool valid, bool ready, bool done, bool busy)
	{
		if (done) {
			if (!d.running) {
				error("%s: done_o without an instruction", d.store ? "store" : "load");
			} else if (d.aborting) {
				error("%s: done_o after abort", d.store ? "store" : "load");
			} else {
				if (!ready || busy)
					error("%s: done_o while not idle", d.store ? "store" : "load");
				if (d.expect_pos != d.expect.size())
					error("%s: done_o with %zu bursts never issued", d.store ? "store" : "load",
					      d.expect.size() - d.expect_pos);
				if (d.store) {
					ref_store(ref, d.cur.in, d.rec, nullptr);
					if (!awq.empty() || !bq.empty())
						error("store: done_o with writes outstanding");
				} else {
					ref_load(ref, d.cur.in, nullptr);
					if (!rq.empty())
						error("load: done_o with reads outstanding");
				}
				std::string what;
				if (!mem_equal(rtl, ref, d.store, what)) {
					char dis[256];
					disasm(d.cur.in, dis, sizeof dis);
					error("%s mismatch after %s: %s", d.store ? "store" : "load", dis, what.c_str());
					// resync so that one bug reports once
					if (d.store)
						ref.dram = rtl.dram;
					else {
						ref.sp = rtl.sp;
						ref.acc = rtl.acc;
					}
				}
				d.done_count++;
				d.last_done = now;
			}
			d.running = false;
		} else if (d.running && d.aborting && !busy) {
			// aborted: each unit is either untouched or holds a value one
			// of the instruction's rows writes there (rows may overlap);
			// then resync the reference
			Mem post = d.pre;
			if (d.store) {
				std::vector<std::pair<uint32_t, uint8_t>> wr;
				ref_store(post, d.cur.in, d.rec, nullptr, &wr);
				std::vector<uint8_t> ok(rtl.dram.size(), 0);
				for (size_t i = 0; i < rtl.dram.size(); i++)
					ok[i] = rtl.dram[i] == d.pre.dram[i];
				for (auto &w : wr)
					ok[w.first] |= rtl.dram[w.first] == w.second;
				for (size_t i = 0; i < rtl.dram.size(); i++)
					if (!ok[i]) {
						error("store abort: DRAM[0x%zx] = 0x%02x: neither old 0x%02x nor written by a row", i,
						      rtl.dram[i], d.pre.dram[i]);
						break;
					}
				ref.dram = rtl.dram;
				if (!awq.empty() || !bq.empty() || top->st_aw_valid_o || top->st_w_valid_o)
					error("store abort: idle with the bus not quiet");
			} else {
				ref_load(post, d.cur.in, nullptr);
				for (size_t l = 0; l < cfg.sp_lines; l++)
					if (memcmp(&rtl.sp[l * R], &d.pre.sp[l * R], R) &&
					    memcmp(&rtl.sp[l * R], &post.sp[l * R], R)) {
						error("load abort: SP line %zu is neither old nor new", l);
						break;
					}
				for (size_t l = 0; l < cfg.acc_lines; l++)
					if (memcmp(&rtl.acc[l * C], &d.pre.acc[l * C], 4 * C) &&
					    memcmp(&rtl.acc[l * C], &post.acc[l * C], 4 * C)) {
						error("load abort: ACC line %zu is neither old nor new", l);
						break;
					}
				ref.sp = rtl.sp;
				ref.acc = rtl.acc;
				if (!rq.empty() || top->ld_ar_valid_o)
					error("load abort: idle with reads outstanding");
			}
			d.running = false;
			d.abort_count++;
		}
		if (d.abort_now)
			d.aborting = true;
		if (valid && ready) {
			if (!d.have_next || d.gap > 0)
				error("%s: accepted an instruction that was not offered", d.store ? "store" : "load");
			if (d.running)
				error("%s: accepted an instruction while busy", d.store ? "store" : "load");
			d.cur = d.next;
			d.have_next = false;
			d.running = true;
			d.aborting = false;
			d.acc_cycle = now;
			d.last_accept = now;
			d.expect.clear();
			d.expect_pos = 0;
			if (d.store) {
				// the MARK record: snapshot of the counters at accept
				memset(d.rec, 0, 64);
				uint32_t id = loom_insn_get(&d.cur.in, LOOM_F_MARK_MARK_ID);
				memcpy(d.rec, &id, 4);
				memcpy(d.rec + 4, ctr_now.data(), 4 * NCTR);
				Mem tmp;
				tmp.dram.assign(DRAM_WIN, 0);
				tmp.sp = ref.sp;
				tmp.acc = ref.acc;
				ref_store(tmp, d.cur.in, d.rec, &d.expect);
			} else {
				Mem tmp;
				tmp.dram = ref.dram;
				tmp.sp.assign(ref.sp.size(), 0);
				tmp.acc.assign(ref.acc.size(), 0);
				ref_load(tmp, d.cur.in, &d.expect);
			}
			if (d.cur.abort_after >= 0)
				d.pre = rtl;
		}
	}

	// one clock cycle
	void cycle()
	{
		// 1. outputs of the registers (inputs still those of the last cycle)
		top->eval();
		std::vector<uint8_t> sig0 = out_sig();

		// 2. inputs of this cycle
		drive(ld, top->ld_busy_o);
		drive(st, top->st_busy_o);
		uint8_t buf[512];
		// read channel
		top->ld_ar_ready_i = chance(prof.p_ar);
		bool rv = false;
		if (!rq.empty() && now >= rq.front().t && (r_hold || chance(prof.p_r))) {
			RB &h = rq.front();
			rv = true;
			r_hold = true;
			memcpy(buf, &rtl.dram[h.addr + h.beat * B], B);
			put(top->ld_r_data_i, buf, B);
			top->ld_r_last_i = h.beat == h.len;
		} else {
			garbage(buf, B);
			put(top->ld_r_data_i, buf, B);
			top->ld_r_last_i = rnd() & 1;
		}
		top->ld_r_valid_i = rv;
		// write channels
		top->st_aw_ready_i = chance(prof.p_aw);
		top->st_w_ready_i = chance(prof.p_w);
		bool bv = !bq.empty() && now >= bq.front() && (b_hold || chance(prof.p_b));
		if (bv)
			b_hold = true;
		top->st_b_valid_i = bv;
		// scratchpad: grants, read data of last cycle's grant
		bool ld_gnt = top->ld_sp_req_o && chance(prof.p_gnt);
		bool st_gnt = top->st_sp_req_o && chance(prof.p_gnt);
		top->ld_sp_gnt_i = ld_gnt;
		top->st_sp_gnt_i = st_gnt;
		top->st_sp_rvalid_i = sp_rd_pend;
		if (sp_rd_pend) {
			put(top->st_sp_rdata_i, sp_rd_line.data(), R);
		} else {
			garbage(buf, R);
			put(top->st_sp_rdata_i, buf, R);
		}
		if (acc_rd_pend) {
			put(top->st_acc_rdata_i, acc_rd_line.data(), 4 * C);
		} else {
			garbage(buf, 4 * C);
			put(top->st_acc_rdata_i, buf, 4 * C);
		}
		ctr_now.resize(4 * NCTR);
		garbage(ctr_now.data(), 4 * NCTR);
		put(top->st_ctr_snapshot_i, ctr_now.data(), 4 * NCTR);
		top->eval();

		// 3. no combinational path from this cycle's inputs to any output
		if (out_sig() != sig0)
			error("an output changed with the inputs of the same cycle");

		// 4. handshakes and model updates (they take effect at the edge)
		checks_and_models(ld_gnt, st_gnt, rv, bv);

		// 5. clock edge
		top->clk_i = 1;
		top->eval();
		top->clk_i = 0;
		top->eval();
		now++;
	}

	void checks_and_models(bool ld_gnt, bool st_gnt, bool rv, bool bv)
	{
		uint8_t buf[512];
		// --- AR
		bool arv = top->ld_ar_valid_o, arr = top->ld_ar_ready_i;
		uint32_t ara = top->ld_ar_addr_o, arl = top->ld_ar_len_o;
		if (p_ar_v && !p_ar_r && (!arv || ara != p_ar_addr || arl != p_ar_len))
			error("AR changed before it was accepted");
		if (arv && arr) {
			if (ara % B)
				error("AR address 0x%x not beat aligned", ara);
			if (ld.expect_pos >= ld.expect.size()) {
				error("unexpected AR 0x%x len %u", ara, arl);
			} else {
				const Burst &e = ld.expect[ld.expect_pos++];
				if (e.addr != ara || e.len != arl)
					error("AR 0x%x len %u, expected 0x%x len %u", ara, arl, e.addr, e.len);
			}
			if (ara + (arl + 1) * B > DRAM_WIN)
				error("AR outside the modelled DRAM");
			else
				rq.push_back({ara, arl, 0, now + (long)rr(prof.lat_min, prof.lat_max)});
			if (rq.size() > cfg.dma_outstanding)
				error("%zu read bursts in flight, more than DmaOutstanding = %u", rq.size(),
				      cfg.dma_outstanding);
		}
		p_ar_v = arv, p_ar_r = arr, p_ar_addr = ara, p_ar_len = arl;
		// --- R
		if (rv && top->ld_r_ready_o) {
			RB &h = rq.front();
			ld_beats++;
			r_hold = false;
			if (++h.beat > h.len)
				rq.pop_front();
		}
		// --- load SP / ACC writes
		{
			std::vector<uint8_t> s;
			sig_add(s, top->ld_sp_addr_o);
			sig_add(s, top->ld_sp_wdata_o);
			if (p_ldsp_req && !p_ldsp_gnt && !ld.aborting && (!top->ld_sp_req_o || s != p_ldsp_sig))
				error("load SP request dropped or changed before its grant");
			p_ldsp_req = top->ld_sp_req_o;
			p_ldsp_gnt = ld_gnt;
			p_ldsp_sig = s;
		}
		if (ld_gnt) {
			if (!top->ld_sp_we_o)
				error("load SP request without we");
			uint32_t l = top->ld_sp_addr_o;
			if (l >= cfg.sp_lines)
				error("load SP line %u out of range", l);
			else
				get(top->ld_sp_wdata_o, &rtl.sp[l * R], R);
		}
		if (top->ld_acc_we_o) {
			uint32_t l = top->ld_acc_addr_o;
			if (l >= cfg.acc_lines)
				error("load ACC line %u out of range", l);
			else {
				get(top->ld_acc_wdata_o, buf, 4 * C);
				memcpy(&rtl.acc[l * C], buf, 4 * C);
			}
		}
		// --- store SP / ACC reads
		if (p_stsp_req && !p_stsp_gnt && !st.aborting &&
		    (!top->st_sp_req_o || (uint32_t)top->st_sp_addr_o != p_stsp_addr))
			error("store SP request dropped or changed before its grant");
		p_stsp_req = top->st_sp_req_o;
		p_stsp_gnt = st_gnt;
		p_stsp_addr = top->st_sp_addr_o;
		sp_rd_pend = st_gnt;
		if (st_gnt) {
			uint32_t l = top->st_sp_addr_o;
			sp_rd_line.assign(R, 0);
			if (l >= cfg.sp_lines)
				error("store SP line %u out of range", l);
			else
				memcpy(sp_rd_line.data(), &rtl.sp[l * R], R);
		}
		acc_rd_pend = top->st_acc_re_o;
		if (acc_rd_pend) {
			uint32_t l = top->st_acc_addr_o;
			acc_rd_line.assign(4 * C, 0);
			if (l >= cfg.acc_lines)
				error("store ACC line %u out of range", l);
			else
				memcpy(acc_rd_line.data(), &rtl.acc[l * C], 4 * C);
		}
		// --- W (before AW: a W beat needs an AW accepted in an earlier cycle)
		bool wv = top->st_w_valid_o, wr = top->st_w_ready_i;
		std::vector<uint8_t> ws;
		sig_add(ws, top->st_w_data_o);
		sig_add(ws, top->st_w_strb_o);
		sig_add(ws, top->st_w_last_o);
		if (p_w_v && !p_w_r && (!wv || ws != p_w_sig))
			error("W changed before it was accepted");
		p_w_v = wv, p_w_r = wr, p_w_sig = ws;
		if (wv && (awq.empty() || awq.front().t_acc >= now))
			error("W beat before its AW");
		if (wv && wr && !awq.empty() && awq.front().t_acc < now) {
			WB &h = awq.front();
			uint64_t strb = 0;
			uint8_t sb[8];
			get(top->st_w_strb_o, sb, (B + 7) / 8);
			for (unsigned i = 0; i < (B + 7) / 8; i++)
				strb |= (uint64_t)sb[i] << (8 * i);
			get(top->st_w_data_o, buf, B);
			uint32_t base = h.addr + h.beat * B;
			for (unsigned k = 0; k < B; k++) {
				bool want = base + k >= h.row.a && base + k < h.row.a + h.row.n0;
				bool got = (strb >> k) & 1;
				if (want != got) {
					error("W beat %u of burst 0x%x: strobe of byte %u is %d", h.beat, h.addr, k, got);
					break;
				}
				if (got)
					rtl.dram[base + k] = buf[k];
			}
			if ((bool)top->st_w_last_o != (h.beat == h.len))
				error("w_last %d on beat %u of %u", top->st_w_last_o, h.beat, h.len + 1);
			st_beats++;
			if (++h.beat > h.len) {
				awq.pop_front();
				bq.push_back(now + (long)rr(prof.blat_min, prof.blat_max));
			}
		}
		// --- AW
		bool awv = top->st_aw_valid_o, awr = top->st_aw_ready_i;
		uint32_t awa = top->st_aw_addr_o, awl = top->st_aw_len_o;
		if (p_aw_v && !p_aw_r && (!awv || awa != p_aw_addr || awl != p_aw_len))
			error("AW changed before it was accepted");
		p_aw_v = awv, p_aw_r = awr, p_aw_addr = awa, p_aw_len = awl;
		if (awv && awr) {
			Row row{awa, 0};
			if (st.expect_pos >= st.expect.size()) {
				error("unexpected AW 0x%x len %u", awa, awl);
			} else {
				const Burst &e = st.expect[st.expect_pos++];
				row = e.row;
				if (e.addr != awa || e.len != awl)
					error("AW 0x%x len %u, expected 0x%x len %u", awa, awl, e.addr, e.len);
			}
			if (awa < ST_DRAM_BASE || awa + (awl + 1) * B > DRAM_WIN)
				error("AW outside the store region");
			else
				awq.push_back({awa, awl, 0, now, row});
		}
		// --- B
		if (bv && top->st_b_ready_o) {
			bq.pop_front();
			b_hold = false;
		}
		// --- instruction ports
		track(ld, top->ld_insn_valid_i, top->ld_insn_ready_o, top->ld_done_o, top->ld_busy_o);
		track(st, top->st_insn_valid_i, top->st_insn_ready_o, top->st_done_o, top->st_busy_o);
		if (top->ld_done_o && p_ld_done)
			error("load done_o longer than one cycle");
		if (top->st_done_o && p_st_done)
			error("store done_o longer than one cycle");
		p_ld_done = top->ld_done_o;
		p_st_done = top->st_done_o;
	}

	bool idle() const
	{
		return ld.q.empty() && !ld.have_next && !ld.running && st.q.empty() && !st.have_next && !st.running;
	}

	// run until both queues are drained (or errors / timeout)
	bool run(long max_cycles)
	{
		long t0 = now;
		while (!idle()) {
			cycle();
			if (errors.size() > 20)
				return false;
			if (now - t0 > max_cycles) {
				error("timeout: engines hung (load busy %d, store busy %d)", top->ld_busy_o, top->st_busy_o);
				return false;
			}
		}
		// a few idle cycles: nothing may move on the bus
		for (int i = 0; i < 4; i++) {
			cycle();
			if (top->ld_ar_valid_o || top->st_aw_valid_o || top->st_w_valid_o || top->ld_busy_o ||
			    top->st_busy_o)
				error("bus or engine active after the last instruction");
		}
		return errors.empty();
	}

	void init_memories()
	{
		rtl.dram.resize(DRAM_WIN);
		for (auto &b : rtl.dram)
			b = (uint8_t)rnd();
		rtl.sp.resize((size_t)cfg.sp_lines * R);
		for (auto &b : rtl.sp)
			b = (uint8_t)rnd();
		rtl.acc.resize((size_t)cfg.acc_lines * C);
		for (auto &w : rtl.acc) {
			switch (rn(4)) {
			case 0: w = (uint32_t)rnd(); break;
			case 1: w = (uint32_t)(int32_t)(rn(2000001) - 1000000); break;
			default: w = (uint32_t)(int32_t)(rn(20001) - 10000); break;
			}
		}
		// parameter sets for requant: bias, mult, shift lines
		for (unsigned s = 0; s < NPARAM; s++) {
			uint32_t l = cfg.acc_lines / 2 + 3 * s;
			for (unsigned c = 0; c < C; c++) {
				bool wild = s == NPARAM - 1;
				rtl.acc[l * C + c] = wild ? (uint32_t)rnd() : (uint32_t)(int32_t)(rn(200001) - 100000);
				rtl.acc[(l + 1) * C + c] = wild ? (uint32_t)rnd() : (1u << 30) + rn(1u << 30);
				uint32_t sh = wild ? (uint32_t)rnd() : rn(14);
				if (!wild && chance(0.2))
					sh |= (uint32_t)rnd() << 5; // only bits 4:0 count
				rtl.acc[(l + 2) * C + c] = sh;
			}
		}
		ref = rtl;
	}
};

// ------------------------------------------------------------ the cases
struct Case {
	const char *name;
	void (*setup)(Bench &b);
	long max_cycles;
};

void add(Bench &b, bool store, const loom_insn &in, int gap = 0, int abort_after = -1, bool level = false)
{
	Item it;
	it.in = in;
	it.gap = gap;
	it.abort_after = abort_after;
	it.abort_level = level;
	(store ? b.st : b.ld).q.push_back(it);
}

void case_load_sp_2d(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 0;
		sh.n3max = 1;
		sh.n1max = 7;
		sh.n2max = 5;
		loom_insn in = gen_load(sh);
		// all four paddings, non-zero PAD_VALUE
		fset(in, LF(PAD_TOP), rr(1, 2));
		fset(in, LF(PAD_BOTTOM), rr(1, 2));
		fset(in, LF(PAD_LEFT), rr(1, 2));
		fset(in, LF(PAD_RIGHT), rr(1, 2));
		fset(in, LF(PAD_VALUE), rr(1, 255));
		fset(in, LF(MEM_ADDR), 0);
		check_legal(in);
		add(b, false, in, rn(3));
	}
}

void case_load_sp_3d(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 0;
		sh.n3max = 4;
		sh.n1max = 5;
		sh.padmax = 3;
		loom_insn in = gen_load(sh);
		fset(in, LF(N3), rr(2, 4));
		fset(in, LF(MEM_ADDR), 0);
		check_legal(in);
		add(b, false, in, rn(3));
	}
}

void case_load_small_rows(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 0;
		sh.rw = (int)rr(1, R / 4 > 1 ? R / 4 - 1 : 1);
		sh.n1max = 12;
		loom_insn in = gen_load(sh);
		fset(in, LF(STRIDE1), 4 * rr(1, 3));                // unaligned, overlapping rows
		fset(in, LF(DRAM_ADDR), 4 * rn(4096) + 4 * rr(1, B / 4 - 1));
		check_legal(in);
		add(b, false, in, rn(2));
	}
}

void case_load_acc(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		LoadShape sh;
		sh.tgt = 1;
		if (i < 3)
			sh.rw = (int)C; // whole ACC line, unaligned: widest burst
		loom_insn in = gen_load(sh);
		add(b, false, in, rn(3));
	}
}

void case_store_src(Bench &b, int src)
{
	b.prof = random_prof();
	for (int i = 0; i < 12; i++) {
		StoreShape sh;
		sh.src = src;
		if (i < 3)
			sh.rw = 1000; // clamps to the widest row
		add(b, true, gen_store(sh), rn(3));
	}
}
void case_store_sp(Bench &b) { case_store_src(b, 0); }
void case_store_acc(Bench &b) { case_store_src(b, 1); }
void case_store_requant(Bench &b) { case_store_src(b, 2); }

void case_mark(Bench &b)
{
	b.prof = random_prof();
	for (unsigned off = 0; off < B; off += 4)
		add(b, true, gen_mark((int)off), rn(3));
	for (int i = 0; i < 4; i++) // back to back with stores
		add(b, true, i & 1 ? gen_mark(-1) : gen_store(StoreShape{}));
}

void case_empty(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 4; i++) {
		add(b, false, gen_empty(false), rn(2));
		add(b, true, gen_empty(true), rn(2));
		add(b, false, gen_load(LoadShape{}));
		add(b, true, gen_store(StoreShape{}));
	}
}

void case_back_to_back(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(1, 8)) : random_prof();
	for (int i = 0; i < 30; i++) {
		add(b, false, gen_load(LoadShape{}));
		add(b, true, chance(0.15) ? gen_mark(-1) : gen_store(StoreShape{}));
	}
}

void case_abort(Bench &b)
{
	b.prof = random_prof();
	for (int i = 0; i < 10; i++) {
		LoadShape ls;
		ls.n1max = 12;
		StoreShape ss;
		ss.n1max = 12;
		bool lvl = chance(0.5);
		add(b, false, gen_load(ls), rn(3), (int)rr(1, 150), lvl);
		add(b, false, gen_load(LoadShape{}), rn(3)); // the engine still works
		add(b, true, chance(0.2) ? gen_mark(-1) : gen_store(ss), rn(3), (int)rr(1, 150), !lvl);
		add(b, true, gen_store(StoreShape{}), rn(3));
	}
}

void case_random(Bench &b)
{
	b.prof = chance(0.2) ? fast_prof(rr(1, 30)) : random_prof();
	int n = (int)rr(5, 25);
	for (int i = 0; i < n; i++) {
		int ab = chance(0.1) ? (int)rr(1, 200) : -1;
		if (chance(0.5))
			add(b, false, gen_load(LoadShape{}), chance(0.5) ? 0 : (int)rn(10), ab, chance(0.5));
		else
			add(b, true, chance(0.1) ? gen_mark(-1) : gen_store(StoreShape{}), chance(0.5) ? 0 : (int)rn(10),
			    ab, chance(0.5));
	}
}

// ------------------------------------------------------------ throughput
// Long instructions on an ideal bus (always ready, fixed latency): beats on
// the bus per cycle from accept to done.
struct Tput {
	const char *what;
	double beats_per_cycle;
	long beats, cycles;
};

Tput measure(VerilatedContext *ctx, const char *what, bool store, const loom_insn &in, unsigned lat)
{
	Bench b(ctx);
	b.init_memories();
	b.reset();
	b.prof = fast_prof(lat);
	add(b, store, in);
	bool ok = b.run(1000000);
	long cyc = (store ? b.st.last_done : b.ld.last_done) - (store ? b.st.last_accept : b.ld.last_accept);
	long beats = store ? b.st_beats : b.ld_beats;
	if (!ok)
		for (auto &e : b.errors)
			printf("  %s\n", e.c_str());
	return {what, ok && cyc ? (double)beats / (double)cyc : 0.0, beats, cyc};
}

} // namespace

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
	int nrandom = argc > 2 ? atoi(argv[2]) : 60;
	rs ^= seed * 0x9e3779b97f4a7c15ull;
	if (!rs)
		rs = 1;
	for (int i = 0; i < 8; i++)
		rnd();

	auto ctx = std::make_unique<VerilatedContext>();
	ctx->commandArgs(argc, argv);

	// configuration of the model: match its fingerprint against configs/
	uint32_t fp;
	{
		Vdma_tb_top probe(ctx.get());
		probe.eval();
		fp = probe.cfg_fingerprint_o;
		probe.final();
	}
	std::vector<std::string> roots;
	if (getenv("LOOM_ROOT"))
		roots.push_back(getenv("LOOM_ROOT"));
	{
		std::string f = __FILE__; // .../verilator_tb/blocks/dma_tb.cpp
		for (int up = 0; up < 3; up++) {
			size_t s = f.rfind('/');
			f = s == std::string::npos ? "." : f.substr(0, s);
		}
		roots.push_back(f);
	}
	roots.push_back(".");
	bool found = false;
	char err[256];
	for (auto &root : roots) {
		for (const char *name : {"default", "small", "odd", "large"}) {
			if (loom_hwcfg_load(&cfg, name, root.c_str(), err, sizeof err) == 0 && cfg.fingerprint == fp) {
				found = true;
				break;
			}
		}
		if (found)
			break;
	}
	if (!found) {
		printf("dma_tb: no configs/*.cfg has fingerprint %08x (set LOOM_ROOT)\n0 passed, 1 failed\n", fp);
		return 1;
	}
	R = cfg.array_rows;
	C = cfg.array_cols;
	B = cfg.dram_beat_bytes;
	printf("dma_tb: config %s (R=%u C=%u B=%u outstanding=%u), seed %" PRIu64 "\n", cfg.name, R, C, B,
	       cfg.dma_outstanding, seed);

	static const Case cases[] = {
		{"load sp 2-D, four paddings, pad value", case_load_sp_2d, 2000000},
		{"load sp 3-D strided", case_load_sp_3d, 2000000},
		{"load sp short unaligned rows", case_load_small_rows, 2000000},
		{"load acc", case_load_acc, 2000000},
		{"store sp strided", case_store_sp, 2000000},
		{"store acc raw", case_store_acc, 2000000},
		{"store acc requant", case_store_requant, 2000000},
		{"mark at every offset", case_mark, 2000000},
		{"empty instructions", case_empty, 2000000},
		{"back to back, both engines", case_back_to_back, 4000000},
		{"abort mid-instruction", case_abort, 4000000},
	};
	int passed = 0, failed = 0;
	auto run_case = [&](const char *name, void (*setup)(Bench &), long maxc) {
		Bench b(ctx.get());
		b.init_memories();
		b.reset();
		setup(b);
		bool ok = b.run(maxc);
		if (ok && b.ld.done_count + b.ld.abort_count + b.st.done_count + b.st.abort_count == 0) {
			b.error("no instruction completed");
			ok = false;
		}
		if (ok) {
			passed++;
		} else {
			failed++;
			printf("FAIL %s\n", name);
			for (size_t i = 0; i < b.errors.size() && i < 8; i++)
				printf("  %s\n", b.errors[i].c_str());
		}
		return ok;
	};
	for (const Case &c : cases) {
		if (run_case(c.name, c.setup, c.max_cycles))
			printf("PASS %s\n", c.name);
	}
	int rfail = 0;
	for (int i = 0; i < nrandom; i++) {
		char name[64];
		snprintf(name, sizeof name, "random program %d", i);
		if (!run_case(name, case_random, 4000000))
			rfail++;
	}
	printf("%s %d random programs\n", rfail ? "FAIL" : "PASS", nrandom);

	// throughput on an ideal bus
	{
		LoadShape ls;
		ls.tgt = 0;
		ls.rw = (int)(R / 4);
		ls.pads = false;
		loom_insn in = gen_load(ls);
		fset(in, LF(N1), 64);
		fset(in, LF(N2), 8);
		fset(in, LF(N3), 1);
		fset(in, LF(MEM_ADDR), 0);
		fset(in, LF(STRIDE1), R);
		fset(in, LF(STRIDE2), 64 * R);
		fset(in, LF(DRAM_ADDR), 4096);
		check_legal(in);
		loom_insn ina = in;
		fset(ina, LF(TARGET), 1);
		fset(ina, LF(PAD_VALUE), 0);
		fset(ina, LF(ROW_WORDS), C);
		fset(ina, LF(STRIDE1), 4 * C);
		fset(ina, LF(STRIDE2), 64 * 4 * C);
		fset(ina, LF(N2), 2);
		check_legal(ina);
		StoreShape ss;
		ss.src = 0;
		loom_insn st = gen_store(ss);
		fset(st, SF(ROW_WORDS), R / 4);
		fset(st, SF(N1), 64);
		fset(st, SF(N2), 8);
		fset(st, SF(N3), 1);
		fset(st, SF(STRIDE1), R);
		fset(st, SF(STRIDE2), 64 * R);
		fset(st, SF(DRAM_ADDR), ST_DRAM_BASE + 4);
		fset(st, SF(MEM_ADDR), cfg.sp_lines / 2);
		check_legal(st);
		loom_insn sq = st;
		fset(sq, SF(SOURCE), 2);
		fset(sq, SF(ROW_WORDS), C / 4);
		fset(sq, SF(STRIDE1), C);
		fset(sq, SF(STRIDE2), 64 * C);
		fset(sq, SF(MEM_ADDR), cfg.acc_lines / 2);
		fset(sq, SF(N2), 2);
		fset(sq, SF(PARAM_ADDR), cfg.acc_lines / 2);
		fset(sq, SF(CLIP_LO), 0x80);
		fset(sq, SF(CLIP_HI), 0x7f);
		check_legal(sq);
		loom_insn sa = st;
		fset(sa, SF(SOURCE), 1);
		fset(sa, SF(ROW_WORDS), C);
		fset(sa, SF(STRIDE1), 4 * C);
		fset(sa, SF(STRIDE2), 64 * 4 * C);
		fset(sa, SF(MEM_ADDR), cfg.acc_lines / 2);
		fset(sa, SF(N2), 2);
		check_legal(sa);
		char d1[64], d2[64], d3[64], d4[64], d5[64], d6[64], d7[64];
		snprintf(d1, sizeof d1, "load sp  %u-byte rows, latency 2", R);
		snprintf(d2, sizeof d2, "load acc %u-byte rows, latency 2", 4 * C);
		snprintf(d3, sizeof d3, "store sp %u-byte rows +4, latency 2", R);
		snprintf(d4, sizeof d4, "store acc %u-byte rows +4, latency 2", 4 * C);
		snprintf(d5, sizeof d5, "store requant %u-byte rows +4, latency 2", C);
		snprintf(d6, sizeof d6, "load sp  %u-byte rows, latency %u", R, cfg.dram_latency);
		snprintf(d7, sizeof d7, "store sp %u-byte rows +4, latency %u", R, cfg.dram_latency);
		Tput t[] = {measure(ctx.get(), d1, false, in, 2), measure(ctx.get(), d2, false, ina, 2),
			    measure(ctx.get(), d3, true, st, 2), measure(ctx.get(), d4, true, sa, 2),
			    measure(ctx.get(), d5, true, sq, 2), measure(ctx.get(), d6, false, in, cfg.dram_latency),
			    measure(ctx.get(), d7, true, st, cfg.dram_latency)};
		for (auto &x : t) {
			// the read side is bounded by DmaOutstanding bursts per latency
			bool ok = x.beats_per_cycle > 0.0;
			printf("%s throughput %-40s %ld beats / %ld cycles = %.3f beats/cycle\n", ok ? "INFO" : "FAIL",
			       x.what, x.beats, x.cycles, x.beats_per_cycle);
			if (ok)
				passed++;
			else
				failed++;
		}
	}

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
