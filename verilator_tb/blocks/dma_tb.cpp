// dma_tb.cpp - self-checking block test of rtl/npu_dma_load.sv and
// rtl/npu_dma_store.sv (with rtl/npu_requant.sv) through dma_tb_top.sv.
//
// The C++ side is the whole environment: a behavioural DRAM (AXI slave with
// random AR/AW/W ready, random read and write-response latency and random
// gaps in r_valid / b_valid), a scratchpad with random grant refusals (one
// write client = load, one read client = store, data the cycle after the
// grant) and an accumulator (load writes, store reads, data next cycle). A C
// reference of the LOAD / STORE / MARK pseudo-code of docs/ISA.md (requant
// through loom_requant of common/isa.c) runs at each done_o and the SP / ACC
// (load) or DRAM (store) is compared then, so done_o is also checked to come
// only after the instruction's last write (load) or last B response (store).
// Every instruction is validated by loom_insn_check first.
//
// Each engine may hold two instructions (the next one is accepted while the
// previous one still has data in flight); the bench offers the next one as
// soon as it can and tracks what each engine holds: done_o must come once
// per instruction, in acceptance order; busy_o exactly while something is
// held; insn_ready_o never with two held (load: exactly then, outside an
// abort). Bus bursts are tagged with their instruction, so done_o is also
// checked against bursts of that instruction still on the bus. The DRAM
// writes of a store are logged per instruction and applied to the compared
// image ("commit") at its done_o, since the next store may already write.
//
// Checked on every cycle: AR/AW/W payload stable while valid and not ready;
// SP requests held until granted (except after abort); W never before its
// AW; each AR/AW burst equal to the expected one, in order (loads: aligned
// contiguous rows coalesced into bursts of up to 16 beats within a 4 KiB
// page, see ld_bursts); W strobes exactly the row's bytes and w_last on the
// last beat; no output of either engine changes when the inputs of the same
// cycle change (no combinational input-to-output path). (done_o may be high
// in consecutive cycles, for consecutive instructions.)
//
// abort_i aborts everything an engine holds. The bench does not offer an
// instruction while one that will be aborted is held, nor such an
// instruction while another is held (as the command processor, which aborts
// only at the end of a run), except for items marked overlap, which test an
// abort hitting two instructions.
//
// Memory regions keep the two engines independent so that they can run
// concurrently: loads read DRAM [0, 1 MiB) and write the lower half of SP and
// ACC; stores and MARK read the upper half of SP and ACC and write DRAM
// [1 MiB, 2 MiB).
//
// The configuration is that of the npu_pkg.sv the model was built with
// (found by its fingerprint among configs/*.cfg, or the spec in $LOOM_HW,
// e.g. LOOM_HW=default:dma_outstanding=32). Build and run from /work/main;
// PKG is the generated package, build/hw/default/npu_pkg.sv for default, or
// another config's, e.g. small:
//   make build/bin/gen_hw
//   mkdir -p /tmp/pkg_small && build/bin/gen_hw small /tmp/pkg_small
//   PKG=/tmp/pkg_small/npu_pkg.sv
//   verilator --cc --exe --build -O3 -j 2 -Wall --assert --top-module dma_tb_top \
//     -Mdir /tmp/dtb_small -CFLAGS "-I$PWD/include" $PWD/verilator_tb/lint.vlt \
//     $PKG $PWD/rtl/npu_requant.sv $PWD/rtl/npu_dma_load.sv $PWD/rtl/npu_dma_store.sv \
//     $PWD/verilator_tb/blocks/dma_tb_top.sv $PWD/verilator_tb/blocks/dma_tb.cpp \
//     $PWD/common/isa.c $PWD/common/hwcfg.c
//   /tmp/dtb_small/Vdma_tb_top [seed (1)] [random_programs (60)]
// Absolute source paths: Verilator's make runs inside -Mdir. lint.vlt holds
// the project's waiver for the generated package's unused parameters.
#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
	long seq;  // the instruction (acceptance number in its engine)
};

bool is_data(uint32_t pt, uint32_t n2, uint32_t pl, uint32_t n1, uint32_t y, uint32_t x)
{
	return y >= pt && y < pt + n2 && x >= pl && x < pl + n1;
}

const uint32_t MAX_BURST = 16; // beats of a coalesced load burst

// coverage of the bursts and overlap the cases produce (all runs together)
struct Cov {
	long multi_row = 0;   // AR bursts of several rows
	long full = 0;        // ... of MAX_BURST beats
	long page_split = 0;  // a row continuing a burst but starting a new 4 KiB page
	long overlap_ld = 0;  // accepts while the engine held another instruction
	long overlap_st = 0;
	long abort_two = 0;   // aborts of two instructions held at once
} cov;

