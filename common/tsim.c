/* tsim.c - the DMA engines, the DRAM and the scratchpad banks in cycles
 * (common/tsim.h), written after the RTL and checked against it
 * instruction by instruction:
 *
 *   DRAM (tb_dram)     read requests are served in address order, the first
 *                      beat dram_latency after the address at the earliest,
 *                      one beat per cycle; a credit grows by dram_bw bytes a
 *                      cycle up to two beats, a read beat takes a beat of it,
 *                      a write beat too when a beat is left after the read
 *                      (one per cycle): reads go first. A read beat is taken
 *                      into the R register when it is empty or its beat
 *                      leaves in that cycle: a load line's last beat leaves
 *                      it when the writer can push the line, so one beat
 *                      may wait there while the writer's FIFO is full.
 *   fetch (npu_ctrl)   a read request of max(1, 32 / B) beats whose address
 *                      goes out before a load burst's in the same cycle.
 *   LOAD (npu_dma_load) the walker visits one line per cycle (a padding row
 *                      costs one cycle), appends a line to the open burst
 *                      when both are beat aligned and contiguous (at most 16
 *                      beats, one 4 KiB page), else closes the open burst
 *                      (its address goes out a cycle later) and opens a new
 *                      one; an open burst also closes in a padding row. A
 *                      burst ends when its last line is pushed; at most
 *                      dma_outstanding in flight (a burst closes two cycles
 *                      after the end of the one dma_outstanding before it at
 *                      the earliest). The writer pushes one line per cycle
 *                      into an output FIFO of two (a burst's pad lines from
 *                      the cycle after its close; a data line when its
 *                      last beat leaves the DRAM's R register) and writes the head to
 *                      SP when no other client uses its bank, to ACC at once.
 *                      Done the cycle after the last write. The next LOAD's
 *                      walker starts the cycle after the last close.
 *   STORE (npu_dma_store) the front end fires one row per cycle (SOURCE 2:
 *                      after 3 cycles of parameter reads, SOURCE 3: 4; SOURCE
 *                      0 and 3 (the residual's line): when the compute
 *                      engines leave its bank free), its data is back a
 *                      cycle later (requantized: 3, plus a residual: 6); each row is one write
 *                      burst: address a cycle after the fire, W beats from
 *                      the cycle after the row leaves the row FIFO (4 rows,
 *                      as the address FIFO); at most dma_wr_outstanding
 *                      bursts wait for their write response, dram_latency
 *                      after the last beat (an address goes out the cycle
 *                      after the response of the burst dma_wr_outstanding
 *                      before it at the earliest); done
 *                      the cycle after the last response. The next
 *                      instruction's front end starts 2 cycles after the last
 *                      row's data is back. A MARK is a 64-byte row. The
 *                      front end runs ahead of W (a row fires once the row
 *                      four before it has left the row FIFO), so its SP
 *                      reads are known before the cycles they take.
 *   banks (npu_sp)     the compute engines' reads (MATMUL's activations and
 *                      weights, the vector unit's reads) come first, then the
 *                      store's reads and the vector unit's writes, then the
 *                      load's writes; the compute engines' reads are known
 *                      when they start (loom_tdma_compute), the vector
 *                      unit's writes as they happen.
 *   vector unit (npu_vector) an instruction taken in cycle a issues its first
 *                      read in a + 2 (LUT: the table, DWCONV: a plane's
 *                      parameters, then per group each tap's weight and
 *                      lines; a DWCONV per pass of up to vec_macs
 *                      taps of a kernel row their weights, then per output
 *                      row of the group the distinct columns its taps
 *                      touch, vr_step), one per cycle, each read holding its
 *                      bank in the cycle after its issue; a group's finish is
 *                      handed over when its last tap starts: position t's
 *                      line leaves the lanes 3 cycles after its last-tap
 *                      read at the earliest, one per cycle, while the
 *                      output buffer has room (8 lines between the lanes'
 *                      input and the SP: line k after line k - 8 was
 *                      written), beside the next group's reads. The reads
 *                      wait: a first tap (not also the last) reads position
 *                      t after the previous group's line t left the lanes;
 *                      a last tap, and a plane's parameters, start after
 *                      the previous group's last line left them. A line is
 *                      written 4 cycles after it leaves the lanes at the
 *                      earliest, one per cycle, when no read (the compute
 *                      engines', the vector unit's, the store's) holds its
 *                      bank. Done the cycle after the last write.
 *
 * Every event is handled in time order (loom_tdma_advance): a vector
 * unit's line write, a load line write, a pad push, a line leaving
 * the R register, a read beat, a write beat, a store row leaving for W, a
 * load burst's address, in that order within a cycle. */
#include "common/tsim.h"

#include <stdlib.h>
#include <string.h>
#ifdef LOOM_TSIM_CHECK_CACHE
#include <stdio.h>
#endif

static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* loom_tdma's dirty bits: the cached next cycle of the vector unit's
 * write (vw_next), of the writer's pushes (push_next), of the next read
 * beat (rs_next), of the next burst's address (ld_next) must be computed
 * again; set wherever what it depends on changes */
enum { D_VW = 1, D_PUSH = 2, D_RS = 4, D_LD = 8, D_ALL = 15 };

/* a / b and a % b for the configuration's powers of two (beat bytes, bank
 * lines: hwcfg.c) by shifts and masks; other values (a loom_timing set by
 * hand) by division. The rings' capacities are powers of two: masks. */
static inline uint64_t div_p(uint64_t a, uint32_t b)
{
	return b & (b - 1) ? a / b : a >> __builtin_ctz(b);
}

static inline uint64_t mod_p(uint64_t a, uint32_t b)
{
	return b & (b - 1) ? a % b : a & (b - 1);
}

/* DRAM beats a row of n bytes at address a touches (loom_row_beats) */
static inline uint64_t row_beats(const loom_timing *t, uint64_t a, uint64_t n)
{
	return div_p(a + n - 1, t->beat) - div_p(a, t->beat) + 1;
}

/* ------------------------------------------------------------------ calendars */

/* the ring starts at the channel's lo: ch_advance moves lo on an empty
 * channel too, so a device whose clock is far from 0 (a long-lived C model:
 * many jobs, many inferences) starts with a short ring rather than one
 * that reaches back to cycle 0 */
static int ch_init(loom_tchan *c)
{
	c->nbits = 1u << 16;
	c->w = calloc(c->nbits / 64, sizeof *c->w);
	c->hi = c->lo;
	return c->w ? 0 : -1;
}

static int ch_get(const loom_tchan *c, uint64_t u)
{
	if (!c->w || u < c->lo || u >= c->hi || u >= c->lo + c->nbits)
		return 0;
	uint64_t i = u & (c->nbits - 1);
	return (int)(c->w[i >> 6] >> (i & 63) & 1);
}

static void ch_put(loom_tchan *c, uint64_t u, int v)
{
	uint64_t i = u & (c->nbits - 1), m = 1ull << (i & 63);
	if (v)
		c->w[i >> 6] |= m;
	else
		c->w[i >> 6] &= ~m;
}

/* room up to cycle u: a larger ring keeping the cycles [lo, hi) */
static int ch_grow(loom_tchan *c, uint64_t u)
{
	uint64_t nb = c->nbits;
	while (u >= c->lo + nb)
		nb *= 2;
	loom_tchan n = *c;
	n.nbits = nb;
	n.w = calloc(nb / 64, sizeof *c->w);
	if (!n.w)
		return -1;
	for (uint64_t k = c->lo; k < c->hi; k++)
		if (ch_get(c, k))
			ch_put(&n, k, 1);
	free(c->w);
	*c = n;
	return 0;
}

