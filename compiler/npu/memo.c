/* memo.c - a memo of tile plans (loom_plan_memo, compiler/npu/npu.h): a
 * compile plans many layers of the same shape (ResNet's repeated blocks),
 * and planning is the timing of a few candidate programs each (conv_plan.c,
 * vec_plan.c): the memo plans each shape once.
 *
 * Why the key may leave the values out: a plan depends on the
 * configuration and on the layer's shape fields below. Its values (zero
 * points, clip bounds, requantization multipliers and shifts) only fill
 * instruction fields (LOAD PAD_VALUE, STORE ZERO_POINT / CLIP_*, the
 * vector instructions' ZP_* / CLIP_* / MULT* / SHIFT) that neither the
 * timing model (common/timing.c, common/tsim.c) nor the planners read; the
 * checks that do read them (clip_lo <= clip_hi, shift and multiplier
 * ranges) run on every call, hit or not. A hint bypasses the memo.
 *
 * A plan from the memo is the one loom_conv_plan_make / loom_vec_plan_make
 * returns, but est_first is 0: loom_conv_plan_first / loom_vec_plan_first
 * time it where it is needed (a job's first layer). */
#include "compiler/npu/npu_internal.h"

#include <stddef.h>
#include <stdlib.h>

/* a new field in the parameters must be sorted into the key or the values
 * (see above); these fail the build until it is */
_Static_assert(offsetof(loom_conv_params, hints) == 72 && sizeof(loom_conv_params) == 72 + sizeof(void *),
	       "loom_conv_params changed: update conv_key in compiler/npu/memo.c");
_Static_assert(offsetof(loom_vec_params, hints) == 112 && sizeof(loom_vec_params) == 112 + sizeof(void *),
	       "loom_vec_params changed: update vec_key in compiler/npu/memo.c");

enum { KEY_WORDS = 22 };

typedef struct mentry {
	uint32_t key[KEY_WORDS]; /* key[0]: 0 conv, 1 + kind vector layers */
	union {
		loom_conv_plan c;
		loom_vec_plan v;
	} plan;
} mentry;

struct loom_plan_memo {
	loom_hwcfg cfg;
	mentry *e;
	size_t n, cap;
	uint64_t hits, misses;
};

loom_plan_memo *loom_plan_memo_new(const loom_hwcfg *cfg)
{
	loom_plan_memo *m = calloc(1, sizeof *m);
	if (m)
		m->cfg = *cfg;
	return m;
}

void loom_plan_memo_free(loom_plan_memo *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

void loom_plan_memo_stats(const loom_plan_memo *m, uint64_t *hits, uint64_t *misses)
{
	*hits = m ? m->hits : 0;
	*misses = m ? m->misses : 0;
}

/* the shape fields of a conv layer (every field but the values and hints) */
static void conv_key(const loom_conv_params *p, uint32_t *k)
{
	memset(k, 0, KEY_WORDS * sizeof *k);
	uint32_t f[] = {p->h,  p->w,  p->cin, p->cout, p->in_stride, p->out_stride, p->kh,		p->kw,
			p->sh, p->sw, p->dh,  p->dw,   p->pad_top,   p->pad_bottom,  p->pad_left, p->pad_right,
			(uint32_t)p->raw};
	memcpy(k + 1, f, sizeof f);
}

static void vec_key(const loom_vec_params *p, uint32_t *k)
{
	memset(k, 0, KEY_WORDS * sizeof *k);
	uint32_t f[] = {p->h,	     p->w,	    p->c,	    p->in_stride, p->in2_stride, p->out_stride,
			p->kh,	     p->kw,	    p->sh,	    p->sw,	  p->dh,	 p->dw,
			p->pad_top,  p->pad_bottom, p->pad_left,  p->pad_right, (uint32_t)p->func, (uint32_t)p->bcast,
			p->in_align, p->out_align};
	k[0] = 1 + (uint32_t)p->kind;
	memcpy(k + 1, f, sizeof f);
}

/* the entry of key, NULL if none */
static mentry *find(loom_plan_memo *m, const uint32_t *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!memcmp(m->e[i].key, key, KEY_WORDS * sizeof *key))
			return &m->e[i];
	return NULL;
}

/* a new entry of key (NULL when out of memory: the plan is then not kept) */
static mentry *add(loom_plan_memo *m, const uint32_t *key)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 32;
		mentry *e = realloc(m->e, cap * sizeof *e);
		if (!e)
			return NULL;
		m->e = e;
		m->cap = cap;
	}
	mentry *e = &m->e[m->n++];
	memset(e, 0, sizeof *e);
	memcpy(e->key, key, KEY_WORDS * sizeof *key);
	return e;
}

/* the memo serves cfg: the configuration it was made for */
static int serves(const loom_plan_memo *m, const loom_hwcfg *cfg)
{
	return m && !memcmp(&m->cfg, cfg, sizeof *cfg);
}

int loom_plan_memo_conv(loom_plan_memo *m, const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
			char *err, size_t errlen)
{
	layer L;
	uint32_t key[KEY_WORDS];
	if (!serves(m, cfg) || p->hints)
		return npu_conv_plan(cfg, p, &L, 0, plan, err, errlen);
	if (npu_layer_check(cfg, p, &L, err, errlen))
		return -1;
	conv_key(p, key);
	mentry *e = find(m, key);
	if (e) {
		m->hits++;
		*plan = e->plan.c;
		return 0;
	}
	if (npu_conv_plan(cfg, p, &L, 0, plan, err, errlen))
		return -1;
	m->misses++;
	if ((e = add(m, key)))
		e->plan.c = *plan;
	return 0;
}

int loom_plan_memo_vec(loom_plan_memo *m, const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan,
		       char *err, size_t errlen)
{
	vlayer V;
	uint32_t key[KEY_WORDS];
	if (!serves(m, cfg) || p->hints)
		return npu_vec_plan(cfg, p, &V, 0, plan, err, errlen);
	if (npu_vlayer_check(cfg, p, &V, err, errlen))
		return -1;
	vec_key(p, key);
	mentry *e = find(m, key);
	if (e) {
		m->hits++;
		*plan = e->plan.v;
		return 0;
	}
	if (npu_vec_plan(cfg, p, &V, 0, plan, err, errlen))
		return -1;
	m->misses++;
	if ((e = add(m, key)))
		e->plan.v = *plan;
	return 0;
}