// The AR bursts of a LOAD, in order: one per data line, except that a data
// line directly following another one (no padding line between them) joins
// that line's burst when both are beat aligned (address and n0 multiples of
// B), it starts where the burst ends, and the burst stays within MAX_BURST
// beats and within the 4 KiB page of its first byte. Each row still moves
// exactly (a+n0-1)/B - a/B + 1 beats (the DRAM_RD_BYTES rule).
void ld_bursts(const loom_insn &in, long seq, std::deque<Burst> &out)
{
	uint32_t n0 = 4 * fget(in, LF(ROW_WORDS)), da = fget(in, LF(DRAM_ADDR));
	uint32_t s1 = fget(in, LF(STRIDE1)), s2 = fget(in, LF(STRIDE2)), s3 = fget(in, LF(STRIDE3));
	uint32_t n1 = fget(in, LF(N1)), n2 = fget(in, LF(N2)), n3 = fget(in, LF(N3));
	uint32_t pt = fget(in, LF(PAD_TOP)), pb = fget(in, LF(PAD_BOTTOM)), pl = fget(in, LF(PAD_LEFT)),
		 pr = fget(in, LF(PAD_RIGHT));
	if (!n1 || !n2 || !n3)
		return;
	bool open = false, open_co = false;
	uint32_t open_page = 0, open_next = 0, open_beats = 0, prev_line = 0, line = 0;
	for (uint32_t i3 = 0; i3 < n3; i3++)
		for (uint32_t y = 0; y < pt + n2 + pb; y++)
			for (uint32_t x = 0; x < pl + n1 + pr; x++, line++) {
				if (!is_data(pt, n2, pl, n1, y, x))
					continue;
				uint32_t src = da + i3 * s3 + (y - pt) * s2 + (x - pl) * s1;
				uint32_t nb = (src + n0 - 1) / B - src / B + 1;
				bool co = src % B == 0 && n0 % B == 0;
				bool cont = open && open_co && co && prev_line + 1 == line && src == open_next;
				if (cont && open_beats + nb <= MAX_BURST && (src + n0 - 1) / 4096 == open_page) {
					if (open_beats == (n0 / B))
						cov.multi_row++;
					out.back().len += nb;
					open_beats += nb;
					if (open_beats == MAX_BURST)
						cov.full++;
				} else {
					if (cont && src % 4096 == 0)
						cov.page_split++;
					out.push_back({src & ~(B - 1), nb - 1, {src, n0}, seq});
					open = true;
					open_co = co;
					open_page = src / 4096;
					open_beats = nb;
				}
				open_next = src + n0;
				prev_line = line;
			}
}

// The AW bursts of a STORE / MARK: one per row.
void st_bursts(const loom_insn &in, long seq, std::deque<Burst> &out)
{
	if (loom_insn_opcode(&in) == LOOM_OP_MARK) {
		uint32_t a = loom_insn_get(&in, LOOM_F_MARK_DRAM_ADDR);
		out.push_back({a & ~(B - 1), (a + 63) / B - a / B, {a, 64}, seq});
		return;
	}
	uint32_t n0 = 4 * fget(in, SF(ROW_WORDS)), da = fget(in, SF(DRAM_ADDR));
	uint32_t s1 = fget(in, SF(STRIDE1)), s2 = fget(in, SF(STRIDE2)), s3 = fget(in, SF(STRIDE3));
	uint32_t n1 = fget(in, SF(N1)), n2 = fget(in, SF(N2)), n3 = fget(in, SF(N3));
	for (uint32_t i3 = 0; i3 < n3; i3++)
		for (uint32_t i2 = 0; i2 < n2; i2++)
			for (uint32_t i1 = 0; i1 < n1; i1++) {
				uint32_t dst = da + i3 * s3 + i2 * s2 + i1 * s1;
				out.push_back({dst & ~(B - 1), (dst + n0 - 1) / B - dst / B, {dst, n0}, seq});
			}
}

// The LOAD of docs/ISA.md on m.
void ref_load(Mem &m, const loom_insn &in)
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