/* the cycles before p are past */
static void ch_advance(loom_tchan *c, uint64_t p)
{
	if (p <= c->lo)
		return;
	if (!c->w) {
		c->lo = c->hi = p;
		return;
	}
	uint64_t e = p < c->hi ? p : c->hi;
	if (e > c->lo && e - c->lo >= c->nbits)
		memset(c->w, 0, c->nbits / 8);
	else
		for (uint64_t k = c->lo; k < e;) {
			uint64_t i = k & (c->nbits - 1), b = i & 63, n = 64 - b;
			if (n > e - k)
				n = e - k;
			c->w[i >> 6] &= ~((n == 64 ? ~0ull : ((1ull << n) - 1)) << b);
			k += n;
		}
	c->lo = p;
	if (c->hi < p)
		c->hi = p;
}

/* mark cycles [u0, u1) busy; -1 when out of memory */
static int cal_mark(loom_tchan *c, uint64_t u0, uint64_t u1)
{
	if (u1 == u0 + 1 && c->w && u0 >= c->lo && u1 <= c->lo + c->nbits) {
		/* one cycle in the ring (the common case): its bit */
		uint64_t i = u0 & (c->nbits - 1);
		c->w[i >> 6] |= 1ull << (i & 63);
		if (u1 > c->hi)
			c->hi = u1;
		return 0;
	}
	if (!c->w && ch_init(c))
		return -1;
	if (u0 < c->lo)
		u0 = c->lo;
	if (u1 > c->lo + c->nbits && ch_grow(c, u1))
		return -1;
	for (uint64_t u = u0; u < u1;) {
		uint64_t i = u & (c->nbits - 1), b = i & 63, n = 64 - b;
		if (n > u1 - u)
			n = u1 - u;
		c->w[i >> 6] |= (n == 64 ? ~0ull : ((1ull << n) - 1)) << b;
		u += n;
	}
	if (u1 > c->hi)
		c->hi = u1;
	return 0;
}

/* the first cycle at or after u that is not busy */
static uint64_t cal_free(const loom_tchan *c, uint64_t u)
{
	if (!c->w)
		return u;
	while (u >= c->lo && u < c->hi && u < c->lo + c->nbits) {
		uint64_t i = u & (c->nbits - 1), f = ~c->w[i >> 6] >> (i & 63);
		if (f)
			return u + (uint64_t)__builtin_ctzll(f);
		u += 64 - (i & 63);
	}
	return u;
}

/* the bank of scratchpad line a */
static unsigned bank_of(const loom_tdma *d, uint64_t a)
{
	return d->nbanks ? (unsigned)div_p(a, d->t.bank_lines) & (d->nbanks - 1) : 0;
}

static void sp_mark(loom_tdma *d, int mid, uint64_t line, uint64_t t0, uint64_t t1)
{
	if (!d->nbanks || t1 <= t0)
		return;
	loom_tchan *c = mid ? &d->sp_mid[bank_of(d, line)] : &d->sp_hi[bank_of(d, line)];
	d->dirty |= D_VW;
	if (cal_mark(c, t0, t1))
		d->oom = 1;
}

/* the first cycle at or after t line may be read by the store (mid = 0)
 * or written by the load (mid = 1) */
static uint64_t sp_free(const loom_tdma *d, int mid, uint64_t line, uint64_t t)
{
	if (!d->nbanks)
		return t;
	unsigned b = bank_of(d, line);
	for (;;) {
		uint64_t x = cal_free(&d->sp_hi[b], t);
		if (mid)
			x = cal_free(&d->sp_mid[b], x);
		if (x == t)
			return t;
		t = x;
	}
}

/* ------------------------------------------------------------------ DRAM */

/* the credit at the start of cycle x >= ct */
static int64_t credit_at(const loom_tdma *d, uint64_t x)
{
	int64_t B = d->t.beat, cap = 2 * B, bw = d->t.bw, c = d->cval;
	if (x <= d->ct)
		return c;
	c += bw - B * (d->rd_at + d->wr_at);
	c = c > cap ? cap : c;
	uint64_t k = x - d->ct - 1;
	return k >= (uint64_t)(2 * B) ? cap : (c + (int64_t)k * bw > cap ? cap : c + (int64_t)k * bw);
}

static void credit_move(loom_tdma *d, uint64_t x)
{
	if (x <= d->ct)
		return;
	d->cval = credit_at(d, x);
	d->ct = x;
	d->dirty |= D_RS;
	d->rd_at = d->wr_at = 0;
}

/* the first cycle at or after t with credit for a beat after rd reads */
static uint64_t credit_when(const loom_tdma *d, uint64_t t, int rd)
{
	int64_t B = d->t.beat, need = B * (1 + rd), c = credit_at(d, t);
	if (c >= need)
		return t;
	return t + (uint64_t)((need - c + d->t.bw - 1) / d->t.bw);
}

static void rq_add(loom_tdma *d, uint64_t due, uint32_t beats, uint32_t nb, int fetch)
{
	if (d->rq_n == d->rq_cap) {
		size_t cap = d->rq_cap ? 2 * d->rq_cap : 64;
		loom_treq *q = malloc(cap * sizeof *q);
		if (!q) {
			d->oom = 1;
			return;
		}
		for (size_t k = 0; k < d->rq_n; k++)
			q[k] = d->rq[(d->rq_head + k) & (d->rq_cap - 1)];
		free(d->rq);
		d->rq = q;
		d->rq_cap = cap;
		d->rq_head = 0;
	}
	d->rq[(d->rq_head + d->rq_n++) & (d->rq_cap - 1)] = (loom_treq){due, beats, nb ? nb : 1, 0, fetch};
	d->dirty |= D_RS;
}

/* ------------------------------------------------------------------ the load's writer */

/* the cycle item head + pushed may be pushed for room (the write of the
 * item two before it), NEVER while that one waits */
static uint64_t wr_room(const loom_tdma *d)
{
	if (d->wq_pushed >= 2)
		return LOOM_TDMA_NEVER;
	return d->wq_pushed ? d->wq_pop[1] : d->wq_pop[0];
}

static loom_titem *wr_cursor(const loom_tdma *d)
{
	return d->wq_pushed < d->wq_n ? &d->wq[(d->wq_head + d->wq_pushed) & (d->wq_cap - 1)] : NULL;
}

/* the writer's next item, appended (NULL when out of memory); the caller
 * fills it in place: an item built on the stack and passed by value was
 * stored in parts and loaded whole, a store-forwarding stall per line */
static loom_titem *wr_add(loom_tdma *d)
{
	if (d->wq_n == d->wq_cap) {
		size_t cap = d->wq_cap ? 2 * d->wq_cap : 256;
		loom_titem *q = malloc(cap * sizeof *q);
		if (!q) {
			d->oom = 1;
			return NULL;
		}
		for (size_t k = 0; k < d->wq_n; k++)
			q[k] = d->wq[(d->wq_head + k) & (d->wq_cap - 1)];
		free(d->wq);
		d->wq = q;
		d->wq_cap = cap;
		d->wq_head = 0;
	}
	d->dirty |= D_PUSH;
	return &d->wq[(d->wq_head + d->wq_n++) & (d->wq_cap - 1)];
}

/* the cursor item is pushed in cycle push */
static void wr_pushed(loom_tdma *d, uint64_t push)
{
	loom_titem *it = wr_cursor(d);
	it->push = push;
	d->wq_last_push = push;
	d->dirty |= D_PUSH;
	if (it->flags & 1) {
		/* ld_next reads the slot of the burst dma_outstanding before the next */
		d->ld_ret[it->burst % LOOM_TDMA_RING] = push - 1;
		if (it->burst % LOOM_TDMA_RING == (d->ld_nb - d->t.outstanding) % LOOM_TDMA_RING)
			d->dirty |= D_LD;
	}
	if (!d->wq_pushed)
		d->wq_cand = umax(push + 1, d->wq_pop[1] + 1);
	d->wq_pushed++;
}

