/* main.c - the Loom control-core firmware: boot handshake, then serve the
 * submission ring (docs/FIRMWARE.md; structures in include/loom/fw_abi.h).
 *
 * Interrupts are never taken (mstatus.MIE stays 0): WFI only waits for an
 * enabled line in mie. Which lines are enabled depends on what the core
 * waits for:
 *   idle (main loop)           mie = DOORBELL
 *   a job on the engine        mie = ENGINE_DONE | ENGINE_ERR | MTIP
 * Together these are the four lines of docs/FIRMWARE.md, but never at
 * once: a doorbell rung while a job runs (the host queueing the next one)
 * must not turn the job's WFI into a busy loop, and the engine's IRQ_STATUS
 * (cleared only before the next START) and the timer (back to all ones
 * after every job) must not wake the idle WFI.
 *
 * DRAM is reached through the core's window (LOOM_CORE_DRAM_BASE + DRAM
 * address) with volatile 32-bit accesses only; ring records are read and
 * written word by word, at word indices taken from fw_abi.h's structures.
 *
 * Per job the hot path is straight-line code: the record (8 words plus 2
 * per declared window), the checks, 8 window writes, START, the timer,
 * WFI, 19 counter copies, the completion's 27 live words (its 5 reserved
 * words are zeroed once, the first time round the ring). fw_insns in the
 * completion measures it. Every DRAM access of the core is a round trip
 * (the RTL's window waits for each one, writes included), so the number of
 * DRAM words touched per job, not instructions, dominates its cycles.
 */
#include <stddef.h>
#include "fw.h"

/* ------------------------------------------------------------ access */
#define REG32(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define NPU(r) REG32((uint32_t)LOOM_CORE_NPU_BASE + (uint32_t)(r))
#define PER(name) REG32((uint32_t)LOOM_CORE_PERIPH_BASE + (uint32_t)LOOM_CORE_REG_##name)

/* a DRAM address as the core sees it, through the window */
static inline volatile uint32_t *dram(uint32_t addr)
{
	return (volatile uint32_t *)(uintptr_t)((uint32_t)LOOM_CORE_DRAM_BASE + addr);
}

/* word index / bit shift of a field of an fw_abi.h structure */
#define WI(type, field) (offsetof(type, field) / 4)
#define SH(type, field) (8 * (offsetof(type, field) % 4))

