// dma_tb_ref.cpp - the DMA block test's reference side (dma_tb.h): its
// random numbers and configuration, the expected AR / AW bursts of an
// instruction, the LOAD / STORE / MARK pseudo-code of docs/ISA.md on a C
// memory image (requant through loom_requant of common/isa.c), the random
// instruction generators (every one checked by loom_insn_check) and the
// bus profiles.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dma_tb.h"

namespace dma_tb {

// ------------------------------------------------------------ random
uint64_t rs = 0x853c49e6748fea9bull;
uint64_t rnd()
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

// ------------------------------------------------------------ configuration
loom_hwcfg cfg;
unsigned R, C, B, NCTR = LOOM_CTR_COUNT;

// ------------------------------------------------------------ instructions
void fset(loom_insn &in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(&in, f, v)) {
		fprintf(stderr, "tb bug: field %s value %u\n", loom_field_name(f), v);
		exit(2);
	}
}

static bool is_data(uint32_t pt, uint32_t n2, uint32_t pl, uint32_t n1, uint32_t y, uint32_t x)
{
	return y >= pt && y < pt + n2 && x >= pl && x < pl + n1;
}

Cov cov;

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
void ref_store(Mem &m, const loom_insn &in, const uint8_t *rec, std::vector<std::pair<uint32_t, uint8_t>> *writes)
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

static uint32_t pick_stride(uint32_t n0, uint32_t inner_span)
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

} // namespace dma_tb