/* the next push into the writer's FIFO, one per cycle, with room (the
 * item two before written in an earlier cycle): a pad line or a marker
 * from its ready cycle (*pad); a data line when the R register holds its
 * last beat, the cycle after that beat was taken (*rh, the line leaving
 * the R register); NEVER when not known yet */
static void push_next(const loom_tdma *d, uint64_t *pad, uint64_t *rh)
{
	const loom_titem *it = wr_cursor(d);
	uint64_t room = wr_room(d);
	*pad = *rh = LOOM_TDMA_NEVER;
	if (!it || room == LOOM_TDMA_NEVER)
		return;
	uint64_t at = umax(d->wq_last_push + 1, room + 1);
	if (it->kind != 1)
		*pad = umax(it->ready, at);
	else if (d->rh)
		*rh = umax(d->rh_t + 1, at);
}

static uint64_t wr_next(const loom_tdma *d)
{
	return d->wq_pushed ? d->wq_cand : LOOM_TDMA_NEVER;
}

/* the head item is written in cycle t if its bank is free then */
static void wr_pop(loom_tdma *d, uint64_t t)
{
	loom_titem *it = &d->wq[d->wq_head];
	if (it->kind != 2 && !it->acc) {
		uint64_t x = sp_free(d, 1, it->line, t);
		if (x > t) {
			d->wq_cand = x;
			return;
		}
	}
	if (it->flags & 2)
		for (unsigned k = 0; k < d->ld_n; k++)
			if (d->ld[k].seq == it->seq) {
				d->ld[k].done = t + 1;
				d->ext = 1;
			}
	d->wq_pop[0] = d->wq_pop[1];
	d->wq_pop[1] = t;
	d->dirty |= D_PUSH;
	d->wq_head = (d->wq_head + 1) & (d->wq_cap - 1);
	d->wq_n--;
	if (--d->wq_pushed)
		d->wq_cand = umax(d->wq[d->wq_head].push + 1, t + 1);
}

/* ------------------------------------------------------------------ read beats */

/* the next cycle the DRAM may take the head request's next beat into its
 * R register: empty, or its beat leaves in that cycle */
static uint64_t rs_next(const loom_tdma *d)
{
	if (!d->rq_n || d->rh)
		return LOOM_TDMA_NEVER;
	const loom_treq *r = &d->rq[d->rq_head];
	uint64_t t = umax(umax(r->due, d->rd_last + 1), d->ct + (d->wr_at ? 1 : 0));
	t = umax(t, d->r_free);
	return d->t.bw < d->t.beat ? credit_when(d, t, 0) : t;
}

static void rh_push(loom_tdma *d, uint64_t p)
{
	d->rh = 0;
	d->r_free = p;
	d->dirty |= D_PUSH | D_RS;
	wr_pushed(d, p);
}

static void rs_take(loom_tdma *d, uint64_t x)
{
	loom_treq *r = &d->rq[d->rq_head];
	credit_move(d, x);
	d->rd_at = 1;
	d->rd_last = x;
	d->dirty |= D_PUSH | D_RS;
	r->k++;
	if (r->fetch) {
		if (r->k == r->beats) {
			d->fetch_done = x + 1;
			d->ext = 1;
		}
	} else if (r->nb == 1 || r->k % r->nb == 0) {
		d->rh = 1;
		d->rh_t = x;
	}
	if (r->k == r->beats) {
		d->rq_head = (d->rq_head + 1) & (d->rq_cap - 1);
		d->rq_n--;
	}
}

/* ------------------------------------------------------------------ LOAD */


/* the walker's instruction starts in cycle c (its first step the cycle after) */
static void ld_start(loom_tdma *d, unsigned i)
{
	d->ld_w = i;
	d->w_c = umax(d->ld[i].acc, d->ld_walk) + 1;
	d->w_i3 = d->w_y = d->w_x = d->w_pend = 0;
	d->ob.open = 0;
	d->ld_lc = 0;
}

/* the walked instruction's next line to the writer */
static void ld_item(loom_tdma *d, int kind, uint64_t ready, int flags, uint64_t burst)
{
	const loom_theld *h = &d->ld[d->ld_w];
	loom_titem *it = wr_add(d);
	if (!it)
		return;
	it->ready = ready;
	it->push = 0;
	it->line = kind != 2 ? h->mem + d->ld_lc++ : 0;
	it->burst = burst;
	it->seq = h->seq;
	it->kind = (uint8_t)kind;
	it->acc = (uint8_t)h->tacc;
	it->flags = (uint8_t)flags;
}

/* the open burst closes in the walker's cycle (later when bursts in flight
 * hold it: then the walker's later steps move too) */
static void ld_close(loom_tdma *d, int last)
{
	d->pb = d->ob;
	d->pb.close = d->w_c;
	d->dirty |= D_LD;
	d->pb.last = last;
	d->ob.open = 0;
}

/* the walk of instruction ld_w is over, its last descriptor pushed in
 * cycle wdone: trailing pads (or a marker: an empty walk), the next
 * instruction's start */
static void ld_finish(loom_tdma *d, uint64_t wdone)
{
	if (!d->ld_lc && !d->w_pend)
		ld_item(d, 2, wdone + 1, 2, 0);
	else if (!d->w_pend && d->wq_n)
		d->wq[(d->wq_head + d->wq_n - 1) & (d->wq_cap - 1)].flags |= 2;
	for (uint64_t k = 0; k < d->w_pend; k++)
		ld_item(d, 0, wdone + 1, k + 1 == d->w_pend ? 2 : 0, 0);
	d->w_pend = 0;
	d->ld_walk = wdone + 1;
	if (d->ld_w + 1 < d->ld_n)
		ld_start(d, d->ld_w + 1);
	else
		d->ld_w = d->ld_n;
}

/* lint: long function: the walker's steps over the padded plane, one line or padding row each */
/* walk the instruction ld_w until a burst closes (pb) or its walk ends */
static void ld_walk(loom_tdma *d)
{
	while (d->ld_w < d->ld_n && !d->pb.open) {
		loom_theld *h = &d->ld[d->ld_w];
		uint64_t n1 = h->n[0], n2 = h->n[1], n3 = h->n[2];
		if (!n1 || !n2 || !n3) {
			/* a marker descriptor, pushed at the first step */
			ld_finish(d, d->w_c);
			continue;
		}
		uint64_t pt = h->pt, pb = h->pb, pl = h->pl, pr = h->pr;
		if (d->w_i3 == n3) {
			/* the walk is over: the open burst closes, then trailing pads */
			if (d->ob.open) {
				ld_close(d, 1);
				return;
			}
			ld_finish(d, d->w_c);
			continue;
		}
		uint64_t y = d->w_y, rows = pt + n2 + pb;
		if (y < pt || y >= pt + n2) {
			/* a padding row: one cycle, in which an open burst closes */
			int cl = d->ob.open;
			if (cl)
				ld_close(d, 0);
			d->w_pend += pl + n1 + pr;
			d->w_c++;
			if (++d->w_y == rows) {
				d->w_y = 0;
				d->w_i3++;
			}
			if (cl)
				return;
			continue;
		}
		uint64_t a = h->a0 + d->w_i3 * h->s[2] + (y - pt) * h->s[1] + d->w_x * h->s[0];
		uint32_t n0 = h->n0, B = d->t.beat;
		uint32_t nb = (uint32_t)row_beats(&d->t, a, n0);
		uint64_t pads = d->w_pend + (d->w_x == 0 ? pl : 0);
		int co = mod_p(a, B) == 0 && mod_p(n0, B) == 0, cl = 0;
		loom_tburst *o = &d->ob;
		if (o->open && o->co && co && !pads && a == o->next && o->beats + nb <= LOOM_DMA_MAX_BURST &&
		    ((a + n0 - 1) >> LOOM_DMA_PAGE_SHIFT) == o->page) {
			o->beats += nb;
			o->next = a + n0;
		} else {
			if (o->open) {
				ld_close(d, 0);
				cl = 1;
			}
			*o = (loom_tburst){1, co, a + n0, a >> LOOM_DMA_PAGE_SHIFT, nb, nb, pads, 0, 0};
		}
		d->w_pend = 0;
		d->w_c++;
		if (++d->w_x == n1) {
			d->w_x = 0;
			d->w_pend = pr;
			if (++d->w_y == rows) {
				d->w_y = 0;
				d->w_i3++;
			}
		}
		if (cl)
			return;
	}
}


