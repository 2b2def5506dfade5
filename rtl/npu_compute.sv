// npu_compute.sv - MATMUL engine: fold sequencer with implicit im2col
// addressing around the weight-stationary npu_array.
//
// One instruction at a time (insn_ready_o only when idle). Folds f run over
// (cb, ky, kx) in that order. Two independent sequencers share two weight
// buffers:
//   * the weight loader reads the C lines WGT_ADDR + f*C + c (c = 0..C-1)
//     through the wgt port and writes them as column c of buffer f%2;
//   * the activation streamer reads the P = OUT_H*OUT_W lines of fold f
//     through the act port, address
//       ACT_ADDR + cb*IN_H*IN_W + (oy*SH + ky*DH)*IN_W + ox*SW + kx*DW,
//     kept by adders only (the three products IN_H*IN_W, SH*IN_W, DH*IN_W are
//     formed once when the instruction is taken), and sends each line into
//     the array with sel = f%2, ACC line ACC_ADDR + oy*OUT_W + ox and
//     overwrite = (f == 0 && !ACCUMULATE).
//
// Buffer handshake, per buffer b: full_q[b] is set when the last column read
// of a fold is granted (its data is written one cycle later, before the first
// activation of that fold can reach any PE), and cleared when the streamer's
// last read of that fold is granted. The loader may start on b only when b is
// not full and hold_q[b] == 0. Derivation of hold: the last line of the fold
// granted in cycle g enters the array in g+1 and the last PE that reads column
// col of b does so in cycle g+1 + R-1 + col (npu_array). Column col of the
// next fold is granted at g0+col at the earliest (g0 = grant of column 0) and
// written at the end of g0+col+1, so g0 >= g + R - 1 is safe and exact:
// hold_q[b] is loaded with R-2 at the edge that grants the last line.
// Consequence: with no bank conflicts a fold streams back to back (one line
// per cycle, no bubble between folds) when P >= R + C - 2. For shorter folds
// the bubbles before folds k and k+1 add up to at least R + C - 2 - P (fold
// k+1 reuses the buffer of fold k-1), e.g. one bubble every second fold for
// P = R + C - 3; and a fold never starts sooner than C cycles after the
// previous one (one weight column per cycle).
//
// Scratchpad ports: req/addr depend only on flops (never on gnt); the access
// happens at an edge where req && gnt; rvalid/rdata are expected exactly one
// cycle after the grant (checked by an assertion). A refused request is held
// with the same address.
//
// Array entry: act_rdata_i / wgt_rdata_i go into the array without a register
// (a line enters in its rvalid cycle; row 0 multiplies it in that cycle).
//
// Completion: each granted activation line reloads drain_q with R + C; the
// last lane write of that line happens in the cycle where drain_q == 1, so
// done_o pulses (one cycle) in the cycle after the last ACC write edge. abort_i
// stops new requests, waits for everything in flight (reads and array) to be
// written, then goes idle without done_o (an abort in the done_o cycle itself
// does not cancel it: the instruction has completed). insn_ready_o, busy_o,
// done_o and both req/addr pairs are functions of flops only.
module npu_compute (
  input  logic                                         clk_i,
  input  logic                                         rst_ni,
  // engine instruction port
  input  logic                                         insn_valid_i,
  input  logic [255:0]                                 insn_i,
  output logic                                         insn_ready_o,
  output logic                                         done_o,
  output logic                                         busy_o,
  input  logic                                         abort_i,
  // scratchpad read client: activations
  output logic                                         act_req_o,
  output logic [npu_pkg::SpAddrW-1:0]                  act_addr_o,
  input  logic                                         act_gnt_i,
  input  logic                                         act_rvalid_i,
  input  logic [8*npu_pkg::SpLineBytes-1:0]            act_rdata_i,
  // scratchpad read client: weights
  output logic                                         wgt_req_o,
  output logic [npu_pkg::SpAddrW-1:0]                  wgt_addr_o,
  input  logic                                         wgt_gnt_i,
  input  logic                                         wgt_rvalid_i,
  input  logic [8*npu_pkg::SpLineBytes-1:0]            wgt_rdata_i,
  // accumulator lanes, lane c at [c*W +: W] (W = 1, AccAddrW, 1, 32)
  output logic [npu_pkg::ArrayCols-1:0]                acc_valid_o,
  output logic [npu_pkg::ArrayCols*npu_pkg::AccAddrW-1:0] acc_addr_o,
  output logic [npu_pkg::ArrayCols-1:0]                acc_overwrite_o,
  output logic [npu_pkg::ArrayCols*32-1:0]             acc_data_o,
  // one activation line enters the array this cycle (MACS += R*C)
  output logic                                         mac_line_o
);

  localparam int unsigned R          = npu_pkg::ArrayRows;
  localparam int unsigned C          = npu_pkg::ArrayCols;
  localparam int unsigned AW         = npu_pkg::SpAddrW;
  localparam int unsigned CW         = npu_pkg::AccAddrW;
  localparam int unsigned ColW       = $clog2(C);
  localparam int unsigned HoldCycles = R - 2;          // see header
  localparam int unsigned HoldW      = $clog2(R);      // holds R-2
  localparam int unsigned DrainCycles = R + C;         // grant -> last lane write
  localparam int unsigned DrainW     = $clog2(R + C + 1);

  if (R < 2 || C < 2 || npu_pkg::SpLineBytes != R || AW > 24 || CW > 16) begin : g_bad_cfg
    $fatal(1, "npu_compute: unsupported configuration");
  end

  typedef enum logic [1:0] {
    StIdle,   // waiting for an instruction
    StRun,    // issuing weight and activation reads
    StDrain,  // every line issued, waiting for the last ACC write
    StAbort   // aborted: waiting for the reads and lines in flight
  } state_e;

  // ---------------------------------------------------------------------------
  // Instruction fields (used only when the instruction is taken)
  // ---------------------------------------------------------------------------
  npu_pkg::insn_matmul_t insn;
  logic                  unused_insn;

  assign insn        = insn_i;
  assign unused_insn = ^insn;  // opcode, tokens and reserved bits are not ours

  logic [AW-1:0] in_w_aw, cb_step, row_step, dh_step;
  logic [15:0]   num_folds;

  assign in_w_aw   = AW'(insn.in_w);
  assign cb_step   = AW'(insn.in_h) * in_w_aw;
  assign row_step  = AW'(insn.sh) * in_w_aw;
  assign dh_step   = AW'(insn.dh) * in_w_aw;
  assign num_folds = 16'(insn.ncb) * 16'(insn.kh) * 16'(insn.kw);

  // ---------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------
  state_e state_q, state_d;

  // instruction constants
  logic [11:0]   ow_last_q, ow_last_d, oh_last_q, oh_last_d;
  logic [3:0]    kw_last_q, kw_last_d, kh_last_q, kh_last_d;
  logic [7:0]    ncb_last_q, ncb_last_d;
  logic [AW-1:0] sw_q, sw_d, dw_q, dw_d;
  logic [AW-1:0] row_step_q, row_step_d, dh_step_q, dh_step_d, cb_step_q, cb_step_d;
  logic [CW-1:0] acc_base_q, acc_base_d;
  logic          accumulate_q, accumulate_d;

  // activation streamer
  logic [11:0]   ox_q, ox_d, oy_q, oy_d;
  logic [3:0]    kx_q, kx_d, ky_q, ky_d;
  logic [7:0]    cb_q, cb_d;
  logic [AW-1:0] aaddr_q, aaddr_d;   // address of the next line
  logic [AW-1:0] row_q, row_d;       // address of (oy, ox = 0) of this fold
  logic [AW-1:0] fb_q, fb_d;         // fold base: cb, ky, kx
  logic [AW-1:0] kyb_q, kyb_d;       // cb, ky, kx = 0
  logic [AW-1:0] cbb_q, cbb_d;       // cb, ky = 0, kx = 0
  logic [CW-1:0] acc_addr_q, acc_addr_d;
  logic          first_q, first_d;   // streaming fold 0
  logic          apar_q, apar_d;     // buffer of the fold being streamed

  // weight loader
  logic [AW-1:0]   waddr_q, waddr_d;
  logic [ColW-1:0] wcol_q, wcol_d;
  logic            wbuf_q, wbuf_d;
  logic [15:0]     wleft_q, wleft_d;  // folds still to load

  // buffers
  logic [1:0]       full_q, full_d;
  logic [HoldW-1:0] hold0_q, hold0_d, hold1_q, hold1_d;

  // reads in flight (granted last cycle)
  logic            apend_q, apend_d;
  logic [CW-1:0]   apend_addr_q, apend_addr_d;
  logic            apend_ow_q, apend_ow_d;
  logic            apend_sel_q, apend_sel_d;
  logic            wpend_q, wpend_d;
  logic [ColW-1:0] wpend_col_q, wpend_col_d;
  logic            wpend_buf_q, wpend_buf_d;

  logic [DrainW-1:0] drain_q, drain_d;

  // ---------------------------------------------------------------------------
  // Requests (flops only) and grants
  // ---------------------------------------------------------------------------
  logic act_fire, wgt_fire, wbuf_free;
  logic fold_end, last_fold;

  assign wbuf_free  = wbuf_q ? (!full_q[1] && hold1_q == '0) : (!full_q[0] && hold0_q == '0);
  assign act_req_o  = (state_q == StRun) && full_q[apar_q];
  assign act_addr_o = aaddr_q;
  assign wgt_req_o  = (state_q == StRun) && (wleft_q != '0) && wbuf_free;
  assign wgt_addr_o = waddr_q;
  assign act_fire   = act_req_o && act_gnt_i;
  assign wgt_fire   = wgt_req_o && wgt_gnt_i;

  assign fold_end  = (ox_q == ow_last_q) && (oy_q == oh_last_q);
  assign last_fold = (kx_q == kw_last_q) && (ky_q == kh_last_q) && (cb_q == ncb_last_q);

  assign insn_ready_o = (state_q == StIdle);
  assign busy_o       = (state_q != StIdle);
  assign done_o       = (state_q == StDrain) && (drain_q == '0);
  assign mac_line_o   = act_rvalid_i;

  // ---------------------------------------------------------------------------
  // Next state
  // ---------------------------------------------------------------------------
  always_comb begin
    state_d      = state_q;
    ow_last_d    = ow_last_q;
    oh_last_d    = oh_last_q;
    kw_last_d    = kw_last_q;
    kh_last_d    = kh_last_q;
    ncb_last_d   = ncb_last_q;
    sw_d         = sw_q;
    dw_d         = dw_q;
    row_step_d   = row_step_q;
    dh_step_d    = dh_step_q;
    cb_step_d    = cb_step_q;
    acc_base_d   = acc_base_q;
    accumulate_d = accumulate_q;
    ox_d         = ox_q;
    oy_d         = oy_q;
    kx_d         = kx_q;
    ky_d         = ky_q;
    cb_d         = cb_q;
    aaddr_d      = aaddr_q;
    row_d        = row_q;
    fb_d         = fb_q;
    kyb_d        = kyb_q;
    cbb_d        = cbb_q;
    acc_addr_d   = acc_addr_q;
    first_d      = first_q;
    apar_d       = apar_q;
    waddr_d      = waddr_q;
    wcol_d       = wcol_q;
    wbuf_d       = wbuf_q;
    wleft_d      = wleft_q;
    full_d       = full_q;
    hold0_d      = (hold0_q != '0) ? hold0_q - 1'b1 : hold0_q;
    hold1_d      = (hold1_q != '0) ? hold1_q - 1'b1 : hold1_q;
    drain_d      = (drain_q != '0) ? drain_q - 1'b1 : drain_q;
    apend_d      = act_fire;
    apend_addr_d = acc_addr_q;
    apend_ow_d   = first_q && !accumulate_q;
    apend_sel_d  = apar_q;
    wpend_d      = wgt_fire;
    wpend_col_d  = wcol_q;
    wpend_buf_d  = wbuf_q;

    // weight loader: one column per grant
    if (wgt_fire) begin
      waddr_d = waddr_q + 1'b1;
      if (wcol_q == ColW'(C - 1)) begin
        wcol_d         = '0;
        full_d[wbuf_q] = 1'b1;
        wbuf_d         = !wbuf_q;
        wleft_d        = wleft_q - 1'b1;
      end else begin
        wcol_d = wcol_q + 1'b1;
      end
    end

    // activation streamer: one line per grant
    if (act_fire) begin
      drain_d    = DrainW'(DrainCycles);
      acc_addr_d = acc_addr_q + 1'b1;
      if (!(ox_q == ow_last_q)) begin
        ox_d    = ox_q + 1'b1;
        aaddr_d = aaddr_q + sw_q;
      end else if (!fold_end) begin
        ox_d    = '0;
        oy_d    = oy_q + 1'b1;
        row_d   = row_q + row_step_q;
        aaddr_d = row_q + row_step_q;
      end else begin
        // last line of the fold: free its buffer, move to the next fold
        ox_d           = '0;
        oy_d           = '0;
        full_d[apar_q] = 1'b0;
        if (apar_q) begin
          hold1_d = HoldW'(HoldCycles);
        end else begin
          hold0_d = HoldW'(HoldCycles);
        end
        apar_d     = !apar_q;
        first_d    = 1'b0;
        acc_addr_d = acc_base_q;
        if (kx_q != kw_last_q) begin
          kx_d = kx_q + 1'b1;
          fb_d = fb_q + dw_q;
        end else if (ky_q != kh_last_q) begin
          kx_d  = '0;
          ky_d  = ky_q + 1'b1;
          kyb_d = kyb_q + dh_step_q;
          fb_d  = kyb_q + dh_step_q;
        end else begin
          kx_d  = '0;
          ky_d  = '0;
          cb_d  = cb_q + 1'b1;
          cbb_d = cbb_q + cb_step_q;
          kyb_d = cbb_q + cb_step_q;
          fb_d  = cbb_q + cb_step_q;
        end
        row_d   = fb_d;
        aaddr_d = fb_d;
      end
    end

    unique case (state_q)
      StIdle: begin
        if (insn_valid_i) begin
          state_d      = abort_i ? StIdle : StRun;
          ow_last_d    = insn.out_w - 1'b1;
          oh_last_d    = insn.out_h - 1'b1;
          kw_last_d    = insn.kw - 1'b1;
          kh_last_d    = insn.kh - 1'b1;
          ncb_last_d   = insn.ncb - 1'b1;
          sw_d         = AW'(insn.sw);
          dw_d         = AW'(insn.dw);
          row_step_d   = row_step;
          dh_step_d    = dh_step;
          cb_step_d    = cb_step;
          acc_base_d   = CW'(insn.acc_addr);
          accumulate_d = insn.accumulate;
          ox_d         = '0;
          oy_d         = '0;
          kx_d         = '0;
          ky_d         = '0;
          cb_d         = '0;
          aaddr_d      = AW'(insn.act_addr);
          row_d        = AW'(insn.act_addr);
          fb_d         = AW'(insn.act_addr);
          kyb_d        = AW'(insn.act_addr);
          cbb_d        = AW'(insn.act_addr);
          acc_addr_d   = CW'(insn.acc_addr);
          first_d      = 1'b1;
          apar_d       = 1'b0;
          waddr_d      = AW'(insn.wgt_addr);
          wcol_d       = '0;
          wbuf_d       = 1'b0;
          wleft_d      = num_folds;
          full_d       = '0;
          hold0_d      = '0;
          hold1_d      = '0;
        end
      end
      StRun: begin
        if (abort_i) begin
          state_d = StAbort;
        end else if (act_fire && fold_end && last_fold) begin
          state_d = StDrain;
        end
      end
      StDrain: begin
        if (drain_q == '0) begin
          state_d = StIdle;  // done_o pulses in this cycle
        end else if (abort_i) begin
          state_d = StAbort;
        end
      end
      StAbort: begin
        if (drain_q == '0 && !wpend_q) begin
          state_d = StIdle;
        end
      end
      default: begin
        state_d = StIdle;
      end
    endcase
  end

  // ---------------------------------------------------------------------------
  // Flops
  // ---------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      full_q       <= '0;
      hold0_q      <= '0;
      hold1_q      <= '0;
      drain_q      <= '0;
      apend_q      <= 1'b0;
      wpend_q      <= 1'b0;
      wleft_q      <= '0;
      wcol_q       <= '0;
      wbuf_q       <= 1'b0;
      apar_q       <= 1'b0;
      first_q      <= 1'b0;
      ox_q         <= '0;
      oy_q         <= '0;
      kx_q         <= '0;
      ky_q         <= '0;
      cb_q         <= '0;
      ow_last_q    <= '0;
      oh_last_q    <= '0;
      kw_last_q    <= '0;
      kh_last_q    <= '0;
      ncb_last_q   <= '0;
      accumulate_q <= 1'b0;
    end else begin
      state_q      <= state_d;
      full_q       <= full_d;
      hold0_q      <= hold0_d;
      hold1_q      <= hold1_d;
      drain_q      <= drain_d;
      apend_q      <= apend_d;
      wpend_q      <= wpend_d;
      wleft_q      <= wleft_d;
      wcol_q       <= wcol_d;
      wbuf_q       <= wbuf_d;
      apar_q       <= apar_d;
      first_q      <= first_d;
      ox_q         <= ox_d;
      oy_q         <= oy_d;
      kx_q         <= kx_d;
      ky_q         <= ky_d;
      cb_q         <= cb_d;
      ow_last_q    <= ow_last_d;
      oh_last_q    <= oh_last_d;
      kw_last_q    <= kw_last_d;
      kh_last_q    <= kh_last_d;
      ncb_last_q   <= ncb_last_d;
      accumulate_q <= accumulate_d;
    end
  end

  // address datapath: every value is loaded when an instruction is taken
  always_ff @(posedge clk_i) begin
    sw_q         <= sw_d;
    dw_q         <= dw_d;
    row_step_q   <= row_step_d;
    dh_step_q    <= dh_step_d;
    cb_step_q    <= cb_step_d;
    acc_base_q   <= acc_base_d;
    aaddr_q      <= aaddr_d;
    row_q        <= row_d;
    fb_q         <= fb_d;
    kyb_q        <= kyb_d;
    cbb_q        <= cbb_d;
    acc_addr_q   <= acc_addr_d;
    waddr_q      <= waddr_d;
    apend_addr_q <= apend_addr_d;
    apend_ow_q   <= apend_ow_d;
    apend_sel_q  <= apend_sel_d;
    wpend_col_q  <= wpend_col_d;
    wpend_buf_q  <= wpend_buf_d;
  end

  // ---------------------------------------------------------------------------
  // Array
  // ---------------------------------------------------------------------------
  npu_array #(
    .Rows  (R),
    .Cols  (C),
    .AddrW (CW)
  ) u_array (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .wload_valid_i   (wgt_rvalid_i),
    .wload_buf_i     (wpend_buf_q),
    .wload_col_i     (wpend_col_q),
    .wload_data_i    (wgt_rdata_i),
    .act_valid_i     (act_rvalid_i),
    .act_sel_i       (apend_sel_q),
    .act_data_i      (act_rdata_i),
    .act_addr_i      (apend_addr_q),
    .act_overwrite_i (apend_ow_q),
    .out_valid_o     (acc_valid_o),
    .out_addr_o      (acc_addr_o),
    .out_overwrite_o (acc_overwrite_o),
    .out_data_o      (acc_data_o)
  );

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // Checks are enabled from the first edge after reset (a flop).
  logic chk_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_q <= 1'b0;
    end else begin
      chk_q <= 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (chk_q) begin
      // read data arrives exactly one cycle after the grant (npu_sp timing)
      assert (act_rvalid_i == apend_q)
        else $error("npu_compute: act rvalid must follow a grant by one cycle");
      assert (wgt_rvalid_i == wpend_q)
        else $error("npu_compute: wgt rvalid must follow a grant by one cycle");
      // requests only while running
      assert (!((act_req_o || wgt_req_o) && state_q != StRun))
        else $error("npu_compute: request outside StRun");
    end
  end
`endif

endmodule
