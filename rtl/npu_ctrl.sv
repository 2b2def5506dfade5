// npu_ctrl.sv - the command processor. Fetches 32-byte instructions in
// order from DRAM (AXI id 0), checks them (npu_decode), dispatches LOAD,
// MATMUL and STORE into three instruction queues and issues each queue's
// head to its engine when the dependency tokens it pops are available
// (decoupled access-execute, docs/ISA.md "Dependency tokens"). MARK and
// FINISH are barriers: MARK goes to the store engine once everything before
// it has retired. Errors (decode, token overflow, deadlock, a bus error:
// an error response to a fetch beat, or a LOAD, STORE or MARK whose done
// pulse comes with its engine's derr) and host aborts stop dispatch, let
// the engines drain the bus, then end the run.
//
// Written for simulation speed as well: the fetcher's next state is worked
// out inside its clocked block (the register file's start/abort strobes,
// which come straight from MMIO, reach no combinational logic but the
// queue clear), the token counters and the deadlock check are evaluated
// only when they can change, the fetch range and window checks only in
// FsAddr, and each queue keeps instructions and their addresses in two
// FIFOs so that the head instruction goes to its engine without a copy. A
// cycle that waits for the engines costs a simulator little.
module npu_ctrl (
  input  logic         clk_i,
  input  logic         rst_ni,
  // from the registers
  input  logic         start_i,
  input  logic         abort_i,
  input  logic [31:0]  insn_base_i,
  input  logic         win_en_i,     // DMA windows (docs/ISA.md): fetches and DRAM spans
  input  logic [127:0] win_base_i,
  input  logic [127:0] win_size_i,
  output logic         busy_o,
  output logic         done_o,       // pulse: FINISH completed
  output logic         err_o,        // pulse: run ended with an error
  output logic         aborted_o,    // pulse: host abort completed
  output logic [7:0]   err_cause_o,
  output logic [31:0]  err_pc_o,
  output logic [15:0]  err_info_o,
  output logic [2:0]   stall_o,      // load, compute, store head waits for a token
  // fetch read channel (AXI id 0)
  output logic         ar_valid_o,
  input  logic         ar_ready_i,
  output logic [31:0]  ar_addr_o,
  output logic [7:0]   ar_len_o,
  input  logic         r_valid_i,
  input  logic [npu_pkg::BeatW-1:0] r_data_i,
  input  logic         r_last_i,
  input  logic         r_err_i,      // RRESP of the fetch beat is an error
  // engines
  output logic         abort_o,
  output logic         ld_valid_o,
  output logic [255:0] ld_insn_o,
  input  logic         ld_ready_i,
  input  logic         ld_done_i,
  input  logic         ld_derr_i,    // with ld_done_i: the LOAD had a bus error
  input  logic         ld_busy_i,
  output logic         cp_valid_o,
  output logic [255:0] cp_insn_o,
  input  logic         cp_ready_i,
  input  logic         cp_done_i,
  input  logic         cp_busy_i,
  output logic         st_valid_o,
  output logic [255:0] st_insn_o,
  input  logic         st_ready_i,
  input  logic         st_done_i,
  input  logic         st_derr_i,    // with st_done_i: the STORE or MARK had a bus error
  input  logic         st_busy_i
);
  localparam int unsigned B      = npu_pkg::DramBeatBytes;
  localparam int unsigned NBeats = (B >= npu_pkg::InsnBytes) ? 1 : npu_pkg::InsnBytes / B;
  localparam int unsigned TokW   = 17;
  localparam logic [TokW-1:0] TokMax = TokW'(npu_pkg::TokenMax);

  typedef enum logic [3:0] {
    FsIdle, FsAddr, FsData, FsCheck, FsDecode, FsBarrier, FsMark, FsDrain
  } fstate_e;

  fstate_e     state_q;
  logic [31:0] pc_q;
  logic [255:0] insn_q;
  logic [$clog2(NBeats+1)-1:0] beat_q;
  logic        fetch_out_q;            // a fetch burst is on the bus
  logic        ferr_q;                 // a beat of this fetch had an error response
  logic [1:0]  end_kind_q;             // 0 finish, 1 error, 2 abort
  logic [7:0]  cause_q;
  logic [31:0] epc_q;
  logic [15:0] info_q;
  logic [2:0]  dl_cnt_q;

  // ---------------------------------------------------------------- decode
  logic [7:0]  dec_cause;
  logic [15:0] dec_info;
  logic [1:0]  dec_queue;
  npu_decode u_decode (
    .clk_i   (clk_i),
    .en_i    (state_q == FsCheck),
    .win_en_i   (win_en_i),
    .win_base_i (win_base_i),
    .win_size_i (win_size_i),
    .insn_i  (insn_q),
    .cause_o (dec_cause),
    .info_o  (dec_info),
    .queue_o (dec_queue)
  );

  // ---------------------------------------------------------------- queues
  // each queue: the instructions (q_insn) and their addresses (q_pc), two
  // FIFOs pushed and popped together
  logic [2:0]    q_push, q_pop, q_empty, q_full, qp_empty, qp_full;
  logic [255:0]  q_insn [3];
  logic [31:0]   q_pc [3];
  logic          clear;
  logic          fclk;       // the FIFOs' gated clock (below)
  assign clear = start_i && !abort_i && !busy_o;
  for (genvar q = 0; q < 3; q++) begin : g_q
    npu_fifo #(.Width(256), .Depth(npu_pkg::QueueDepth)) u_fifo (
      .clk_i   (fclk),
      .rst_ni  (rst_ni),
      .clear_i (clear || state_q == FsDrain),
      .push_i  (q_push[q]),
      .wdata_i (insn_q),
      .pop_i   (q_pop[q]),
      .rdata_o (q_insn[q]),
      .empty_o (q_empty[q]),
      .full_o  (q_full[q])
    );
    npu_fifo #(.Width(32), .Depth(npu_pkg::QueueDepth)) u_pc (
      .clk_i   (fclk),
      .rst_ni  (rst_ni),
      .clear_i (clear || state_q == FsDrain),
      .push_i  (q_push[q]),
      .wdata_i (pc_q),
      .pop_i   (q_pop[q]),
      .rdata_o (q_pc[q]),
      .empty_o (qp_empty[q]),
      .full_o  (qp_full[q])
    );
  end
  logic unused_qp;
  assign unused_qp = ^{qp_empty, qp_full};  // the same as q_empty, q_full

  // ---------------------------------------------------------------- tokens
  // l2c: LOAD.PUSH_NEXT -> MATMUL.POP_PREV    c2l: MATMUL.PUSH_PREV -> LOAD.POP_NEXT
  // c2s: MATMUL.PUSH_NEXT -> STORE.POP_PREV   s2c: STORE.PUSH_PREV -> MATMUL.POP_NEXT
  logic [TokW-1:0] l2c_q, c2l_q, c2s_q, s2c_q;
  // dependency bits: w0[8] pop_prev, [9] pop_next, [10] push_prev, [11] push_next
  logic ld_need, cp_need, st_need, ld_can, cp_can, st_can;
  logic [255:0] ld_head, cp_head, st_head;
  assign ld_head = q_insn[0];
  assign cp_head = q_insn[1];
  assign st_head = q_insn[2];
  assign ld_need = ld_head[9] && c2l_q == '0;
  assign cp_need = (cp_head[8] && l2c_q == '0) || (cp_head[9] && s2c_q == '0);
  assign st_need = st_head[8] && c2s_q == '0;

  logic running;
  assign running = (state_q != FsIdle) && (state_q != FsDrain);
  assign ld_can = running && !q_empty[0] && !ld_need;
  assign cp_can = running && !q_empty[1] && !cp_need;
  assign st_can = running && !q_empty[2] && !st_need;
  assign stall_o = {running && !q_empty[2] && st_need, running && !q_empty[1] && cp_need,
                    running && !q_empty[0] && ld_need};

  // the instructions each engine holds (at most 2, oldest first): their push
  // bits {push_next, push_prev} and addresses; done_i retires the oldest
  logic        mark_issue;
  logic [2:0]  eng_issue, eng_done, inf_empty, inf_full;
  logic [33:0] inf_head [3];
  logic [33:0] inf_in [3];
  logic [2:0]  pend_q;                           // engine holds an instruction of this run
  assign eng_issue = {q_pop[2] || (mark_issue && st_ready_i), q_pop[1], q_pop[0]};
  assign eng_done  = {st_done_i, cp_done_i, ld_done_i};
  assign inf_in[0] = {ld_head[11], ld_head[10], q_pc[0]};
  assign inf_in[1] = {cp_head[11], cp_head[10], q_pc[1]};
  assign inf_in[2] = mark_issue ? {2'b00, pc_q} : {st_head[11], st_head[10], q_pc[2]};
  for (genvar e = 0; e < 3; e++) begin : g_inflight
    npu_fifo #(.Width(34), .Depth(2)) u_inflight (
      .clk_i   (fclk),
      .rst_ni  (rst_ni),
      .clear_i (clear || drain_done),
      .push_i  (eng_issue[e]),
      .wdata_i (inf_in[e]),
      .pop_i   (eng_done[e] && !inf_empty[e]),
      .rdata_o (inf_head[e]),
      .empty_o (inf_empty[e]),
      .full_o  (inf_full[e])
    );
  end
  assign pend_q = ~inf_empty;

  logic        ld_push_q, st_push_q;             // LOAD push_next, STORE push_prev
  logic [1:0]  cp_push_q;                        // MATMUL {push_next, push_prev}
  logic [31:0] ld_pc_q, cp_pc_q, st_pc_q;
  assign ld_push_q = inf_head[0][33];
  assign cp_push_q = inf_head[1][33:32];
  assign st_push_q = inf_head[2][32];
  assign ld_pc_q   = inf_head[0][31:0];
  assign cp_pc_q   = inf_head[1][31:0];
  assign st_pc_q   = inf_head[2][31:0];

  // an engine may hold two instructions; never offer a third
  assign ld_valid_o = ld_can && !inf_full[0];
  assign cp_valid_o = cp_can && !inf_full[1];
  assign ld_insn_o  = ld_head;
  assign cp_insn_o  = cp_head;
  assign st_valid_o = (st_can && !inf_full[2]) || mark_issue;
  assign st_insn_o  = mark_issue ? insn_q : st_head;
  assign q_pop[0] = ld_valid_o && ld_ready_i;
  assign q_pop[1] = cp_valid_o && cp_ready_i;
  assign q_pop[2] = st_can && !inf_full[2] && st_ready_i && !mark_issue;

  // the queue the decoded instruction goes to is full
  logic dec_full;
  always_comb begin
    unique case (dec_queue)
      2'd0:    dec_full = q_full[0];
      2'd1:    dec_full = q_full[1];
      2'd2:    dec_full = q_full[2];
      default: dec_full = 1'b0;
    endcase
  end

  // ---------------------------------------------------------------- fetch
  logic all_idle;
  assign all_idle = q_empty == 3'b111 && pend_q == '0 && !ld_busy_i && !cp_busy_i && !st_busy_i;
  // a fetch past the end of DRAM is refused before it reaches the bus, and
  // one outside every DMA window when they are enabled (both only looked at
  // in FsAddr)
  logic fetch_in_range, fetch_in_win;
  always_comb begin
    fetch_in_range = 1'b1;
    fetch_in_win   = 1'b1;
    if (state_q == FsAddr) begin
      fetch_in_range = 64'(pc_q) + 64'(npu_pkg::InsnBytes) <= 64'(npu_pkg::DramBytes);
      fetch_in_win   = !win_en_i;
      for (int i = 0; i < 4; i++) begin
        if (win_size_i[32*i +: 32] != '0 && pc_q >= win_base_i[32*i +: 32]
            && 33'(pc_q) + 33'(npu_pkg::InsnBytes)
               <= 33'(win_base_i[32*i +: 32]) + 33'(win_size_i[32*i +: 32]))
          fetch_in_win = 1'b1;
      end
    end
  end
  assign ar_valid_o = (state_q == FsAddr) && fetch_in_range && fetch_in_win;
  assign ar_addr_o  = pc_q & ~32'(B - 1);
  assign ar_len_o   = 8'(NBeats - 1);

  // FsDecode pushes a legal instruction into its queue when there is room
  // (dec_push: a legal queued instruction is decoded; with dec_full it waits);
  // FsBarrier hands a MARK to the store engine once everything has retired
  logic dec_push;
  assign dec_push = state_q == FsDecode && dec_cause == npu_pkg::ErrNone && dec_queue != 2'd3;
  always_comb begin
    q_push = '0;
    if (dec_push && !dec_full) q_push[dec_queue] = 1'b1;
  end
  assign mark_issue = state_q == FsBarrier && all_idle && insn_q[7:0] != npu_pkg::OpFinish;

  // the run ends when the engines are idle and no fetch is on the bus
  logic drain_done;
  assign drain_done = (state_q == FsDrain) && !ld_busy_i && !cp_busy_i && !st_busy_i && !fetch_out_q;

  // The fetcher (its clocked block below), the queues and the in-flight
  // FIFOs share a gated clock, off while the fetcher waits for room in the
  // full queue of a decoded instruction or at a barrier (MARK, FINISH) for
  // the engines, and nothing else happens: no pop, no done pulse, no abort,
  // no fetch beat, no deadlock count, an engine holding an instruction (so
  // no deadlock can start). Every register of the domain holds then: the
  // FIFOs are neither pushed (a push needs room), popped nor cleared (a clear
  // needs FsIdle or FsDrain), and the fetcher's block changes nothing in
  // those states. While the engines work through a layer, the fetcher, the
  // FIFOs and the instruction heads they present cost a simulator nothing.
  logic fwait;
  assign fwait = ((dec_push && dec_full) || (state_q == FsBarrier && !all_idle))
                 && q_pop == '0 && !ld_done_i && !cp_done_i && !st_done_i
                 && !abort_i && !r_valid_i && dl_cnt_q == '0 && pend_q != '0;
  npu_icg u_fcg (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (!fwait),
    .gclk_o (fclk)
  );

  assign abort_o = (state_q == FsDrain);
  assign busy_o  = (state_q != FsIdle);
  assign done_o    = drain_done && end_kind_q == 2'd0;
  assign err_o     = drain_done && end_kind_q == 2'd1;
  assign aborted_o = drain_done && end_kind_q == 2'd2;
  assign err_cause_o = cause_q;
  assign err_pc_o    = epc_q;
  assign err_info_o  = info_q;

  // The fetcher, the token counters and the deadlock counter. The next
  // state is computed here, in the clocked block, from the registers and
  // the inputs of this cycle; start_i/abort_i reach nothing combinational.
  // On fclk (above).
  always_ff @(posedge fclk) begin
    if (!rst_ni) begin
      state_q     <= FsIdle;
      pc_q        <= '0;
      beat_q      <= '0;
      fetch_out_q <= 1'b0;
      ferr_q      <= 1'b0;
      end_kind_q  <= '0;
      cause_q     <= '0;
      epc_q       <= '0;
      info_q      <= npu_pkg::FNone;
      l2c_q       <= '0;
      c2l_q       <= '0;
      c2s_q       <= '0;
      s2c_q       <= '0;
      dl_cnt_q    <= '0;
    end else begin : b_fetch
      logic          ovf, stuck;
      logic [31:0]   ovf_pc;
      logic [TokW:0] l2c_n, c2l_n, c2s_n, s2c_n;
      // token arithmetic (only when an engine finishes or takes an
      // instruction); overflow is an error naming the pushing instruction
      ovf    = 1'b0;
      ovf_pc = '0;
      if (clear) begin
        l2c_q <= '0;
        c2l_q <= '0;
        c2s_q <= '0;
        s2c_q <= '0;
      end else if (ld_done_i || cp_done_i || st_done_i || q_pop != '0) begin
        l2c_n = {1'b0, l2c_q} + (TokW+1)'(ld_done_i && ld_push_q) - (TokW+1)'(q_pop[1] && cp_head[8]);
        c2l_n = {1'b0, c2l_q} + (TokW+1)'(cp_done_i && cp_push_q[0]) - (TokW+1)'(q_pop[0] && ld_head[9]);
        c2s_n = {1'b0, c2s_q} + (TokW+1)'(cp_done_i && cp_push_q[1]) - (TokW+1)'(q_pop[2] && st_head[8]);
        s2c_n = {1'b0, s2c_q} + (TokW+1)'(st_done_i && st_push_q) - (TokW+1)'(q_pop[1] && cp_head[9]);
        if (l2c_n > (TokW+1)'(TokMax)) begin ovf = 1'b1; ovf_pc = ld_pc_q; end
        if (s2c_n > (TokW+1)'(TokMax)) begin ovf = 1'b1; ovf_pc = st_pc_q; end
        if (c2l_n > (TokW+1)'(TokMax) || c2s_n > (TokW+1)'(TokMax)) begin ovf = 1'b1; ovf_pc = cp_pc_q; end
        l2c_q <= l2c_n[TokW-1:0];
        c2l_q <= c2l_n[TokW-1:0];
        c2s_q <= c2s_n[TokW-1:0];
        s2c_q <= s2c_n[TokW-1:0];
      end else begin
        // (a done pulse or a pop would have changed a counter: none did)
      end

      // deadlock: nothing executes, every non-empty queue waits for a token
      // and the fetcher can not go on (barrier or full queue); must hold 4
      // cycles
      stuck = 1'b0;
      if (running && pend_q == '0 && !ld_done_i && !cp_done_i && !st_done_i && q_empty != 3'b111) begin
        if ((q_empty[0] || ld_need) && (q_empty[1] || cp_need) && (q_empty[2] || st_need))
          stuck = state_q == FsBarrier || (dec_push && dec_full);
      end
      if (stuck) begin
        if (dl_cnt_q != 3'd3) dl_cnt_q <= dl_cnt_q + 3'd1;
      end else if (dl_cnt_q != '0) begin
        dl_cnt_q <= '0;
      end

      unique case (state_q)
        FsIdle: begin
          // START while busy is ignored; ABORT in the same write wins
          if (start_i && !abort_i) begin
            pc_q    <= insn_base_i;
            cause_q <= npu_pkg::ErrNone;
            epc_q   <= '0;
            info_q  <= npu_pkg::FNone;
            if (64'(insn_base_i) + 64'(npu_pkg::InsnBytes) > 64'(npu_pkg::DramBytes)) begin
              cause_q <= npu_pkg::ErrFetchRange; epc_q <= insn_base_i; end_kind_q <= 2'd1;
              state_q <= FsDrain;
            end else if (insn_base_i[4:0] != '0) begin
              cause_q <= npu_pkg::ErrMisaligned; epc_q <= insn_base_i; end_kind_q <= 2'd1;
              state_q <= FsDrain;
            end else begin
              state_q <= FsAddr;
            end
          end
        end
        FsAddr: begin
          if (!fetch_in_range) begin
            cause_q <= npu_pkg::ErrFetchRange; epc_q <= pc_q; end_kind_q <= 2'd1;
            state_q <= FsDrain;
          end else if (!fetch_in_win) begin
            cause_q <= npu_pkg::ErrDmaWindow; epc_q <= pc_q; end_kind_q <= 2'd1;
            state_q <= FsDrain;
          end else if (ar_ready_i) begin
            state_q <= FsData;
          end
        end
        FsData: begin
          // a fetch with a bus error is not decoded (docs/ISA.md)
          if (r_valid_i && r_last_i) begin
            if (ferr_q || r_err_i) begin
              cause_q <= npu_pkg::ErrBusError; epc_q <= pc_q; info_q <= npu_pkg::FNone;
              end_kind_q <= 2'd1; state_q <= FsDrain;
            end else begin
              state_q <= FsCheck;
            end
          end
        end
        FsCheck: begin
          state_q <= FsDecode;  // the decoder checks insn_q at this edge
        end
        FsDecode: begin
          if (dec_cause != npu_pkg::ErrNone) begin
            cause_q <= dec_cause; epc_q <= pc_q; info_q <= dec_info; end_kind_q <= 2'd1;
            state_q <= FsDrain;
          end else if (dec_queue == 2'd3) begin
            state_q <= FsBarrier;
          end else if (!dec_full) begin
            pc_q    <= pc_q + 32'(npu_pkg::InsnBytes);
            state_q <= FsAddr;
          end
        end
        FsBarrier: begin
          if (all_idle) begin
            if (insn_q[7:0] == npu_pkg::OpFinish) begin
              end_kind_q <= 2'd0;
              state_q    <= FsDrain;
            end else if (st_ready_i) begin
              state_q <= FsMark;
            end
          end
        end
        FsMark: begin
          if (st_done_i) begin
            pc_q    <= pc_q + 32'(npu_pkg::InsnBytes);
            state_q <= FsAddr;
          end
        end
        FsDrain: begin
          if (drain_done) state_q <= FsIdle;
        end
        default: state_q <= FsIdle;
      endcase
      // run-ending events outside the fetcher's own states (they override
      // the case above: the last nonblocking write wins)
      if (running) begin
        if (abort_i) begin
          end_kind_q <= 2'd2; state_q <= FsDrain;
        end else if (ld_done_i && ld_derr_i) begin
          cause_q <= npu_pkg::ErrBusError; epc_q <= ld_pc_q; info_q <= npu_pkg::FNone;
          end_kind_q <= 2'd1; state_q <= FsDrain;
        end else if (st_done_i && st_derr_i) begin
          cause_q <= npu_pkg::ErrBusError; epc_q <= st_pc_q; info_q <= npu_pkg::FNone;
          end_kind_q <= 2'd1; state_q <= FsDrain;
        end else if (ovf) begin
          cause_q <= npu_pkg::ErrTokenOverflow; epc_q <= ovf_pc; info_q <= npu_pkg::FNone;
          end_kind_q <= 2'd1; state_q <= FsDrain;
        end else if (stuck && dl_cnt_q == 3'd3) begin
          cause_q <= npu_pkg::ErrDeadlock; epc_q <= pc_q; info_q <= npu_pkg::FNone;
          end_kind_q <= 2'd1; state_q <= FsDrain;
        end
      end
      if (ar_valid_o && ar_ready_i) fetch_out_q <= 1'b1;
      else if (r_valid_i && r_last_i) fetch_out_q <= 1'b0;
      if (ar_valid_o && ar_ready_i) beat_q <= '0;
      else if (r_valid_i) beat_q <= beat_q + 1'b1;
      if (ar_valid_o && ar_ready_i) ferr_q <= 1'b0;
      else if (r_valid_i && r_err_i) ferr_q <= 1'b1;
    end
  end


  // assemble the instruction from its beats
  if (B >= 64) begin : g_wide_beat
    always_ff @(posedge clk_i) begin
      if (r_valid_i && state_q == FsData) insn_q <= pc_q[5] ? r_data_i[511:256] : r_data_i[255:0];
    end
  end else begin : g_narrow_beat
    always_ff @(posedge clk_i) begin
      if (r_valid_i && state_q == FsData) insn_q[beat_q * npu_pkg::BeatW +: npu_pkg::BeatW] <= r_data_i;
    end
  end
endmodule
