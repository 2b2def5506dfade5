/* hwio.c - register and DRAM access of libloom (hwio.h): the typed
 * accessors over the backend (include/loom/hw.h) that every subsystem
 * uses, with a backend failure turned into LOOM_EHW and its message, and
 * the error message of the device (loom_errmsg). */
#include "hwio.h"

#include <stdarg.h>
#include <stdio.h>

int loom_hwio_fail(struct loom_hwio *io, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(io->err, sizeof io->err, fmt, ap);
	va_end(ap);
	return code;
}

int loom_hwio_dram_read(struct loom_hwio *io, uint64_t addr, void *buf, size_t len)
{
	if (loom_hw_dram_read(io->hw, addr, buf, len))
		return loom_hwio_fail(io, LOOM_EHW, "reading device DRAM: %s", loom_hw_error(io->hw));
	return LOOM_OK;
}

int loom_hwio_dram_write(struct loom_hwio *io, uint64_t addr, const void *buf, size_t len)
{
	if (loom_hw_dram_write(io->hw, addr, buf, len))
		return loom_hwio_fail(io, LOOM_EHW, "writing device DRAM: %s", loom_hw_error(io->hw));
	return LOOM_OK;
}

int loom_hwio_run(struct loom_hwio *io, uint64_t max, int *idle, const char *what)
{
	uint64_t before = loom_hw_cycles(io->hw);
	if (loom_hw_run(io->hw, max) == LOOM_HW_FAILED)
		return loom_hwio_fail(io, LOOM_EHW, "%s: %s", what, loom_hw_error(io->hw));
	*idle = loom_hw_cycles(io->hw) == before ? *idle + 1 : 0;
	return LOOM_OK;
}