/* the cycle the closed burst pb can close: NEVER while the burst
 * dma_outstanding before it has not ended (its end is not known yet) */
static uint64_t ld_close_at(const loom_tdma *d)
{
	uint32_t O = d->t.outstanding;
	if (d->ld_nb < O)
		return d->pb.close;
	uint64_t r = d->ld_ret[(d->ld_nb - O) % LOOM_TDMA_RING];
	return r == LOOM_TDMA_NEVER ? r : umax(d->pb.close, r + 2);
}

/* the cycle pb's address goes out (after a fetch's in the same cycle) */
static uint64_t ld_next(const loom_tdma *d)
{
	uint64_t c = d->pb.open ? ld_close_at(d) : LOOM_TDMA_NEVER;
	if (c == LOOM_TDMA_NEVER)
		return c;
	uint64_t ar = umax(c + 1, d->ld_ar + 1);
	return ar == d->ar_fetch ? ar + 1 : ar;
}

/* the closed burst pb's address goes out in cycle ar: its pads and data
 * lines to the writer, its request to the DRAM */
static void ld_issue(loom_tdma *d, uint64_t ar)
{
	loom_tburst *b = &d->pb;
	uint64_t close = ld_close_at(d), k = d->ld_nb++;
	d->w_c += close - b->close; /* the walker waited for the close */
	d->ld_ar = ar;
	d->ld_ret[k % LOOM_TDMA_RING] = LOOM_TDMA_NEVER;
	d->dirty |= D_LD;
	for (uint64_t p = 0; p < b->pads; p++)
		ld_item(d, 0, close + 1, 0, 0);
	uint32_t lines = b->beats == b->nb ? 1 : b->beats / b->nb;
	for (uint32_t j = 0; j < lines; j++)
		ld_item(d, 1, 0, j + 1 == lines, k);
	rq_add(d, ar + d->t.lat, b->beats, b->nb, 0);
	b->open = 0;
	if (b->last)
		ld_finish(d, d->w_pend ? close + 1 : close);
	ld_walk(d);
}

/* ------------------------------------------------------------------ STORE */

static void st_start(loom_tdma *d, unsigned i)
{
	d->st_f = i;
	d->f_start = umax(d->st[i].acc, d->st_front);
	d->f_i1 = d->f_i2 = d->f_i3 = 0;
}

/* the front end is past instruction st_f: the next one starts at front */
static void st_next(loom_tdma *d, uint64_t front)
{
	d->st_front = front;
	if (d->st_f + 1 < d->st_n)
		st_start(d, d->st_f + 1);
	else
		d->st_f = d->st_n;
}

static void sq_add(loom_tdma *d, loom_trow r)
{
	d->sq[(d->sq_h + d->sq_n++) % LOOM_TDMA_SQ] = r;
}

/* the oldest held instruction not done is done in cycle t */
static void st_done(loom_tdma *d, uint64_t t)
{
	for (unsigned k = 0; k < d->st_n; k++)
		if (d->st[k].done == LOOM_TDMA_NEVER) {
			d->st[k].done = t;
			d->ext = 1;
			return;
		}
}

/* the front end fires the next row (global row j = st_nb + sq_n) when the
 * row four before it has left the row FIFO (its cycle is known, and its
 * address's: the address FIFO has room); 0 when it cannot yet */
static int st_fire(loom_tdma *d)
{
	if (d->st_f >= d->st_n || d->sq_n == LOOM_TDMA_SQ)
		return 0;
	loom_theld *h = &d->st[d->st_f];
	const uint64_t *n = h->n, *s = h->s;
	uint32_t src = h->src;
	if (!n[0] || !n[1] || !n[2]) {
		sq_add(d, (loom_trow){0, 0, 0, 0, d->f_start, 0, 0, 2});
		st_next(d, d->f_start + 2);
		return 1;
	}
	uint64_t j = d->st_nb + d->sq_n;
	if (j >= 4 && j - 4 >= d->st_nb + (uint64_t)d->popk)
		return 0;
	uint64_t fire = (d->f_i1 | d->f_i2 | d->f_i3) ? d->f_fire + 1 : d->f_start + (src == 2 ? 4 : src == 3 ? 5 : 1);
	if (j >= 4) {
		fire = umax(fire, d->st_pop[(j - 4) % LOOM_TDMA_RING] + 1);
		fire = umax(fire, d->st_aw[(j - 4) % LOOM_TDMA_RING] + 1);
	}
	if (src == 0 || src == 3) {
		/* an SP read (SOURCE 3: the residual's line) waits for the compute
		 * engines' reads of its bank */
		uint64_t k = d->f_i1 + n[0] * (d->f_i2 + n[1] * d->f_i3);
		uint64_t line = src == 3 ? h->res + k * h->rstep : h->mem + k;
		fire = sp_free(d, 0, line, fire);
		sp_mark(d, 1, line, fire, fire + 1);
	}
	uint64_t push = fire + (src == 2 ? 3 : src == 3 ? 6 : 1);
	d->f_fire = fire;
	d->f_push = push;
	uint64_t addr = h->a0 + d->f_i3 * s[2] + d->f_i2 * s[1] + d->f_i1 * s[0];
	int last = 0;
	if (++d->f_i1 == n[0]) {
		d->f_i1 = 0;
		if (++d->f_i2 == n[1]) {
			d->f_i2 = 0;
			last = ++d->f_i3 == n[2];
		}
	}
	sq_add(d, (loom_trow){fire, push, 0, addr, 0, j, h->n0, last});
	if (last)
		st_next(d, push + 2);
	return 1;
}

/* the head row's cycle to leave the row FIFO for W (after the previous
 * row's last beat); an instruction of no rows is done */
static int st_head(loom_tdma *d)
{
	if (d->w_on || !d->sq_n || d->popk)
		return 0;
	loom_trow *r = &d->sq[d->sq_h];
	if (r->kind == 2) {
		st_done(d, umax(r->front + 2, d->st_lastb + 1));
		d->sq_h = (d->sq_h + 1) % LOOM_TDMA_SQ;
		d->sq_n--;
		return 1;
	}
	/* its address: a cycle after its fire and after the previous one's,
	 * and after the response of the burst dma_wr_outstanding before it
	 * (known now: every row before it has left W) */
	uint64_t j = r->j, wo = d->t.wr_outstanding;
	r->aw = umax(r->fire + 1, j ? d->st_aw[(j - 1) % LOOM_TDMA_RING] + 1 : 0);
	if (j >= wo)
		r->aw = umax(r->aw, d->st_b[(j - wo) % LOOM_TDMA_RING] + 1);
	d->st_aw[j % LOOM_TDMA_RING] = r->aw;
	d->r_pop = umax(umax(r->push + 1, d->st_w), r->aw + 1);
	d->st_pop[d->st_nb % LOOM_TDMA_RING] = d->r_pop;
	d->popk = 1;
	return 1;
}

