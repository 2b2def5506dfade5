// sp_tb.cpp - self-checking block test of rtl/npu_sp.sv (+ npu_sram), the
// banked scratchpad, verilated directly as the top (no wrapper). A C++
// reference holds the scratchpad bytes and applies the arbitration rule of
// docs/ARCHITECTURE.md ("Scratchpad client port"): per bank the
// highest-priority requester (act > wgt > st > vw > ld) is granted in the
// same cycle, the others are refused and hold their request; read data and
// rvalid come exactly one cycle after the grant. The two writers (vw, the
// vector unit, and ld, the load DMA) land their line at the grant edge. Every
// cycle checks: each gnt against the rule, conflicts_o = number of refused
// requests (0..4), no two grants on one bank, rvalid = granted last cycle,
// rdata = reference line at the grant edge.
// Directed cases (fill via ld and via vw, per-bank write/read-back, first/last
// lines, all five on one bank, all on different banks, wgt vs st, vw refused
// by act/wgt/st, vw vs ld) then random traffic (uniform, forced same bank,
// forced different banks, edge lines, re-reads of recently written lines).
// One line per case, then "N passed, M failed"; exit status 1 on any failure.
//
// Build and run (default config; the Makefile equivalent is
// `make block BLK=sp HW=default` with BLOCK_sp_TOP := npu_sp and
// BLOCK_sp_SV := rtl/npu_sram.sv rtl/npu_sp.sv):
//   cd /work/main && verilator --cc --exe --build -j 2 -O3 -Wall --assert \
//     --top-module npu_sp -Mdir /tmp/sptb_default \
//     -CFLAGS "-I/work/main/include -I/work/main/build/hw/default" -o sp_tb \
//     /work/main/verilator_tb/lint.vlt build/hw/default/npu_pkg.sv \
//     rtl/npu_sram.sv rtl/npu_sp.sv /work/main/verilator_tb/blocks/sp_tb.cpp \
//     /work/main/common/isa.c /work/main/common/hwcfg.c
//   /tmp/sptb_default/sp_tb [seed (default 1)] [random_cycles_per_case (default 20000)]
// Other configurations: use build/hw/NAME/ (npu_pkg.sv and loom_cfg.h) and
// another -Mdir. R (= bytes per line), the scratchpad size and the bank
// count come from loom_cfg.h; the port widths are checked against them.
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vnpu_sp.h"
#include "verilated.h"

#include "loom_cfg.h"

namespace {

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint32_t rnd()
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}
uint32_t rnd(uint32_t n) { return n ? rnd() % n : 0; }

unsigned LB, LINES, BANKS, BANK_LINES;

// ---------------------------------------------------------------------------
// line <-> port conversion (IData / QData / VlWide, depending on 8*LB)
// ---------------------------------------------------------------------------
void to_port(uint32_t &p, const uint8_t *b)
{
	p = 0;
	for (unsigned i = 0; i < LB; i++) p |= (uint32_t)b[i] << (8 * i);
}
void to_port(uint64_t &p, const uint8_t *b)
{
	p = 0;
	for (unsigned i = 0; i < LB; i++) p |= (uint64_t)b[i] << (8 * i);
}
template <std::size_t N> void to_port(VlWide<N> &p, const uint8_t *b)
{
	for (std::size_t w = 0; w < N; w++) p[w] = 0;
	for (unsigned i = 0; i < LB; i++) p[i / 4] |= (uint32_t)b[i] << (8 * (i % 4));
}
uint8_t port_byte(const uint32_t &p, unsigned i) { return (uint8_t)(p >> (8 * i)); }
uint8_t port_byte(const uint64_t &p, unsigned i) { return (uint8_t)(p >> (8 * i)); }
template <std::size_t N> uint8_t port_byte(const VlWide<N> &p, unsigned i)
{
	return (uint8_t)(p[i / 4] >> (8 * (i % 4)));
}

// ---------------------------------------------------------------------------
// DUT, reference and per-cycle checker
// ---------------------------------------------------------------------------
// in priority order (the reference arbitration relies on it)
enum { ACT, WGT, ST, VW, LD, NCLI };
const char *const CLI_NAME[NCLI] = {"act", "wgt", "st", "vw", "ld"};
bool is_writer(int c) { return c == VW || c == LD; }

