/* plan.c - steps and memory (compile_internal.h): CPU / QUANT / DEQUANT /
 * NPU steps in order, tensors crossing between host and device, liveness
 * times, and the activation arena (greedy by size, lowest free address). */
#include "compiler/compile_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ steps */

int add_step(cc *c, int kind)
{
	loom_model *m = c->m;
	loom_step *p = realloc(m->steps, (m->nsteps + 1) * sizeof *p);
	if (!p)
		return -1;
	m->steps = p;
	memset(&p[m->nsteps], 0, sizeof *p);
	p[m->nsteps].kind = kind;
	p[m->nsteps].node = p[m->nsteps].tensor = p[m->nsteps].dst = -1;
	return (int)m->nsteps++;
}

static int root_of(cc *c, int t) { return c->lo.alias[t] >= 0 ? c->lo.alias[t] : t; }

static void use(cc *c, int t)
{
	t = root_of(c, t);
	if (c->pl.tlast[t] < c->pl.time)
		c->pl.tlast[t] = c->pl.time;
}

/* t onto the device: a QUANT step of host tensor t, or of the host tensor
 * whose padded copy t is (host_xpad: the step writes t's image padded) */
static int ensure_dev(cc *c, int t)
{
	if (c->lo.on_dev[t] || c->lo.is_cdev[t])
		return 0;
	int s = add_step(c, LOOM_STEP_QUANT);
	if (s < 0)
		return -1;
	const struct xpad *xp = host_xpad(c, t);
	loom_step *st = &c->m->steps[s];
	st->tensor = t;
	if (xp) {
		st->tensor = xp->src;
		st->dst = t;
		memcpy(st->pad, xp->pad, sizeof st->pad);
		st->fill = xp->fill;
	}
	c->m->mt[t].dev = 1;
	c->lo.on_dev[t] = 1;
	c->pl.tdef[t] = ++c->pl.time;
	c->pl.tlast[t] = c->pl.time;
	return 0;
}

int ensure_host(cc *c, int t)
{
	if (c->lo.on_host[t] || c->g->tensors[t].is_const)
		return 0;
	int s = add_step(c, LOOM_STEP_DEQUANT);
	if (s < 0)
		return -1;
	c->m->steps[s].tensor = t;
	c->m->mt[t].host = 1;
	c->lo.on_host[t] = 1;
	c->pl.time++;
	use(c, t);
	return 0;
}

/* append the layers [first, c->lo.nlw) of node ni to the step list */
int place_layers(cc *c, int first)
{
	for (int i = first; i < c->lo.nlw; i++) {
		lw *l = &c->lo.lws[i];
		for (int k = 0; k < 2; k++) {
			int made = 0; /* by an earlier layer of the node (a padded copy) */
			for (int j = first; j < i; j++)
				made |= c->lo.lws[j].out == l->in[k];
			if (l->in[k] >= 0 && !made && ensure_dev(c, l->in[k]))
				return -1;
		}
	}
	loom_model *m = c->m;
	int s;
	if (m->nsteps && m->steps[m->nsteps - 1].kind == LOOM_STEP_NPU) {
		s = (int)m->nsteps - 1;
	} else {
		if ((s = add_step(c, LOOM_STEP_NPU)) < 0)
			return -1;
		m->steps[s].layer = (uint32_t)first;
	}
	for (int i = first; i < c->lo.nlw; i++) {
		lw *l = &c->lo.lws[i];
		l->step = s;
		l->time = ++c->pl.time;
		for (int k = 0; k < 2; k++)
			if (l->in[k] >= 0)
				use(c, l->in[k]);
		int o = l->out;
		c->lo.on_dev[o] = 1;
		c->m->mt[o].dev = 1;
		if (c->pl.tdef[o] < 0)
			c->pl.tdef[o] = c->pl.time;
		use(c, o);
		m->steps[s].nlayers++;
	}
	return 0;
}

/* ------------------------------------------------------------------ memory + emission */

typedef struct blk {
	int t;
	uint64_t size, off;
} blk;

static int blk_cmp(const void *a, const void *b)
{
	const blk *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->t - y->t;
}

int plan_arena(cc *c)
{
	loom_model *m = c->m;
	int nb = 0;
	blk *b = calloc((size_t)c->nt + 1, sizeof *b);
	if (!b)
		return cc_fail(c, "out of memory");
	uint64_t total = 0;
	for (int t = 0; t < c->nt; t++) {
		if (!m->mt[t].dev || c->lo.is_cdev[t] || c->lo.alias[t] >= 0)
			continue;
		b[nb].t = t;
		b[nb].size = align64((uint64_t)m->mt[t].h * m->mt[t].w * m->mt[t].stride);
		total += b[nb].size;
		nb++;
	}
	qsort(b, (size_t)nb, sizeof *b, blk_cmp);
	uint64_t top = 0;
	for (int i = 0; i < nb; i++) {
		uint64_t off = c->o->arena_no_reuse ? top : 0;
		for (int again = !c->o->arena_no_reuse; again;) {
			again = 0;
			for (int j = 0; j < i; j++) {
				int u = b[j].t, t = b[i].t;
				if (c->pl.tlast[u] < c->pl.tdef[t] || c->pl.tlast[t] < c->pl.tdef[u])
					continue;
				if (off < b[j].off + b[j].size && b[j].off < off + b[i].size) {
					off = b[j].off + b[j].size;
					again = 1;
				}
			}
		}
		b[i].off = off;
		if (off + b[i].size > top)
			top = off + b[i].size;
	}
	m->arena_bytes = top;
	m->arena_bytes_noreuse = total;
	for (int i = 0; i < nb; i++)
		m->mt[b[i].t].addr = m->arena_base + b[i].off;
	free(b);
	for (int t = 0; t < c->nt; t++) {
		if (c->lo.is_cdev[t])
			m->mt[t].addr += m->const_base;
		else if (c->lo.alias[t] >= 0) {
			uint64_t a = m->mt[c->lo.alias[t]].addr;
			int rows = m->mt[t].rows; /* its own: it may differ in rank from the root */
			m->mt[t] = m->mt[c->lo.alias[t]];
			m->mt[t].addr = a;
			m->mt[t].rows = rows;
			m->mt[t].host = c->lo.on_host[t];
		}
	}
	return 0;
}
