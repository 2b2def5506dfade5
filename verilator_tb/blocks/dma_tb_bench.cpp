// dma_tb_bench.cpp - the DMA block test's bench (dma_tb.h): dma_tb_top
// driven one clock cycle at a time, the behavioural DRAM (AXI slave with
// random ready, latency and valid gaps), the SP and ACC clients, the
// reference run at each done_o and compared, and every per-cycle check the
// opening comment of dma_tb.cpp lists.
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "dma_tb.h"

namespace dma_tb {

namespace {

// ------------------------------------------------------------ port helpers
template <typename T> void put(T &s, const uint8_t *b, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n && i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	s = (T)v;
}
template <std::size_t W> void put(VlWide<W> &s, const uint8_t *b, unsigned n)
{
	for (std::size_t w = 0; w < W; w++) {
		uint32_t v = 0;
		for (unsigned i = 0; i < 4; i++)
			if (4 * w + i < n)
				v |= (uint32_t)b[4 * w + i] << (8 * i);
		s[w] = v;
	}
}
template <typename T> void get(const T &s, uint8_t *b, unsigned n)
{
	uint64_t v = (uint64_t)s;
	for (unsigned i = 0; i < n; i++)
		b[i] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
}
template <std::size_t W> void get(const VlWide<W> &s, uint8_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b[i] = i / 4 < W ? (uint8_t)(s[i / 4] >> (8 * (i % 4))) : 0;
}
template <typename T> void sig_add(std::vector<uint8_t> &v, const T &s)
{
	uint8_t b[8];
	get(s, b, sizeof(T));
	v.insert(v.end(), b, b + sizeof(T));
}
template <std::size_t W> void sig_add(std::vector<uint8_t> &v, const VlWide<W> &s)
{
	for (std::size_t w = 0; w < W; w++)
		for (int i = 0; i < 4; i++)
			v.push_back((uint8_t)(s[w] >> (8 * i)));
}

} // namespace

// ------------------------------------------------------------ the bench
void Bench::error(const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	errors.push_back(std::string("cycle ") + std::to_string(now) + ": " + b);
}

void Bench::reset()
{
	top->clk_i = 0;
	top->rst_ni = 0;
	zero_inputs();
	top->eval();
	for (int i = 0; i < 3; i++) {
		top->clk_i = 1;
		top->eval();
		top->clk_i = 0;
		top->eval();
	}
	top->rst_ni = 1;
	top->eval();
}

void Bench::zero_inputs()
{
	uint8_t z[256] = {0};
	top->ld_insn_valid_i = 0;
	put(top->ld_insn_i, z, 32);
	top->ld_abort_i = 0;
	top->ld_ar_ready_i = 0;
	top->ld_r_valid_i = 0;
	put(top->ld_r_data_i, z, B);
	top->ld_r_last_i = 0;
	top->ld_sp_gnt_i = 0;
	top->st_insn_valid_i = 0;
	put(top->st_insn_i, z, 32);
	top->st_abort_i = 0;
	top->st_aw_ready_i = 0;
	top->st_w_ready_i = 0;
	top->st_b_valid_i = 0;
	top->st_sp_gnt_i = 0;
	top->st_sp_rvalid_i = 0;
	put(top->st_sp_rdata_i, z, R);
	put(top->st_acc_rdata_i, z, 4 * C);
	put(top->st_ctr_snapshot_i, z, 4 * NCTR);
}

std::vector<uint8_t> Bench::out_sig()
{
	std::vector<uint8_t> v;
	sig_add(v, top->ld_insn_ready_o);
	sig_add(v, top->ld_done_o);
	sig_add(v, top->ld_busy_o);
	sig_add(v, top->ld_ar_valid_o);
	sig_add(v, top->ld_ar_addr_o);
	sig_add(v, top->ld_ar_len_o);
	sig_add(v, top->ld_r_ready_o);
	sig_add(v, top->ld_sp_req_o);
	sig_add(v, top->ld_sp_we_o);
	sig_add(v, top->ld_sp_addr_o);
	sig_add(v, top->ld_sp_wdata_o);
	sig_add(v, top->ld_acc_we_o);
	sig_add(v, top->ld_acc_addr_o);
	sig_add(v, top->ld_acc_wdata_o);
	sig_add(v, top->st_insn_ready_o);
	sig_add(v, top->st_done_o);
	sig_add(v, top->st_busy_o);
	sig_add(v, top->st_aw_valid_o);
	sig_add(v, top->st_aw_addr_o);
	sig_add(v, top->st_aw_len_o);
	sig_add(v, top->st_w_valid_o);
	sig_add(v, top->st_w_data_o);
	sig_add(v, top->st_w_strb_o);
	sig_add(v, top->st_w_last_o);
	sig_add(v, top->st_b_ready_o);
	sig_add(v, top->st_sp_req_o);
	sig_add(v, top->st_sp_addr_o);
	sig_add(v, top->st_acc_re_o);
	sig_add(v, top->st_acc_addr_o);
	return v;
}

void Bench::garbage(uint8_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

// the command processor's rule, in the bench: an instruction that will be
// aborted runs alone unless marked overlap
bool Bench::may_offer(const Drv &d)
{
	if (d.aborting)
		return false;
	for (auto &h : d.held)
		if (h.it.abort_after >= 0 && !h.it.overlap)
			return false;
	return !(d.next.abort_after >= 0 && !d.next.overlap && !d.held.empty());
}

// offer instructions / abort for one engine (before eval)
void Bench::drive(Drv &d, bool busy)
{
	if (!d.have_next && !d.q.empty()) {
		d.next = d.q.front();
		d.q.pop_front();
		d.have_next = true;
		d.gap = d.next.gap;
	}
	bool valid = false;
	if (d.have_next) {
		if (d.gap > 0)
			d.gap--;
		else
			valid = may_offer(d);
	}
	d.abort_now = false;
	if (busy)
		for (auto &h : d.held) {
			long t = now - h.acc_cycle;
			if (h.it.abort_after >= 0 && (t == h.it.abort_after || (h.it.abort_level && d.aborting)))
				d.abort_now = true;
		}
	uint8_t ib[32];
	if (valid)
		memcpy(ib, d.next.in.w, 32);
	else
		garbage(ib, 32);
	if (d.store) {
		top->st_insn_valid_i = valid;
		put(top->st_insn_i, ib, 32);
		top->st_abort_i = d.abort_now;
	} else {
		top->ld_insn_valid_i = valid;
		put(top->ld_insn_i, ib, 32);
		top->ld_abort_i = d.abort_now;
	}
}

bool Bench::mem_equal(const Mem &a, const Mem &b, bool store, std::string &what)
{
	if (store) {
		if (commit != b.dram) {
			for (size_t i = 0; i < commit.size(); i++)
				if (commit[i] != b.dram[i]) {
					char s[128];
					snprintf(s, sizeof s, "DRAM[0x%zx] = 0x%02x, expected 0x%02x", i, commit[i], b.dram[i]);
					what = s;
					break;
				}
			return false;
		}
	} else {
		if (a.sp != b.sp) {
			for (size_t i = 0; i < a.sp.size(); i++)
				if (a.sp[i] != b.sp[i]) {
					char s[128];
					snprintf(s, sizeof s, "SP line %zu byte %zu = 0x%02x, expected 0x%02x", i / R, i % R,
						 a.sp[i], b.sp[i]);
					what = s;
					break;
				}
			return false;
		}
		if (a.acc != b.acc) {
			for (size_t i = 0; i < a.acc.size(); i++)
				if (a.acc[i] != b.acc[i]) {
					char s[128];
					snprintf(s, sizeof s, "ACC line %zu word %zu = 0x%08x, expected 0x%08x", i / C, i % C,
						 a.acc[i], b.acc[i]);
					what = s;
					break;
				}
			return false;
		}
	}
	return true;
}

void Bench::snapshot(Drv &d)
{
	if (snapshots && !d.store) {
		d.pre.sp = rtl.sp;
		d.pre.acc = rtl.acc;
	}
}

// apply the logged DRAM writes of store instruction seq to commit
void Bench::commit_writes(long seq)
{
	auto it = wlog.find(seq);
	if (it == wlog.end())
		return;
	for (auto &w : it->second)
		commit[w.first] = w.second;
	wlog.erase(it);
}

// everything the engine held was aborted and it is idle again: each unit
// is untouched or holds a value one of the aborted instructions writes
// there (rows may overlap); then resync the reference
void Bench::check_abort(Drv &d)
{
	if (d.store) {
		std::map<uint32_t, std::vector<uint8_t>> ok;
		Mem tmp;
		tmp.dram.assign(DRAM_WIN, 0);
		tmp.sp = ref.sp;
		tmp.acc = ref.acc;
		for (auto &h : d.held) {
			std::vector<std::pair<uint32_t, uint8_t>> wr;
			ref_store(tmp, h.it.in, h.rec, &wr);
			for (auto &w : wr)
				ok[w.first].push_back(w.second);
		}
		for (auto &h : d.held) {
			auto it = wlog.find(h.seq);
			if (it == wlog.end())
				continue;
			for (auto &w : it->second) {
				auto o = ok.find(w.first);
				bool good = false;
				if (o != ok.end())
					for (uint8_t v : o->second)
						good |= v == w.second;
				if (!good) {
					error("store abort: DRAM[0x%x] written 0x%02x, not a value of any aborted row",
					      w.first, w.second);
					break;
				}
			}
			commit_writes(h.seq);
		}
		ref.dram = commit;
		if (!awq.empty() || !bq.empty() || top->st_aw_valid_o || top->st_w_valid_o)
			error("store abort: idle with the bus not quiet");
	} else {
		std::vector<Mem> post;
		for (auto &h : d.held) {
			Mem m;
			m.dram = ref.dram;
			m.sp = d.pre.sp;
			m.acc = d.pre.acc;
			ref_load(m, h.it.in);
			post.push_back(std::move(m));
		}
		for (size_t l = 0; l < cfg.sp_lines; l++) {
			bool good = !memcmp(&rtl.sp[l * R], &d.pre.sp[l * R], R);
			for (auto &m : post)
				good |= !memcmp(&rtl.sp[l * R], &m.sp[l * R], R);
			if (!good) {
				error("load abort: SP line %zu is neither old nor new", l);
				break;
			}
		}
		for (size_t l = 0; l < cfg.acc_lines; l++) {
			bool good = !memcmp(&rtl.acc[l * C], &d.pre.acc[l * C], 4 * C);
			for (auto &m : post)
				good |= !memcmp(&rtl.acc[l * C], &m.acc[l * C], 4 * C);
			if (!good) {
				error("load abort: ACC line %zu is neither old nor new", l);
				break;
			}
		}
		ref.sp = rtl.sp;
		ref.acc = rtl.acc;
		if (!rq.empty() || top->ld_ar_valid_o)
			error("load abort: idle with reads outstanding");
	}
	d.abort_count += (long)d.held.size();
	if (d.held.size() == 2)
		cov.abort_two++;
	d.held.clear();
	d.expect.clear();
	d.aborting = false;
}

// accept / done / abort bookkeeping for one engine (after eval, before
// this cycle's memory writes take effect)
void Bench::track(Drv &d, bool valid, bool ready, bool done, bool busy)
{
	if (done) {
		if (d.held.empty()) {
			error("%s: done_o without an instruction", d.name);
		} else if (d.aborting) {
			error("%s: done_o after abort", d.name);
		} else {
			Held h = d.held.front();
			d.held.pop_front();
			if (!d.expect.empty() && d.expect.front().seq <= h.seq)
				error("%s: done_o with bursts never issued", d.name);
			if (d.store) {
				if ((!awq.empty() && awq.front().seq <= h.seq) || (!bq.empty() && bq.front().seq <= h.seq))
					error("store: done_o with writes of the instruction outstanding");
				ref_store(ref, h.it.in, h.rec);
				commit_writes(h.seq);
			} else {
				if (!rq.empty() && rq.front().seq <= h.seq)
					error("load: done_o with reads of the instruction outstanding");
				ref_load(ref, h.it.in);
			}
			std::string what;
			if (!mem_equal(rtl, ref, d.store, what)) {
				char dis[256];
				disasm(h.it.in, dis, sizeof dis);
				error("%s mismatch after %s: %s", d.name, dis, what.c_str());
				// resync so that one bug reports once
				if (d.store)
					ref.dram = commit;
				else {
					ref.sp = rtl.sp;
					ref.acc = rtl.acc;
				}
			}
			d.done_count++;
			d.last_done = now;
			if (!d.held.empty())
				snapshot(d);
		}
	}
	if (d.aborting && !busy)
		check_abort(d);
	if (!d.aborting) {
		if (busy != !d.held.empty())
			error("%s: busy_o %d while holding %zu instructions", d.name, busy, d.held.size());
		if (ready && d.held.size() >= 2)
			error("%s: insn_ready_o while holding two instructions", d.name);
		if (!d.store && !ready && d.held.size() < 2)
			error("load: insn_ready_o low while holding %zu instructions", d.held.size());
	}
	if (d.abort_now)
		d.aborting = true;
	if (valid && ready) {
		if (!d.have_next || d.gap > 0)
			error("%s: accepted an instruction that was not offered", d.name);
		if (d.held.size() >= 2)
			error("%s: accepted a third instruction", d.name);
		Held h;
		h.it = d.next;
		h.seq = d.next_seq++;
		h.acc_cycle = now;
		d.have_next = false;
		if (d.first_accept < 0)
			d.first_accept = now;
		if (d.store) {
			// the MARK record: snapshot of the counters at accept
			memset(h.rec, 0, 64);
			uint32_t id = loom_insn_get(&h.it.in, LOOM_F_MARK_MARK_ID);
			memcpy(h.rec, &id, 4);
			memcpy(h.rec + 4, ctr_now.data(), 4 * NCTR);
			st_bursts(h.it.in, h.seq, d.expect);
		} else {
			ld_bursts(h.it.in, h.seq, d.expect);
		}
		if (d.held.empty())
			snapshot(d);
		else
			(d.store ? cov.overlap_st : cov.overlap_ld)++;
		d.held.push_back(h);
		d.max_held = std::max(d.max_held, d.held.size());
	}
}

// one clock cycle
void Bench::cycle()
{
	// 1. outputs of the registers (inputs still those of the last cycle)
	top->eval();
	std::vector<uint8_t> sig0 = out_sig();

	// 2. inputs of this cycle
	drive(ld, top->ld_busy_o);
	drive(st, top->st_busy_o);
	uint8_t buf[512];
	// read channel
	top->ld_ar_ready_i = chance(prof.p_ar);
	bool rv = false;
	if (!rq.empty() && now >= rq.front().t && (r_hold || chance(prof.p_r))) {
		RB &h = rq.front();
		rv = true;
		r_hold = true;
		memcpy(buf, &rtl.dram[h.addr + h.beat * B], B);
		put(top->ld_r_data_i, buf, B);
		top->ld_r_last_i = h.beat == h.len;
	} else {
		garbage(buf, B);
		put(top->ld_r_data_i, buf, B);
		top->ld_r_last_i = rnd() & 1;
	}
	top->ld_r_valid_i = rv;
	// write channels
	top->st_aw_ready_i = chance(prof.p_aw);
	top->st_w_ready_i = chance(prof.p_w);
	bool bv = !bq.empty() && now >= bq.front().t && (b_hold || chance(prof.p_b));
	if (bv)
		b_hold = true;
	top->st_b_valid_i = bv;
	// scratchpad: grants, read data of last cycle's grant
	bool ld_gnt = top->ld_sp_req_o && chance(prof.p_gnt);
	bool st_gnt = top->st_sp_req_o && chance(prof.p_gnt);
	top->ld_sp_gnt_i = ld_gnt;
	top->st_sp_gnt_i = st_gnt;
	top->st_sp_rvalid_i = sp_rd_pend;
	if (sp_rd_pend) {
		put(top->st_sp_rdata_i, sp_rd_line.data(), R);
	} else {
		garbage(buf, R);
		put(top->st_sp_rdata_i, buf, R);
	}
	if (acc_rd_pend) {
		put(top->st_acc_rdata_i, acc_rd_line.data(), 4 * C);
	} else {
		garbage(buf, 4 * C);
		put(top->st_acc_rdata_i, buf, 4 * C);
	}
	ctr_now.resize(4 * NCTR);
	garbage(ctr_now.data(), 4 * NCTR);
	put(top->st_ctr_snapshot_i, ctr_now.data(), 4 * NCTR);
	top->eval();

	// 3. no combinational path from this cycle's inputs to any output
	if (out_sig() != sig0)
		error("an output changed with the inputs of the same cycle");

	// 4. handshakes and model updates (they take effect at the edge)
	checks_and_models(ld_gnt, st_gnt, rv, bv);

	// 5. clock edge
	top->clk_i = 1;
	top->eval();
	top->clk_i = 0;
	top->eval();
	now++;
}

void Bench::checks_and_models(bool ld_gnt, bool st_gnt, bool rv, bool bv)
{
	// --- instruction ports (done_o reflects the writes of earlier cycles)
	track(ld, top->ld_insn_valid_i, top->ld_insn_ready_o, top->ld_done_o, top->ld_busy_o);
	track(st, top->st_insn_valid_i, top->st_insn_ready_o, top->st_done_o, top->st_busy_o);
	check_load(ld_gnt, rv);
	check_store_reads(st_gnt);
	check_store_bus(bv);
}

// the load engine: AR, R, its SP / ACC writes
void Bench::check_load(bool ld_gnt, bool rv)
{
	uint8_t buf[512];
	// --- AR
	bool arv = top->ld_ar_valid_o, arr = top->ld_ar_ready_i;
	uint32_t ara = top->ld_ar_addr_o, arl = top->ld_ar_len_o;
	if (p_ar_v && !p_ar_r && (!arv || ara != p_ar_addr || arl != p_ar_len))
		error("AR changed before it was accepted");
	if (arv && arr) {
		long seq = -1;
		if (ara % B)
			error("AR address 0x%x not beat aligned", ara);
		if (ld.expect.empty()) {
			error("unexpected AR 0x%x len %u", ara, arl);
		} else {
			const Burst &e = ld.expect.front();
			seq = e.seq;
			if (e.addr != ara || e.len != arl)
				error("AR 0x%x len %u, expected 0x%x len %u", ara, arl, e.addr, e.len);
			ld.expect.pop_front();
		}
		if (ara + (arl + 1) * B > DRAM_WIN)
			error("AR outside the modelled DRAM");
		else
			rq.push_back({ara, arl, 0, now + (long)rr(prof.lat_min, prof.lat_max), seq});
		if (rq.size() > cfg.dma_outstanding)
			error("%zu read bursts in flight, more than DmaOutstanding = %u", rq.size(),
			      cfg.dma_outstanding);
	}
	p_ar_v = arv, p_ar_r = arr, p_ar_addr = ara, p_ar_len = arl;
	// --- R
	if (rv && top->ld_r_ready_o) {
		RB &h = rq.front();
		ld_beats++;
		r_hold = false;
		if (++h.beat > h.len)
			rq.pop_front();
	}
	// --- load SP / ACC writes
	{
		std::vector<uint8_t> s;
		sig_add(s, top->ld_sp_addr_o);
		sig_add(s, top->ld_sp_wdata_o);
		if (p_ldsp_req && !p_ldsp_gnt && !ld.aborting && (!top->ld_sp_req_o || s != p_ldsp_sig))
			error("load SP request dropped or changed before its grant");
		p_ldsp_req = top->ld_sp_req_o;
		p_ldsp_gnt = ld_gnt;
		p_ldsp_sig = s;
	}
	if (ld_gnt) {
		if (!top->ld_sp_we_o)
			error("load SP request without we");
		uint32_t l = top->ld_sp_addr_o;
		if (l >= cfg.sp_lines)
			error("load SP line %u out of range", l);
		else
			get(top->ld_sp_wdata_o, &rtl.sp[l * R], R);
	}
	if (top->ld_acc_we_o) {
		uint32_t l = top->ld_acc_addr_o;
		if (l >= cfg.acc_lines)
			error("load ACC line %u out of range", l);
		else {
			get(top->ld_acc_wdata_o, buf, 4 * C);
			memcpy(&rtl.acc[l * C], buf, 4 * C);
		}
	}
}

// the store engine's SP / ACC reads
void Bench::check_store_reads(bool st_gnt)
{
	if (p_stsp_req && !p_stsp_gnt && !st.aborting &&
	    (!top->st_sp_req_o || (uint32_t)top->st_sp_addr_o != p_stsp_addr))
		error("store SP request dropped or changed before its grant");
	p_stsp_req = top->st_sp_req_o;
	p_stsp_gnt = st_gnt;
	p_stsp_addr = top->st_sp_addr_o;
	sp_rd_pend = st_gnt;
	if (st_gnt) {
		uint32_t l = top->st_sp_addr_o;
		sp_rd_line.assign(R, 0);
		if (l >= cfg.sp_lines)
			error("store SP line %u out of range", l);
		else
			memcpy(sp_rd_line.data(), &rtl.sp[l * R], R);
	}
	acc_rd_pend = top->st_acc_re_o;
	if (acc_rd_pend) {
		uint32_t l = top->st_acc_addr_o;
		acc_rd_line.assign(4 * C, 0);
		if (l >= cfg.acc_lines)
			error("store ACC line %u out of range", l);
		else
			memcpy(acc_rd_line.data(), &rtl.acc[l * C], 4 * C);
	}
}

// the store engine's W, AW, B
void Bench::check_store_bus(bool bv)
{
	uint8_t buf[512];
	// --- W (before AW: a W beat needs an AW accepted in an earlier cycle)
	bool wv = top->st_w_valid_o, wr = top->st_w_ready_i;
	std::vector<uint8_t> ws;
	sig_add(ws, top->st_w_data_o);
	sig_add(ws, top->st_w_strb_o);
	sig_add(ws, top->st_w_last_o);
	if (p_w_v && !p_w_r && (!wv || ws != p_w_sig))
		error("W changed before it was accepted");
	p_w_v = wv, p_w_r = wr, p_w_sig = ws;
	if (wv && (awq.empty() || awq.front().t_acc >= now))
		error("W beat before its AW");
	if (wv && wr && !awq.empty() && awq.front().t_acc < now) {
		WB &h = awq.front();
		uint64_t strb = 0;
		uint8_t sb[8];
		get(top->st_w_strb_o, sb, (B + 7) / 8);
		for (unsigned i = 0; i < (B + 7) / 8; i++)
			strb |= (uint64_t)sb[i] << (8 * i);
		get(top->st_w_data_o, buf, B);
		uint32_t base = h.addr + h.beat * B;
		auto &log = wlog[h.seq];
		for (unsigned k = 0; k < B; k++) {
			bool want = base + k >= h.row.a && base + k < h.row.a + h.row.n0;
			bool got = (strb >> k) & 1;
			if (want != got) {
				error("W beat %u of burst 0x%x: strobe of byte %u is %d", h.beat, h.addr, k, got);
				break;
			}
			if (got) {
				rtl.dram[base + k] = buf[k];
				log.push_back({base + k, buf[k]});
			}
		}
		if ((bool)top->st_w_last_o != (h.beat == h.len))
			error("w_last %d on beat %u of %u", top->st_w_last_o, h.beat, h.len + 1);
		st_beats++;
		if (++h.beat > h.len) {
			bq.push_back({now + (long)rr(prof.blat_min, prof.blat_max), h.seq});
			awq.pop_front();
		}
	}
	// --- AW
	bool awv = top->st_aw_valid_o, awr = top->st_aw_ready_i;
	uint32_t awa = top->st_aw_addr_o, awl = top->st_aw_len_o;
	if (p_aw_v && !p_aw_r && (!awv || awa != p_aw_addr || awl != p_aw_len))
		error("AW changed before it was accepted");
	p_aw_v = awv, p_aw_r = awr, p_aw_addr = awa, p_aw_len = awl;
	if (awv && awr) {
		Row row{awa, 0};
		long seq = -1;
		if (st.expect.empty()) {
			error("unexpected AW 0x%x len %u", awa, awl);
		} else {
			const Burst &e = st.expect.front();
			row = e.row;
			seq = e.seq;
			if (e.addr != awa || e.len != awl)
				error("AW 0x%x len %u, expected 0x%x len %u", awa, awl, e.addr, e.len);
			st.expect.pop_front();
		}
		if (awa < ST_DRAM_BASE || awa + (awl + 1) * B > DRAM_WIN)
			error("AW outside the store region");
		else
			awq.push_back({awa, awl, 0, now, row, seq});
		if (awq.size() + bq.size() > cfg.dma_wr_outstanding)
			error("%zu write bursts waiting for their response, more than DmaWrOutstanding = %u",
			      awq.size() + bq.size(), cfg.dma_wr_outstanding);
	}
	// --- B
	if (bv && top->st_b_ready_o) {
		bq.pop_front();
		b_hold = false;
	}
}

bool Bench::idle() const
{
	return ld.q.empty() && !ld.have_next && ld.held.empty() && st.q.empty() && !st.have_next &&
	       st.held.empty();
}

// run until both queues are drained (or errors / timeout)
bool Bench::run(long max_cycles)
{
	long t0 = now;
	while (!idle()) {
		cycle();
		if (errors.size() > 20)
			return false;
		if (now - t0 > max_cycles) {
			error("timeout: engines hung (load busy %d holding %zu, store busy %d holding %zu)",
			      top->ld_busy_o, ld.held.size(), top->st_busy_o, st.held.size());
			return false;
		}
	}
	// a few idle cycles: nothing may move on the bus
	for (int i = 0; i < 4; i++) {
		cycle();
		if (top->ld_ar_valid_o || top->st_aw_valid_o || top->st_w_valid_o || top->ld_busy_o ||
		    top->st_busy_o)
			error("bus or engine active after the last instruction");
	}
	if (!wlog.empty() || commit != rtl.dram)
		error("DRAM writes of no completed or aborted store");
	return errors.empty();
}

void Bench::init_memories()
{
	rtl.dram.resize(DRAM_WIN);
	for (auto &b : rtl.dram)
		b = (uint8_t)rnd();
	rtl.sp.resize((size_t)cfg.sp_lines * R);
	for (auto &b : rtl.sp)
		b = (uint8_t)rnd();
	rtl.acc.resize((size_t)cfg.acc_lines * C);
	for (auto &w : rtl.acc) {
		switch (rn(4)) {
		case 0: w = (uint32_t)rnd(); break;
		case 1: w = (uint32_t)(int32_t)(rn(2000001) - 1000000); break;
		default: w = (uint32_t)(int32_t)(rn(20001) - 10000); break;
		}
	}
	// parameter sets for requant: bias, mult, shift lines
	for (unsigned s = 0; s < NPARAM; s++) {
		uint32_t l = cfg.acc_lines / 2 + 3 * s;
		for (unsigned c = 0; c < C; c++) {
			bool wild = s == NPARAM - 1;
			rtl.acc[l * C + c] = wild ? (uint32_t)rnd() : (uint32_t)(int32_t)(rn(200001) - 100000);
			rtl.acc[(l + 1) * C + c] = wild ? (uint32_t)rnd() : (1u << 30) + rn(1u << 30);
			uint32_t sh = wild ? (uint32_t)rnd() : rn(14);
			if (!wild && chance(0.2))
				sh |= (uint32_t)rnd() << 5; // only bits 4:0 count
			rtl.acc[(l + 2) * C + c] = sh;
		}
	}
	ref = rtl;
	commit = rtl.dram;
}

} // namespace dma_tb
