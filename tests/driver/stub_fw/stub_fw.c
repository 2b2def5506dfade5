/* stub_fw.c - a minimal stand-in for the control-core firmware, written
 * from docs/FIRMWARE.md only, so that libloom's tests run whether or not
 * firmware/ builds (the real firmware is tested by `loom selftest`). It
 * serves the boot handshake, the rings, per-job windows, the watchdog and
 * LOOM_JOB_F_TEST_HANG; it polls instead of taking interrupts (WFI still
 * wakes on the enabled lines). Not a product: no error recovery beyond the
 * protocol. */
#include <stdint.h>

#include "loom/core.h"
#include "loom/fw_abi.h"

#define NPU(off) (*(volatile uint32_t *)(LOOM_CORE_NPU_BASE + (off)))
#define PER(off) (*(volatile uint32_t *)(LOOM_CORE_PERIPH_BASE + (off)))
#define DRAM(a) ((volatile void *)(uintptr_t)(LOOM_CORE_DRAM_BASE + (a)))

/* tensor-engine registers (regs.def) */
enum { R_ID = 0x0, R_HW_ARRAY = 0x8, R_HW_FP = 0x18, R_CTRL = 0x20, R_STATUS = 0x24, R_INSN_BASE = 0x28,
       R_ERR_CAUSE = 0x2c, R_ERR_PC = 0x30, R_ERR_INFO = 0x34, R_IRQ_STATUS = 0x38, R_IRQ_MASK = 0x3c,
       R_CTR = 0x40, R_WIN_CTRL = 0x80, R_WIN0 = 0x84, R_EVT = 0xc0 };

#define MIE_BITS ((1u << 7) | (1u << LOOM_CORE_IRQ_DOORBELL) | (1u << LOOM_CORE_IRQ_ENGINE_DONE) | \
		  (1u << LOOM_CORE_IRQ_ENGINE_ERR))
#define DEFAULT_WATCHDOG 50000000u

static volatile loom_fw_boot *blk;
static volatile loom_ring_hdr *sq, *cq;
static volatile loom_job *sq_rec;
static volatile loom_completion *cq_rec;
static uint32_t nsq, ncq, watchdog;

static inline uint32_t csr_mcycle(void) { uint32_t v; __asm__ volatile("csrr %0, mcycle" : "=r"(v)); return v; }
static inline uint32_t csr_minstret(void) { uint32_t v; __asm__ volatile("csrr %0, minstret" : "=r"(v)); return v; }
static inline uint32_t csr_mip(void) { uint32_t v; __asm__ volatile("csrr %0, mip" : "=r"(v)); return v; }
static inline void set_mie(uint32_t v) { __asm__ volatile("csrw mie, %0" ::"r"(v)); }
static inline void wfi(void) { __asm__ volatile("wfi"); }

static void refuse(uint32_t why)
{
	PER(LOOM_CORE_REG_MBOX_F2H0) = why;
	PER(LOOM_CORE_REG_HOST_IRQ_SET) = LOOM_HOST_IRQ_BOOT;
	set_mie(0);
	for (;;)
		wfi();
}

static int pow2(uint32_t x) { return x && !(x & (x - 1)); }

static uint32_t check_block(void)
{
	if (blk->magic != LOOM_FW_BOOT_MAGIC)
		return LOOM_FW_BOOT_BAD_MAGIC;
	if (blk->abi_major != LOOM_FW_ABI_MAJOR)
		return LOOM_FW_BOOT_BAD_ABI;
	if (blk->size != sizeof(loom_fw_boot) || !pow2(blk->sq_entries) || blk->sq_entries > LOOM_FW_RING_MAX ||
	    !pow2(blk->cq_entries) || blk->cq_entries > LOOM_FW_RING_MAX || blk->cq_entries < blk->sq_entries ||
	    (blk->sq_addr & 63) || (blk->cq_addr & 63))
		return LOOM_FW_BOOT_BAD_BLOCK;
	for (int i = 0; i < 8; i++)
		if (blk->host_reserved[i])
			return LOOM_FW_BOOT_BAD_BLOCK;
	return LOOM_FW_BOOT_OK;
}

static void boot(void)
{
	if (PER(LOOM_CORE_REG_MBOX_H2F0) != LOOM_FW_BOOT_MAGIC)
		refuse(LOOM_FW_BOOT_BAD_MAGIC);
	blk = DRAM(PER(LOOM_CORE_REG_MBOX_H2F1));
	uint32_t st = check_block();
	blk->status = st;
	blk->fw_abi_major = LOOM_FW_ABI_MAJOR;
	blk->fw_abi_minor = LOOM_FW_ABI_MINOR;
	blk->fw_version = 0x57ab0001u; /* "stub" */
	blk->caps = LOOM_FW_CAP_WINDOWS | LOOM_FW_CAP_WATCHDOG | LOOM_FW_CAP_TEST_HANG;
	blk->hw_array = NPU(R_HW_ARRAY);
	blk->hw_fingerprint = NPU(R_HW_FP);
	if (st != LOOM_FW_BOOT_OK)
		refuse(st);
	nsq = blk->sq_entries;
	ncq = blk->cq_entries;
	watchdog = blk->watchdog_cycles ? blk->watchdog_cycles : DEFAULT_WATCHDOG;
	sq = DRAM(blk->sq_addr);
	cq = DRAM(blk->cq_addr);
	sq_rec = (volatile loom_job *)(sq + 1);
	cq_rec = (volatile loom_completion *)(cq + 1);
	NPU(R_IRQ_MASK) = 0;
	PER(LOOM_CORE_REG_MBOX_F2H0) = LOOM_FW_READY_MAGIC;
	PER(LOOM_CORE_REG_HOST_IRQ_SET) = LOOM_HOST_IRQ_BOOT;
}

