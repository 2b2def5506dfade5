/* exec_internal.h - what runtime/exec_req.c (several inference requests of
 * one model in flight) needs of a loom_exec (runtime/exec.c): its device,
 * its model and the buffer object holding the model's DRAM image at its
 * compiled address. Private to runtime/. */
#ifndef LOOM_EXEC_INTERNAL_H
#define LOOM_EXEC_INTERNAL_H

#include "runtime/exec.h"

loom_dev *loom_exec_dev(const loom_exec *e);
loom_model *loom_exec_model(const loom_exec *e);
loom_bo *loom_exec_bo(const loom_exec *e);

#endif