std::unique_ptr<VerilatedContext> ctx;
std::unique_ptr<Vnpu_sp> top;
std::vector<uint8_t> ref;   // LINES * LB bytes
std::vector<bool> known;    // line written through the DUT since start
uint64_t cycle;
unsigned errors;            // all mismatches so far
unsigned err_prints;

struct Req {
	bool req = false;
	unsigned addr = 0;
	std::vector<uint8_t> wdata; // vw and ld only
};
Req cur[NCLI];

// what the DUT must show after the coming edge
struct Expect {
	bool valid = false;
	bool check_data = false;
	unsigned addr = 0;
	std::vector<uint8_t> data;
};
Expect exp_rd[3];

// statistics (to report that the traffic exercised what it should)
uint64_t st_grants[NCLI], st_refusals, st_checked_reads, st_conf_hist[NCLI];

// grant and conflict seen in the last step (for directed expectations)
bool last_gnt[NCLI];
unsigned last_conf;

void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err(const char *fmt, ...)
{
	errors++;
	if (err_prints++ >= 20) return;
	va_list ap;
	va_start(ap, fmt);
	std::printf("  ERROR cycle %" PRIu64 ": ", cycle);
	std::vprintf(fmt, ap);
	std::printf("\n");
	va_end(ap);
}

unsigned bank_of(unsigned line) { return line / BANK_LINES; }

void drive()
{
	top->act_req_i = cur[ACT].req;
	top->act_addr_i = cur[ACT].addr;
	top->wgt_req_i = cur[WGT].req;
	top->wgt_addr_i = cur[WGT].addr;
	top->st_req_i = cur[ST].req;
	top->st_addr_i = cur[ST].addr;
	top->vw_req_i = cur[VW].req;
	top->vw_addr_i = cur[VW].addr;
	if (cur[VW].wdata.size() == LB) to_port(top->vw_wdata_i, cur[VW].wdata.data());
	top->ld_req_i = cur[LD].req;
	top->ld_addr_i = cur[LD].addr;
	if (cur[LD].wdata.size() == LB) to_port(top->ld_wdata_i, cur[LD].wdata.data());
}

template <class T> void check_read(int c, bool rvalid, const T &rdata)
{
	const Expect &e = exp_rd[c];
	if (rvalid != e.valid) {
		err("%s_rvalid_o=%d, expected %d", CLI_NAME[c], rvalid, e.valid);
		return;
	}
	if (!e.valid || !e.check_data) return;
	st_checked_reads++;
	for (unsigned i = 0; i < LB; i++)
		if (port_byte(rdata, i) != e.data[i]) {
			err("%s_rdata_o line %u byte %u = 0x%02x, expected 0x%02x", CLI_NAME[c], e.addr,
			    i, port_byte(rdata, i), e.data[i]);
			return;
		}
}