static void arm_timer(uint32_t cycles)
{
	uint32_t lo = PER(LOOM_CORE_REG_MTIME_LO), hi = PER(LOOM_CORE_REG_MTIME_HI);
	uint32_t nlo = lo + cycles, nhi = hi + (nlo < lo);
	PER(LOOM_CORE_REG_MTIMECMP_HI) = 0xffffffffu;
	PER(LOOM_CORE_REG_MTIMECMP_LO) = nlo;
	PER(LOOM_CORE_REG_MTIMECMP_HI) = nhi;
}

static void disarm_timer(void)
{
	PER(LOOM_CORE_REG_MTIMECMP_HI) = 0xffffffffu;
	PER(LOOM_CORE_REG_MTIMECMP_LO) = 0xffffffffu;
}

/* Run one valid job on the engine; fills status and error fields. */
static void engine_run(const volatile loom_job *j, volatile loom_completion *c)
{
	for (uint32_t i = 0; i < LOOM_FW_JOB_WINDOWS; i++) {
		NPU(R_WIN0 + 8 * i) = i < j->nwindows ? j->win[i].base : 0;
		NPU(R_WIN0 + 8 * i + 4) = i < j->nwindows ? j->win[i].size : 0;
	}
	NPU(R_WIN_CTRL) = 1;
	NPU(R_IRQ_STATUS) = 3;
	NPU(R_INSN_BASE) = j->insn_addr;
	NPU(R_CTRL) = 1;
	arm_timer(j->timeout_cycles ? j->timeout_cycles : watchdog);
	set_mie((1u << 7) | (1u << LOOM_CORE_IRQ_ENGINE_DONE) | (1u << LOOM_CORE_IRQ_ENGINE_ERR));
	for (;;) {
		uint32_t st = NPU(R_IRQ_STATUS);
		if (st & 2) {
			c->status = LOOM_JOB_ENGINE_ERROR;
			c->err_cause = NPU(R_ERR_CAUSE);
			c->err_pc = NPU(R_ERR_PC);
			c->err_info = NPU(R_ERR_INFO);
			break;
		}
		if (st & 1) {
			c->status = LOOM_JOB_OK;
			break;
		}
		if (csr_mip() & (1u << 7)) {
			NPU(R_CTRL) = 2;
			while (NPU(R_STATUS) & 1)
				;
			c->status = LOOM_JOB_TIMEOUT;
			break;
		}
		wfi();
	}
	disarm_timer();
	set_mie(MIE_BITS);
	NPU(R_IRQ_STATUS) = 3;
	for (uint32_t i = 0; i < LOOM_FW_CTRS; i++)
		c->ctr[i] = NPU(R_CTR + 4 * i);
	for (uint32_t i = 0; i < LOOM_FW_EVTS; i++)
		c->evt[i] = NPU(R_EVT + 4 * i);
}

static int job_valid(const volatile loom_job *j)
{
	if ((j->flags & ~LOOM_JOB_F_TEST_HANG) || j->nwindows > LOOM_FW_JOB_WINDOWS || (j->insn_addr & 31) ||
	    j->reserved[0] || j->reserved[1])
		return 0;
	return 1;
}

static void run_job(uint32_t slot)
{
	uint32_t c0 = csr_mcycle(), i0 = csr_minstret();
	/* the slot is the firmware's until sq.head passes it: read in place */
	const volatile loom_job *j = &sq_rec[slot];
	uint32_t tail = cq->tail;
	volatile loom_completion *c = &cq_rec[tail & (ncq - 1)];
	volatile uint32_t *cw = (volatile uint32_t *)c;
	for (unsigned k = 0; k < sizeof *c / 4; k++)
		cw[k] = 0;
	c->job_id_lo = j->job_id_lo;
	c->job_id_hi = j->job_id_hi;
	if (!job_valid(j)) {
		c->status = LOOM_JOB_BAD_JOB;
	} else {
		if (j->flags & LOOM_JOB_F_TEST_HANG)
			for (;;)
				;
		engine_run(j, c);
	}
	c->fw_cycles = csr_mcycle() - c0;
	c->fw_insns = csr_minstret() - i0;
	cq->tail = tail + 1;
	PER(LOOM_CORE_REG_HOST_IRQ_SET) = LOOM_HOST_IRQ_COMPLETION;
}

int main(void)
{
	boot();
	set_mie(MIE_BITS);
	for (;;) {
		PER(LOOM_CORE_REG_DOORBELL_ACK) = 1;
		while (sq->head != sq->tail) {
			uint32_t h = sq->head;
			run_job(h & (nsq - 1));
			sq->head = h + 1;
		}
		wfi();
	}
}