/* the front end and the head as far as they are known */
static void st_row(loom_tdma *d)
{
	while (st_head(d) || st_fire(d))
		;
}

/* the head row leaves the row FIFO for W */
static void st_issue(loom_tdma *d)
{
	const loom_trow *r = &d->sq[d->sq_h];
	d->w_on = 1;
	d->w_left = row_beats(&d->t, r->addr, r->n0);
	d->w_evt = d->r_pop + 1;
}

/* W's next beat in cycle t, if the credit leaves a beat after the read */
static void st_wbeat(loom_tdma *d, uint64_t t)
{
	credit_move(d, t);
	d->dirty |= D_RS;
	if (d->wr_at || d->cval - (int64_t)d->t.beat * d->rd_at < (int64_t)d->t.beat) {
		d->w_evt = d->rd_at ? t + 1 : credit_when(d, t + 1, 0);
		return;
	}
	d->wr_at = 1;
	d->w_evt = t + 1;
	if (--d->w_left)
		return;
	/* the row's last beat: its write response dram_latency later */
	const loom_trow *r = &d->sq[d->sq_h];
	d->w_on = 0;
	d->popk = 0;
	d->st_w = t;
	d->st_lastb = t + d->t.lat;
	d->st_b[d->st_nb % LOOM_TDMA_RING] = d->st_lastb;
	d->st_nb++;
	if (r->kind == 1)
		st_done(d, umax(d->st_lastb + 1, r->push + 2));
	d->sq_h = (d->sq_h + 1) % LOOM_TDMA_SQ;
	d->sq_n--;
	st_row(d);
}

/* ------------------------------------------------------------------ compute */

/* MATMUL from cycle a: folds (cb, ky, kx) each stream P activation lines
 * after their C weight columns are in; two weight buffers, a buffer
 * refilled R - 2 cycles after the last read of the fold before the last
 * (npu_compute). Activation reads go first; a weight read in the same bank
 * waits. Marks both in the bank calendars; the done pulse cycle. */
static uint64_t mm_sched(loom_tdma *d, uint64_t a, const loom_insn *in)
{
#define M(f) loom_insn_get(in, LOOM_F_MATMUL_##f)
	const uint64_t R = d->t.rows, C = d->t.cols;
	uint64_t ncb = M(NCB), kh = M(KH), kw = M(KW), oh = M(OUT_H), ow = M(OUT_W);
	uint64_t folds = ncb * kh * kw, P = oh * ow;
	if (!folds || !P)
		return a + loom_insn_cycles(&d->t, in);
	uint64_t act = M(ACT_ADDR), wgt = M(WGT_ADDR), iw = M(IN_W), ih = M(IN_H);
	uint64_t sw = M(SW), sh = M(SH), dw = M(DW), dh = M(DH);
#undef M
	uint64_t span = (oh - 1) * sh * iw + (ow - 1) * sw;
	uint64_t wt = a + 1, s1 = 0, s2 = 0, s = 0, w = a;
	for (uint64_t k = 0; k < folds; k++) {
		uint64_t cb = k / (kh * kw), ky = k / kw % kh, kx = k % kw;
		/* the weight columns: one per cycle its bank is free of activation reads */
		if (k >= 2)
			wt = umax(wt, s2 + P + R - 2);
		for (uint64_t c = 0; c < C; c++) {
			uint64_t line = wgt + k * C + c;
			wt = sp_free(d, 0, line, wt);
			sp_mark(d, 0, line, wt, wt + 1);
			w = wt++;
		}
		s = k ? umax(s1 + P, w + 1) : w + 1;
		uint64_t base = act + cb * ih * iw + ky * dh * iw + kx * dw;
		if (bank_of(d, base) == bank_of(d, base + span)) {
			sp_mark(d, 0, base, s, s + P);
		} else {
			for (uint64_t p = 0; p < P; p++)
				sp_mark(d, 0, base + p / ow * sh * iw + p % ow * sw, s + p, s + p + 1);
		}
		s2 = s1;
		s1 = s;
	}
	return s + P + R + C + LOOM_MM_TAIL;
}

/* a line the vector unit may write from cycle ready on */
static void vw_add(loom_tdma *d, uint64_t ready, uint64_t line)
{
	if (d->vw_n == d->vw_cap) {
		size_t cap = d->vw_cap ? 2 * d->vw_cap : 64;
		loom_tvw *q = malloc(cap * sizeof *q);
		if (!q) {
			d->oom = 1;
			return;
		}
		for (size_t k = 0; k < d->vw_n; k++)
			q[k] = d->vw[(d->vw_h + k) & (d->vw_cap - 1)];
		free(d->vw);
		d->vw = q;
		d->vw_cap = cap;
		d->vw_h = 0;
	}
	d->vw[(d->vw_h + d->vw_n++) & (d->vw_cap - 1)] = (loom_tvw){ready, line};
	d->dirty |= D_VW;
}

enum { VR_PLANE, VR_PARAM, VR_GROUP, VR_WGT, VR_TAP, VR_END };

/* the taps of the pass from tap tp: with reuse up to M (vec_macs) of its
 * kernel row, else one */
static uint64_t vr_pass(const loom_tvec *v, uint64_t M)
{
	uint64_t left = v->kw - v->tp % v->kw;
	return v->reuse ? (left < M ? left : M) : 1;
}

/* the positions of the segment from position t of the group: with reuse
 * up to the end of its output row, else one; its reads' walker */
static uint64_t vr_seg(loom_tvec *v)
{
	uint64_t left = v->g - v->t, row = v->ow - (v->p0 + v->t) % v->ow;
	uint64_t sl = v->reuse ? (left < row ? left : row) : 1;
	loom_dw_init(&v->q, sl, v->mc, v->sw, v->dwl);
	v->i = 0;
	return sl;
}

/* the vector unit's read sequencer, one state (one cycle, or the cycles it
 * waits in it) at a time; 0 when it must wait for a fire not yet known
 * (that fire comes after the next line written, so every read before it
 * is known: the reads of the cycles up to it are marked) or has ended.
 * A pass (mc taps from tp: one tap, or with reuse up to vec_macs
 * taps kx of one kernel row) reads its mc weight lines (DWCONV), then per
 * segment of the group (one position, or with reuse the positions in one
 * output row) the distinct columns j*SW + m*DW (j < sl, m < mc) in
 * increasing order (loom_dw_peek), each folded into position j of the
 * segment with tap m for every such pair. */