// One clock cycle with the requests in cur[]: check the registered outputs
// (from the previous grant), the combinational grants and conflicts, update
// the reference, clock. Refused requests stay in cur[] (the caller decides
// what a granted client does next).
void step()
{
	drive();
	top->clk_i = 0;
	top->eval();

	// read return of the previous cycle's grants
	check_read(ACT, top->act_rvalid_o, top->act_rdata_o);
	check_read(WGT, top->wgt_rvalid_o, top->wgt_rdata_o);
	check_read(ST, top->st_rvalid_o, top->st_rdata_o);

	// reference arbitration: per bank the highest-priority requester wins
	bool want[NCLI];
	unsigned conf = 0;
	for (int c = 0; c < NCLI; c++) {
		want[c] = cur[c].req;
		for (int h = 0; h < c; h++)
			if (cur[h].req && bank_of(cur[h].addr) == bank_of(cur[c].addr)) want[c] = false;
		if (cur[c].req && !want[c]) conf++;
	}
	bool got[NCLI] = {(bool)top->act_gnt_o, (bool)top->wgt_gnt_o, (bool)top->st_gnt_o,
	                  (bool)top->vw_gnt_o, (bool)top->ld_gnt_o};
	for (int c = 0; c < NCLI; c++)
		if (got[c] != want[c])
			err("%s_gnt_o=%d, expected %d (req act=%d@%u wgt=%d@%u st=%d@%u vw=%d@%u "
			    "ld=%d@%u)",
			    CLI_NAME[c], got[c], want[c], cur[ACT].req, cur[ACT].addr, cur[WGT].req,
			    cur[WGT].addr, cur[ST].req, cur[ST].addr, cur[VW].req, cur[VW].addr,
			    cur[LD].req, cur[LD].addr);
	// independent structural check on the DUT's own grants
	for (int a = 0; a < NCLI; a++)
		for (int b = a + 1; b < NCLI; b++)
			if (got[a] && got[b] && bank_of(cur[a].addr) == bank_of(cur[b].addr))
				err("%s and %s both granted on bank %u", CLI_NAME[a], CLI_NAME[b],
				    bank_of(cur[a].addr));
	for (int c = 0; c < NCLI; c++)
		if (got[c] && !cur[c].req) err("%s granted without a request", CLI_NAME[c]);
	if (top->conflicts_o != conf)
		err("conflicts_o=%u, expected %u", (unsigned)top->conflicts_o, conf);

	// statistics and directed-case hooks
	for (int c = 0; c < NCLI; c++) {
		last_gnt[c] = got[c];
		if (want[c]) st_grants[c]++;
	}
	st_refusals += conf;
	st_conf_hist[conf]++;
	last_conf = top->conflicts_o;

	// reference access at this edge (reads and writes cannot share a bank, and
	// the two writers are never granted on one bank)
	for (int c = ACT; c <= ST; c++) {
		Expect &e = exp_rd[c];
		e.valid = want[c];
		e.check_data = want[c] && known[cur[c].addr];
		e.addr = cur[c].addr;
		if (want[c]) e.data.assign(&ref[cur[c].addr * LB], &ref[cur[c].addr * LB] + LB);
	}
	for (int c : {VW, LD})
		if (want[c]) {
			std::memcpy(&ref[cur[c].addr * LB], cur[c].wdata.data(), LB);
			known[cur[c].addr] = true;
		}

	top->clk_i = 1;
	top->eval();
	top->clk_i = 0;
	top->eval();
	cycle++;
}

// run until every current request has been granted (directed cases)
void drain(unsigned limit = 100)
{
	for (unsigned i = 0; i < limit; i++) {
		bool any = false;
		for (int c = 0; c < NCLI; c++) any |= cur[c].req;
		if (!any) return;
		step();
		for (int c = 0; c < NCLI; c++)
			if (last_gnt[c]) cur[c].req = false;
	}
	err("requests not granted within %u cycles", limit);
}

void idle(unsigned n = 1)
{
	for (int c = 0; c < NCLI; c++) cur[c].req = false;
	for (unsigned i = 0; i < n; i++) step();
}

void set_read(int c, unsigned addr)
{
	cur[c].req = true;
	cur[c].addr = addr;
}
// a write of random data by writer c (VW or LD)
void set_write(int c, unsigned addr)
{
	cur[c].req = true;
	cur[c].addr = addr;
	cur[c].wdata.resize(LB);
	for (unsigned i = 0; i < LB; i++) cur[c].wdata[i] = (uint8_t)rnd();
}
int any_writer() { return rnd(2) ? VW : LD; }

void reset()
{
	top->rst_ni = 0;
	for (int c = 0; c < NCLI; c++) cur[c].req = false;
	drive();
	top->clk_i = 0;
	top->eval();
	for (int i = 0; i < 3; i++) {
		top->clk_i = 1;
		top->eval();
		top->clk_i = 0;
		top->eval();
	}
	top->rst_ni = 1;
	top->eval();
	for (auto &e : exp_rd) e.valid = false;
}

// ---------------------------------------------------------------------------
// cases
// ---------------------------------------------------------------------------
unsigned n_pass, n_fail;

void report(const std::string &name, unsigned err0, const std::string &extra = "")
{
	bool ok = errors == err0;
	std::printf("%-44s %s%s%s\n", name.c_str(), ok ? "PASS" : "FAIL", extra.empty() ? "" : "  ",
	            extra.c_str());
	(ok ? n_pass : n_fail)++;
	err_prints = 0;
}

void expect_grants(const char *what, bool a, bool w, bool s, bool v, bool l, unsigned conf)
{
	bool e[NCLI] = {a, w, s, v, l};
	for (int c = 0; c < NCLI; c++)
		if (last_gnt[c] != e[c])
			err("%s: %s_gnt=%d, directed expectation %d", what, CLI_NAME[c], last_gnt[c], e[c]);
	if (last_conf != conf) err("%s: conflicts=%u, directed expectation %u", what, last_conf, conf);
}

