/* ops_internal.h - what runtime's kernel files (runtime/ops_*.c) and the
 * operator table (runtime/ops.c) share; not a public header.
 *
 *  - the declaration of every kernel function named in runtime/ops.def,
 *    generated from it, so that a kernel's definition and the table agree
 *    on its signature. */
#ifndef LOOM_OPS_INTERNAL_H
#define LOOM_OPS_INTERNAL_H

#include <stddef.h>
#include "runtime/cpu_ops.h"
#include "cpu_internal.h"

/* one declaration per function named in ops.def (a function shared by
 * several rows is declared once per row, which C allows) */
#define LOOM_OP(op, min_opset, infer, run, npu)                                      \
	int infer(loom_graph *g, const loom_node *n, char *err, size_t errlen); \
	int run(loom_graph *g, const loom_node *n, char *err, size_t errlen);
#include "ops.def"
#undef LOOM_OP

#endif
