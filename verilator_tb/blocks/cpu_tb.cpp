// cpu_tb.cpp - block test of rtl/npu_cpu.sv inside cpu_tb_top.sv: runs
// self-checking RV32IM programs (tests/rv32/*.S built into ELF files, see
// docs/CONTROL.md "Test suite") on the RTL core.
//
// Each ELF file given on the command line (a directory stands for every
// *.elf in it, sorted) is loaded into memory (PT_LOAD segments at their
// physical addresses, in the TCMs or the wrapper's 1 MiB of DRAM; all other
// memory zero) and run twice from reset:
// once with the fastest memory (grant at once, answer in the next cycle) and
// once with random 0..2-cycle grant and response delays. A run ends when the
// program writes TOHOST (0x2000_101c); it passes when the value is 1 and the
// wrapper saw no port protocol error. No TOHOST write within --max-cycles
// (default 2000000) is a failure. One line per program, then
// "N passed, M failed"; exit status 1 on any failure.
//
//   cpu_tb [--seed N] [--max-cycles N] [-v] FILE.elf|DIR ...
//
// Build (exact commands; no npu_pkg needed, link with libelf):
//   cd /work/main && verilator --cc --exe --build -O3 -j 4 -Wall --assert \
//     --top-module cpu_tb_top -Mdir /tmp/cputb -LDFLAGS -lelf \
//     rtl/npu_cpu.sv verilator_tb/blocks/cpu_tb_top.sv \
//     /work/main/verilator_tb/blocks/cpu_tb.cpp
//   /tmp/cputb/Vcpu_tb_top build/rv32
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "Vcpu_tb_top.h"
#include "Vcpu_tb_top__Dpi.h"
#include "svdpi.h"
#include "verilated.h"

namespace {

constexpr uint32_t ITCM_BASE = 0x00000000u, ITCM_SIZE = 0x00010000u;
constexpr uint32_t DTCM_BASE = 0x10000000u, DTCM_SIZE = 0x00008000u;
constexpr uint32_t DRAM_BASE = 0x80000000u, DRAM_SIZE = 0x00100000u; // the wrapper's DRAM

struct Image {
	std::vector<uint32_t> itcm, dtcm;
	std::map<uint32_t, uint32_t> dram; // word address -> word (usually empty)
	Image() : itcm(ITCM_SIZE / 4, 0), dtcm(DTCM_SIZE / 4, 0) {}
	// the word holding byte address a, or nullptr outside the TCMs
	uint32_t *word(uint32_t a)
	{
		if (a - ITCM_BASE < ITCM_SIZE) return &itcm[(a - ITCM_BASE) / 4];
		if (a - DTCM_BASE < DTCM_SIZE) return &dtcm[(a - DTCM_BASE) / 4];
		if (a - DRAM_BASE < DRAM_SIZE) return &dram[a & ~3u];
		return nullptr;
	}
};

// Load the PT_LOAD segments of an ELF file into img; "" on success.
std::string load_elf(const std::string &path, Image &img)
{
	int fd = open(path.c_str(), O_RDONLY);
	if (fd < 0) return "cannot open: " + std::string(strerror(errno));
	std::string err;
	Elf *e = elf_begin(fd, ELF_C_READ, nullptr);
	GElf_Ehdr eh;
	size_t n = 0;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		err = "not an ELF file";
	} else if (eh.e_ident[EI_CLASS] != ELFCLASS32 || eh.e_machine != EM_RISCV) {
		err = "not a 32-bit RISC-V ELF file";
	} else if (elf_getphdrnum(e, &n) != 0) {
		err = "no program headers";
	} else {
		size_t fsize = 0;
		char *raw = elf_rawfile(e, &fsize);
		for (size_t i = 0; i < n && err.empty(); i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph)) { err = "bad program header"; break; }
			if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
			if (ph.p_offset + ph.p_filesz > fsize) { err = "truncated segment"; break; }
			for (uint64_t k = 0; k < ph.p_memsz; k++) {
				uint32_t a = (uint32_t)(ph.p_paddr + k);
				uint32_t *w = img.word(a);
				if (!w) {
					char buf[96];
					snprintf(buf, sizeof buf, "segment byte 0x%08" PRIx32 " outside the TCMs and DRAM", a);
					err = buf;
					break;
				}
				uint32_t b = k < ph.p_filesz ? (uint8_t)raw[ph.p_offset + k] : 0;
				unsigned sh = 8 * (a & 3);
				*w = (*w & ~(0xffu << sh)) | (b << sh);
			}
		}
	}
	if (e) elf_end(e);
	close(fd);
	return err;
}

struct Result {
	bool done = false;
	uint32_t tohost = 0;
	uint64_t cycles = 0, retired = 0, wfi = 0;
	uint32_t errors = 0, pc = 0;
};