// a line of each bank: first, last or random
unsigned line_in(unsigned bank, int which)
{
	if (which == 0) return bank * BANK_LINES;
	if (which == 1) return bank * BANK_LINES + BANK_LINES - 1;
	return bank * BANK_LINES + rnd(BANK_LINES);
}

// fill the whole scratchpad through one writer, then read it all back
void case_fill(int wr)
{
	unsigned e0 = errors;
	for (unsigned l = 0; l < LINES; l++) {
		idle(0);
		set_write(wr, l);
		drain(2);
	}
	// read everything back, three readers on three consecutive lines (mostly one bank)
	unsigned checked0 = st_checked_reads;
	for (unsigned l = 0; l < LINES; l += 3) {
		for (int c = ACT; c <= ST; c++)
			if (l + c < LINES) set_read(c, l + c);
		drain(4);
	}
	idle(2);
	report(std::string("fill whole scratchpad via ") + CLI_NAME[wr] + ", read back", e0,
	       std::to_string(st_checked_reads - checked0) + " lines checked");
}

void case_bank_readback()
{
	unsigned e0 = errors;
	for (unsigned b = 0; b < BANKS; b++) {
		unsigned lines[4] = {line_in(b, 0), line_in(b, 1), line_in(b, 2), line_in(b, 2)};
		for (unsigned i = 0; i < 4; i++) {
			set_write(i % 2 ? LD : VW, lines[i]); // both writers on every bank
			drain(2);
		}
		// read back by each reader; the same line read right after its write too
		for (unsigned i = 0; i < 4; i++)
			for (int c = ACT; c <= ST; c++) {
				set_read(c, lines[i]);
				drain(2);
			}
	}
	idle(2);
	report("write-then-read-back of every bank", e0);
}

void case_edges()
{
	unsigned e0 = errors;
	// first and last line of the whole scratchpad, and of each bank,
	// written (by vw or ld) and read back with back-to-back write -> read of
	// the same line
	std::vector<unsigned> ls = {0, LINES - 1};
	for (unsigned b = 0; b < BANKS; b++) {
		ls.push_back(line_in(b, 0));
		ls.push_back(line_in(b, 1));
	}
	for (int wr : {VW, LD})
		for (unsigned l : ls) {
			set_write(wr, l);
			drain(2);
			set_read((int)rnd(3), l);
			drain(2);
		}
	// all three readers on the first/last lines of different banks at once
	for (unsigned b = 0; b < BANKS; b++) {
		set_read(ACT, line_in(b, 0));
		set_read(WGT, line_in((b + 1) % BANKS, 1));
		set_read(ST, line_in((b + BANKS - 1) % BANKS, 1));
		drain(4);
	}
	idle(2);
	report("first/last lines of each bank and of SP", e0);
}

void case_all_one_bank()
{
	unsigned e0 = errors;
	for (unsigned b = 0; b < BANKS; b++)
		for (int same_line = 0; same_line < 2; same_line++) {
			unsigned la = line_in(b, 2);
			set_read(ACT, la);
			set_read(WGT, same_line ? la : line_in(b, 1));
			set_read(ST, same_line ? la : line_in(b, 0));
			set_write(VW, same_line ? la : line_in(b, 1));
			set_write(LD, same_line ? la : line_in(b, 2));
			step();
			expect_grants("all on one bank", true, false, false, false, false, 4);
			cur[ACT].req = false;
			step(); // act's data returns; wgt wins now
			expect_grants("all on one bank, 2nd", false, true, false, false, false, 3);
			cur[WGT].req = false;
			step();
			expect_grants("all on one bank, 3rd", false, false, true, false, false, 2);
			cur[ST].req = false;
			step();
			expect_grants("all on one bank, 4th", false, false, false, true, false, 1);
			cur[VW].req = false;
			// read vw's line back while ld still waits: act beats ld
			set_read(ACT, cur[VW].addr);
			step();
			expect_grants("all on one bank, vw read-back", true, false, false, false, false, 1);
			cur[ACT].req = false;
			step();
			expect_grants("all on one bank, 5th", false, false, false, false, true, 0);
			cur[LD].req = false;
			set_read(ACT, cur[LD].addr); // read ld's data back (over vw's if same line)
			drain(2);
			set_read(WGT, cur[VW].addr);
			drain(2);
		}
	idle(2);
	report("all five on one bank (act only, conflicts 4)", e0);
}

