// npu_dma_store.sv - the store DMA: executes STORE (SP bytes, ACC int32 raw,
// ACC requantized to int8, requantized plus a residual from SP: SOURCE 3)
// and MARK (the 64-byte perf record), docs/ISA.md.
//
// One row of n0 bytes to DRAM address a is one AW burst of beats
// a/B .. (a+n0-1)/B whose W beats carry the row at its byte positions, with
// strobes on exactly the row's bytes.
//
// Instructions: up to two are held at a time, in acceptance order. The
// front end (params, walker, read return) runs one instruction at a time;
// when it has fired the last row of one and that row's data is back, it
// starts the next one, while the rows of the previous one are still on W or
// wait for their B responses. The back end (row FIFO, W, AW, B) is shared
// and in order. Per held instruction, bcnt_q counts its rows fired whose B
// response has not come; B responses come in order, so they belong to the
// oldest instruction that still waits for one. done_o pulses once per
// instruction, in order, once the front end is past it and every one of
// its B responses is back.
//
// Parts:
//  * params (SOURCE 2, 3): ACC lines PARAM_ADDR, +1, +2 are read into
//    bias_q / mult_q / shift_q before the first row (3 cycles); SOURCE 3
//    also reads line +3, the ELTWISE ADD's words 0..3, into e*_q (4 cycles).
//  * walker: one row per cycle. A row "fires" when there is room in the row
//    FIFO (counted from the read, so data in flight always has a slot) and
//    in the AW FIFO, and its read is accepted (SP: granted; ACC: always;
//    MARK: the record register). Firing pushes the row's W shape (word
//    offset, beats, row words) into the meta FIFO and its burst into the AW
//    FIFO.
//  * read return: SP data on sp_rvalid_i, ACC raw data and the MARK record
//    one cycle after the read, requantized rows Latency = 2 cycles later
//    (C npu_requant lanes) -> row FIFO.
//  * SOURCE 3: a row fires when its residual's SP line (RES_ADDR = STRIDE3,
//    plus the row's index times the step N3; the walk is N1 x N2) is
//    granted; its ACC line is read in the cycle the
//    SP data returns (so no output depends on sp_gnt_i), goes through the
//    C requant lanes (2 cycles) while the residual line waits in r0..r2_q,
//    then q and the residual byte through the C add lanes: x = MULT_A*(q -
//    ZP_A) + MULT_B*(r - ZP_B) into a second npu_requant (bias 0, 2 cycles).
//    Fire to row FIFO: 6 cycles (SOURCE 2: 3).
//  * W: the head row is shifted to its offset into span_q / strb_q and sent
//    one beat per cycle; the next row loads in the cycle the last beat is
//    accepted, so consecutive rows leave no gap on W.
//  * AW: from the AW FIFO, while fewer than DmaWrOutstanding (MaxWrOut,
//    hwparams.def's dma_wr_outstanding) bursts wait for B. A
//    row's W beats start only after its AW was accepted in an earlier cycle
//    (aw_ahead_q), so W never leads AW.
//  * done_o: registered, one cycle, in the cycle after the instruction's
//    last B response; in its cycle the instruction is no longer held
//    (insn_ready_o may be high).
//
// MARK samples ctr_snapshot_i into rec_q in its accept cycle. While a MARK
// is held whose record has not been read yet, insn_ready_o is low (one
// record register).
//
// Bus errors: a B response with an error (b_err_i) marks the instruction it
// belongs to (berr_q, per slot); that instruction's done_o pulse comes with
// derr_o (docs/ISA.md, BUS_ERROR). Its other rows are written as usual.
//
// abort_i (pulse or level) aborts every instruction held: no new row fires;
// queued AWs that were never presented are dropped, a presented AW stays
// until accepted (AXI) and gets its W beats; rows without an accepted AW are
// dropped; when every B is back the engine goes idle without done_o (not
// even for an instruction completing in the abort_i cycle).
//
// No output depends combinationally on an input (sp_req_o in particular is a
// function of registers only).
module npu_dma_store #(
  parameter int unsigned RowFifoDepth = 4,   // rows between read and W (power of two)
  parameter int unsigned AwFifoDepth  = 4    // bursts between walker and AW (power of two)
) (
  input  logic                                  clk_i,
  input  logic                                  rst_ni,
  // engine instruction port
  input  logic                                  insn_valid_i,
  input  logic [255:0]                          insn_i,
  output logic                                  insn_ready_o,
  output logic                                  done_o,
  output logic                                  derr_o,    // with done_o: a B response was an error
  output logic                                  busy_o,
  input  logic                                  abort_i,
  // AXI4-style write master
  output logic                                  aw_valid_o,
  input  logic                                  aw_ready_i,
  output logic [31:0]                           aw_addr_o,
  output logic [7:0]                            aw_len_o,
  output logic                                  w_valid_o,
  input  logic                                  w_ready_i,
  output logic [npu_pkg::BeatW-1:0]             w_data_o,
  output logic [npu_pkg::DramBeatBytes-1:0]     w_strb_o,
  output logic                                  w_last_o,
  input  logic                                  b_valid_i,
  input  logic                                  b_err_i,   // BRESP is SLVERR or DECERR
  output logic                                  b_ready_o,
  // scratchpad read client
  output logic                                  sp_req_o,
  output logic [npu_pkg::SpAddrW-1:0]           sp_addr_o,
  input  logic                                  sp_gnt_i,
  input  logic                                  sp_rvalid_i,
  input  logic [8*npu_pkg::ArrayRows-1:0]       sp_rdata_i,
  // accumulator line read (always granted, data the next cycle)
  output logic                                  acc_re_o,
  output logic [npu_pkg::AccAddrW-1:0]          acc_addr_o,
  input  logic [32*npu_pkg::ArrayCols-1:0]      acc_rdata_i,
  // perf counters for MARK, counter i in bits [32i+31:32i]
  input  logic [32*npu_pkg::NumCtrs-1:0]        ctr_snapshot_i,
  // energy event: rows times C values into requant lanes (SOURCE 2: 1 per
  // row, SOURCE 3: 2 per row, counted when the row fires)
  output logic [1:0]                            rq_row_o
);

  // ------------------------------------------------------------ parameters
  localparam int unsigned R         = npu_pkg::ArrayRows;
  localparam int unsigned C         = npu_pkg::ArrayCols;
  localparam int unsigned B         = npu_pkg::DramBeatBytes;
  localparam int unsigned BeatW     = npu_pkg::BeatW;
  localparam int unsigned OffW      = npu_pkg::BeatOffW;
  localparam int unsigned WOffW     = OffW - 2;                     // word offset in a beat
  localparam int unsigned MarkBytes = npu_pkg::MarkBytes;
  localparam int unsigned RowBytes0 = (R > 4 * C) ? R : 4 * C;
  localparam int unsigned RowBytes  = (RowBytes0 > MarkBytes) ? RowBytes0 : MarkBytes;
  localparam int unsigned RowW      = 8 * RowBytes;
  localparam int unsigned SpanBeats = (RowBytes + B - 4 + B - 1) / B;
  localparam int unsigned SpanBytes = SpanBeats * B;
  localparam int unsigned SpanW     = 8 * SpanBytes;
  localparam int unsigned BIdxW     = (SpanBeats > 1) ? $clog2(SpanBeats) : 1;
  localparam int unsigned RPtrW     = (RowFifoDepth > 1) ? $clog2(RowFifoDepth) : 1;
  localparam int unsigned APtrW     = (AwFifoDepth > 1) ? $clog2(AwFifoDepth) : 1;
  localparam int unsigned MaxWrOut  = npu_pkg::DmaWrOutstanding;  // AW bursts waiting for B
  localparam int unsigned BOutW     = $clog2(MaxWrOut + 1);
  // rows of one instruction fired and waiting for B: at most the row FIFO,
  // the AW FIFO, the bursts waiting for B and the AW being presented
  localparam int unsigned BCntW     = $clog2(RowFifoDepth + AwFifoDepth + MaxWrOut + 2);
  localparam int unsigned LineAW    = 24;                           // MEM_ADDR width
  localparam int unsigned RecWords  = 1 + npu_pkg::NumCtrs;         // MARK_ID + counters
  // FIFO entries are stored as plain vectors: Yosys 0.23 keeps only bit 0
  // of each element of an unpacked array of a packed struct
  localparam int unsigned MetaW     = WOffW + BIdxW + 8;            // bits of meta_t
  localparam int unsigned AwW       = 32 - OffW + 8;                // bits of aw_t

  typedef enum logic [1:0] {
    FsIdle,
    FsParam,
    FsRun
  } fstate_e;

  // row source: SOURCE 0..2 of STORE, 3 for MARK
  localparam logic [1:0] SrcSp   = 2'd0;
  localparam logic [1:0] SrcAcc  = 2'd1;
  localparam logic [1:0] SrcQnt  = 2'd2;
  localparam logic [1:0] SrcMark = 2'd3;

  typedef struct packed {
    logic [WOffW-1:0] woff;  // DRAM address % B, in words
    logic [BIdxW-1:0] nb1;   // beats of the burst - 1
    logic [7:0]       rw;    // row words
  } meta_t;

  typedef struct packed {
    logic [31-OffW:0] beat;  // DRAM address / B
    logic [7:0]       len;   // beats - 1
  } aw_t;

  // ------------------------------------------------ instructions held
  npu_pkg::insn_store_t fi;                    // the instruction starting in the front end
  npu_pkg::insn_mark_t  mi;
  logic                 is_mark, fi_mark;
  logic                 accept;
  logic [1:0]           nheld_q;               // instructions held
  logic                 hslot_q;               // slot of the oldest
  logic                 aslot_q;               // slot of the next accepted
  logic                 npend_q;               // accepted, front end not started
  logic [255:0]         pinsn_q;               // that instruction
  logic                 pmark_q;
  logic [RowW-1:0]      rec_q;                 // MARK record
  logic                 recb_q;                // a MARK's record not read yet
  logic [1:0]           fdone_q;               // per slot: front end past it
  logic [2*BCntW-1:0]   bcnt_q;                // per slot s, bits [s*BCntW +: BCntW]:
                                               // rows fired whose B is not back
  logic                 abort_q;
  logic                 done_q, derr_q;
  logic [1:0]           berr_q;                // per slot: a B response of it was an error
  logic                 b_hs, b_other;

  assign mi           = insn_i;
  assign is_mark      = (insn_i[7:0] == npu_pkg::OpMark);
  assign insn_ready_o = !abort_q && !recb_q && (nheld_q != 2'd2);
  assign accept       = insn_valid_i && insn_ready_o;
  assign busy_o       = (nheld_q != 2'd0);
  assign done_o       = done_q;
  assign derr_o       = derr_q;

  // Quiescence: holding no instruction, offered none and past the cycle
  // after the last done pulse (which clears done_q), the engine's walker,
  // FIFOs and W/AW/B counters are empty (the last instruction's B
  // responses are back) and every register's next value is its own. Its
  // clock is then gated, and its next state, worked out inside the clocked
  // block (b_state), is not evaluated at all: an idle engine costs a
  // simulator its handshake outputs a cycle (docs/PERFORMANCE.md,
  // "Simulation speed").
  logic act;
  assign act = (nheld_q != 2'd0) || insn_valid_i || done_q;
  // the engine's clock is gated while quiescent (every flop holds then):
  // the clock gate is the registers' enable
  logic gclk;
  npu_icg u_cg (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (act),
    .gclk_o (gclk)
  );

  // ---------------------------------------------------------- front end
  fstate_e              fstate_q;
  logic                 fslot_q;               // slot of the front end's instruction
  logic                 fstart, ffin;
  npu_pkg::insn_store_t st_q;                  // the front end's instruction
  logic [1:0]           src_q;
  logic                 res_q;                 // SOURCE 3 (src_q = SrcQnt)
  logic [7:0]           rw_q;                  // row words (n0 / 4)
  logic [11:0]          n1_q, n2_q;
  logic [7:0]           n3_q;

  assign fstart = (fstate_q == FsIdle) && !abort_q && (npend_q || accept);
  assign fi     = npend_q ? pinsn_q : insn_i;
  assign fi_mark = npend_q ? pmark_q : is_mark;

  // ---------------------------------------------------------- params
  logic [1:0]           prm_cnt_q, prm_cnt_d;  // param reads issued
  logic                 prm_rd_q, prm_rd_d;    // a param read returns now
  logic [1:0]           prm_idx_q, prm_idx_d;
  logic [32*C-1:0]      bias_q, mult_q;      // lane c in bits [32c +: 32]
  logic [5*C-1:0]       shift_q;             // lane c in bits [5c +: 5]
  logic                 prm_re;
  // SOURCE 3: the ELTWISE ADD of line PARAM_ADDR+3 (docs/ISA.md)
  logic [31:0]          emult_q;
  logic [15:0]          ema_q, emb_q;
  logic [7:0]           ezpa_q, ezpb_q, ezpo_q, elo_q, ehi_q;
  logic [4:0]           esh_q;

  assign prm_re   = (fstate_q == FsParam) && !abort_q;
  assign prm_rd_d = prm_re;
  assign prm_idx_d = prm_cnt_q;
  assign prm_cnt_d = (fstate_q == FsParam) ? prm_cnt_q + 2'd1 : 2'd0;

  always_ff @(posedge gclk) begin
    if (prm_rd_q && (prm_idx_q == 2'd0)) begin
      bias_q <= acc_rdata_i;
    end
    if (prm_rd_q && (prm_idx_q == 2'd1)) begin
      mult_q <= acc_rdata_i;
    end
    if (prm_rd_q && (prm_idx_q == 2'd3)) begin
      emult_q <= acc_rdata_i[31:0];
      ema_q   <= acc_rdata_i[47:32];
      emb_q   <= acc_rdata_i[63:48];
      ezpa_q  <= acc_rdata_i[71:64];
      ezpb_q  <= acc_rdata_i[79:72];
      ezpo_q  <= acc_rdata_i[87:80];
      esh_q   <= acc_rdata_i[92:88];
      elo_q   <= acc_rdata_i[103:96];
      ehi_q   <= acc_rdata_i[111:104];
    end
  end

  for (genvar c = 0; c < C; c++) begin : g_shift
    always_ff @(posedge gclk) begin
      if (prm_rd_q && (prm_idx_q == 2'd2)) begin
        shift_q[5*c +: 5] <= acc_rdata_i[32*c +: 5];
      end
    end
  end

  // --------------------------------------------------------------- walker
  logic              walk_q;
  logic [11:0]       i1_q, i2_q;
  logic [7:0]        i3_q;
  logic [31:0]       a1_q, a2_q, a3_q;
  logic [LineAW-1:0] line_q;
  logic [npu_pkg::SpAddrW-1:0] rline_q;           // SOURCE 3: the residual's SP line
  logic [7:0]        rstep_q;                     // SOURCE 3: its step (N3)
  logic [npu_pkg::AccAddrW-1:0] racc_q;           // SOURCE 3: the ACC line of the row fired
  logic              rd2_q, rd3_q;                // SOURCE 3: rd_vld_q delayed 1, 2 cycles
  logic              issue_ok, fire;
  logic              last_i1, last_i2, last_i3;
  logic [10:0]       span_end;                 // offset + n0 - 1
  logic [BIdxW-1:0]  nb1_new;
  logic              rd_vld_q;                 // a row read returns now (SP: rvalid)

  // row FIFO (data) + meta FIFO (W shape), pushed at different times
  logic [RowW-1:0]   row_mem_q [RowFifoDepth];
  logic [MetaW-1:0]  meta_mem_q [RowFifoDepth];
  logic [RPtrW-1:0]  row_wp_q, row_rp_q, meta_wp_q;
  logic [RPtrW:0]    row_cnt_q, meta_cnt_q;
  logic              row_push, row_pop;
  meta_t             meta_head;

  // AW FIFO
  logic [AwW-1:0]    aw_mem_q [AwFifoDepth];
  logic [APtrW-1:0]  aw_wp_q, aw_rp_q;
  logic [APtrW:0]    aw_cnt_q;
  aw_t               aw_head;
  logic              aw_hs;
  logic [BOutW-1:0]  bout_q;                   // bursts waiting for B
  logic [BOutW-1:0]  ahead_q;                  // accepted AWs whose W has not started

  assign last_i1  = (i1_q == n1_q - 12'd1);
  assign last_i2  = (i2_q == n2_q - 12'd1);
  assign last_i3  = (i3_q == n3_q - 8'd1);
  assign issue_ok = walk_q && !abort_q && (fstate_q == FsRun) &&
                    (meta_cnt_q != (RPtrW + 1)'(RowFifoDepth)) &&
                    (aw_cnt_q != (APtrW + 1)'(AwFifoDepth));
  assign fire     = issue_ok && (((src_q != SrcSp) && !res_q) || sp_gnt_i);
  assign span_end = 11'({a1_q[OffW-1:2], 2'b00}) + 11'({rw_q, 2'b00}) - 11'd1;
  assign nb1_new  = BIdxW'(span_end >> OffW);
  // the front end is past its instruction: every row fired and read back
  // (meta_cnt - row_cnt = rows fired whose data is not in the row FIFO yet)
  assign ffin     = (fstate_q == FsRun) && !walk_q && !abort_q && (meta_cnt_q == row_cnt_q);

  assign sp_req_o   = issue_ok && ((src_q == SrcSp) || res_q);
  assign rq_row_o   = (fire && (src_q == SrcQnt)) ? (res_q ? 2'd2 : 2'd1) : 2'd0;
  assign sp_addr_o  = res_q ? rline_q : line_q[npu_pkg::SpAddrW-1:0];
  assign acc_re_o   = prm_re || (issue_ok && ((src_q == SrcAcc) || ((src_q == SrcQnt) && !res_q)))
                      || (rd_vld_q && res_q);
  assign acc_addr_o = prm_re ? npu_pkg::AccAddrW'(st_q.param_addr + 16'(prm_cnt_q))
                             : res_q ? racc_q : line_q[npu_pkg::AccAddrW-1:0];

  // ---------------------------------------------------------- read return
  localparam int unsigned ResL = (R < C) ? R : C;  // lanes with a residual byte
  logic               rq_valid;
  logic [C-1:0]       rq2_valid;
  logic [8*C-1:0]     rq_q, rq2_q;           // lane c in bits [8c +: 8]
  logic [8*ResL-1:0]  r0_q, r1_q, r2_q;      // SOURCE 3: the residual, beside lanes 1st stage

  // SOURCE 3: ACC line read with the SP data's return (rd_vld_q), into the
  // lanes a cycle later (rd2_q); the residual keeps pace with the lanes
  always_ff @(posedge gclk) begin
    if (fire) racc_q <= line_q[npu_pkg::AccAddrW-1:0];
    if (sp_rvalid_i && res_q) r0_q <= sp_rdata_i[8*ResL-1:0];
    if (rd2_q) r1_q <= r0_q;
    if (rd3_q) r2_q <= r1_q;
  end

  // the C requant lanes (SOURCE 2, and SOURCE 3's first step): one
  // npu_requant of C lanes
  npu_requant #(.Lanes(C), .ShiftW(5)) u_requant (
    .clk_i   (gclk),
    .rst_ni  (rst_ni),
    .valid_i ((rd_vld_q && (src_q == SrcQnt) && !res_q) || rd2_q),
    .acc_i   (acc_rdata_i),
    .bias_i  (bias_q),
    .mult_i  (mult_q),
    .shift_i (shift_q),
    .zp_i    (st_q.zero_point),
    .lo_i    (st_q.clip_lo),
    .hi_i    (st_q.clip_hi),
    .valid_o (rq_valid),
    .q_o     (rq_q)
  );

  // SOURCE 3: the C add lanes, one npu_requant each: a lane's sum x is its
  // own signal, which a simulator folds into the lane's clocked block (in
  // one C-lane vector it would be evaluated every cycle)
  for (genvar c = 0; c < C; c++) begin : g_lane
    logic [31:0] x;  // SOURCE 3: the ELTWISE ADD's sum of lane c (exact, < 2^26)
    if (c < ResL) begin : g_res
      logic signed [31:0] da, db, ma, mb;
      assign da = $signed({{24{rq_q[8*c+7]}}, rq_q[8*c +: 8]}) - $signed({{24{ezpa_q[7]}}, ezpa_q});
      assign db = $signed({{24{r2_q[8*c+7]}}, r2_q[8*c +: 8]}) - $signed({{24{ezpb_q[7]}}, ezpb_q});
      assign ma = $signed({{16{ema_q[15]}}, ema_q});
      assign mb = $signed({{16{emb_q[15]}}, emb_q});
      assign x  = ma * da + mb * db;
    end else begin : g_nores
      assign x = '0;                        // no residual byte: never stored (n0 <= R)
    end
    npu_requant #(.ShiftW(5)) u_add (
      .clk_i   (gclk),
      .rst_ni  (rst_ni),
      .valid_i (rq_valid && res_q),
      .acc_i   (x),
      .bias_i  (32'd0),
      .mult_i  (emult_q),
      .shift_i (esh_q),
      .zp_i    (ezpo_q),
      .lo_i    (elo_q),
      .hi_i    (ehi_q),
      .valid_o (rq2_valid[c]),
      .q_o     (rq2_q[8*c +: 8])
    );
  end

  always_comb begin
    unique case (src_q)
      SrcSp:   row_push = sp_rvalid_i;
      SrcQnt:  row_push = res_q ? rq2_valid[0] : rq_valid;
      default: row_push = rd_vld_q;   // SrcAcc, SrcMark
    endcase
  end

  // the row pushed into the row FIFO (evaluated only when one is pushed)
  function automatic logic [RowW-1:0] row_data(input logic [1:0]            src,
                                               input logic [8*R-1:0]        sp_data,
                                               input logic [32*C-1:0]       acc_data,
                                               input logic [8*C-1:0]        qnt_data,
                                               input logic [RowW-1:0]       rec);
    unique case (src)
      SrcSp:   row_data = RowW'(sp_data);
      SrcAcc:  row_data = RowW'(acc_data);  // int32 little-endian
      SrcQnt:  row_data = RowW'(qnt_data);
      default: row_data = rec;              // SrcMark
    endcase
  endfunction

  // ------------------------------------------------------------------ W
  logic                 w_act_q;
  logic [BIdxW-1:0]     w_left_q;              // beats after the current one
  logic [SpanW-1:0]     span_q;
  logic [SpanBytes-1:0] strb_q;
  logic                 w_hs, w_free, load_row, drop_row;

  assign w_valid_o = w_act_q;
  assign w_data_o  = span_q[BeatW-1:0];
  assign w_strb_o  = strb_q[B-1:0];
  assign w_last_o  = (w_left_q == '0);
  assign w_hs      = w_valid_o && w_ready_i;
  assign w_free    = !w_act_q || (w_hs && w_last_o);
  assign meta_head = meta_mem_q[row_rp_q];
  // rows go out in order; a row whose AW will never be accepted (abort) is
  // dropped once every accepted AW has its row
  assign load_row  = (row_cnt_q != '0) && w_free && (ahead_q != '0);
  assign drop_row  = (row_cnt_q != '0) && abort_q && (aw_cnt_q == '0) && (ahead_q == '0);
  assign row_pop   = load_row || drop_row;

  // strobes of a row of rw words at word offset woff in its span
  function automatic logic [SpanBytes-1:0] row_strb(input logic [7:0]       rw,
                                                    input logic [WOffW-1:0] woff);
    logic [RowBytes-1:0] mask;
    for (int unsigned k = 0; k < RowBytes; k++) begin
      mask[k] = ((k / 4) < 32'(rw));
    end
    row_strb = SpanBytes'(mask) << {woff, 2'b00};
  endfunction

  // W data and strobes: the head row at its offset, shifted out beat by beat
  always_ff @(posedge gclk) begin
    if (load_row) begin
      span_q <= SpanW'(row_mem_q[row_rp_q]) << {meta_head.woff, 5'b00000};
      strb_q <= row_strb(meta_head.rw, meta_head.woff);
    end else if (w_hs) begin
      span_q <= span_q >> BeatW;
      strb_q <= strb_q >> B;
    end
  end

  // ------------------------------------------------------------------- AW
  assign aw_head    = aw_mem_q[aw_rp_q];
  assign aw_valid_o = (aw_cnt_q != '0) && (bout_q != BOutW'(MaxWrOut));
  assign aw_addr_o  = {aw_head.beat, OffW'(0)};
  assign aw_len_o   = aw_head.len;
  assign aw_hs      = aw_valid_o && aw_ready_i;
  assign b_ready_o  = 1'b1;
  assign b_hs       = b_valid_i && b_ready_o;

  // ---------------------------------------------------------------- FIFOs
  always_ff @(posedge gclk) begin
    if (row_push) begin
      row_mem_q[row_wp_q] <= row_data(src_q, sp_rdata_i, acc_rdata_i, res_q ? rq2_q : rq_q, rec_q);
    end
    if (fire) begin
      meta_mem_q[meta_wp_q] <= {a1_q[OffW-1:2], nb1_new, rw_q};  // meta_t
      aw_mem_q[aw_wp_q]     <= {a1_q[31:OffW], 8'(nb1_new)};      // aw_t
    end
  end

  // ------------------------------------------------------------ sequencing
  // a B response belongs to the oldest instruction unless it has none due
  assign b_other = (bcnt_q[32'(hslot_q) * BCntW +: BCntW] == '0);

  // The next state is worked out here, in blocking temporaries inside the
  // clocked block, not in combinational blocks: the clock rises only while
  // act (and in reset), so a quiescent engine evaluates none of it, where a
  // combinational next state would be evaluated every cycle (it reads the
  // bus handshakes and grants of the free clock). Inside the block act is 1
  // out of reset: the gate took it while the clock was low.
  always_ff @(posedge gclk) begin : b_state
    // walker
    logic                        walk_d;
    logic [11:0]                 i1_d, i2_d;
    logic [7:0]                  i3_d;
    logic [31:0]                 a1_d, a2_d, a3_d;
    logic [LineAW-1:0]           line_d;
    logic [npu_pkg::SpAddrW-1:0] rline_d;
    // W, AW and the FIFOs
    logic                        w_act_d;
    logic [BIdxW-1:0]            w_left_d;
    logic [APtrW-1:0]            aw_rp_d, aw_wp_d;
    logic [APtrW:0]              aw_cnt_d;
    logic [BOutW-1:0]            bout_d, ahead_d;
    logic [RPtrW-1:0]            row_wp_d, row_rp_d, meta_wp_d;
    logic [RPtrW:0]              row_cnt_d, meta_cnt_d;
    // sequencing
    logic [2*BCntW-1:0]          bcnt_n, bcnt_d;
    logic [1:0]                  nheld_d, fdone_d, be;
    logic                        hslot_d, aslot_d, npend_d, recb_d, abort_d, done_d;
    logic                        done_evt, drained;
    fstate_e                     fstate_d;
    logic                        fslot_d, res_d;
    logic [1:0]                  src_d;
    logic [7:0]                  rw_d, n3_d;
    logic [11:0]                 n1_d, n2_d;

    // walker
    walk_d  = walk_q;
    i1_d    = i1_q;
    i2_d    = i2_q;
    i3_d    = i3_q;
    a1_d    = a1_q;
    a2_d    = a2_q;
    a3_d    = a3_q;
    line_d  = line_q;
    rline_d = rline_q;
    if (fire) begin
      line_d  = line_q + LineAW'(1);
      rline_d = rline_q + npu_pkg::SpAddrW'(rstep_q);
      if (!last_i1) begin
        i1_d = i1_q + 12'd1;
        a1_d = a1_q + st_q.stride1;
      end else begin
        i1_d = '0;
        if (!last_i2) begin
          i2_d = i2_q + 12'd1;
          a2_d = a2_q + st_q.stride2;
          a1_d = a2_d;
        end else begin
          i2_d = '0;
          i3_d = i3_q + 8'd1;
          a3_d = a3_q + st_q.stride3;
          a2_d = a3_d;
          a1_d = a3_d;
          if (last_i3) begin
            walk_d = 1'b0;
          end
        end
      end
    end
    if (abort_q) begin
      walk_d = 1'b0;
    end
    // start of an instruction (the walker waits in FsParam for SOURCE 2)
    if (fstart) begin
      walk_d  = fi_mark || ((fi.n1 != '0) && (fi.n2 != '0) && (fi.n3 != '0));
      i1_d    = '0;
      i2_d    = '0;
      i3_d    = '0;
      a1_d    = fi.dram_addr;
      a2_d    = fi.dram_addr;
      a3_d    = fi.dram_addr;
      line_d  = fi_mark ? '0 : fi.mem_addr;
      rline_d = fi.stride3[npu_pkg::SpAddrW-1:0];  // SOURCE 3: RES_ADDR (< SP lines)
    end

    // W
    w_act_d  = w_act_q;
    w_left_d = w_left_q;
    if (w_hs) begin
      w_act_d  = !w_last_o;
      w_left_d = w_left_q - BIdxW'(1);
    end
    if (load_row) begin
      w_act_d  = 1'b1;
      w_left_d = meta_head.nb1;
    end

    // AW
    aw_rp_d  = aw_rp_q + APtrW'(aw_hs);
    aw_wp_d  = aw_wp_q + APtrW'(fire);
    aw_cnt_d = aw_cnt_q + (APtrW + 1)'(fire) - (APtrW + 1)'(aw_hs);
    if (abort_q) begin
      // keep only a burst that is presented and not yet accepted
      aw_cnt_d = (aw_valid_o && !aw_ready_i) ? (APtrW + 1)'(1) : '0;
      aw_wp_d  = aw_rp_d + APtrW'(aw_cnt_d);
    end
    bout_d  = bout_q + BOutW'(aw_hs) - BOutW'(b_hs);
    ahead_d = ahead_q + BOutW'(aw_hs) - BOutW'(load_row);

    // FIFOs
    row_wp_d   = row_wp_q + RPtrW'(row_push);
    row_rp_d   = row_rp_q + RPtrW'(row_pop);
    meta_wp_d  = meta_wp_q + RPtrW'(fire);
    row_cnt_d  = row_cnt_q + (RPtrW + 1)'(row_push) - (RPtrW + 1)'(row_pop);
    meta_cnt_d = meta_cnt_q + (RPtrW + 1)'(fire) - (RPtrW + 1)'(row_pop);

    // rows fired whose B is not back, per slot, with this cycle's fire and B
    for (int unsigned sl = 0; sl < 2; sl++) begin
      bcnt_n[sl*BCntW +: BCntW] = bcnt_q[sl*BCntW +: BCntW]
                                  + BCntW'(fire && (fslot_q == 1'(sl)))
                                  - BCntW'(b_hs && ((hslot_q == 1'(sl)) != b_other));
    end
    // done: the oldest instruction's front end is past it and its B are back
    // (with this cycle's front-end finish and B response: done_o comes in the
    // cycle after the last B)
    done_evt = (nheld_q != 2'd0) && !abort_q &&
               (fdone_q[hslot_q] || (ffin && (fslot_q == hslot_q))) &&
               (bcnt_n[32'(hslot_q) * BCntW +: BCntW] == '0);
    // after an abort: nothing left on the bus or in the engine
    drained  = abort_q && !walk_d && (meta_cnt_d == '0) && !w_act_d && (aw_cnt_d == '0) &&
               (bout_d == '0) && (ahead_d == '0);

    fstate_d = fstate_q;
    fslot_d  = fslot_q;
    src_d    = src_q;
    res_d    = res_q;
    rw_d     = rw_q;
    n1_d     = n1_q;
    n2_d     = n2_q;
    n3_d     = n3_q;
    recb_d   = recb_q;
    fdone_d  = fdone_q;
    bcnt_d   = bcnt_n;
    done_d   = done_evt && !abort_i;
    nheld_d  = nheld_q + 2'(accept) - 2'(done_d);
    hslot_d  = hslot_q ^ done_d;
    aslot_d  = aslot_q ^ accept;
    npend_d  = 1'(2'(npend_q) + 2'(accept) - 2'(fstart));
    abort_d  = abort_q || (abort_i && ((nheld_q != 2'd0) || accept));

    // accept: held until the front end takes it (maybe in this same cycle)
    if (row_push && (src_q == SrcMark)) begin
      recb_d = 1'b0;                            // the MARK record is read
    end
    if (accept && is_mark) begin
      recb_d = 1'b1;                            // rec_q is sampled (below)
    end

    // front end
    unique case (fstate_q)
      FsIdle: begin
        if (fstart) begin                       // st_q <= fi (below)
          if (fi_mark) begin
            fstate_d = FsRun;
            src_d    = SrcMark;
            res_d    = 1'b0;
            rw_d     = 8'(MarkBytes / 4);
            n1_d     = 12'd1;
            n2_d     = 12'd1;
            n3_d     = 8'd1;
          end else begin
            fstate_d = fi.source[1] ? FsParam : FsRun;
            src_d    = fi.source[1] ? SrcQnt : fi.source;
            res_d    = (fi.source == 2'd3);
            rw_d     = fi.row_words;
            n1_d     = fi.n1;
            n2_d     = fi.n2;
            n3_d     = (fi.source == 2'd3) ? 8'd1 : fi.n3;   // SOURCE 3: N3 is the step
          end
        end
      end
      FsParam: begin
        if (abort_q || (prm_cnt_q == (res_q ? 2'd3 : 2'd2))) begin
          fstate_d = FsRun;
        end
      end
      FsRun: begin
        if (ffin) begin
          fstate_d = FsIdle;
          fslot_d  = !fslot_q;
        end
      end
      default: fstate_d = FsIdle;
    endcase

    // per slot: front end done, rows waiting for B
    if (ffin) begin
      fdone_d[fslot_q] = 1'b1;
    end
    if (done_d) begin
      fdone_d[hslot_q] = 1'b0;
    end

    if (drained) begin
      fstate_d = FsIdle;
      fslot_d  = 1'b0;
      hslot_d  = 1'b0;
      aslot_d  = 1'b0;
      nheld_d  = '0;
      npend_d  = 1'b0;
      recb_d   = 1'b0;
      fdone_d  = '0;
      abort_d  = 1'b0;
      bcnt_d   = '0;
    end

    if (!rst_ni) begin
      nheld_q    <= '0;
      hslot_q    <= 1'b0;
      aslot_q    <= 1'b0;
      npend_q    <= 1'b0;
      recb_q     <= 1'b0;
      fdone_q    <= '0;
      bcnt_q     <= '0;
      fstate_q   <= FsIdle;
      fslot_q    <= 1'b0;
      abort_q    <= 1'b0;
      done_q     <= 1'b0;
      derr_q     <= 1'b0;
      berr_q     <= '0;
      prm_cnt_q  <= '0;
      prm_rd_q   <= 1'b0;
      walk_q     <= 1'b0;
      rd_vld_q   <= 1'b0;
      rd2_q      <= 1'b0;
      rd3_q      <= 1'b0;
      row_wp_q   <= '0;
      row_rp_q   <= '0;
      meta_wp_q  <= '0;
      row_cnt_q  <= '0;
      meta_cnt_q <= '0;
      aw_wp_q    <= '0;
      aw_rp_q    <= '0;
      aw_cnt_q   <= '0;
      bout_q     <= '0;
      ahead_q    <= '0;
      w_act_q    <= 1'b0;
    end else begin
      nheld_q    <= nheld_d;
      hslot_q    <= hslot_d;
      aslot_q    <= aslot_d;
      npend_q    <= npend_d;
      recb_q     <= recb_d;
      fdone_q    <= fdone_d;
      bcnt_q     <= bcnt_d;
      fstate_q   <= fstate_d;
      fslot_q    <= fslot_d;
      abort_q    <= abort_d;
      done_q     <= done_d;
      // a B response belongs to slot hslot ^ b_other (as in bcnt_n); the
      // done instruction takes its slot's mark, which is then cleared
      be = berr_q;
      if (b_hs && b_err_i) be[hslot_q ^ b_other] = 1'b1;
      derr_q <= done_d && be[hslot_q];
      if (done_d) be[hslot_q] = 1'b0;
      berr_q <= drained ? 2'b00 : be;
      prm_cnt_q  <= prm_cnt_d;
      prm_rd_q   <= prm_rd_d;
      walk_q     <= walk_d;
      rd_vld_q   <= fire;
      rd2_q      <= rd_vld_q && res_q;
      rd3_q      <= rd2_q;
      row_wp_q   <= row_wp_d;
      row_rp_q   <= row_rp_d;
      meta_wp_q  <= meta_wp_d;
      row_cnt_q  <= row_cnt_d;
      meta_cnt_q <= meta_cnt_d;
      aw_wp_q    <= aw_wp_d;
      aw_rp_q    <= aw_rp_d;
      aw_cnt_q   <= aw_cnt_d;
      bout_q     <= bout_d;
      ahead_q    <= ahead_d;
      w_act_q    <= w_act_d;
    end

    // datapath registers (no reset: loaded before use)
    src_q     <= src_d;
    res_q     <= res_d;
    rline_q   <= rline_d;
    rw_q      <= rw_d;
    n1_q      <= n1_d;
    n2_q      <= n2_d;
    n3_q      <= n3_d;
    prm_idx_q <= prm_idx_d;
    i1_q      <= i1_d;
    i2_q      <= i2_d;
    i3_q      <= i3_d;
    a1_q      <= a1_d;
    a2_q      <= a2_d;
    a3_q      <= a3_d;
    line_q    <= line_d;
    w_left_q  <= w_left_d;

    // the instruction accepted (held until the front end takes it), the MARK
    // record sampled in a MARK's accept cycle, the front end's instruction
    if (accept) begin
      pinsn_q <= insn_i;
      pmark_q <= is_mark;
    end
    if (accept && is_mark) begin
      rec_q <= RowW'({ctr_snapshot_i, mi.mark_id});
    end
    if (fstart) begin
      st_q    <= fi;
      rstep_q <= fi.n3;
    end
  end

  // ------------------------------------------------------------ checks
  // elaboration: the MARK record fits a row; FIFO depths are powers of two
  if (RecWords > MarkBytes / 4) begin : g_err_rec
    $error("npu_dma_store: NumCtrs does not fit the MARK record");
  end
  if ((RowFifoDepth & (RowFifoDepth - 1)) != 0 || (AwFifoDepth & (AwFifoDepth - 1)) != 0) begin : g_err_depth
    $error("npu_dma_store: FIFO depths must be powers of two");
  end

`ifndef SYNTHESIS
  // (no "disable iff (!rst_ni)": the properties also hold in reset, with
  // idle inputs)
  // the row FIFO never overflows (the meta FIFO reserves its slots)
  assert property (@(posedge clk_i)
    !(row_push && (row_cnt_q == (RPtrW + 1)'(RowFifoDepth)) && !row_pop));
  // SP read data comes exactly the cycle after a grant
  assert property (@(posedge clk_i)
    sp_rvalid_i == (rd_vld_q && ((src_q == SrcSp) || res_q)));
  // no B response without a burst waiting for it
  assert property (@(posedge clk_i) !(b_valid_i && (bout_q == '0)));
  // outside an abort, a B response belongs to a held instruction
  assert property (@(posedge clk_i)
    !(b_hs && !abort_q && (bcnt_q == '0)));
  // at most two instructions held, at most one waiting for the front end
  assert property (@(posedge clk_i) nheld_q != 2'd3);
  assert property (@(posedge clk_i) !(npend_q && accept && !fstart));
`endif

  // the MARK view is read for MARK_ID only (the rest comes from the STORE
  // view); the add lanes' valid bits are equal, lane 0 is used; st_q keeps
  // the fields read after the start (the others are taken from fi at the
  // start)
  logic unused_bits;
  assign unused_bits = ^{mi.rsvd_96, mi.dram_addr, mi.rsvd_8, mi.opcode, rq2_valid[C-1:1],
                         st_q.n3, st_q.n2, st_q.n1, st_q.rsvd_88, st_q.mem_addr, st_q.dram_addr,
                         st_q.row_words, st_q.rsvd_14, st_q.source, st_q.rsvd_11,
                         st_q.push_prev, st_q.rsvd_9, st_q.pop_prev, st_q.opcode};

endmodule
