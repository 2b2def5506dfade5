/* dev.c - opening and closing a libloom device (include/loom/loom.h): the
 * backend and configuration, the check that the device is the
 * configuration asked for, error codes and messages, and the register and
 * DRAM helpers the other subsystems share. No global state: everything
 * lives in struct loom_dev (dev.h). */
#include "dev.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/isa.h"

const char *loom_strerror(int code)
{
	switch (code) {
	case LOOM_OK: return "LOOM_OK: success";
	case LOOM_EINVAL: return "LOOM_EINVAL: invalid argument";
	case LOOM_ENOMEM: return "LOOM_ENOMEM: out of memory";
	case LOOM_EBUSY: return "LOOM_EBUSY: busy (ring full or range in use)";
	case LOOM_EAGAIN: return "LOOM_EAGAIN: not completed yet";
	case LOOM_ETIMEDOUT: return "LOOM_ETIMEDOUT: timed out";
	case LOOM_ENOENT: return "LOOM_ENOENT: no such job";
	case LOOM_ERANGE: return "LOOM_ERANGE: out of range";
	case LOOM_EFW: return "LOOM_EFW: invalid firmware image";
	case LOOM_EIO: return "LOOM_EIO: input/output error";
	case LOOM_EBOOT: return "LOOM_EBOOT: firmware boot failed";
	case LOOM_EVERSION: return "LOOM_EVERSION: firmware ABI version mismatch";
	case LOOM_EHW: return "LOOM_EHW: hardware backend error";
	case LOOM_ESTATE: return "LOOM_ESTATE: device not in the right state";
	case LOOM_EPROTO: return "LOOM_EPROTO: firmware protocol violation";
	default: return "unknown error";
	}
}

const char *loom_errmsg(const loom_dev *dev)
{
	return dev ? dev->err : "no device (NULL)";
}

int loom_dev_fail(loom_dev *d, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof d->err, fmt, ap);
	va_end(ap);
	return code;
}

int loom_dev_dram_read(loom_dev *d, uint64_t addr, void *buf, size_t len)
{
	if (loom_hw_dram_read(d->hw, addr, buf, len))
		return loom_dev_fail(d, LOOM_EHW, "reading device DRAM: %s", loom_hw_error(d->hw));
	return LOOM_OK;
}

int loom_dev_dram_write(loom_dev *d, uint64_t addr, const void *buf, size_t len)
{
	if (loom_hw_dram_write(d->hw, addr, buf, len))
		return loom_dev_fail(d, LOOM_EHW, "writing device DRAM: %s", loom_hw_error(d->hw));
	return LOOM_OK;
}

uint32_t loom_dev_rd32(loom_dev *d, uint32_t reg) { return loom_hw_mmio_read(d->hw, reg); }
void loom_dev_wr32(loom_dev *d, uint32_t reg, uint32_t val) { loom_hw_mmio_write(d->hw, reg, val); }

static int open_fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int open_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* The device answers with the ID and the fingerprint of the configuration. */
static int check_identity(loom_hw *hw, const loom_hwcfg *cfg, char *err, size_t errlen)
{
	uint32_t id = loom_hw_mmio_read(hw, LOOM_REG_ID);
	uint32_t fp = loom_hw_mmio_read(hw, LOOM_REG_HW_FINGERPRINT);
	if (id != LOOM_ID_VALUE)
		return open_fail(err, errlen, LOOM_EHW, "the %s device reads ID %#x, not %#x ('LOOM')", hw->backend, id,
				 LOOM_ID_VALUE);
	if (fp != cfg->fingerprint)
		return open_fail(err, errlen, LOOM_EHW,
				 "the %s device has fingerprint %08x, configuration %s is %08x", hw->backend, fp,
				 cfg->name, cfg->fingerprint);
	return LOOM_OK;
}

int loom_open(const loom_open_opts *opts, loom_dev **out, char *err, size_t errlen)
{
	if (out)
		*out = NULL;
	if (!opts || !out || !opts->backend || !opts->hw)
		return open_fail(err, errlen, LOOM_EINVAL, "loom_open: NULL %s",
				 !opts ? "opts" : !out ? "out" : !opts->backend ? "opts->backend" : "opts->hw");
	if (strcmp(opts->backend, "rtl") && strcmp(opts->backend, "cmodel"))
		return open_fail(err, errlen, LOOM_EINVAL, "loom_open: unknown backend '%s' (rtl or cmodel)",
				 opts->backend);
	loom_hwcfg cfg;
	char msg[512];
	if (loom_hwcfg_load(&cfg, opts->hw, NULL, msg, sizeof msg))
		return open_fail(err, errlen, LOOM_EINVAL, "loom_open: configuration '%s': %s", opts->hw, msg);
	loom_dev *d = calloc(1, sizeof *d);
	if (!d)
		return open_fail(err, errlen, LOOM_ENOMEM, "loom_open: out of memory");
	d->hw = loom_hw_open(opts->backend, &cfg, opts->hw_opts, msg, sizeof msg);
	if (!d->hw) {
		free(d);
		return open_fail(err, errlen, LOOM_EHW, "loom_open: %s backend: %s", opts->backend, msg);
	}
	int rc = check_identity(d->hw, &cfg, err, errlen);
	if (rc == LOOM_OK && loom_mem_init(&d->mem, d->hw->cfg.dram_bytes))
		rc = open_fail(err, errlen, LOOM_ENOMEM, "loom_open: out of memory");
	if (rc == LOOM_OK)
		rc = loom_jobs_init(&d->jobs) ? open_fail(err, errlen, LOOM_ENOMEM, "loom_open: out of memory") : 0;
	if (rc) {
		loom_close(d);
		return rc;
	}
	/* nothing runs until a boot: core held in reset, engine stopped */
	loom_boot_hold(d);
	*out = d;
	return LOOM_OK;
}

void loom_close(loom_dev *dev)
{
	if (!dev)
		return;
	if (dev->hw) {
		loom_hw_mmio_write(dev->hw, LOOM_REG_CORE_CTRL, 0);
		loom_hw_close(dev->hw);
	}
	loom_jobs_fini(&dev->jobs);
	loom_mem_fini(&dev->mem);
	loom_fw_image_free(&dev->fw);
	free(dev);
}

const loom_hwcfg *loom_dev_config(const loom_dev *dev) { return dev ? &dev->hw->cfg : NULL; }
loom_hw *loom_dev_hw(loom_dev *dev) { return dev ? dev->hw : NULL; }