// as many clients as there are banks (at most all five) on distinct banks
void case_all_diff_banks()
{
	unsigned n = std::min<unsigned>(NCLI, BANKS);
	std::string name = n == NCLI ? "all five on different banks (0 conflicts)"
	                             : std::to_string(n) + " of five on different banks (0 conf.)";
	if (BANKS < 2) {
		std::printf("%-44s SKIP  (%u banks)\n", name.c_str(), BANKS);
		return;
	}
	unsigned e0 = errors;
	unsigned both_writers = 0;
	for (unsigned rep = 0; rep < 64; rep++) {
		// a random n-subset of the clients (all of them when BANKS >= 5) ...
		int cli[NCLI] = {ACT, WGT, ST, VW, LD};
		for (unsigned i = 0; i < NCLI; i++) std::swap(cli[i], cli[i + rnd(NCLI - i)]);
		// ... on n distinct banks
		std::vector<unsigned> pool;
		for (unsigned b = 0; b < BANKS; b++) pool.push_back(b);
		for (unsigned i = 0; i < n; i++) std::swap(pool[i], pool[i + rnd(BANKS - i)]);
		bool e[NCLI] = {};
		for (unsigned i = 0; i < n; i++) {
			int c = cli[i];
			unsigned l = line_in(pool[i], (int)rnd(3));
			if (is_writer(c)) set_write(c, l);
			else set_read(c, l);
			e[c] = true;
		}
		both_writers += e[VW] && e[LD];
		step();
		expect_grants("all on different banks", e[ACT], e[WGT], e[ST], e[VW], e[LD], 0);
		unsigned wl[2] = {cur[VW].addr, cur[LD].addr};
		for (int c = 0; c < NCLI; c++) cur[c].req = false;
		// read the written lines back
		if (e[VW]) set_read(ST, wl[0]);
		if (e[LD]) set_read(WGT, wl[1]);
		drain(2);
	}
	idle(2);
	report(name, e0, std::to_string(both_writers) + " reps with vw and ld writing together");
}

void case_wgt_vs_st()
{
	unsigned e0 = errors;
	for (unsigned b = 0; b < BANKS; b++)
		for (int rep = 0; rep < 4; rep++) {
			set_read(WGT, line_in(b, rep % 3));
			set_read(ST, line_in(b, (rep + 1) % 3));
			step();
			expect_grants("wgt vs st", false, true, false, false, false, 1);
			cur[WGT].req = false;
			step();
			expect_grants("wgt vs st, st held", false, false, true, false, false, 0);
			cur[ST].req = false;
			// and with act on another bank, a writer on the same bank as st
			if (BANKS >= 2) {
				set_read(ACT, line_in((b + 1) % BANKS, 2));
				set_read(WGT, line_in(b, 2));
				set_read(ST, line_in(b, 0));
				set_write(any_writer(), line_in(b, 1));
				step();
				expect_grants("wgt vs st + act/writer", true, true, false, false, false, 2);
				drain(4);
			}
		}
	idle(2);
	report("wgt vs st on the same bank", e0);
}

// vw refused by each of act, wgt, st on its bank; granted beside them on
// another bank
void case_vw_refused()
{
	unsigned e0 = errors;
	for (unsigned b = 0; b < BANKS; b++)
		for (int h = ACT; h <= ST; h++)
			for (int rep = 0; rep < 3; rep++) {
				bool e[NCLI] = {};
				e[h] = true;
				unsigned lv = line_in(b, rep);
				// rep 2: the reader on the very line vw writes
				set_read(h, rep == 2 ? lv : line_in(b, (rep + 1) % 3));
				set_write(VW, lv);
				step();
				expect_grants("vw vs reader, same bank", e[ACT], e[WGT], e[ST], false, false, 1);
				cur[h].req = false;
				step();
				expect_grants("vw vs reader, vw held", false, false, false, true, false, 0);
				cur[VW].req = false;
				set_read(h, lv); // the reader sees vw's data now
				drain(2);
				if (BANKS >= 2) {
					set_read(h, line_in((b + 1) % BANKS, rep));
					set_write(VW, line_in(b, rep));
					step();
					expect_grants("vw vs reader, other bank", e[ACT], e[WGT], e[ST], true, false,
					              0);
					for (int c = 0; c < NCLI; c++) cur[c].req = false;
					set_read(h, lv);
					drain(2);
				}
			}
	idle(2);
	report("vw refused by act/wgt/st on its bank", e0);
}