Result run(Vcpu_tb_top *top, const Image &img, bool rnd, uint32_t seed, uint64_t max_cycles)
{
	top->rand_i = rnd;
	top->seed_i = seed;
	top->clk_i = 0;
	top->rst_ni = 0;
	top->eval();
	top->clk_i = 1;
	top->eval();
	top->clk_i = 0;
	top->eval();
	svSetScope(svGetScopeFromName("TOP.cpu_tb_top"));
	for (uint32_t i = 0; i < ITCM_SIZE / 4; i++) tb_mem_write(ITCM_BASE + 4 * i, img.itcm[i]);
	for (uint32_t i = 0; i < DTCM_SIZE / 4; i++) tb_mem_write(DTCM_BASE + 4 * i, img.dtcm[i]);
	tb_dram_clear();
	for (const auto &w : img.dram) tb_mem_write(w.first, w.second);
	top->rst_ni = 1;
	top->eval();
	uint64_t c = 0;
	while (!top->done_o && c < max_cycles) {
		top->clk_i = 1;
		top->eval();
		top->clk_i = 0;
		top->eval();
		c++;
	}
	Result r;
	r.done = top->done_o;
	r.tohost = top->tohost_o;
	r.cycles = top->cycles_o;
	r.retired = top->retired_o;
	r.wfi = top->wfi_cycles_o;
	r.errors = top->errors_o;
	r.pc = top->pc_o;
	return r;
}

// "" when r passed, else why not
std::string verdict(const Result &r, uint64_t max_cycles)
{
	char buf[160];
	if (!r.done) {
		snprintf(buf, sizeof buf, "no TOHOST write within %" PRIu64 " cycles (pc 0x%08" PRIx32 ")",
			 max_cycles, r.pc);
		return buf;
	}
	if (r.errors) {
		snprintf(buf, sizeof buf, "%" PRIu32 " memory port protocol errors", r.errors);
		return buf;
	}
	if (r.tohost != 1) {
		if ((r.tohost & 1) && r.tohost > 1)
			snprintf(buf, sizeof buf, "TOHOST = 0x%" PRIx32 ": test case %" PRIu32 " failed", r.tohost,
				 r.tohost >> 1);
		else
			snprintf(buf, sizeof buf, "TOHOST = 0x%" PRIx32 " (not a result code)", r.tohost);
		return buf;
	}
	return "";
}

void usage()
{
	fprintf(stderr, "usage: cpu_tb [--seed N] [--max-cycles N] [-v] FILE.elf|DIR ...\n");
	exit(2);
}

} // namespace

int main(int argc, char **argv)
{
	Verilated::commandArgs(argc, argv);
	uint32_t seed = 1;
	uint64_t max_cycles = 2000000;
	bool verbose = false;
	std::vector<std::string> files;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--seed" && i + 1 < argc) {
			seed = (uint32_t)strtoul(argv[++i], nullptr, 0);
		} else if (a == "--max-cycles" && i + 1 < argc) {
			max_cycles = strtoull(argv[++i], nullptr, 0);
		} else if (a == "-v") {
			verbose = true;
		} else if (a.rfind("+verilator", 0) == 0) {
			continue;
		} else if (!a.empty() && a[0] == '-') {
			usage();
		} else {
			struct stat st;
			if (stat(a.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
				std::vector<std::string> in_dir;
				if (DIR *d = opendir(a.c_str())) {
					while (struct dirent *de = readdir(d)) {
						std::string n = de->d_name;
						if (n.size() > 4 && n.compare(n.size() - 4, 4, ".elf") == 0)
							in_dir.push_back(a + "/" + n);
					}
					closedir(d);
				}
				std::sort(in_dir.begin(), in_dir.end());
				if (in_dir.empty()) fprintf(stderr, "cpu_tb: no *.elf in %s\n", a.c_str());
				files.insert(files.end(), in_dir.begin(), in_dir.end());
			} else {
				files.push_back(a);
			}
		}
	}
	if (files.empty()) {
		fprintf(stderr, "cpu_tb: no ELF files given\n");
		usage();
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "cpu_tb: libelf initialisation failed\n");
		return 1;
	}

	auto ctx = std::make_unique<VerilatedContext>();
	auto top = std::make_unique<Vcpu_tb_top>(ctx.get());
	unsigned passed = 0, failed = 0;
	for (size_t f = 0; f < files.size(); f++) {
		const std::string &path = files[f];
		std::string name = path.substr(path.find_last_of('/') + 1);
		Image img;
		std::string err = load_elf(path, img);
		if (!err.empty()) {
			printf("FAIL %s: %s\n", name.c_str(), err.c_str());
			failed++;
			continue;
		}
		Result fast = run(top.get(), img, false, 0, max_cycles);
		Result slow = run(top.get(), img, true, seed + (uint32_t)f * 7919u, max_cycles);
		std::string vf = verdict(fast, max_cycles), vs = verdict(slow, max_cycles);
		if (vf.empty() && vs.empty()) {
			passed++;
			printf("PASS %s: %" PRIu64 " instructions, %" PRIu64 " cycles (random delays: %" PRIu64 ")",
			       name.c_str(), fast.retired, fast.cycles, slow.cycles);
			if (verbose) printf(", %" PRIu64 " cycles in WFI", fast.wfi);
			printf("\n");
		} else {
			failed++;
			printf("FAIL %s:", name.c_str());
			if (!vf.empty()) printf(" fast memory: %s;", vf.c_str());
			if (!vs.empty()) printf(" random delays: %s;", vs.c_str());
			printf(" (%" PRIu64 " instructions retired)\n", vf.empty() ? slow.retired : fast.retired);
		}
		fflush(stdout);
	}
	top->final();
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
