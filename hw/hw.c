/* hw.c - opening a hardware-access backend (include/loom/hw.h) and running
 * one tensor-engine program on it.
 *
 * The systemc backend (the NPU module on the C model in the reference
 * SystemC virtual platform, systemc/) is build/systemc/libloom_systemc.so,
 * loaded the same way; it serves every configuration.
 *
 * The systemc-rtl backend (the cycle-accurate module on the verilated RTL
 * in the same platform) is per configuration like the rtl backend:
 * build/hw/NAME/libloom_systemc_rtl.so, made by `make systemc-rtl HW=NAME`,
 * built, locked, loaded and checked the same way.
 *
 * The cmodel backend is linked in. The rtl backend of a configuration is a
 * shared library, build/hw/NAME/libloom_rtl.so, made by `make rtl HW=NAME`;
 * when it is missing this file runs that make (the build is cached per
 * configuration; a lock file build/hw/NAME.lock makes processes that need
 * the same configuration at once, as loom sweep's workers do, build it
 * once), then dlopen()s it and checks that the library was built for the
 * same configuration fingerprint. */
#include "loom/hw.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loom/isa.h"

static loom_hw *fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return NULL;
}

/* what a per-configuration library is made by, and named */
typedef struct rtl_lib {
	const char *target; /* make target */
	const char *file;   /* under build/hw/NAME/ */
	const char *what;   /* for messages */
	const char *open;   /* its loom_rtl_open_fn */
} rtl_lib;
static const rtl_lib RTL_LIB = {"rtl", "libloom_rtl.so", "the RTL", LOOM_RTL_OPEN_SYMBOL};
static const rtl_lib SYSTEMC_RTL_LIB = {"systemc-rtl", "libloom_systemc_rtl.so", "the SystemC module on the RTL",
					LOOM_SYSTEMC_RTL_OPEN_SYMBOL};

static int build_rtl(const loom_hwcfg *cfg, const char *root, const rtl_lib *lib, char *err, size_t len)
{
	char cfgpath[1024], cmd[4096];
	snprintf(cfgpath, sizeof cfgpath, "%s/configs/%s.cfg", root, cfg->name);
	int own = strncmp(cfg->name, "custom-", 7) == 0 || access(cfgpath, R_OK) != 0;
	snprintf(cfgpath, sizeof cfgpath, "%s/build/hw/%s.cfg", root, cfg->name);
	if (own) {
		/* overridden configs and files outside configs/ (--hw
		 * tests/configs/limits.cfg): written for the build */
		char dir[1024];
		snprintf(dir, sizeof dir, "%s/build", root);
		mkdir(dir, 0777);
		snprintf(dir, sizeof dir, "%s/build/hw", root);
		mkdir(dir, 0777);
		if (loom_hwcfg_write(cfg, cfgpath, err, len))
			return -1;
	} else {
		snprintf(cfgpath, sizeof cfgpath, "%s/configs/%s.cfg", root, cfg->name);
	}
	snprintf(cmd, sizeof cmd, "make -s -C '%s' %s HW='%s' HWCFG='%s' >&2", root, lib->target, cfg->name, cfgpath);
	fprintf(stderr, "loom: building %s of configuration %s (cached in build/hw/%s)\n", lib->what, cfg->name,
		cfg->name);
	if (system(cmd) != 0) {
		snprintf(err, len, "building %s of configuration %s failed (%s)", lib->what, cfg->name, cmd);
		return -1;
	}
	return 0;
}

static int lib_build(const loom_hwcfg *cfg, const rtl_lib *lib, char *err, size_t len)
{
	const char *root = loom_root_dir();
	char so[1024], lock[1024];
	snprintf(so, sizeof so, "%s/build/hw/%s/%s", root, cfg->name, lib->file);
	struct stat st;
	if (stat(so, &st) == 0 && !getenv("LOOM_REBUILD"))
		return 0;
	snprintf(lock, sizeof lock, "%s/build", root);
	mkdir(lock, 0777);
	snprintf(lock, sizeof lock, "%s/build/hw", root);
	mkdir(lock, 0777);
	snprintf(lock, sizeof lock, "%s/build/hw/%s.lock", root, cfg->name);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	/* another process may have built it while this one waited */
	int rc = stat(so, &st) == 0 && !getenv("LOOM_REBUILD") ? 0 : build_rtl(cfg, root, lib, err, len);
	if (fd >= 0)
		close(fd);
	return rc;
}

int loom_hw_rtl_build(const loom_hwcfg *cfg, char *err, size_t len)
{
	return lib_build(cfg, &RTL_LIB, err, len);
}