// vw beats ld on one bank (different lines, then the same line: ld's data
// must end up there); on different banks both write in the same cycle
void case_vw_vs_ld()
{
	unsigned e0 = errors;
	for (unsigned b = 0; b < BANKS; b++)
		for (int rep = 0; rep < 4; rep++) {
			unsigned lv = line_in(b, rep % 3), ll = rep >= 2 ? lv : line_in(b, (rep + 1) % 3);
			set_write(VW, lv);
			set_write(LD, ll);
			step();
			expect_grants("vw vs ld", false, false, false, true, false, 1);
			cur[VW].req = false;
			step();
			expect_grants("vw vs ld, ld held", false, false, false, false, true, 0);
			cur[LD].req = false;
			set_read(ACT, lv);
			set_read(WGT, ll);
			drain(4);
			if (BANKS >= 2) {
				unsigned ob = (b + 1 + rnd(BANKS - 1)) % BANKS;
				set_write(VW, line_in(b, rep % 3));
				set_write(LD, line_in(ob, rep % 3));
				step();
				expect_grants("vw and ld, different banks", false, false, false, true, true, 0);
				unsigned l0 = cur[VW].addr, l1 = cur[LD].addr;
				for (int c = 0; c < NCLI; c++) cur[c].req = false;
				set_read(ACT, l0);
				set_read(ST, l1);
				drain(2);
			}
		}
	idle(2);
	report("vw beats ld on the same bank", e0);
}

// random traffic. mode: 0 uniform, 1 forced same bank, 2 forced different
// banks, 3 edge lines, 4 re-read recently written lines, 5 mixture
const char *const MODE_NAME[] = {"uniform", "same bank", "different banks", "edge lines",
                                 "re-read written lines", "mixture"};
std::vector<unsigned> recent_writes;

unsigned pick_line(int mode, unsigned bank)
{
	switch (mode) {
	case 1:
	case 2: return line_in(bank, rnd(4) == 0 ? (int)rnd(2) : 2);
	case 3: {
		unsigned r = rnd(4);
		if (r == 0) return rnd(2) ? 0 : LINES - 1;
		return line_in(rnd(BANKS), r == 1 ? 0 : r == 2 ? 1 : (int)rnd(3));
	}
	case 4:
		if (!recent_writes.empty() && rnd(4) != 0)
			return recent_writes[recent_writes.size() - 1 - rnd(std::min<unsigned>(
			                                                     8, (unsigned)recent_writes.size()))];
		return rnd(LINES);
	default: return rnd(LINES);
	}
}