#define csr_read(csr)                                                        \
	({                                                                   \
		uint32_t v_;                                                 \
		__asm__ volatile("csrr %0, " #csr : "=r"(v_)::"memory");     \
		v_;                                                          \
	})
#define csr_write(csr, v) __asm__ volatile("csrw " #csr ", %0" ::"r"((uint32_t)(v)) : "memory")

static inline void wfi(void)
{
	__asm__ volatile("wfi" ::: "memory");
}

/* sleep for good: nothing enabled in mie, so WFI never wakes */
static void __attribute__((noreturn)) park(void)
{
	csr_write(mie, 0);
	for (;;)
		wfi();
}

/* ------------------------------------------------------------ traps */
void __attribute__((noreturn)) fw_crash(uint32_t mcause, uint32_t mepc, uint32_t mtval);

/* start.S's trap vector lands here (on a fresh stack, mie = 0) */
void fw_crash(uint32_t mcause, uint32_t mepc, uint32_t mtval)
{
	PER(MBOX_F2H1) = mcause;
	PER(MBOX_F2H2) = mepc;
	PER(MBOX_F2H3) = mtval;
	PER(MBOX_F2H0) = FW_CRASH_MAGIC;
	PER(HOST_IRQ_SET) = FW_HOST_IRQ_CRASH;
	park();
}

/* ------------------------------------------------------------ boot */
#if LOOM_FW_TEST_HANG
#define FW_JOB_FLAGS LOOM_JOB_F_TEST_HANG
#define FW_CAPS (LOOM_FW_CAP_WINDOWS | LOOM_FW_CAP_WATCHDOG | LOOM_FW_CAP_TEST_HANG)
#else
#define FW_JOB_FLAGS 0u
#define FW_CAPS (LOOM_FW_CAP_WINDOWS | LOOM_FW_CAP_WATCHDOG)
#endif

struct fw_rings {
	volatile uint32_t *sq, *cq; /* ring headers, through the window */
	uint32_t sq_mask, cq_mask;  /* entries - 1 */
	uint32_t watchdog;          /* cycles for a job with timeout_cycles 0 */
};

/* bytes of DRAM the core can reach: the configuration's DRAM (HW_BUS),
 * at most the window */
static uint32_t dram_limit(void)
{
	uint32_t mib = FW_HW_BUS_DRAM_MIB(NPU(FW_NPU_HW_BUS));
	if (mib >= (uint32_t)LOOM_CORE_DRAM_SIZE >> 20)
		return (uint32_t)LOOM_CORE_DRAM_SIZE;
	return mib << 20;
}

/* [addr, addr + bytes) inside [0, lim) */
static int inside(uint32_t addr, uint32_t bytes, uint32_t lim)
{
	return addr <= lim && bytes <= lim - addr;
}

/* a ring of n records of rec bytes at addr: n a power of two in
 * 1..LOOM_FW_RING_MAX, 64-byte aligned, header and records inside DRAM */
static int ring_ok(uint32_t n, uint32_t addr, uint32_t rec, uint32_t lim)
{
	return n - 1u < LOOM_FW_RING_MAX && (n & (n - 1u)) == 0 && (addr & 63u) == 0 &&
	       inside(addr, (uint32_t)sizeof(loom_ring_hdr) + n * rec, lim);
}

#define BW(field) b[WI(loom_fw_boot, field)]

/* the host's half of the boot block (its magic already checked) */
static uint32_t check_block(volatile uint32_t *b, uint32_t lim, struct fw_rings *r)
{
	uint32_t abi = BW(abi_major) >> SH(loom_fw_boot, abi_major) & 0xffffu;
	if (abi != LOOM_FW_ABI_MAJOR)
		return LOOM_FW_BOOT_BAD_ABI;
	if (BW(size) != sizeof(loom_fw_boot))
		return LOOM_FW_BOOT_BAD_BLOCK;
	uint32_t sqn = BW(sq_entries), cqn = BW(cq_entries);
	uint32_t sqa = BW(sq_addr), cqa = BW(cq_addr);
	if (!ring_ok(sqn, sqa, sizeof(loom_job), lim) || !ring_ok(cqn, cqa, sizeof(loom_completion), lim) ||
	    cqn < sqn)
		return LOOM_FW_BOOT_BAD_BLOCK;
	for (uint32_t i = 0; i < sizeof(((loom_fw_boot *)0)->host_reserved) / 4; i++)
		if (b[WI(loom_fw_boot, host_reserved) + i])
			return LOOM_FW_BOOT_BAD_BLOCK;
	r->sq = dram(sqa);
	r->cq = dram(cqa);
	r->sq_mask = sqn - 1u;
	r->cq_mask = cqn - 1u;
	uint32_t wd = BW(watchdog_cycles);
	r->watchdog = wd ? wd : FW_DEFAULT_WATCHDOG;
	return LOOM_FW_BOOT_OK;
}

/* docs/FIRMWARE.md "Loading and boot" step 5: a loom_fw_boot_status. The
 * reply fields are written whenever the block is one (address valid, magic
 * right), whatever the verdict, so a driver sees the firmware's ABI version
 * even when it is refused. */
static uint32_t boot(struct fw_rings *r)
{
	if (PER(MBOX_H2F0) != LOOM_FW_BOOT_MAGIC)
		return LOOM_FW_BOOT_BAD_MAGIC;
	uint32_t lim = dram_limit(), ba = PER(MBOX_H2F1);
	if ((ba & 63u) || !inside(ba, sizeof(loom_fw_boot), lim))
		return LOOM_FW_BOOT_BAD_BLOCK; /* nowhere to write a reply */
	volatile uint32_t *b = dram(ba);
	if (BW(magic) != LOOM_FW_BOOT_MAGIC)
		return LOOM_FW_BOOT_BAD_MAGIC;
	uint32_t st = check_block(b, lim, r);
	BW(status) = st;
	BW(fw_abi_major) = LOOM_FW_ABI_MAJOR << SH(loom_fw_boot, fw_abi_major) |
			   LOOM_FW_ABI_MINOR << SH(loom_fw_boot, fw_abi_minor);
	BW(fw_version) = LOOM_FW_VERSION;
	BW(caps) = FW_CAPS;
	BW(hw_array) = NPU(FW_NPU_HW_ARRAY);
	BW(hw_fingerprint) = NPU(FW_NPU_HW_FINGERPRINT);
	for (uint32_t i = 0; i < sizeof(((loom_fw_boot *)0)->fw_reserved) / 4; i++)
		b[WI(loom_fw_boot, fw_reserved) + i] = 0;
	return st;
}

/* ------------------------------------------------------------ jobs */
#define JW(field) j[WI(loom_job, field)]
#define CW(field) c[WI(loom_completion, field)]

/* the counters of a job that never ran */
static const uint32_t fw_zero_ctrs[LOOM_FW_CTRS];
static const uint32_t fw_zero_evts[LOOM_FW_EVTS];

/* docs/FIRMWARE.md "Jobs", steps 1-6 up to the completion record (the
 * ring indices and HOST_IRQ_SET are the caller's). j: the submission
 * record, c: the completion slot, wd: the default watchdog, *fresh: the
 * completion slots not yet written since boot. */
static inline __attribute__((always_inline)) void run_job(volatile uint32_t *j, volatile uint32_t *c,
							    uint32_t wd, uint32_t *fresh)
{
	uint32_t cyc0 = csr_read(mcycle), ins0 = csr_read(minstret);
	uint32_t id_lo = JW(job_id_lo), id_hi = JW(job_id_hi), insn = JW(insn_addr), flags = JW(flags);
	uint32_t tmo = JW(timeout_cycles), nw = JW(nwindows);
	uint32_t rsv = JW(reserved[0]) | JW(reserved[1]);
	uint32_t status, cause = 0, pc = 0, info = 0;
	const volatile uint32_t *ctr = fw_zero_ctrs, *evt = fw_zero_evts;

	/* 1. the record */
	if (((flags & ~FW_JOB_FLAGS) | rsv | (insn & (FW_INSN_ALIGN - 1u))) != 0 || nw > LOOM_FW_JOB_WINDOWS) {
		status = LOOM_JOB_BAD_JOB;
	} else {
		/* 2. test builds: hang here, for the driver's timeout and reset path */
		if (LOOM_FW_TEST_HANG && (flags & LOOM_JOB_F_TEST_HANG))
			for (;;)
				;
		/* 3. the job's DMA windows; the ones it does not declare unused */
#pragma GCC unroll 4
		for (uint32_t i = 0; i < LOOM_FW_JOB_WINDOWS; i++) {
			uint32_t base = 0, size = 0;
			if (i < nw) { /* the DRAM reads only for declared windows */
				base = JW(win[i].base);
				size = JW(win[i].size);
			}
			NPU(FW_NPU_WIN0_BASE + 8u * i) = base;
			NPU(FW_NPU_WIN0_SIZE + 8u * i) = size;
		}
		NPU(FW_NPU_WIN_CTRL) = 1u;
		/* 4. start, arm the watchdog (mtimecmp is all ones here, so
		 * writing its high word first never fires it early) */
		NPU(FW_NPU_IRQ_STATUS) = FW_IRQ_DONE | FW_IRQ_ERROR;
		NPU(FW_NPU_INSN_BASE) = insn;
		NPU(FW_NPU_CTRL) = FW_CTRL_START;
		uint32_t hi, lo;
		do {
			hi = PER(MTIME_HI);
			lo = PER(MTIME_LO);
		} while (hi != PER(MTIME_HI));
		uint64_t due = ((uint64_t)hi << 32 | lo) + (tmo ? tmo : wd);
		PER(MTIMECMP_HI) = (uint32_t)(due >> 32);
		PER(MTIMECMP_LO) = (uint32_t)due;
		/* 5. wait for the engine or the watchdog (the engine's verdict
		 * wins when both are there) */
		csr_write(mie, FW_MIP_ENGINE_DONE | FW_MIP_ENGINE_ERR | FW_MIP_MTIP);
		for (;;) {
			wfi();
			uint32_t p = csr_read(mip);
			if (p & FW_MIP_ENGINE_ERR) {
				status = LOOM_JOB_ENGINE_ERROR;
				cause = NPU(FW_NPU_ERR_CAUSE);
				pc = NPU(FW_NPU_ERR_PC);
				info = NPU(FW_NPU_ERR_INFO);
				break;
			}
			if (p & FW_MIP_ENGINE_DONE) {
				status = LOOM_JOB_OK;
				break;
			}
			if (p & FW_MIP_MTIP) {
				NPU(FW_NPU_CTRL) = FW_CTRL_ABORT;
				while (NPU(FW_NPU_STATUS) & FW_STATUS_BUSY)
					;
				status = LOOM_JOB_TIMEOUT;
				break;
			}
		}
		csr_write(mie, FW_MIP_DOORBELL);
		PER(MTIMECMP_LO) = ~0u;
		PER(MTIMECMP_HI) = ~0u;
		ctr = &NPU(FW_NPU_CTR_BASE);
		evt = &NPU(FW_NPU_EVT_BASE);
	}

	/* 6. the completion record; the core's counts last */
	CW(job_id_lo) = id_lo;
	CW(job_id_hi) = id_hi;
	CW(status) = status;
	CW(err_cause) = cause;
	CW(err_pc) = pc;
	CW(err_info) = info;
#pragma GCC unroll 16
	for (uint32_t i = 0; i < LOOM_FW_CTRS; i++)
		c[WI(loom_completion, ctr) + i] = ctr[i];
#pragma GCC unroll 8
	for (uint32_t i = 0; i < LOOM_FW_EVTS; i++)
		c[WI(loom_completion, evt) + i] = evt[i];
	/* the reserved words: only the first time round the ring (nothing
	 * else writes completion slots, and we only ever write zeros there) */
	if (*fresh) {
		--*fresh;
#pragma GCC unroll 16
		for (uint32_t i = 0; i < sizeof(((loom_completion *)0)->reserved) / 4; i++)
			c[WI(loom_completion, reserved) + i] = 0;
	}
	uint32_t cyc = csr_read(mcycle), ins = csr_read(minstret);
	CW(fw_cycles) = cyc - cyc0;
	CW(fw_insns) = ins - ins0;
}

#define HDR_HEAD WI(loom_ring_hdr, head)
#define HDR_TAIL WI(loom_ring_hdr, tail)
#define RING_RECS (sizeof(loom_ring_hdr) / 4) /* word index of record 0 */

/* the main loop of docs/FIRMWARE.md "Jobs" */
static void __attribute__((noreturn)) serve(const struct fw_rings *r)
{
	volatile uint32_t *sq = r->sq, *cq = r->cq;
	uint32_t sq_mask = r->sq_mask, cq_mask = r->cq_mask, wd = r->watchdog;
	uint32_t head = sq[HDR_HEAD], ctail = cq[HDR_TAIL], fresh = cq_mask + 1u;

	csr_write(mie, FW_MIP_DOORBELL);
	for (;;) {
		PER(DOORBELL_ACK) = 1u; /* before reading tail: no lost wake-up */
		while (head != sq[HDR_TAIL]) {
			run_job(sq + RING_RECS + (head & sq_mask) * (sizeof(loom_job) / 4),
				cq + RING_RECS + (ctail & cq_mask) * (sizeof(loom_completion) / 4), wd,
				&fresh);
			/* the record, then cq.tail, then sq.head, then the
			 * interrupt: whatever the host reads after it is current */
			cq[HDR_TAIL] = ++ctail;
			sq[HDR_HEAD] = ++head;
			PER(HOST_IRQ_SET) = LOOM_HOST_IRQ_COMPLETION;
		}
		wfi();
	}
}

int main(void)
{
	struct fw_rings r = {0};
	uint32_t st = boot(&r);
	if (st == LOOM_FW_BOOT_OK)
		NPU(FW_NPU_IRQ_MASK) = 0; /* the engine interrupts the core only */
	PER(MBOX_F2H0) = st == LOOM_FW_BOOT_OK ? LOOM_FW_READY_MAGIC : st;
	PER(HOST_IRQ_SET) = LOOM_HOST_IRQ_BOOT;
	if (st != LOOM_FW_BOOT_OK)
		park();
	serve(&r);
}
