/* events.c - the energy event counts of one instruction (common/events.h),
 * read off the RTL's access pattern (docs/ISA.md "Energy event counters"):
 *   LOAD    one line written per line of its walk, padding lines included,
 *           into the scratchpad or the accumulator (TARGET);
 *   STORE   one line read per row; SOURCE 2 reads its 3 parameter lines
 *           first (also when it has no rows) and requantizes C values per row;
 *           SOURCE 3 reads 4 parameter lines, per row also the residual's SP
 *           line, and requantizes 2C values per row (conv output, then add);
 *   MATMUL  per fold: C weight lines and P activation lines read; P
 *           accumulator lines written, and read back to accumulate into
 *           unless fold 0 overwrites (ACCUMULATE = 0);
 *   vector  per plane of P output positions in groups of up to
 *           LOOM_VEC_GROUP: one line read and folded per tap and position
 *           (ELTWISE: A and B), DWCONV one weight line per tap and group and
 *           LOOM_DW_PARAM_LINES parameter lines, LUT its table once; one
 *           line written per position, its R values requantized (MAX pooling
 *           and LUT use the requantization lanes as an identity). A DWCONV
 *           reads each kernel row of a group in passes of up to
 *           M (vec_macs) taps: per output row of the group (segment of s
 *           positions) loom_dw_seg_lines(s, mc, SW, DW) lines for a pass of
 *           mc taps (the distinct columns its taps touch), each line folded
 *           by up to mc taps (VEC_LINES stays one per tap and position: it
 *           counts products).
 * A plane with no positions, or zero planes, reads nothing. */
#include "common/events.h"

#include "common/timing.h"

#define G(op, f) ((uint64_t)loom_insn_get(in, LOOM_F_##op##_##f))

static void add_vec(uint64_t ev[LOOM_EVT_COUNT], uint32_t R, uint64_t planes, uint64_t P, uint64_t taps,
		    uint64_t extra_reads)
{
	uint64_t n = planes * P;
	if (!n)
		return;
	ev[LOOM_EVT_SP_RD] += n * taps + extra_reads;
	ev[LOOM_EVT_VEC_LINES] += n * taps;
	ev[LOOM_EVT_SP_WR] += n;
	ev[LOOM_EVT_RQ_VALUES] += n * R;
}

void loom_insn_events(uint32_t R, uint32_t C, uint32_t M, const loom_insn *in, uint64_t ev[LOOM_EVT_COUNT])
{
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: {
		uint64_t n = G(LOAD, N3) * (G(LOAD, PAD_TOP) + G(LOAD, N2) + G(LOAD, PAD_BOTTOM)) *
			     (G(LOAD, PAD_LEFT) + G(LOAD, N1) + G(LOAD, PAD_RIGHT));
		if (!G(LOAD, N1) || !G(LOAD, N2))
			n = 0;
		ev[G(LOAD, TARGET) == LOOM_MEM_SP ? LOOM_EVT_SP_WR : LOOM_EVT_ACC_WR] += n;
		break;
	}
	case LOOM_OP_STORE: {
		uint64_t src = G(STORE, SOURCE);
		uint64_t rows = G(STORE, N1) * G(STORE, N2) * (src == LOOM_MEM_ACC_RESADD ? 1 : G(STORE, N3));
		if (src == LOOM_MEM_SP) {
			ev[LOOM_EVT_SP_RD] += rows;
		} else {
			ev[LOOM_EVT_ACC_RD] += rows;
			if (src == LOOM_MEM_ACC_REQUANT) {
				ev[LOOM_EVT_ACC_RD] += 3;
				ev[LOOM_EVT_RQ_VALUES] += rows * C;
			} else if (src == LOOM_MEM_ACC_RESADD) {
				/* the residual line of each row; two requantizations per lane */
				ev[LOOM_EVT_ACC_RD] += LOOM_RESADD_PARAM_LINES;
				ev[LOOM_EVT_SP_RD] += rows;
				ev[LOOM_EVT_RQ_VALUES] += 2 * rows * C;
			}
		}
		break;
	}
	case LOOM_OP_MATMUL: {
		uint64_t f = G(MATMUL, NCB) * G(MATMUL, KH) * G(MATMUL, KW);
		uint64_t P = G(MATMUL, OUT_H) * G(MATMUL, OUT_W);
		ev[LOOM_EVT_SP_RD] += f * (C + P);
		ev[LOOM_EVT_ACC_WR] += f * P;
		ev[LOOM_EVT_ACC_RD] += f * P - (f && !G(MATMUL, ACCUMULATE) ? P : 0);
		break;
	}
	case LOOM_OP_ELTWISE:
		add_vec(ev, R, G(ELTWISE, PLANES), G(ELTWISE, PLANE_LINES), 2, 0);
		break;
	case LOOM_OP_POOL:
		add_vec(ev, R, G(POOL, NCB), G(POOL, OUT_H) * G(POOL, OUT_W), G(POOL, KH) * G(POOL, KW), 0);
		break;
	case LOOM_OP_DWCONV: {
		uint64_t ncb = G(DWCONV, NCB), ow = G(DWCONV, OUT_W), P = G(DWCONV, OUT_H) * ow;
		uint64_t kh = G(DWCONV, KH), kw = G(DWCONV, KW), taps = kh * kw;
		uint64_t groups = (P + LOOM_VEC_GROUP - 1) / LOOM_VEC_GROUP;
		add_vec(ev, R, ncb, P, taps, P ? ncb * (LOOM_DW_PARAM_LINES + groups * taps) : 0);
		if (!P || !ncb)
			break;
		/* input reuse: per group, kernel row, pass of mc taps and segment
		 * (the group's positions in one output row, s of them) the
		 * segment's distinct columns instead of mc * s lines; a row has
		 * passes of M taps and one of the rest */
		M = M ? M : 1;
		uint64_t sw = G(DWCONV, SW), dwl = G(DWCONV, DW), full = kw / M, rest = kw % M;
		uint64_t lines[LOOM_VEC_GROUP + 1] = {0}, read = 0;
		for (uint64_t s = 1; s <= LOOM_VEC_GROUP; s++)
			lines[s] = full * loom_dw_seg_lines(s, M, sw, dwl) +
				   (rest ? loom_dw_seg_lines(s, rest, sw, dwl) : 0);
		for (uint64_t p0 = 0; p0 < P; p0 += LOOM_VEC_GROUP) {
			uint64_t g = P - p0 < LOOM_VEC_GROUP ? P - p0 : LOOM_VEC_GROUP;
			for (uint64_t t = 0, s; t < g; t += s) {
				s = g - t < ow - (p0 + t) % ow ? g - t : ow - (p0 + t) % ow;
				read += lines[s];
			}
		}
		ev[LOOM_EVT_SP_RD] -= ncb * (kh * kw * P - kh * read);
		break;
	}
	case LOOM_OP_LUT: {
		uint64_t n = G(LUT, LINES);
		add_vec(ev, R, 1, n, 1, (LOOM_LUT_ENTRIES + R - 1) / R);
		break;
	}
	default:
		break;
	}
}