static int vr_step(loom_tdma *d)
{
	loom_tvec *v = &d->vs;
	uint64_t x = v->rc;
	switch (v->rs) {
	case VR_PLANE:
		v->rs = v->cb == v->planes ? VR_END : v->dwc ? VR_PARAM : VR_GROUP;
		v->rc++;
		return v->rs != VR_END;
	case VR_PARAM: /* after the last group's finish (the parameters are its) */
		if (v->foff == LOOM_TDMA_NEVER)
			return 0;
		x = umax(x, v->foff);
		for (uint64_t j = 0; j < LOOM_DW_PARAM_LINES; j++)
			sp_mark(d, 0, v->par + v->cb * LOOM_DW_PARAM_LINES + j, x + 1 + j, x + 2 + j);
		v->rc = x + LOOM_DW_PARAM_LINES;
		v->rs = VR_GROUP;
		return 1;
	case VR_GROUP:
		v->g = v->P - v->p0 < LOOM_VEC_GROUP ? v->P - v->p0 : LOOM_VEC_GROUP;
		v->tp = v->t = 0;
		v->mc = vr_pass(v, d->t.vec_macs), v->sl = vr_seg(v);
		v->rc++;
		v->rs = v->dwc ? VR_WGT : VR_TAP;
		return 1;
	case VR_WGT:
		for (uint64_t j = 0; j < v->mc; j++)
			sp_mark(d, 0, v->wgt + v->cb * v->taps + v->tp + j, x + 1 + j, x + 2 + j);
		v->rc += v->mc;
		v->rs = VR_TAP;
		return 1;
	case VR_TAP:
		break;
	default:
		return 0;
	}
	int last = v->tp + v->mc == v->taps;
	uint64_t col;
	unsigned mask = loom_dw_peek(&v->q, &col);
	uint64_t t0 = v->t + v->q.j[0];
	if (last && !v->t && !v->i) {
		/* the last pass starts after the last group's finish: this one's */
		if (v->foff == LOOM_TDMA_NEVER)
			return 0;
		x = umax(x, v->foff);
		v->fg = v->g, v->fdst = v->dst + v->cb * v->cbout + v->p0, v->fh = x;
		v->nready = v->fi = 0;
		v->foff = LOOM_TDMA_NEVER;
	} else if (!v->tp && !last && (mask & 1) && t0 < v->fg) {
		/* the first pass overwrites acc[t] (tap 0 of the pass) after the
		 * finish took it */
		if (t0 >= v->fi)
			return 0;
		x = umax(x, v->fire[t0] + 1);
	}
	uint64_t p = v->p0 + v->t;
	uint64_t off = v->tp / v->kw * v->dhl + v->tp % v->kw * v->dwl;
	if (v->op == LOOM_OP_ELTWISE)
		off = v->tp ? v->bstep : 0;
	sp_mark(d, 0, v->src + v->cb * v->cbin + p / v->ow * v->sh + p % v->ow * v->sw + off + col, x + 1, x + 2);
	if (last && mask >> (v->mc - 1) & 1)
		v->rdy[v->t + v->q.j[v->mc - 1]] = x + 3, v->nready++;
	v->rc = x + 1;
	v->i++;
	loom_dw_adv(&v->q, mask);
	if (loom_dw_peek(&v->q, &col))
		return 1;
	v->t += v->sl;
	if (v->t < v->g) {
		v->sl = vr_seg(v);
		return 1;
	}
	v->t = 0;
	v->tp += v->mc;
	if (v->tp < v->taps) {
		v->mc = vr_pass(v, d->t.vec_macs), v->sl = vr_seg(v);
		v->rs = v->dwc ? VR_WGT : VR_TAP;
		return 1;
	}
	v->p0 += v->g;
	if (v->p0 >= v->P)
		v->p0 = 0, v->cb++;
	v->rs = v->p0 ? VR_GROUP : VR_PLANE;
	return 1;
}

/* the finish's next line leaves the lanes once its last fold is done, one
 * per cycle, while the output buffer has room: at most 8 lines between
 * the lanes' input and the SP (line k after line k - 8 was written) */
static int vf_step(loom_tdma *d)
{
	loom_tvec *v = &d->vs;
	if (v->fi == v->fg || v->fi == v->nready || (v->k >= 8 && v->nw <= v->k - 8))
		return 0;
	uint64_t f = umax(v->rdy[v->fi], v->fi ? v->fire[v->fi - 1] + 1 : v->fh + 1);
	if (v->k >= 8)
		f = umax(f, v->w8[(v->k - 8) % 8] + 1);
	v->fire[v->fi] = f;
	vw_add(d, f + 4, v->fdst + v->fi);
	v->k++;
	if (++v->fi == v->fg)
		v->foff = f + 1;
	return 1;
}

/* the reads and the finish as far as they are known */
static void vec_fire(loom_tdma *d)
{
	loom_tvec *v = &d->vs;
	while (v->on && (vf_step(d) || vr_step(d)))
		;
	if (v->rs == VR_END && v->fi == v->fg)
		v->on = 0;
}

/* the next line's write: one per cycle, when no read (the compute
 * engines', the store's) holds its bank */
static uint64_t vw_next(const loom_tdma *d)
{
	if (!d->vw_n)
		return LOOM_TDMA_NEVER;
	const loom_tvw *v = &d->vw[d->vw_h];
	return sp_free(d, 1, v->line, umax(v->ready, d->vw_last + 1));
}

static void vw_write(loom_tdma *d, uint64_t t)
{
	const loom_tvw *v = &d->vw[d->vw_h];
	sp_mark(d, 1, v->line, t, t + 1);
	d->vw_last = t;
	d->vw_h = (d->vw_h + 1) & (d->vw_cap - 1);
	d->dirty |= D_VW;
	d->vw_n--;
	d->vs.w8[d->vs.nw++ % 8] = t;
	vec_fire(d);
	if (d->vw_n || d->vs.on)
		return;
	d->cp_done = umax(d->cp_fdone, t + 1);
	d->ext = 1;
}

/* the vector unit's instruction taken in cycle a (npu_vector): its first
 * groups (vec_fire), the rest as its lines are written (vw_write); the
 * done pulse cycle when the banks do not matter, else NEVER (then
 * loom_tdma_cdone once the last line is written) */
static uint64_t vec_sched(loom_tdma *d, uint64_t a, const loom_insn *in)
{
	loom_tvec *v = &d->vs;
	memset(v, 0, sizeof *v);
	v->op = loom_insn_opcode(in);
	v->ow = v->taps = v->kw = v->sw = v->sh = v->dwl = 1;
	uint64_t tabl = 0;
#define G(o, f) loom_insn_get(in, LOOM_F_##o##_##f)
	switch (v->op) {
	case LOOM_OP_ELTWISE:
		v->planes = G(ELTWISE, PLANES), v->P = G(ELTWISE, PLANE_LINES), v->taps = 2, v->kw = 2;
		v->src = G(ELTWISE, SRC_A), v->dst = G(ELTWISE, DST), v->cbin = v->cbout = v->P, v->ow = v->P;
		v->bstep = G(ELTWISE, SRC_B) - v->src;
		v->dwl = v->bstep;
		break;
	case LOOM_OP_POOL:
		v->planes = G(POOL, NCB), v->ow = G(POOL, OUT_W), v->P = v->ow * G(POOL, OUT_H);
		v->kw = G(POOL, KW), v->taps = v->kw * G(POOL, KH), v->src = G(POOL, SRC), v->dst = G(POOL, DST);
		v->cbin = (uint64_t)G(POOL, IN_W) * G(POOL, IN_H), v->cbout = v->P, v->sw = G(POOL, SW);
		v->sh = G(POOL, SH) * G(POOL, IN_W), v->dwl = G(POOL, DW), v->dhl = G(POOL, DH) * G(POOL, IN_W);
		break;
	case LOOM_OP_DWCONV:
		v->planes = G(DWCONV, NCB), v->ow = G(DWCONV, OUT_W), v->P = v->ow * G(DWCONV, OUT_H);
		v->kw = G(DWCONV, KW), v->taps = v->kw * G(DWCONV, KH), v->src = G(DWCONV, SRC), v->dst = G(DWCONV, DST);
		v->wgt = G(DWCONV, WGT), v->par = G(DWCONV, PARAM), v->dwc = 1;
		v->cbin = (uint64_t)G(DWCONV, IN_W) * G(DWCONV, IN_H), v->cbout = v->P, v->sw = G(DWCONV, SW);
		v->sh = G(DWCONV, SH) * G(DWCONV, IN_W), v->dwl = G(DWCONV, DW), v->dhl = G(DWCONV, DH) * G(DWCONV, IN_W);
		v->reuse = 1;
		break;
	default:
		v->planes = G(LUT, LINES) ? 1 : 0, v->P = G(LUT, LINES), v->ow = v->P;
		v->src = G(LUT, SRC), v->dst = G(LUT, DST);
		v->par = G(LUT, TABLE), tabl = (LOOM_LUT_ENTRIES + d->t.rows - 1) / d->t.rows;
		break;
	}
#undef G
	d->cp_fdone = a + loom_insn_cycles(&d->t, in);
	if (!v->planes || !v->P || !d->nbanks)
		return d->cp_fdone;
	sp_mark(d, 0, v->par, a + 3, a + 3 + tabl); /* LUT: the table */
	v->rc = a + 2 + tabl;
	v->rs = VR_PLANE;
	v->on = 1;
	d->cp_done = LOOM_TDMA_NEVER;
	d->vw_last = a;
	vec_fire(d);
	return LOOM_TDMA_NEVER;
}