// The STORE / MARK of docs/ISA.md on m (rec = the 64-byte MARK record);
// writes (if given) gets every byte written, in order.
void ref_store(Mem &m, const loom_insn &in, const uint8_t *rec,
	       std::vector<std::pair<uint32_t, uint8_t>> *writes = nullptr)
{
	if (loom_insn_opcode(&in) == LOOM_OP_MARK) {
		uint32_t a = loom_insn_get(&in, LOOM_F_MARK_DRAM_ADDR);
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
	bool overlap = false;  // may be held together with another one when aborted
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

	// the command processor's rule, in the bench: an instruction that will be
	// aborted runs alone unless marked overlap
	static bool may_offer(const Drv &d)
	{
		if (d.aborting)
			return false;
		for (auto &h : d.held)
			if (h.it.abort_after >= 0 && !h.it.overlap)
				return false;
		return !(d.next.abort_after >= 0 && !d.next.overlap && !d.held.empty());
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
				valid = may_offer(d);
		}
		d.abort_now = false;
		if (busy)
			for (auto &h : d.held) {
				long t = now - h.acc_cycle;
				if (h.it.abort_after >= 0 && (t == h.it.abort_after || (h.it.abort_level && d.aborting)))
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
			if (commit != b.dram) {
				for (size_t i = 0; i < commit.size(); i++)
					if (commit[i] != b.dram[i]) {
						char s[128];
						snprintf(s, sizeof s, "DRAM[0x%zx] = 0x%02x, expected 0x%02x", i, commit[i], b.dram[i]);
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

	void snapshot(Drv &d)
	{
		if (snapshots && !d.store) {
			d.pre.sp = rtl.sp;
			d.pre.acc = rtl.acc;
		}
	}

	// apply the logged DRAM writes of store instruction seq to commit
	void commit_writes(long seq)
	{
		auto it = wlog.find(seq);
		if (it == wlog.end())
			return;
		for (auto &w : it->second)
			commit[w.first] = w.second;
		wlog.erase(it);
	}

	// everything the engine held was aborted and it is idle again: each unit
	// is untouched or holds a value one of the aborted instructions writes
	// there (rows may overlap); then resync the reference
	void check_abort(Drv &d)
	{
		if (d.store) {
			std::map<uint32_t, std::vector<uint8_t>> ok;
			Mem tmp;
			tmp.dram.assign(DRAM_WIN, 0);
			tmp.sp = ref.sp;
			tmp.acc = ref.acc;
			for (auto &h : d.held) {
				std::vector<std::pair<uint32_t, uint8_t>> wr;
				ref_store(tmp, h.it.in, h.rec, &wr);
				for (auto &w : wr)
					ok[w.first].push_back(w.second);
			}
			for (auto &h : d.held) {
				auto it = wlog.find(h.seq);
				if (it == wlog.end())
					continue;
				for (auto &w : it->second) {
					auto o = ok.find(w.first);
					bool good = false;
					if (o != ok.end())
						for (uint8_t v : o->second)
							good |= v == w.second;
					if (!good) {
						error("store abort: DRAM[0x%x] written 0x%02x, not a value of any aborted row",
						      w.first, w.second);
						break;
					}
				}
				commit_writes(h.seq);
			}
			ref.dram = commit;
			if (!awq.empty() || !bq.empty() || top->st_aw_valid_o || top->st_w_valid_o)
				error("store abort: idle with the bus not quiet");
		} else {
			std::vector<Mem> post;
			for (auto &h : d.held) {
				Mem m;
				m.dram = ref.dram;
				m.sp = d.pre.sp;
				m.acc = d.pre.acc;
				ref_load(m, h.it.in);
				post.push_back(std::move(m));
			}
			for (size_t l = 0; l < cfg.sp_lines; l++) {
				bool good = !memcmp(&rtl.sp[l * R], &d.pre.sp[l * R], R);
				for (auto &m : post)
					good |= !memcmp(&rtl.sp[l * R], &m.sp[l * R], R);
				if (!good) {
					error("load abort: SP line %zu is neither old nor new", l);
					break;
				}
			}
			for (size_t l = 0; l < cfg.acc_lines; l++) {
				bool good = !memcmp(&rtl.acc[l * C], &d.pre.acc[l * C], 4 * C);
				for (auto &m : post)
					good |= !memcmp(&rtl.acc[l * C], &m.acc[l * C], 4 * C);
				if (!good) {
					error("load abort: ACC line %zu is neither old nor new", l);
					break;
				}
			}
			ref.sp = rtl.sp;
			ref.acc = rtl.acc;
			if (!rq.empty() || top->ld_ar_valid_o)
				error("load abort: idle with reads outstanding");
		}
		d.abort_count += (long)d.held.size();
		if (d.held.size() == 2)
			cov.abort_two++;
		d.held.clear();
		d.expect.clear();
		d.aborting = false;
	}

	// accept / done / abort bookkeeping for one engine (after eval, before
	// this cycle's memory writes take effect)
	void track(Drv &d, bool valid, bool ready, bool done, bool busy)
	{
		if (done) {
			if (d.held.empty()) {
				error("%s: done_o without an instruction", d.name);
			} else if (d.aborting) {
				error("%s: done_o after abort", d.name);
			} else {
				Held h = d.held.front();
				d.held.pop_front();
				if (!d.expect.empty() && d.expect.front().seq <= h.seq)
					error("%s: done_o with bursts never issued", d.name);
				if (d.store) {
					if ((!awq.empty() && awq.front().seq <= h.seq) || (!bq.empty() && bq.front().seq <= h.seq))
						error("store: done_o with writes of the instruction outstanding");
					ref_store(ref, h.it.in, h.rec);
					commit_writes(h.seq);
				} else {
					if (!rq.empty() && rq.front().seq <= h.seq)
						error("load: done_o with reads of the instruction outstanding");
					ref_load(ref, h.it.in);
				}
				std::string what;
				if (!mem_equal(rtl, ref, d.store, what)) {
					char dis[256];
					disasm(h.it.in, dis, sizeof dis);
					error("%s mismatch after %s: %s", d.name, dis, what.c_str());
					// resync so that one bug reports once
					if (d.store)
						ref.dram = commit;
					else {
						ref.sp = rtl.sp;
						ref.acc = rtl.acc;
					}
				}
				d.done_count++;
				d.last_done = now;
				if (!d.held.empty())
					snapshot(d);
			}
		}
		if (d.aborting && !busy)
			check_abort(d);
		if (!d.aborting) {
			if (busy != !d.held.empty())
				error("%s: busy_o %d while holding %zu instructions", d.name, busy, d.held.size());
			if (ready && d.held.size() >= 2)
				error("%s: insn_ready_o while holding two instructions", d.name);
			if (!d.store && !ready && d.held.size() < 2)
				error("load: insn_ready_o low while holding %zu instructions", d.held.size());
		}
		if (d.abort_now)
			d.aborting = true;
		if (valid && ready) {
			if (!d.have_next || d.gap > 0)
				error("%s: accepted an instruction that was not offered", d.name);
			if (d.held.size() >= 2)
				error("%s: accepted a third instruction", d.name);
			Held h;
			h.it = d.next;
			h.seq = d.next_seq++;
			h.acc_cycle = now;
			d.have_next = false;
			if (d.first_accept < 0)
				d.first_accept = now;
			if (d.store) {
				// the MARK record: snapshot of the counters at accept
				memset(h.rec, 0, 64);
				uint32_t id = loom_insn_get(&h.it.in, LOOM_F_MARK_MARK_ID);
				memcpy(h.rec, &id, 4);
				memcpy(h.rec + 4, ctr_now.data(), 4 * NCTR);
				st_bursts(h.it.in, h.seq, d.expect);
			} else {
				ld_bursts(h.it.in, h.seq, d.expect);
			}
			if (d.held.empty())
				snapshot(d);
			else
				(d.store ? cov.overlap_st : cov.overlap_ld)++;
			d.held.push_back(h);
			d.max_held = std::max(d.max_held, d.held.size());
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
		bool bv = !bq.empty() && now >= bq.front().t && (b_hold || chance(prof.p_b));
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
		// --- instruction ports (done_o reflects the writes of earlier cycles)
		track(ld, top->ld_insn_valid_i, top->ld_insn_ready_o, top->ld_done_o, top->ld_busy_o);
		track(st, top->st_insn_valid_i, top->st_insn_ready_o, top->st_done_o, top->st_busy_o);
		// --- AR
		bool arv = top->ld_ar_valid_o, arr = top->ld_ar_ready_i;
		uint32_t ara = top->ld_ar_addr_o, arl = top->ld_ar_len_o;
		if (p_ar_v && !p_ar_r && (!arv || ara != p_ar_addr || arl != p_ar_len))
			error("AR changed before it was accepted");
		if (arv && arr) {
			long seq = -1;
			if (ara % B)
				error("AR address 0x%x not beat aligned", ara);
			if (ld.expect.empty()) {
				error("unexpected AR 0x%x len %u", ara, arl);
			} else {
				const Burst &e = ld.expect.front();
				seq = e.seq;
				if (e.addr != ara || e.len != arl)
					error("AR 0x%x len %u, expected 0x%x len %u", ara, arl, e.addr, e.len);
				ld.expect.pop_front();
			}
			if (ara + (arl + 1) * B > DRAM_WIN)
				error("AR outside the modelled DRAM");
			else
				rq.push_back({ara, arl, 0, now + (long)rr(prof.lat_min, prof.lat_max), seq});
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
			auto &log = wlog[h.seq];
			for (unsigned k = 0; k < B; k++) {
				bool want = base + k >= h.row.a && base + k < h.row.a + h.row.n0;
				bool got = (strb >> k) & 1;
				if (want != got) {
					error("W beat %u of burst 0x%x: strobe of byte %u is %d", h.beat, h.addr, k, got);
					break;
				}
				if (got) {
					rtl.dram[base + k] = buf[k];
					log.push_back({base + k, buf[k]});
				}
			}
			if ((bool)top->st_w_last_o != (h.beat == h.len))
				error("w_last %d on beat %u of %u", top->st_w_last_o, h.beat, h.len + 1);
			st_beats++;
			if (++h.beat > h.len) {
				bq.push_back({now + (long)rr(prof.blat_min, prof.blat_max), h.seq});
				awq.pop_front();
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
			long seq = -1;
			if (st.expect.empty()) {
				error("unexpected AW 0x%x len %u", awa, awl);
			} else {
				const Burst &e = st.expect.front();
				row = e.row;
				seq = e.seq;
				if (e.addr != awa || e.len != awl)
					error("AW 0x%x len %u, expected 0x%x len %u", awa, awl, e.addr, e.len);
				st.expect.pop_front();
			}
			if (awa < ST_DRAM_BASE || awa + (awl + 1) * B > DRAM_WIN)
				error("AW outside the store region");
			else
				awq.push_back({awa, awl, 0, now, row, seq});
		}
		// --- B
		if (bv && top->st_b_ready_o) {
			bq.pop_front();
			b_hold = false;
		}
	}

	bool idle() const
	{
		return ld.q.empty() && !ld.have_next && ld.held.empty() && st.q.empty() && !st.have_next &&
		       st.held.empty();
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
				error("timeout: engines hung (load busy %d holding %zu, store busy %d holding %zu)",
				      top->ld_busy_o, ld.held.size(), top->st_busy_o, st.held.size());
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
		if (!wlog.empty() || commit != rtl.dram)
			error("DRAM writes of no completed or aborted store");
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
		commit = rtl.dram;
	}
};

// ------------------------------------------------------------ the cases
struct Case {
	const char *name;
	void (*setup)(Bench &b);
	long max_cycles;
};

void add(Bench &b, bool store, const loom_insn &in, int gap = 0, int abort_after = -1, bool level = false,
	 bool overlap = false)
{
	Item it;
	it.in = in;
	it.gap = gap;
	it.abort_after = abort_after;
	it.abort_level = level;
	it.overlap = overlap;
	if (abort_after >= 0)
		b.snapshots = true;
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

// an abort that hits two instructions held at once (the one before the
// aborting one may still be in flight, the one after may be accepted)
void case_abort_two(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(10, 60)) : random_prof();
	for (int i = 0; i < 10; i++) {
		LoadShape ls;
		ls.n1max = 12;
		StoreShape ss;
		ss.n1max = 12;
		bool lvl = chance(0.5);
		add(b, false, gen_load(ls));
		add(b, false, gen_load(ls), 0, (int)rr(1, 60), lvl, true);
		add(b, false, gen_load(LoadShape{}), 0, -1, false, true);
		add(b, false, gen_load(LoadShape{}), rn(3));
		add(b, true, gen_store(ss));
		add(b, true, chance(0.2) ? gen_mark(-1) : gen_store(ss), 0, (int)rr(1, 60), !lvl, true);
		add(b, true, gen_store(StoreShape{}), 0, -1, false, true);
		add(b, true, gen_store(StoreShape{}), rn(3));
	}
}

// loads whose rows coalesce: beat-aligned rows continuing each other in DRAM
// (within a dimension and across its boundaries), bursts running into the
// 16-beat limit and 4 KiB boundaries, padding between rows, and a few that
// must not coalesce (a gap, an unaligned start or length)
loom_insn gen_load_coalesce()
{
	for (;;) {
		uint32_t tgt = (R >= B && chance(0.5)) ? 0 : 1;
		uint32_t maxw = tgt ? C : R / 4, unit = B / 4; // words of a line, of a beat
		uint32_t rw = unit * rr(1, maxw / unit);
		if (chance(0.1))
			rw = rr(1, maxw);
		uint32_t n0 = 4 * rw;
		uint32_t n1 = rr(1, 40), n2 = rr(1, 4), n3 = rr(1, 3);
		uint32_t pt = 0, pb = 0, pl = 0, pr = 0;
		if (chance(0.3)) {
			pt = rn(2);
			pb = rn(2);
			pl = rn(2);
			pr = rn(2);
		}
		uint64_t lines = (uint64_t)n3 * (pt + n2 + pb) * (pl + n1 + pr);
		uint32_t limit = (tgt ? cfg.acc_lines : cfg.sp_lines) / 2;
		if (lines > limit)
			continue;
		uint32_t s1 = n0, s2 = n1 * n0, s3 = n2 * n1 * n0; // one contiguous block
		switch (rn(6)) {
		case 0: s2 += B * rr(1, 3); s3 = n2 * s2; break; // gap between planes' rows
		case 1: s3 += B; break;                          // gap between planes
		case 2: s1 += B; s2 = n1 * s1; s3 = n2 * s2; break; // no coalescing at all
		default: break;
		}
		uint64_t span = (uint64_t)(n3 - 1) * s3 + (uint64_t)(n2 - 1) * s2 + (uint64_t)(n1 - 1) * s1 + n0;
		if (span + 8192 > LD_DRAM_END)
			continue;
		// start on or a few beats before a 4 KiB boundary
		uint32_t da = 4096 * (1 + rn((uint32_t)((LD_DRAM_END - span - 8192) / 4096))) - B * rn(20);
		if (chance(0.1) && unit > 1)
			da += 4 * rr(1, unit - 1);
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
		fset(in, LF(TARGET), tgt);
		fset(in, LF(PAD_VALUE), tgt ? 0 : rr(1, 255));
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
		check_legal(in);
		return in;
	}
}

void case_load_coalesce(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(1, 40)) : random_prof();
	for (int i = 0; i < 16; i++)
		add(b, false, gen_load_coalesce(), chance(0.5) ? 0 : (int)rn(3));
}

// many short instructions back to back on a long latency: two held at once
void case_load_overlap(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(20, 60)) : random_prof();
	for (int i = 0; i < 30; i++) {
		LoadShape sh;
		sh.n1max = 3;
		sh.n2max = 2;
		sh.n3max = 2;
		sh.padmax = 1;
		loom_insn in = rn(8) == 0 ? gen_empty(false) : rn(4) == 0 ? gen_load_coalesce() : gen_load(sh);
		add(b, false, in);
	}
}

void case_store_overlap(Bench &b)
{
	b.prof = chance(0.5) ? fast_prof(rr(20, 60)) : random_prof();
	for (int i = 0; i < 30; i++) {
		StoreShape sh;
		sh.n1max = 3;
		sh.n2max = 2;
		sh.n3max = 2;
		loom_insn in = rn(8) == 0 ? gen_empty(true) : rn(6) == 0 ? gen_mark(-1) : gen_store(sh);
		add(b, true, in);
	}
}

void case_random(Bench &b)
{
	b.prof = chance(0.2) ? fast_prof(rr(1, 30)) : random_prof();
	int n = (int)rr(5, 25);
	for (int i = 0; i < n; i++) {
		int ab = chance(0.1) ? (int)rr(1, 200) : -1;
		bool ov = chance(0.3);
		if (chance(0.5))
			add(b, false, chance(0.2) ? gen_load_coalesce() : gen_load(LoadShape{}),
			    chance(0.5) ? 0 : (int)rn(10), ab, chance(0.5), ov);
		else
			add(b, true, chance(0.1) ? gen_mark(-1) : gen_store(StoreShape{}), chance(0.5) ? 0 : (int)rn(10),
			    ab, chance(0.5), ov);
	}
}

// ------------------------------------------------------------ throughput
// Instructions on an ideal bus (always ready, fixed latency), offered back
// to back: beats on the bus per cycle from the first accept to the last
// done.
struct Tput {
	std::string what;
	double beats_per_cycle;
	long beats, cycles;
};

Tput measure(VerilatedContext *ctx, const std::string &what, bool store, const std::vector<loom_insn> &ins,
	     unsigned lat)
{
	Bench b(ctx);
	b.init_memories();
	b.reset();
	b.prof = fast_prof(lat);
	for (auto &in : ins)
		add(b, store, in);
	bool ok = b.run(1000000);
	const Bench::Drv &d = store ? b.st : b.ld;
	long cyc = d.last_done - d.first_accept;
	long beats = store ? b.st_beats : b.ld_beats;
	if (!ok)
		for (auto &e : b.errors)
			printf("  %s\n", e.c_str());
	return {what, ok && cyc ? (double)beats / (double)cyc : 0.0, beats, cyc};
}

// k LOADs of n1 x n2 rows of rw words each (row stride s1, plane stride
// n1 * s1), one after the other in DRAM and in SP/ACC
std::vector<loom_insn> load_seq(uint32_t tgt, uint32_t rw, uint32_t s1, uint32_t n1, uint32_t n2, unsigned k)
{
	std::vector<loom_insn> v;
	for (unsigned i = 0; i < k; i++) {
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
		fset(in, LF(TARGET), tgt);
		fset(in, LF(ROW_WORDS), rw);
		fset(in, LF(DRAM_ADDR), 4096 + i * n2 * n1 * s1);
		fset(in, LF(MEM_ADDR), i * n1 * n2);
		fset(in, LF(STRIDE1), s1);
		fset(in, LF(STRIDE2), n1 * s1);
		fset(in, LF(N1), n1);
		fset(in, LF(N2), n2);
		fset(in, LF(N3), 1);
		check_legal(in);
		v.push_back(in);
	}
	return v;
}

std::vector<loom_insn> store_seq(uint32_t src, uint32_t rw, uint32_t s1, uint32_t n1, uint32_t n2, unsigned k)
{
	std::vector<loom_insn> v;
	uint32_t half = (src ? cfg.acc_lines : cfg.sp_lines) / 2;
	for (unsigned i = 0; i < k; i++) {
		loom_insn in{};
		fset(in, LOOM_F_ANY_OPCODE, LOOM_OP_STORE);
		fset(in, SF(SOURCE), src);
		fset(in, SF(ROW_WORDS), rw);
		fset(in, SF(DRAM_ADDR), ST_DRAM_BASE + i * n2 * n1 * s1);
		fset(in, SF(MEM_ADDR), half + i * n1 * n2);
		fset(in, SF(STRIDE1), s1);
		fset(in, SF(STRIDE2), n1 * s1);
		fset(in, SF(N1), n1);
		fset(in, SF(N2), n2);
		fset(in, SF(N3), 1);
		check_legal(in);
		v.push_back(in);
	}
	return v;
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
	std::vector<std::string> specs;
	if (getenv("LOOM_HW"))
		specs.push_back(getenv("LOOM_HW")); // e.g. default:dma_outstanding=32
	for (const char *name : {"default", "small", "odd", "large"})
		specs.push_back(name);
	for (auto &root : roots) {
		for (auto &spec : specs) {
			if (loom_hwcfg_load(&cfg, spec.c_str(), root.c_str(), err, sizeof err) == 0 &&
			    cfg.fingerprint == fp) {
				found = true;
				break;
			}
		}
		if (found)
			break;
	}
	if (!found) {
		printf("dma_tb: no configs/*.cfg (nor $LOOM_HW) has fingerprint %08x (set LOOM_ROOT, LOOM_HW)\n"
		       "0 passed, 1 failed\n",
		       fp);
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
		{"abort with two instructions held", case_abort_two, 4000000},
		{"load coalesced bursts, 4 KiB and 16-beat limits", case_load_coalesce, 4000000},
		{"load short instructions overlapped", case_load_overlap, 4000000},
		{"store short instructions overlapped", case_store_overlap, 4000000},
	};
	int passed = 0, failed = 0;
	size_t max_held = 0;
	auto run_case = [&](const char *name, void (*setup)(Bench &), long maxc) {
		Bench b(ctx.get());
		b.init_memories();
		b.reset();
		setup(b);
		bool ok = b.run(maxc);
		max_held = std::max(max_held, std::max(b.ld.max_held, b.st.max_held));
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
	{
		Cov c = cov;
		bool ok = max_held == 2 && c.multi_row && c.full && c.page_split && c.overlap_ld && c.overlap_st &&
			  c.abort_two;
		printf("%s coverage: multi-row bursts %ld, %u-beat %ld, split at 4 KiB %ld; accepted while "
		       "holding one: load %ld, store %ld; aborts of two held %ld\n",
		       ok ? "PASS" : "FAIL", c.multi_row, MAX_BURST, c.full, c.page_split, c.overlap_ld, c.overlap_st,
		       c.abort_two);
		if (ok)
			passed++;
		else
			failed++;
	}

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
		Tput t[] = {measure(ctx.get(), d1, false, {in}, 2), measure(ctx.get(), d2, false, {ina}, 2),
			    measure(ctx.get(), d3, true, {st}, 2), measure(ctx.get(), d4, true, {sa}, 2),
			    measure(ctx.get(), d5, true, {sq}, 2), measure(ctx.get(), d6, false, {in}, cfg.dram_latency),
			    measure(ctx.get(), d7, true, {st}, cfg.dram_latency)};
		for (auto &x : t) {
			bool ok = x.beats_per_cycle > 0.0;
			printf("%s throughput %-40s %ld beats / %ld cycles = %.3f beats/cycle\n", ok ? "INFO" : "FAIL",
			       x.what.c_str(), x.beats, x.cycles, x.beats_per_cycle);
			if (ok)
				passed++;
			else
				failed++;
		}
	}

	// throughput at latency 40 with one-beat beat-aligned rows: strided (one
	// burst per row: DmaOutstanding bursts per latency at most) and
	// contiguous (coalesced into 16-beat bursts); one long instruction and
	// the same rows as up to 8 instructions back to back (overlapped)
	{
		const unsigned lat = 40;
		uint32_t ltgt = R >= B ? 0 : 1, lrw = B / 4;
		uint32_t lim = (ltgt ? cfg.acc_lines : cfg.sp_lines) / 2, n2 = std::min(8u, lim / 64);
		uint32_t ssrc = R >= B ? 0 : 1;
		uint32_t slim = (ssrc ? cfg.acc_lines : cfg.sp_lines) / 2, sn2 = std::min(8u, slim / 64);
		// one instruction of 64 x n2 rows, or k of 64 x n2 / k rows (at least 64)
		unsigned k = std::max(2u, std::min(8u, n2)), sk = std::max(2u, std::min(8u, sn2));
		char what[6][96];
		snprintf(what[0], 96, "load %uB rows stride %uB, 1 insn, lat %u", B, 2 * B, lat);
		snprintf(what[1], 96, "load %uB rows stride %uB, %u insns, lat %u", B, 2 * B, k, lat);
		snprintf(what[2], 96, "load %uB rows contiguous, 1 insn, lat %u", B, lat);
		snprintf(what[3], 96, "load %uB rows contiguous, %u insns, lat %u", B, k, lat);
		snprintf(what[4], 96, "store %uB rows stride %uB, 1 insn, lat %u", B, 2 * B, lat);
		snprintf(what[5], 96, "store %uB rows stride %uB, %u insns, lat %u", B, 2 * B, sk, lat);
		Tput t[] = {
			measure(ctx.get(), what[0], false, load_seq(ltgt, lrw, 2 * B, 64, n2, 1), lat),
			measure(ctx.get(), what[1], false, load_seq(ltgt, lrw, 2 * B, 64 * n2 / k, 1, k), lat),
			measure(ctx.get(), what[2], false, load_seq(ltgt, lrw, B, 64, n2, 1), lat),
			measure(ctx.get(), what[3], false, load_seq(ltgt, lrw, B, 64 * n2 / k, 1, k), lat),
			measure(ctx.get(), what[4], true, store_seq(ssrc, lrw, 2 * B, 64, sn2, 1), lat),
			measure(ctx.get(), what[5], true, store_seq(ssrc, lrw, 2 * B, 64 * sn2 / sk, 1, sk), lat),
		};
		// floors: bursts in flight per latency (reads: DmaOutstanding,
		// writes: the store's MaxWrOut = 32) for one-row bursts; for
		// coalesced rows the bus, less the first burst's latency (and the 16
		// rows it gathers); the instruction boundaries of the overlapped runs
		// cost little
		double bound = std::min(1.0, (double)cfg.dma_outstanding / (lat + 4));
		double wbound = std::min(1.0, 32.0 / (lat + 4));
		double beats = 64.0 * n2, cbound = beats / (beats + lat + 2 * MAX_BURST);
		double floor[] = {0.9 * bound, 0.85 * bound, 0.95 * cbound, 0.85 * cbound, 0.85 * wbound, 0.8 * wbound};
		for (unsigned i = 0; i < 6; i++) {
			bool ok = t[i].beats_per_cycle >= floor[i];
			printf("%s throughput %-40s %ld beats / %ld cycles = %.3f beats/cycle (floor %.2f)\n",
			       ok ? "INFO" : "FAIL", t[i].what.c_str(), t[i].beats, t[i].cycles, t[i].beats_per_cycle,
			       floor[i]);
			if (ok)
				passed++;
			else
				failed++;
		}
	}

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