static loom_hw *open_rtl(const loom_hwcfg *cfg, const loom_hw_opts *opts, const rtl_lib *lib, char *err,
			 size_t len)
{
	const char *root = loom_root_dir();
	char so[1024];
	snprintf(so, sizeof so, "%s/build/hw/%s/%s", root, cfg->name, lib->file);
	if (lib_build(cfg, lib, err, len))
		return NULL;
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return fail(err, len, "cannot load the %s backend %s: %s", lib->target, so, dlerror());
	uint32_t *fp = (uint32_t *)dlsym(h, LOOM_RTL_FINGERPRINT_SYMBOL);
	loom_rtl_open_fn fn = (loom_rtl_open_fn)(uintptr_t)dlsym(h, lib->open);
	if (!fp || !fn) {
		dlclose(h);
		return fail(err, len, "%s is not a Loom %s backend (missing %s)", so, lib->target, lib->open);
	}
	if (*fp != cfg->fingerprint) {
		dlclose(h);
		return fail(err, len, "%s was built for fingerprint %08x, configuration %s is %08x: run `make %s HW=%s`",
			    so, *fp, cfg->name, cfg->fingerprint, lib->target, cfg->name);
	}
	/* the library stays loaded for the life of the process: verilated
	 * models keep static state that must not be unloaded under them */
	return fn(cfg, opts, err, len);
}

/* The systemc backend: build/systemc/libloom_systemc.so (systemc/vp.cpp),
 * made by `make systemc` when missing (once for all processes that ask at
 * the same time, as for the RTL), loaded once for the life of the process. */
static loom_hw *open_systemc(const loom_hwcfg *cfg, const loom_hw_opts *opts, char *err, size_t len)
{
	const char *root = loom_root_dir();
	char so[1024], lock[1024], cmd[2048];
	snprintf(so, sizeof so, "%s/build/systemc/libloom_systemc.so", root);
	struct stat st;
	if (stat(so, &st) != 0) {
		snprintf(lock, sizeof lock, "%s/build", root);
		mkdir(lock, 0777);
		snprintf(lock, sizeof lock, "%s/build/systemc.lock", root);
		int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
		if (fd >= 0)
			flock(fd, LOCK_EX);
		int rc = 0;
		if (stat(so, &st) != 0) {
			snprintf(cmd, sizeof cmd, "make -s -C '%s' systemc >&2", root);
			fprintf(stderr, "loom: building the SystemC backend (build/systemc)\n");
			rc = system(cmd);
		}
		if (fd >= 0)
			close(fd);
		if (rc != 0)
			return fail(err, len, "building the SystemC backend failed (%s)", cmd);
	}
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return fail(err, len, "cannot load the SystemC backend %s: %s", so, dlerror());
	loom_rtl_open_fn fn = (loom_rtl_open_fn)(uintptr_t)dlsym(h, LOOM_SYSTEMC_OPEN_SYMBOL);
	if (!fn)
		return fail(err, len, "%s is not the SystemC backend (missing %s)", so, LOOM_SYSTEMC_OPEN_SYMBOL);
	return fn(cfg, opts, err, len);
}

loom_hw *loom_hw_open(const char *backend, const loom_hwcfg *cfg, const loom_hw_opts *opts, char *err,
		      size_t errlen)
{
	loom_hw_opts def = {0};
	if (!opts)
		opts = &def;
	if (!backend || !cfg)
		return fail(err, errlen, "loom_hw_open: NULL backend or configuration");
	if (!strcmp(backend, "cmodel"))
		return loom_cmodel_open(cfg, opts, err, errlen);
	if (!strcmp(backend, "rtl"))
		return open_rtl(cfg, opts, &RTL_LIB, err, errlen);
	if (!strcmp(backend, "systemc"))
		return open_systemc(cfg, opts, err, errlen);
	if (!strcmp(backend, "systemc-rtl"))
		return open_rtl(cfg, opts, &SYSTEMC_RTL_LIB, err, errlen);
	return fail(err, errlen, "unknown backend '%s' (expected rtl, cmodel, systemc or systemc-rtl)", backend);
}

int loom_hw_exec(loom_hw *hw, uint64_t insn_addr, uint64_t max_cycles, loom_hw_result *res)
{
	memset(res, 0, sizeof *res);
	uint64_t c0 = loom_hw_cycles(hw);
	loom_hw_mmio_write(hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	loom_hw_mmio_write(hw, LOOM_REG_INSN_BASE, (uint32_t)insn_addr);
	loom_hw_mmio_write(hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	int r = loom_hw_run(hw, max_cycles);
	if (r == LOOM_HW_FAILED)
		return r;
	if (r == LOOM_HW_TIMEOUT) {
		res->timed_out = 1;
		loom_hw_mmio_write(hw, LOOM_REG_CTRL, LOOM_CTRL_ABORT);
		/* the abort drains the bus; give it a bounded time */
		for (int i = 0; i < 1000 && (loom_hw_mmio_read(hw, LOOM_REG_STATUS) & LOOM_STATUS_BUSY); i++)
			loom_hw_run(hw, 100);
	}
	res->status = loom_hw_mmio_read(hw, LOOM_REG_STATUS);
	res->cause = loom_hw_mmio_read(hw, LOOM_REG_ERR_CAUSE);
	res->pc = loom_hw_mmio_read(hw, LOOM_REG_ERR_PC);
	res->info = loom_hw_mmio_read(hw, LOOM_REG_ERR_INFO);
	res->cycles = loom_hw_cycles(hw) - c0;
	loom_hw_mmio_write(hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	return r;
}