uint64_t loom_tdma_cdone(const loom_tdma *d)
{
	return d->cp_done;
}

uint64_t loom_tdma_compute(loom_tdma *d, uint64_t acc, const loom_insn *in)
{
	d->dirty = D_ALL;
	if (loom_insn_opcode(in) == LOOM_OP_MATMUL)
		return mm_sched(d, acc, in);
	return vec_sched(d, acc, in);
}

/* ------------------------------------------------------------------ engines */

/* the rings hold twice the bursts in flight the configurations allow
 * (hwparams.def's maxima, which hwcfg.c enforces) */
#define LOOM_HWPARAM(name, sv, lo, hi, doc) enum { HWMAX_##name = hi };
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
_Static_assert(HWMAX_dma_outstanding <= LOOM_TDMA_RING / 2 && HWMAX_dma_wr_outstanding <= LOOM_TDMA_RING / 2,
	       "LOOM_TDMA_RING too small for hwparams.def's dma_outstanding or dma_wr_outstanding");
_Static_assert(HWMAX_vec_macs == LOOM_VEC_MACS_MAX, "LOOM_VEC_MACS_MAX (isa.h) is not hwparams.def's vec_macs maximum");

int loom_tdma_init(loom_tdma *d, const loom_timing *t)
{
	memset(d, 0, sizeof *d);
	d->t = *t;
	if (!d->t.beat)
		d->t.beat = 16;
	if (d->t.bw > d->t.beat)
		d->t.bw = d->t.beat;
	if (!d->t.bw)
		d->t.bw = 1;
	if (!d->t.outstanding)
		d->t.outstanding = 1;
	if (!d->t.wr_outstanding)
		d->t.wr_outstanding = 1;
	if (!d->t.vec_macs)
		d->t.vec_macs = 1;
	d->nbanks = d->t.banks && d->t.banks <= LOOM_TDMA_BANKS && d->t.bank_lines ? d->t.banks : 0;
	d->cval = 2 * (int64_t)d->t.beat;
	d->fetch_done = LOOM_TDMA_NEVER;
	d->dirty = D_ALL;
	return 0;
}

void loom_tdma_free(loom_tdma *d)
{
	for (int b = 0; b < LOOM_TDMA_BANKS; b++) {
		free(d->sp_hi[b].w);
		free(d->sp_mid[b].w);
	}
	free(d->vw);
	free(d->wq);
	free(d->rq);
	memset(d, 0, sizeof *d);
}

void loom_tdma_idle(loom_tdma *d, uint64_t now)
{
	credit_move(d, now);
	for (int b = 0; b < LOOM_TDMA_BANKS; b++) {
		ch_advance(&d->sp_hi[b], now);
		ch_advance(&d->sp_mid[b], now);
	}
	d->rq_n = d->rq_head = 0;
	d->wq_n = d->wq_head = d->wq_pushed = 0;
	d->wq_pop[0] = d->wq_pop[1] = d->wq_last_push = now;
	d->ld_n = d->ld_w = d->st_n = d->st_f = 0;
	d->ob.open = d->pb.open = 0;
	d->sq_n = d->sq_h = 0;
	d->vw_n = d->vw_h = 0;
	d->vs.on = 0;
	d->cp_done = LOOM_TDMA_NEVER;
	d->popk = d->w_on = 0;
	d->ld_walk = d->st_front = d->st_w = d->st_lastb = now;
	d->ld_ar = d->ar_fetch = 0;
	d->ld_nb = d->st_nb = 0;
	d->rd_last = d->r_free = now;
	d->rh = 0;
	d->fetch_done = LOOM_TDMA_NEVER;
	d->dirty = D_ALL;
}

unsigned loom_tdma_held(const loom_tdma *d, int engine)
{
	return engine == LOOM_TDMA_LOAD ? d->ld_n : d->st_n;
}

uint64_t loom_tdma_done(const loom_tdma *d, int engine)
{
	const loom_theld *h = engine == LOOM_TDMA_LOAD ? d->ld : d->st;
	return loom_tdma_held(d, engine) ? h[0].done : LOOM_TDMA_NEVER;
}

/* the fields of a LOAD, a STORE or a MARK (mark) the engines read */
static loom_theld decode(const loom_insn *in, uint64_t acc, int mark)
{
	loom_theld h;
	memset(&h, 0, sizeof h);
	h.acc = acc;
	h.done = LOOM_TDMA_NEVER;
#define G(op, f) loom_insn_get(in, LOOM_F_##op##_##f)
	if (mark) {
		h.n[0] = h.n[1] = h.n[2] = 1;
		h.a0 = G(MARK, DRAM_ADDR);
		h.n0 = LOOM_MARK_BYTES;
		h.src = 4;
	} else if (loom_insn_opcode(in) == LOOM_OP_LOAD) {
		h.n[0] = G(LOAD, N1), h.n[1] = G(LOAD, N2), h.n[2] = G(LOAD, N3);
		h.s[0] = G(LOAD, STRIDE1), h.s[1] = G(LOAD, STRIDE2), h.s[2] = G(LOAD, STRIDE3);
		h.a0 = G(LOAD, DRAM_ADDR), h.mem = G(LOAD, MEM_ADDR), h.n0 = 4u * G(LOAD, ROW_WORDS);
		h.pt = G(LOAD, PAD_TOP), h.pb = G(LOAD, PAD_BOTTOM), h.pl = G(LOAD, PAD_LEFT), h.pr = G(LOAD, PAD_RIGHT);
		h.tacc = G(LOAD, TARGET) == LOOM_MEM_ACC;
	} else {
		h.n[0] = G(STORE, N1), h.n[1] = G(STORE, N2), h.n[2] = G(STORE, N3);
		h.s[0] = G(STORE, STRIDE1), h.s[1] = G(STORE, STRIDE2), h.s[2] = G(STORE, STRIDE3);
		h.a0 = G(STORE, DRAM_ADDR), h.mem = G(STORE, MEM_ADDR), h.n0 = 4u * G(STORE, ROW_WORDS);
		h.src = G(STORE, SOURCE);
		if (h.src == LOOM_MEM_ACC_RESADD) { /* STRIDE3 is RES_ADDR, N3 its step: one plane */
			h.res = h.s[2];
			h.rstep = h.n[2];
			h.s[2] = 0;
			h.n[2] = 1;
		}
	}
#undef G
	return h;
}

