/* dev.c - the libloom device (include/loom/loom.h): opening it (the
 * backend and configuration, the check that the device is the
 * configuration asked for) and closing it, error codes and messages. The
 * device owns one piece per subsystem (struct loom_dev, dev.h) and is the
 * front door of every call that takes a loom_dev: it hands the call to the
 * piece that does the work (bo.c, boot.c, job.c; a NULL piece when the
 * device is NULL, answered with LOOM_EINVAL there), and it runs the boot,
 * whose steps are boot.c's, in turn with the jobs' (job.c). No global
 * state: everything lives in struct loom_dev. */
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
	return dev ? dev->io.err : "no device (NULL)";
}

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
	if (strcmp(opts->backend, "rtl") && strcmp(opts->backend, "cmodel") && strcmp(opts->backend, "systemc") &&
	    strcmp(opts->backend, "systemc-rtl"))
		return open_fail(err, errlen, LOOM_EINVAL,
				 "loom_open: unknown backend '%s' (rtl, cmodel, systemc or systemc-rtl)", opts->backend);
	loom_hwcfg cfg;
	char msg[512];
	if (loom_hwcfg_load(&cfg, opts->hw, NULL, msg, sizeof msg))
		return open_fail(err, errlen, LOOM_EINVAL, "loom_open: configuration '%s': %s", opts->hw, msg);
	loom_dev *d = calloc(1, sizeof *d);
	if (!d)
		return open_fail(err, errlen, LOOM_ENOMEM, "loom_open: out of memory");
	d->io.hw = loom_hw_open(opts->backend, &cfg, opts->hw_opts, msg, sizeof msg);
	if (!d->io.hw) {
		free(d);
		return open_fail(err, errlen, LOOM_EHW, "loom_open: %s backend: %s", opts->backend, msg);
	}
	loom_boot_init(&d->boot, &d->io, &d->mem);
	int rc = check_identity(d->io.hw, &cfg, err, errlen);
	if (rc == LOOM_OK && loom_mem_init(&d->mem, &d->io, d->io.hw->cfg.dram_bytes))
		rc = open_fail(err, errlen, LOOM_ENOMEM, "loom_open: out of memory");
	if (rc == LOOM_OK && loom_jobs_init(&d->jobs, &d->io, &d->boot))
		rc = open_fail(err, errlen, LOOM_ENOMEM, "loom_open: out of memory");
	if (rc) {
		loom_close(d);
		return rc;
	}
	/* nothing runs until a boot: core held in reset, engine stopped */
	loom_boot_hold(&d->boot);
	*out = d;
	return LOOM_OK;
}

void loom_close(loom_dev *dev)
{
	if (!dev)
		return;
	if (dev->io.hw) {
		loom_hw_mmio_write(dev->io.hw, LOOM_REG_CORE_CTRL, 0);
		loom_hw_close(dev->io.hw);
	}
	loom_jobs_fini(&dev->jobs);
	loom_mem_fini(&dev->mem);
	loom_boot_fini(&dev->boot);
	free(dev);
}

const loom_hwcfg *loom_dev_config(const loom_dev *dev) { return dev ? &dev->io.hw->cfg : NULL; }
loom_hw *loom_dev_hw(loom_dev *dev) { return dev ? dev->io.hw : NULL; }

/* ---- firmware, boot and reset (boot.c) ---- */

int loom_load_firmware(loom_dev *dev, const char *path)
{
	return loom_boot_fw_file(dev ? &dev->boot : NULL, path);
}

int loom_load_firmware_mem(loom_dev *dev, const void *elf, size_t len)
{
	return loom_boot_fw_mem(dev ? &dev->boot : NULL, elf, len);
}

/* A boot with the kept options (docs/FIRMWARE.md "Loading and boot",
 * "Hangs and reset"): once a firmware is known to be loaded, every job in
 * flight is lost; once the boot block and rings are written zeroed, the
 * host's ring indices restart at 0; then the handshake. */
static int boot_with(loom_dev *d)
{
	int rc = loom_boot_have_fw(&d->boot);
	if (rc)
		return rc;
	loom_jobs_lose_all(&d->jobs);
	rc = loom_boot_load(&d->boot);
	if (rc)
		return rc;
	loom_jobs_rings_reset(&d->jobs);
	return loom_boot_handshake(&d->boot);
}

int loom_boot(loom_dev *dev, const loom_boot_opts *opts)
{
	if (!dev)
		return LOOM_EINVAL;
	int rc = loom_boot_set_opts(&dev->boot, opts);
	return rc ? rc : boot_with(dev);
}

int loom_reset(loom_dev *dev)
{
	if (!dev)
		return LOOM_EINVAL;
	if (!dev->boot.have_opts)
		return loom_hwio_fail(&dev->io, LOOM_ESTATE, "loom_reset: the device was never booted (loom_boot)");
	return boot_with(dev);
}

int loom_dev_get_info(loom_dev *dev, loom_dev_info *info)
{
	return loom_boot_info(dev ? &dev->boot : NULL, info);
}

/* ---- buffer objects (bo.c) ---- */

int loom_bo_alloc(loom_dev *dev, uint64_t size, uint64_t align, loom_bo **out)
{
	return loom_mem_bo_alloc(dev ? &dev->mem : NULL, size, align, out);
}

int loom_bo_alloc_at(loom_dev *dev, uint64_t addr, uint64_t size, loom_bo **out)
{
	return loom_mem_bo_alloc_at(dev ? &dev->mem : NULL, addr, size, out);
}

/* ---- jobs (job.c) ---- */

int loom_submit(loom_dev *dev, const loom_job_desc *job, unsigned flags, uint64_t *id)
{
	return loom_jobs_submit(dev ? &dev->jobs : NULL, job, flags, id);
}

int loom_poll(loom_dev *dev, uint64_t id, loom_result *res)
{
	return loom_jobs_poll(dev ? &dev->jobs : NULL, id, res);
}

int loom_wait(loom_dev *dev, uint64_t id, uint64_t timeout_cycles, loom_result *res)
{
	return loom_jobs_wait(dev ? &dev->jobs : NULL, id, timeout_cycles, res);
}

unsigned loom_jobs_in_flight(const loom_dev *dev) { return dev ? dev->jobs.inflight : 0; }