void case_random(int mode, unsigned ncycles)
{
	unsigned e0 = errors;
	uint64_t g0[NCLI], r0 = st_refusals, chk0 = st_checked_reads;
	std::memcpy(g0, st_grants, sizeof g0);
	unsigned hold_errs = 0;
	unsigned p_req = 40 + rnd(60); // request probability in percent
	for (unsigned t = 0; t < ncycles; t++) {
		int m = mode == 5 ? (int)rnd(5) : mode;
		// banks for this cycle's new requests
		unsigned bsame = rnd(BANKS);
		std::vector<unsigned> pool;
		for (unsigned b = 0; b < BANKS; b++) pool.push_back(b);
		for (unsigned i = 0; i < BANKS; i++) std::swap(pool[i], pool[i + rnd(BANKS - i)]);
		for (int c = 0; c < NCLI; c++) {
			if (cur[c].req) continue; // refused: hold (same addr, same data)
			if (rnd(100) >= p_req) continue;
			unsigned bank = m == 1 ? bsame : m == 2 ? pool[c % BANKS] : rnd(BANKS);
			unsigned l = pick_line(m, bank);
			if (is_writer(c)) {
				set_write(c, l);
				recent_writes.push_back(l);
				if (recent_writes.size() > 64) recent_writes.erase(recent_writes.begin());
			} else {
				set_read(c, l);
			}
		}
		Req before[NCLI];
		for (int c = 0; c < NCLI; c++) before[c] = cur[c];
		step();
		for (int c = 0; c < NCLI; c++) {
			if (last_gnt[c]) cur[c].req = false;
			else if (before[c].req && (!cur[c].req || cur[c].addr != before[c].addr ||
			                           (is_writer(c) && cur[c].wdata != before[c].wdata)))
				hold_errs++; // tb self-check: a refused client must hold
		}
	}
	drain(200);
	idle(2);
	if (hold_errs) err("testbench did not hold %u refused requests", hold_errs);
	char buf[200];
	std::snprintf(buf, sizeof buf,
	              "%u cycles, p=%u%%, grants a/w/s/v/l %" PRIu64 "/%" PRIu64 "/%" PRIu64
	              "/%" PRIu64 "/%" PRIu64 ", refusals %" PRIu64 ", data checks %" PRIu64,
	              ncycles, p_req, st_grants[ACT] - g0[ACT], st_grants[WGT] - g0[WGT],
	              st_grants[ST] - g0[ST], st_grants[VW] - g0[VW], st_grants[LD] - g0[LD],
	              st_refusals - r0, st_checked_reads - chk0);
	report(std::string("random: ") + MODE_NAME[mode], e0, buf);
}

} // namespace

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1;
	unsigned rcycles = argc > 2 ? (unsigned)std::strtoul(argv[2], nullptr, 0) : 20000;
	rng_state ^= seed * 0x2545f4914f6cdd1dull;
	if (!rng_state) rng_state = 1;
	for (int i = 0; i < 10; i++) rnd();

	LB = LOOM_CFG_ARRAY_ROWS;
	LINES = LOOM_CFG_SP_BYTES / LB;
	BANKS = LOOM_CFG_SP_BANKS;
	BANK_LINES = LINES / BANKS;

	ctx = std::make_unique<VerilatedContext>();
	ctx->commandArgs(argc, argv);
	top = std::make_unique<Vnpu_sp>(ctx.get());

	std::printf("sp_tb: config %s, %u lines of %u bytes, %u banks of %u lines, seed %" PRIu64
	            "\n",
	            LOOM_CFG_NAME, LINES, LB, BANKS, BANK_LINES, seed);
	// the port widths must match the header's line size
	if (sizeof(top->act_rdata_o) * 8 < 8 * LB || sizeof(top->act_rdata_o) * 8 >= 8 * LB + 32 ||
	    sizeof(top->vw_wdata_i) != sizeof(top->act_rdata_o) ||
	    sizeof(top->ld_wdata_i) != sizeof(top->act_rdata_o) || BANK_LINES * BANKS != LINES ||
	    (BANK_LINES & (BANK_LINES - 1))) {
		std::printf("config mismatch: rdata %zu bytes, line %u bytes, bank lines %u\n",
		            sizeof(top->act_rdata_o), LB, BANK_LINES);
		std::printf("0 passed, 1 failed\n");
		return 1;
	}

	ref.assign((size_t)LINES * LB, 0);
	known.assign(LINES, false);
	reset();

	case_fill(LD);
	case_fill(VW);
	case_bank_readback();
	case_edges();
	case_all_one_bank();
	case_all_diff_banks();
	case_wgt_vs_st();
	case_vw_refused();
	case_vw_vs_ld();
	for (int m = 0; m < 6; m++) case_random(m, rcycles);

	// the traffic must actually have produced every conflict count
	unsigned e0 = errors;
	for (unsigned k = 0; k < NCLI; k++)
		if (!st_conf_hist[k]) err("no cycle with %u conflicts was exercised", k);
	char buf[160];
	std::snprintf(buf, sizeof buf,
	              "conflict histogram 0:%" PRIu64 " 1:%" PRIu64 " 2:%" PRIu64 " 3:%" PRIu64
	              " 4:%" PRIu64,
	              st_conf_hist[0], st_conf_hist[1], st_conf_hist[2], st_conf_hist[3],
	              st_conf_hist[4]);
	report("coverage: conflicts 0..4 all seen", e0, buf);

	top->final();
	std::printf("%u passed, %u failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
