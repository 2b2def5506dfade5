/* cmodel_port.h - what the SystemC module (systemc/) needs of the C model
 * beyond include/loom/hw.h: a DRAM port through which every DRAM access of
 * the model goes, a run that does not stop on an interrupt line that is
 * already high, and when the model next does something by itself. The
 * cmodel and rtl backends never use it; without a port the C model runs as
 * before. */
#ifndef LOOM_CMODEL_PORT_H
#define LOOM_CMODEL_PORT_H

#include <stddef.h>
#include <stdint.h>
#include "loom/hw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The C model's DRAM port: with a port set, every DRAM access of the
 * model goes through it as well - the instruction fetch (its whole beats),
 * the rows of a LOAD (each row's whole beats, rows that meet at a beat
 * boundary merged) and of a STORE (each row's bytes, contiguous rows
 * merged), MARK records, the control core's DRAM window. A read fills the model's own DRAM array from the port just
 * before the model uses the bytes, a write passes the bytes on just after
 * the model wrote them, so the array is a staging copy and the port's
 * memory is the device DRAM. The bytes of the reads add up to DRAM_RD_BYTES
 * (and those of MARK records and STOREs with whole beats to DRAM_WR_BYTES).
 * cycle is the model's cycle of the access (an instruction's accesses are
 * at its start, when its effect is applied); kind is a LOOM_CMODEL_PORT_*.
 * The return value: 0 done, non-zero an error response (the bytes of a
 * read are then undefined): the fetch, LOAD, STORE or MARK it belongs to
 * ends the run with BUS_ERROR (docs/ISA.md); for the control core's window
 * it is ignored. A port turns the timing memo
 * off (it compares the program's bytes in the array at START). Without a
 * port (the cmodel backend) nothing of this runs. 0, or -1 when hw is not
 * the C model. */
enum { LOOM_CMODEL_PORT_FETCH, LOOM_CMODEL_PORT_LOAD, LOOM_CMODEL_PORT_STORE, LOOM_CMODEL_PORT_MARK,
       LOOM_CMODEL_PORT_CORE };
typedef struct loom_cmodel_port {
	void *ctx;
	int (*read)(void *ctx, unsigned kind, uint64_t addr, void *buf, size_t n, uint64_t cycle);
	int (*write)(void *ctx, unsigned kind, uint64_t addr, const void *buf, size_t n, uint64_t cycle);
} loom_cmodel_port;
int loom_cmodel_set_port(loom_hw *hw, const loom_cmodel_port *port);
/* Advance the C model by max_cycles, or less when its interrupt line rises
 * (goes from low to high) on the way: unlike loom_hw_run, a line that is
 * already high does not hold the model. LOOM_HW_IRQ when it stopped on a
 * rising edge, else LOOM_HW_TIMEOUT (LOOM_HW_FAILED when hw is not the C
 * model). For the SystemC module, where the device runs on while the host
 * has not yet answered its interrupt. */
int loom_cmodel_advance(loom_hw *hw, uint64_t max_cycles);
/* When the C model next does something by itself: its cycle now while the
 * tensor engine runs or the control core executes; the cycle its timer
 * wakes the core when the engine is idle and the core waits in WFI with no
 * enabled interrupt pending (or is held in reset); UINT64_MAX when only a
 * register write can wake it. Lets the SystemC module sleep instead of
 * stepping an idle model. */
uint64_t loom_cmodel_quiet(loom_hw *hw);

#ifdef __cplusplus
}
#endif
#endif
