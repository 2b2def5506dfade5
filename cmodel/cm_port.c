/* cm_port.c - the C model's DRAM port (loom_cmodel_set_port, include/loom/hw.h):
 * the transfers a LOAD or a STORE makes through the port, row by row as
 * the DMA engines read and write them. Used when a port is set (the
 * SystemC module, systemc/) or a bus-error range is (loom_hw_opts.
 * bus_err_*: then with no port, only to find the transfers that meet the
 * range); otherwise the cmodel backend never calls into this file.
 *
 * A LOAD reads each row's whole beats (as the RTL's load engine does, and
 * as DRAM_RD_BYTES counts them); rows whose beats meet are merged into one
 * transfer, so the bytes of the transfers add up to the counter. A STORE
 * writes each row's bytes (the RTL writes whole beats with strobes);
 * contiguous rows are merged. Ranges are clipped to the device DRAM (the
 * decoder has already refused rows past its end).
 *
 * Bus errors (docs/ISA.md, BUS_ERROR): a transfer the port answers with
 * non-zero, or one that meets the injected error range of the cmodel
 * backend (loom_hw_opts.bus_err_*, x->err_lo/err_hi, whole beats), is
 * reported to the caller; the remaining transfers are still made, as the
 * RTL's engines drain every burst they issued. */
#include "cmodel/cmodel_internal.h"

typedef struct span {
	uint64_t a, e;          /* [a, e) pending, e == a: none */
} span;

/* 1 when the pending span was a bus error */
static int flush(const cm_port_xfer *x, uint8_t *dram, span *s)
{
	if (s->e <= s->a)
		return 0;
	int bad = s->a < x->err_hi && x->err_lo < s->e, rc = 0;
	if (x->port && x->write)
		rc = x->port->write(x->port->ctx, x->kind, s->a, dram + s->a, (size_t)(s->e - s->a), x->cycle);
	else if (x->port)
		rc = x->port->read(x->port->ctx, x->kind, s->a, dram + s->a, (size_t)(s->e - s->a), x->cycle);
	s->a = s->e = 0;
	return bad || rc != 0;
}

int cm_port_rows(const cm_port_xfer *x, uint8_t *dram, uint64_t dram_bytes, const cm_rows *r)
{
	if (!r->n0 || !r->n1 || !r->n2 || !r->n3)
		return 0;
	int bad = 0;
	const uint64_t m = x->write ? 0 : (uint64_t)x->beat - 1;
	span s = {0, 0};
	for (uint64_t i3 = 0; i3 < r->n3; i3++)
		for (uint64_t i2 = 0; i2 < r->n2; i2++) {
			uint64_t a = r->base + i3 * r->s3 + i2 * r->s2;
			for (uint64_t i1 = 0; i1 < r->n1; i1++, a += r->s1) {
				uint64_t lo = a & ~m, hi = (a + r->n0 + m) & ~m;
				if (hi > dram_bytes)
					hi = dram_bytes;
				if (lo >= hi)
					continue;
				if (s.e > s.a && lo == s.e) {
					s.e = hi;
					continue;
				}
				bad |= flush(x, dram, &s);
				s.a = lo;
				s.e = hi;
			}
		}
	bad |= flush(x, dram, &s);
	return bad;
}

int cm_port_span(const cm_port_xfer *x, uint8_t *dram, uint64_t dram_bytes, uint64_t a, uint64_t n)
{
	if (a >= dram_bytes)
		return 0;
	if (n > dram_bytes - a)
		n = dram_bytes - a;
	span s = {a, a + n};
	return flush(x, dram, &s);
}