void loom_tdma_accept(loom_tdma *d, int engine, uint64_t acc, const loom_insn *in, int mark)
{
	d->dirty = D_ALL;
	if (engine == LOOM_TDMA_LOAD) {
		if (d->ld_n == 2)
			return;
		d->ld[d->ld_n] = decode(in, acc, 0);
		d->ld[d->ld_n].seq = d->ld_seq++;
		if (d->ld_w == d->ld_n++ && !d->pb.open) {
			ld_start(d, d->ld_n - 1);
			ld_walk(d);
		}
	} else {
		if (d->st_n == 2)
			return;
		d->st[d->st_n] = decode(in, acc, mark);
		if (d->st_f == d->st_n++) {
			st_start(d, d->st_n - 1);
			st_row(d);
		}
	}
}

void loom_tdma_retire(loom_tdma *d, int engine)
{
	d->dirty = D_ALL;
	if (engine == LOOM_TDMA_LOAD && d->ld_n) {
		d->ld[0] = d->ld[1];
		d->ld_n--;
		if (d->ld_w)
			d->ld_w--;
	} else if (engine == LOOM_TDMA_STORE && d->st_n) {
		d->st[0] = d->st[1];
		d->st_n--;
		if (d->st_f)
			d->st_f--;
	}
}

/* the events in their order within a cycle */
enum { EV_VW, EV_POP, EV_PAD, EV_RPUSH, EV_READ, EV_WRITE, EV_ROW, EV_AR, EV_N };

/* (inlined into the event loops: called once per event) */
/* the earlier of two (time, event) pairs, the first on a tie */
#define EV_MIN(t0, k0, t1, k1) ((t1) < (t0) ? ((t0) = (t1), (k0) = (k1)) : 0)

/* the earliest of the 8 candidates, the lowest event among equals: a
 * tree of pairs in which the left one wins a tie, in registers */
static inline int ev_pick(uint64_t t0, uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4, uint64_t t5, uint64_t t6,
			  uint64_t t7, uint64_t *t)
{
	int k0 = EV_VW, k2 = EV_PAD, k4 = EV_READ, k6 = EV_ROW;
	_Static_assert(EV_VW == 0 && EV_POP == 1 && EV_PAD == 2 && EV_RPUSH == 3 && EV_READ == 4 && EV_WRITE == 5 &&
			       EV_ROW == 6 && EV_AR == 7 && EV_N == 8,
		       "ev_pick's tree of the 8 events in order");
	EV_MIN(t0, k0, t1, EV_POP);
	EV_MIN(t2, k2, t3, EV_RPUSH);
	EV_MIN(t4, k4, t5, EV_WRITE);
	EV_MIN(t6, k6, t7, EV_AR);
	EV_MIN(t0, k0, t2, k2);
	EV_MIN(t4, k4, t6, k6);
	EV_MIN(t0, k0, t4, k4);
	*t = t0;
	return k0;
}

/* the next event from the cached candidates, those marked dirty computed
 * again (the same as computing all of them: each is a function of state
 * whose every change sets its bit) */
static int next_ev(loom_tdma *d, uint64_t *t)
{
	unsigned m = d->dirty;
	if (m) {
		if (m & D_VW)
			d->c_vw = vw_next(d);
		if (m & D_PUSH)
			push_next(d, &d->c_pad, &d->c_rh);
		if (m & D_RS)
			d->c_rs = rs_next(d);
		if (m & D_LD)
			d->c_ld = ld_next(d);
		d->dirty = 0;
	}
#ifdef LOOM_TSIM_CHECK_CACHE
	{
		uint64_t p, r;
		push_next(d, &p, &r);
		if (d->c_vw != vw_next(d) || d->c_pad != p || d->c_rh != r || d->c_rs != rs_next(d) ||
		    d->c_ld != ld_next(d)) {
			fprintf(stderr, "tsim: a cached next-event candidate differs from a fresh one\n");
			abort();
		}
	}
#endif
	return ev_pick(d->c_vw, wr_next(d), d->c_pad, d->c_rh, d->c_rs, d->w_on ? d->w_evt : LOOM_TDMA_NEVER,
		       !d->w_on && d->popk ? d->r_pop : LOOM_TDMA_NEVER, d->c_ld, t);
}

uint64_t loom_tdma_next(const loom_tdma *d)
{
	uint64_t t, pad, rh;
	push_next(d, &pad, &rh);
	ev_pick(vw_next(d), wr_next(d), pad, rh, rs_next(d), d->w_on ? d->w_evt : LOOM_TDMA_NEVER,
		!d->w_on && d->popk ? d->r_pop : LOOM_TDMA_NEVER, ld_next(d), &t);
	return t;
}

/* keep the bank calendars short: nothing looks back further than the
 * events still to come */
static void sp_prune(loom_tdma *d)
{
	if (!d->nbanks || d->ct <= d->sp_lo + 65536)
		return;
	uint64_t lo = umax(d->ct, d->rd_last) > 4096 ? umax(d->ct, d->rd_last) - 4096 : 0;
	for (unsigned b = 0; b < d->nbanks; b++) {
		ch_advance(&d->sp_hi[b], lo);
		ch_advance(&d->sp_mid[b], lo);
	}
	d->sp_lo = lo;
	d->dirty = D_ALL;
}

/* The load's line chain in one cycle x, as the events would come next
 * (the step loop would take them next, with no event in between: shortcuts
 * of next_ev, the same order). After a line left the R register: a read
 * beat due in x is the next event (VW, POP and PAD, before it in a cycle's
 * order, were due before the push or wait for the next cycle: a push a
 * cycle). After a write of the writer's head (POP, which set no engine's
 * done): a line leaving the R register in x is the next event (VW does not
 * depend on the write, POP waits for the next cycle, PAD and RPUSH exclude
 * each other). */
static void read_now(loom_tdma *d, uint64_t x)
{
	uint64_t r = rs_next(d);
	if (r == x) {
		rs_take(d, x);
	} else {
		/* computed now: the cached candidate (nothing changed since) */
		d->c_rs = r;
		d->dirty &= ~(unsigned)D_RS;
	}
}

static void push_now(loom_tdma *d, uint64_t x)
{
	uint64_t pad, rh;
	push_next(d, &pad, &rh);
	if (rh == x) {
		rh_push(d, x), read_now(d, x);
	} else {
		d->c_pad = pad;
		d->c_rh = rh;
		d->dirty &= ~(unsigned)D_PUSH;
	}
}

/* the next event if it comes at or before t (then 1) */
static int step(loom_tdma *d, uint64_t t)
{
	uint64_t x;
	int k = next_ev(d, &x);
	if (x > t || d->oom)
		return 0;
	switch (k) {
	case EV_VW: vw_write(d, x); break;
	case EV_POP:
		wr_pop(d, x);
		if (!d->ext)
			push_now(d, x);
		break;
	case EV_PAD: wr_pushed(d, x); break;
	case EV_RPUSH: rh_push(d, x), read_now(d, x); break;
	case EV_READ: rs_take(d, x); break;
	case EV_WRITE: st_wbeat(d, x); break;
	case EV_ROW: st_issue(d); break;
	default: ld_issue(d, x); break;
	}
	return 1;
}

void loom_tdma_advance(loom_tdma *d, uint64_t t)
{
	sp_prune(d);
	while (step(d, t))
		;
}

int loom_tdma_run(loom_tdma *d, uint64_t t)
{
	if (!t)
		return 0;
	sp_prune(d);
	d->ext = 0;
	while (step(d, t - 1))
		if (d->ext)
			return 1;
	return 0;
}

void loom_tdma_fetch(loom_tdma *d, uint64_t ar)
{
	d->ar_fetch = ar;
	d->dirty = D_ALL;
	d->fetch_done = LOOM_TDMA_NEVER;
	rq_add(d, ar + d->t.lat, (uint32_t)loom_fetch_beats(&d->t), 1, 1);
}

uint64_t loom_tdma_fetch_done(const loom_tdma *d)
{
	return d->fetch_done;
}
