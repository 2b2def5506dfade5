// npu_vector.sv - the vector unit: ELTWISE, POOL, DWCONV and LUT on
// scratchpad lines of R int8 lanes (docs/ISA.md, "Vector unit").
//
// One instruction at a time (insn_ready_o only when idle); the compute
// queue never runs it beside MATMUL (npu_top routes the queue's head to one
// engine while the other is idle), so it reads through the act port of the
// scratchpad and writes through its own vw port.
//
// Every opcode is the same loop over channel blocks (planes) cb:
//   for each group of up to T = VecGroup consecutive output positions of
//   the plane (raster order):
//     for each tap (POOL/DWCONV: (ky, kx); ELTWISE: A then B; LUT: one):
//       [DWCONV: read the tap's weight line]
//       read the tap's input line of every position of the group and fold
//       it into that position's int32 lanes acc_q[t] (max, sum, MAC, ...)
//   DWCONV reads the plane's 9 parameter lines first; LUT reads its table
//   once per instruction.
// The finish runs beside the reads: once a group's last tap has started,
// each acc_q[t] whose last fold is done goes through R requantization
// lanes (registered inputs, then npu_requant: 3 cycles) into an 8-line
// output buffer, from which the lines are written to DST, while the reads
// go on with the next group. The reads wait (a) in a group's first tap
// (when it is not also its last) for the previous group's finish to have
// taken acc_q[t] before position t's line is read, (b) at the start of a
// group's last tap, and before a plane's parameter lines, for the previous
// group's finish to be over (one group in the finish at a time; the
// parameters are the finish's).
// DWCONV reuses its input lines along kx (ISA 1.2 with SW = 1, 1.3 every
// SW): a "tap" above is then a pass of mc = min(M, taps left in the kernel
// row) taps, M = VecMacs multipliers per lane; the pass reads its mc
// weight lines (w_q[m]), then per segment of the group (its positions in
// one output row, seg of them) the distinct columns j*SW + m*DW (j < seg,
// m < mc) from the segment's first position's tap (ky, kx), in increasing
// order, and folds each into position j with tap m for every such pair.
// A cursor per tap m (jm_q, cm_q: its next position and column) walks
// them: the read is the least column of the taps with positions left, and
// every tap at that column takes it and moves on by SW (a merge of mc
// arithmetic sequences; columns no pair has are never read). Tap 0 comes
// first for every position (its first fold in the first pass), tap mc-1
// last (its last fold in the last pass). The int32 sum is the same in any
// order, so the results are those of one line per tap and position (the
// other ops: mc = seg = 1).
// MAX pooling and LUT use the requant lanes as an identity (multiplier
// 2^31-1 and shift 0 return any int8 unchanged), LUT then translates the
// byte through the table. Cycle cost per group of g positions: 1 +
// taps * g when nothing waits, DWCONV 1 + KH * the sum over a row's passes
// of (mc + the columns of each segment) (common/timing.c has the exact
// counts).
//
// Addressing uses adders only: the position walker keeps (oy, ox) and the
// SP address of the position's tap-(0,0) line; a tap adds
// ky*DH*IN_W + kx*DW. ELTWISE is a plane of PLANE_LINES x 1 positions with
// two taps: tap 1 adds SRC_B - SRC_A (B_MODE 0, modulo the address width)
// or reads the plane's single B line (B_MODE 1, 2). LUT is a plane of
// LINES x 1 positions. The products (IN_H*IN_W, SH*IN_W, DH*IN_W, KH*KW,
// OUT_H*OUT_W) are formed once when the instruction is taken.
//
// Scratchpad timing as npu_compute: the read request and address depend on
// flops only, a granted read returns its line in the next cycle (act port:
// always granted), a refused write request is held. A position's line is
// written only after its last read has returned, and a group writes only
// its own positions' lines, so ELTWISE and LUT may work in place. done_o
// pulses in the cycle after the last write is granted. abort_i stops
// issuing, waits for the read and the lanes in flight, drops unwritten
// lines and goes idle without done_o.
module npu_vector (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // engine instruction port
  input  logic                              insn_valid_i,
  input  logic [255:0]                      insn_i,
  output logic                              insn_ready_o,
  output logic                              done_o,
  output logic                              busy_o,
  input  logic                              abort_i,
  // scratchpad read client
  output logic                              rd_req_o,
  output logic [npu_pkg::SpAddrW-1:0]       rd_addr_o,
  input  logic                              rd_gnt_i,
  input  logic                              rd_rvalid_i,
  input  logic [8*npu_pkg::SpLineBytes-1:0] rd_rdata_i,
  // scratchpad write client
  output logic                              wr_req_o,
  output logic [npu_pkg::SpAddrW-1:0]       wr_addr_o,
  output logic [8*npu_pkg::SpLineBytes-1:0] wr_wdata_o,
  input  logic                              wr_gnt_i,
  // energy events: a line folded into the lanes, a line into the requant lanes
  output logic [$clog2(npu_pkg::VecMacs+1)-1:0] fold_o,  // products (lines times taps)
  output logic                              rq_line_o
);
  localparam int unsigned R        = npu_pkg::ArrayRows;
  localparam int unsigned AW       = npu_pkg::SpAddrW;
  localparam int unsigned T        = npu_pkg::VecGroup;
  localparam int unsigned TW       = $clog2(T + 1);
  localparam int unsigned TIW      = $clog2(T);   // index of acc_q
  localparam int unsigned M        = npu_pkg::VecMacs;  // multipliers per lane
  localparam int unsigned MCW      = $clog2(M + 1);
  localparam int unsigned IW       = $clog2(T * 15 + (M - 1) * 15 + 1);  // column of a segment
  localparam int unsigned JW       = 7;            // table / parameter line counter
  localparam int unsigned TabIW    = $clog2(LutLines * R);
  localparam int unsigned LutLines = (npu_pkg::LutEntries + R - 1) / R;
  localparam int unsigned PW       = 25;          // positions in a plane (< 2^24 + 1)
  localparam int unsigned OutDepth = 8;
  localparam int unsigned OW       = $clog2(OutDepth);
  localparam int unsigned DW8      = 8 * R;

  if (AW > 24 || R % 4 != 0 || npu_pkg::SpLineBytes != R || T < 2 || LutLines > 2**JW || M < 1 || M > 7) begin : g_bad_cfg
    $fatal(1, "npu_vector: unsupported configuration");
  end

  typedef enum logic [2:0] {KAdd, KMul, KMax, KAvg, KDw, KLut} kind_e;
  typedef enum logic [3:0] {
    SIdle, SStart, STable, SPlane, SParam, SGroup, SWgt, STap, SEnd, SAbort
  } state_e;
  // what a read brings back
  typedef enum logic [1:0] {TgData, TgWgt, TgParam, TgTable} tag_e;

  // ---------------------------------------------------------------------------
  // Instruction fields, normalised when the instruction is taken
  // ---------------------------------------------------------------------------
  npu_pkg::insn_eltwise_t ie;
  npu_pkg::insn_pool_t    ip;
  npu_pkg::insn_dwconv_t  id;
  npu_pkg::insn_lut_t     il;
  assign ie = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign ip = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign id = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign il = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)


  // ---------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------
  state_e        state_q;
  kind_e         kind_q;
  // instruction constants
  logic [AW-1:0] sw_q, dw_q, sh_step_q, dh_step_q, cb_in_q, wstep_q;
  logic [23:0]   ow_last_q;
  logic [15:0]   ncb_q;
  logic [7:0]    kw_last_q, kh_last_q;
  logic          reuse_q;   // DWCONV: passes of up to M taps kx
  logic [3:0]    dwr_q, swr_q;  // its DW and SW
  logic [PW-1:0] cb_out_q;
  logic [1:0]    bmode_q;
  logic [7:0]    za_q, zb_q, zo_q, lo_q, hi_q;
  logic [15:0]   ma_q, mb_q;
  logic [31:0]   mult_q;
  logic [4:0]    shift_q;
  // plane
  logic [15:0]   cb_q;
  logic [AW-1:0] cb_src_q, cb_dst_q, cb_wgt_q, cb_par_q, cb_b_q;
  // group start
  logic [23:0]   gs_ox_q;
  logic [11:0]   gs_oy_q;
  logic [AW-1:0] gs_row_q, gs_pos_q, gs_dst_q;
  logic [PW-1:0] gs_left_q;
  logic [TW-1:0] gsize_q;
  // position walker (within one tap)
  logic [23:0]   ox_q;
  logic [11:0]   oy_q;
  logic [AW-1:0] row_q, pos_q;
  logic [TW-1:0] t_q;      // the position (reuse: the segment's first)
  logic [TW-1:0] jm_q [M]; // reuse: tap m's next position in the segment
  logic [IW-1:0] cm_q [M]; // its column, jm_q[m]*SW + m*DW
  logic [JW-1:0] wj_q;     // the pass's weight line
  // tap
  logic [7:0]    kx_q, ky_q;
  logic [AW-1:0] tap_off_q, kyoff_q, wtap_q;
  logic          tap_first_q;
  // parameter / table line counter
  logic [JW-1:0] pj_q;
  // finish: one group at a time (fin_on_q), its size, next position to
  // requantize, positions whose last fold is done, destination
  logic          fin_on_q;
  logic [TW-1:0] fg_q, ft_q, fcnt_q;
  logic [AW-1:0] fdst_q;

  // read request (held until granted) and the line coming back
  logic          rd_req_q;
  logic [AW-1:0] rd_addr_q;
  tag_e          rd_tag_q, ret_tag_q;
  logic [M-1:0]  rd_srv_q, ret_srv_q;       // the taps a data line feeds
  logic [TIW-1:0] rd_tgt_q [M], ret_tgt_q [M];  // and their positions
  logic          rd_first_q, ret_first_q, rd_b_q, ret_b_q, rd_last_q, ret_last_q;
  logic [JW-1:0] rd_j_q, ret_j_q;
  logic          ret_v_q;

  // per-position lanes, parameters, weights, table
  logic [32*R-1:0] acc_q [T];
  logic [DW8-1:0]  w_q [M];
  logic [32*R-1:0] bias_q, pmult_q;
  logic [DW8-1:0]  pshift_q;
  logic [7:0]      table_q [LutLines * R];

  // requant lanes and output buffer
  logic              fin_fire;
  logic              p0_q, p1_q, p2_q;     // lane inputs / stage 1 / stage 2 hold a line
  logic [AW-1:0]     fa0_q, fa1_q, fa2_q;  // its destination line
  logic              lane_v;
  logic [DW8-1:0]    lane_q;
  logic [DW8-1:0]    ob_data_q [OutDepth];
  logic [AW-1:0]     ob_addr_q [OutDepth];
  logic [OW-1:0]     ob_wp_q, ob_rp_q;
  logic [OW:0]       ob_cnt_q;

  // ---------------------------------------------------------------------------
  // Clock gate: idle (SIdle) every flop holds (no read in flight, the finish
  // and the output buffer drained: SEnd and SAbort leave only so), and only
  // an instruction can start the unit; an abort while idle does nothing
  // ---------------------------------------------------------------------------
  logic gclk;
  npu_icg u_cg (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (insn_valid_i || state_q != SIdle),
    .gclk_o (gclk)
  );

  // ---------------------------------------------------------------------------
  // Sequencer
  // ---------------------------------------------------------------------------
  logic can_issue, rd_fire, rd_idle, out_room, group_tap_end, taps_end;
  logic tap_go, param_go, handover, last_ret;
  assign can_issue = !rd_req_q || rd_gnt_i;
  assign rd_fire   = rd_req_q && rd_gnt_i;
  assign rd_idle   = !rd_req_q && !ret_v_q;
  // lines in the lanes plus lines buffered must leave room for one more
  assign out_room  = (OW+1)'(ob_cnt_q) + (OW+1)'(p0_q) + (OW+1)'(p1_q) + (OW+1)'(p2_q)
                     < (OW+1)'(OutDepth);
  assign fin_fire  = fin_on_q && ft_q < fcnt_q && out_room && state_q != SAbort;
  // a pass: mc taps kx of one kernel row (one tap unless reuse); a segment:
  // seg positions of one output row (one position unless reuse), read as
  // its distinct columns j*SW + m*DW (j < seg, m < mc) in increasing order:
  // the next read is the least column of the taps with positions left
  // (act), it feeds every such tap at that column (srv).
  // This logic is used only in SWgt (mc) and STap (all of it; handover is
  // 0 elsewhere by its definition), so it is worked out only in those two
  // states and is constant in the others: an idle unit, or one reading
  // parameters or finishing, costs a simulator one test here instead of
  // the whole walker (docs/PERFORMANCE.md, "Simulation speed").
  logic [MCW-1:0] mc;
  logic [TW-1:0]  seg;
  logic [IW-1:0]  span, col;
  logic [M-1:0]   srv;
  logic           seg_end, srv_last;
  // the position after the walker's segment
  logic [23:0]   sx_ox;
  logic [11:0]   sx_oy;
  logic [AW-1:0] sx_row, sx_pos;
  // the data line of the walker's position (segment line) for the current tap
  logic [AW-1:0] data_addr;
  logic is_elt;
  // the walker's temporaries (set in every path: a synthesizer reads a
  // variable left alone on some path as a latch, Yosys refuses it)
  logic [8:0]     kw_left;
  logic [TW-1:0]  grp_left, t0;
  logic [24:0]    row_left;
  logic [IW-1:0]  col0_end;
  logic [M-1:0]   act;
  logic [23:0]    nx_ox;   // the position after the walker's
  logic [11:0]    nx_oy;
  logic [AW-1:0]  nx_row, nx_pos;
  logic           hand_stall, first_stall;
  always_comb begin
    mc = '0; seg = '0; span = '0; col = '0; srv = '0; seg_end = 1'b0; srv_last = 1'b0;
    sx_ox = '0; sx_oy = '0; sx_row = '0; sx_pos = '0; data_addr = '0; is_elt = 1'b0;
    group_tap_end = 1'b0; taps_end = 1'b0; tap_go = 1'b0; handover = 1'b0;
    kw_left = '0; grp_left = '0; t0 = '0; row_left = '0; col0_end = '0; act = '0;
    nx_ox = '0; nx_oy = '0; nx_row = '0; nx_pos = '0; hand_stall = 1'b0; first_stall = 1'b0;
    if (state_q == STap || state_q == SWgt) begin : b_walk
      kw_left  = {1'b0, kw_last_q} - {1'b0, kx_q} + 9'd1;
      mc       = !reuse_q ? MCW'(1) : (kw_left > 9'(M)) ? MCW'(M) : MCW'(kw_left);
      grp_left = gsize_q - t_q;
      row_left = {1'b0, ow_last_q} - {1'b0, ox_q} + 25'd1;
      seg      = !reuse_q ? TW'(1) : (row_left < 25'(grp_left)) ? TW'(row_left) : grp_left;
      span     = (IW'(mc) - IW'(1)) * IW'(dwr_q);
      col      = '1;
      seg_end  = 1'b1;
      for (int m = 0; m < M; m++) begin
        act[m] = MCW'(m) < mc && jm_q[m] < seg;
        if (act[m] && cm_q[m] < col) col = cm_q[m];
      end
      for (int m = 0; m < M; m++) begin
        srv[m] = act[m] && cm_q[m] == col;
        // the segment ends when this read leaves no tap a position
        if (act[m] && !(srv[m] && jm_q[m] + TW'(1) == seg)) seg_end = 1'b0;
        if (MCW'(m) + MCW'(1) == mc) srv_last = srv[m];
      end
      // tap 0's column after the segment: seg*SW, the step to the next one
      col0_end      = srv[0] ? cm_q[0] + IW'(swr_q) : cm_q[0];
      t0            = t_q + jm_q[0];
      group_tap_end = seg_end && (t_q + seg == gsize_q);
      taps_end      = 9'(kx_q) + 9'(mc) - 9'd1 == 9'(kw_last_q) && ky_q == kh_last_q;
      // (b): the last pass starts when the previous group's finish is over (a
      // segment's first read is tap 0's of its first position)
      hand_stall  = taps_end && t_q == '0 && jm_q[0] == '0 && fin_on_q;
      // (a): acc_q[t] is overwritten by the first pass (its tap 0) only after
      // the finish took it
      first_stall = tap_first_q && !taps_end && fin_on_q && srv[0]
                    && t0 < fg_q && ft_q <= t0;
      tap_go      = can_issue && !hand_stall && !first_stall;
      handover    = state_q == STap && tap_go && taps_end && t_q == '0 && jm_q[0] == '0;

      if (ox_q == ow_last_q) begin
        nx_ox  = '0;
        nx_oy  = oy_q + 12'd1;
        nx_row = row_q + sh_step_q;
        nx_pos = row_q + sh_step_q;
      end else begin
        nx_ox  = ox_q + 24'd1;
        nx_oy  = oy_q;
        nx_row = row_q;
        nx_pos = pos_q + sw_q;
      end
      if (!reuse_q || row_left == 25'(seg)) begin
        sx_ox  = nx_ox;  // reuse: the segment ends its row, as the walker's position
        sx_oy  = nx_oy;
        sx_row = nx_row;
        sx_pos = nx_pos;
        if (reuse_q) begin
          sx_ox  = '0;
          sx_oy  = oy_q + 12'd1;
          sx_row = row_q + sh_step_q;
          sx_pos = row_q + sh_step_q;
        end
      end else begin
        sx_ox  = ox_q + 24'(seg);
        sx_oy  = oy_q;
        sx_row = row_q;
        sx_pos = pos_q + AW'(col0_end);
      end
      is_elt    = kind_q == KAdd || kind_q == KMul;
      data_addr = (is_elt && !tap_first_q && bmode_q != 2'd0)
                  ? cb_b_q : pos_q + tap_off_q + AW'(col);
    end
  end
  assign param_go = can_issue && !fin_on_q;
  assign last_ret = ret_v_q && ret_tag_q == TgData && ret_last_q && state_q != SAbort;

  logic [PW-1:0] gsize_full;
  assign gsize_full = (gs_left_q > PW'(T)) ? PW'(T) : gs_left_q;

  always_ff @(posedge gclk) begin
    if (!rst_ni) begin
      state_q  <= SIdle;
      rd_req_q <= 1'b0;
      ret_v_q  <= 1'b0;
      fin_on_q <= 1'b0;
    end else begin
      ret_v_q <= rd_fire;
      if (rd_fire) rd_req_q <= 1'b0;
      if (handover) fin_on_q <= 1'b1;
      else if (fin_fire && ft_q + 1'b1 == fg_q) fin_on_q <= 1'b0;
      unique case (state_q)
        SIdle: if (insn_valid_i) state_q <= SStart;
        SStart: state_q <= (kind_q == KLut && ncb_q != '0) ? STable : SPlane;
        STable: if (can_issue) begin
          rd_req_q <= 1'b1;
          if (pj_q == JW'(LutLines - 1)) state_q <= SPlane;
        end
        SPlane: begin
          if (cb_q == ncb_q || cb_out_q == '0) state_q <= SEnd;
          else if (kind_q == KDw) state_q <= SParam;
          else state_q <= SGroup;
        end
        SParam: if (param_go) begin
          rd_req_q <= 1'b1;
          if (pj_q == JW'(npu_pkg::DwParamLines - 1)) state_q <= SGroup;
        end
        SGroup: state_q <= (kind_q == KDw) ? SWgt : STap;
        SWgt: if (can_issue) begin
          rd_req_q <= 1'b1;
          if (wj_q + JW'(1) == JW'(mc)) state_q <= STap;
        end
        STap: if (tap_go) begin
          rd_req_q <= 1'b1;
          if (group_tap_end)
            state_q <= !taps_end ? (kind_q == KDw ? SWgt : STap)
                     : (gs_left_q == PW'(gsize_q)) ? SPlane : SGroup;
        end
        SEnd: if (ob_cnt_q == '0 && !p0_q && !p1_q && !p2_q && rd_idle && !fin_on_q) state_q <= SIdle;
        SAbort: if (rd_idle && !p0_q && !p1_q && !p2_q) state_q <= SIdle;
        default: state_q <= SIdle;
      endcase
      if (abort_i && state_q != SIdle && !done_o) begin
        state_q  <= SAbort;
        fin_on_q <= 1'b0;
        if (!rd_fire) rd_req_q <= 1'b0;
      end
    end
  end

  // datapath registers of the sequencer (no reset: loaded before use). The
  // instruction is normalised here, inside the clocked block, so that its
  // multipliers cost a simulator nothing while the unit is idle.
  always_ff @(posedge gclk) begin
    kind_e         n_kind;
    logic [AW-1:0] n_src, n_dst, n_wgt, n_par, n_b, n_dw, n_dh_step, n_sh_step, n_sw;
    logic [AW-1:0] n_in_w;  // only in address arithmetic (modulo 2^AW)
    logic [23:0]   n_out_w;
    logic [11:0]   n_in_h, n_out_h;
    logic [15:0]   n_ncb;
    logic [7:0]    n_kw, n_kh;
    logic [AW-1:0] n_cb_in;
    logic [PW-1:0] n_cb_out;
    logic [1:0]    n_bmode;
    logic [7:0]    n_za, n_zb, n_zo, n_lo, n_hi;
    logic [15:0]   n_ma, n_mb;
    logic [31:0]   n_mult;
    logic [4:0]    n_shift;
    logic [3:0]    n_dil_h;
    logic [7:0]    n_sh;
    logic          n_reuse;
    unique case (state_q)
      SIdle: if (insn_valid_i) begin
        n_kind  = KLut;
        n_src   = '0; n_dst = '0; n_wgt = '0; n_par = '0; n_b = '0;
        n_in_w  = AW'(1); n_in_h = 12'd1; n_out_w = 24'd1; n_out_h = 12'd1;
        n_ncb   = 16'd1; n_kw = 8'd1; n_kh = 8'd1; n_sw = AW'(1); n_sh = 8'd1;
        n_dil_h = 4'd1; n_bmode = 2'd0;
        n_za = '0; n_zb = '0; n_zo = '0; n_lo = 8'h80; n_hi = 8'h7f;
        n_ma = '0; n_mb = '0; n_mult = 32'h7fff_ffff; n_shift = '0;
        n_dw = AW'(1);
        n_reuse = 1'b0;
        unique case (insn_i[7:0])
          npu_pkg::OpEltwise: begin
            n_kind  = ie.func[0] ? KMul : KAdd;
            n_src   = AW'(ie.src_a); n_b = AW'(ie.src_b); n_dst = AW'(ie.dst);
            n_in_w  = AW'(ie.plane_lines); n_out_w = ie.plane_lines;
            n_ncb   = ie.planes;
            n_kw    = 8'd2;                               // taps A, B
            n_bmode = ie.b_mode;
            n_dw    = AW'(ie.src_b) - AW'(ie.src_a);      // tap B, B_MODE 0
            n_za = ie.zp_a; n_zb = ie.zp_b; n_zo = ie.zp_out; n_lo = ie.clip_lo; n_hi = ie.clip_hi;
            n_ma = ie.mult_a; n_mb = ie.mult_b; n_mult = ie.mult; n_shift = ie.shift;
          end
          npu_pkg::OpPool: begin
            n_kind  = ip.func[0] ? KAvg : KMax;
            n_src   = AW'(ip.src); n_dst = AW'(ip.dst);
            n_in_w  = AW'(ip.in_w); n_in_h = ip.in_h; n_out_w = 24'(ip.out_w); n_out_h = ip.out_h;
            n_ncb   = 16'(ip.ncb);
            n_kw    = ip.kw; n_kh = ip.kh; n_sw = AW'(ip.sw); n_sh = ip.sh;
            n_dil_h = ip.dh; n_dw = AW'(ip.dw);
            n_za = ip.zp_in; n_zo = ip.zp_out; n_lo = ip.clip_lo; n_hi = ip.clip_hi;
            if (ip.func[0]) begin n_mult = ip.mult; n_shift = ip.shift; end
          end
          npu_pkg::OpDwconv: begin
            n_kind  = KDw;
            n_src   = AW'(id.src); n_dst = AW'(id.dst); n_wgt = AW'(id.wgt); n_par = AW'(id.param);
            n_in_w  = AW'(id.in_w); n_in_h = id.in_h; n_out_w = 24'(id.out_w); n_out_h = id.out_h;
            n_ncb   = 16'(id.ncb);
            n_kw    = 8'(id.kw); n_kh = 8'(id.kh); n_sw = AW'(id.sw); n_sh = 8'(id.sh);
            n_dil_h = id.dh; n_dw = AW'(id.dw);
            n_za = id.zp_in; n_zo = id.zp_out; n_lo = id.clip_lo; n_hi = id.clip_hi;
            n_reuse = 1'b1;
          end
          default: begin  // LUT
            n_kind  = KLut;
            n_src   = AW'(il.src); n_dst = AW'(il.dst); n_par = AW'(il.table_);
            n_in_w  = AW'(il.lines); n_out_w = il.lines;
            n_ncb   = (il.lines == '0) ? 16'd0 : 16'd1;
          end
        endcase
        n_cb_in   = AW'(n_in_h) * AW'(n_in_w);
        n_cb_out  = PW'(n_out_h) * PW'(n_out_w);
        n_sh_step = AW'(n_sh) * AW'(n_in_w);
        n_dh_step = AW'(n_dil_h) * AW'(n_in_w);
        kind_q    <= n_kind;
        reuse_q   <= n_reuse;
        dwr_q     <= id.dw;
        swr_q     <= id.sw;
        sw_q      <= n_sw;
        dw_q      <= n_dw;
        sh_step_q <= n_sh_step;
        dh_step_q <= n_dh_step;
        cb_in_q   <= AW'(n_cb_in);
        wstep_q   <= AW'(n_kh) * AW'(n_kw);
        ow_last_q <= n_out_w - 24'd1;
        ncb_q     <= n_ncb;
        kw_last_q <= n_kw - 8'd1;
        kh_last_q <= n_kh - 8'd1;
        cb_out_q  <= n_cb_out;
        bmode_q   <= n_bmode;
        za_q <= n_za; zb_q <= n_zb; zo_q <= n_zo; lo_q <= n_lo; hi_q <= n_hi;
        ma_q <= n_ma; mb_q <= n_mb; mult_q <= n_mult; shift_q <= n_shift;
        cb_q      <= '0;
        cb_src_q  <= n_src;
        cb_dst_q  <= n_dst;
        cb_wgt_q  <= n_wgt;
        cb_par_q  <= n_par;
        cb_b_q    <= n_b;
        gs_ox_q   <= '0;
        gs_oy_q   <= '0;
        gs_row_q  <= n_src;
        gs_pos_q  <= n_src;
        gs_dst_q  <= n_dst;
        gs_left_q <= n_cb_out;
        pj_q      <= '0;
      end
      STable: if (can_issue) begin
        rd_addr_q <= cb_par_q + AW'(pj_q);
        rd_tag_q  <= TgTable;
        rd_j_q    <= pj_q;
        pj_q      <= pj_q + JW'(1);
      end
      SPlane: pj_q <= '0;
      SParam: if (param_go) begin
        rd_addr_q <= cb_par_q + AW'(pj_q);
        rd_tag_q  <= TgParam;
        rd_j_q    <= pj_q;
        pj_q      <= pj_q + JW'(1);
      end
      SGroup: begin
        gsize_q     <= TW'(gsize_full);
        ox_q        <= gs_ox_q;
        oy_q        <= gs_oy_q;
        row_q       <= gs_row_q;
        pos_q       <= gs_pos_q;
        t_q         <= '0;
        for (int m = 0; m < M; m++) begin
          jm_q[m] <= '0;
          cm_q[m] <= IW'(m) * IW'(dwr_q);
        end
        wj_q        <= '0;
        kx_q        <= '0;
        ky_q        <= '0;
        tap_off_q   <= '0;
        kyoff_q     <= '0;
        wtap_q      <= cb_wgt_q;
        tap_first_q <= 1'b1;
      end
      SWgt: if (can_issue) begin
        rd_addr_q <= wtap_q;
        rd_tag_q  <= TgWgt;
        rd_j_q    <= wj_q;
        wtap_q    <= wtap_q + AW'(1);
        wj_q      <= wj_q + JW'(1);
      end
      STap: if (tap_go) begin
        rd_addr_q  <= data_addr;
        rd_tag_q   <= TgData;
        rd_srv_q   <= srv;
        for (int m = 0; m < M; m++) rd_tgt_q[m] <= TIW'(t_q + jm_q[m]);
        rd_first_q <= tap_first_q;
        rd_last_q  <= taps_end && srv_last;
        rd_b_q     <= kx_q[0] && is_elt;
        for (int m = 0; m < M; m++) begin
          if (!seg_end) begin
            // next read of the segment: the taps it fed move on
            if (srv[m]) begin
              jm_q[m] <= jm_q[m] + TW'(1);
              cm_q[m] <= cm_q[m] + IW'(swr_q);
            end
          end else begin
            jm_q[m] <= '0;
            cm_q[m] <= IW'(m) * IW'(dwr_q);
          end
        end
        if (!seg_end) begin
          // next read of the segment (above)
        end else if (!group_tap_end) begin
          // next position (segment) of the group
          t_q   <= t_q + seg;
          ox_q  <= sx_ox;
          oy_q  <= sx_oy;
          row_q <= sx_row;
          pos_q <= sx_pos;
        end else if (!taps_end) begin
          // next pass: back to the group's first position
          wj_q        <= '0;
          t_q         <= '0;
          ox_q        <= gs_ox_q;
          oy_q        <= gs_oy_q;
          row_q       <= gs_row_q;
          pos_q       <= gs_pos_q;
          tap_first_q <= 1'b0;
          if (9'(kx_q) + 9'(mc) - 9'd1 == 9'(kw_last_q)) begin
            kx_q      <= '0;
            ky_q      <= ky_q + 8'd1;
            kyoff_q   <= kyoff_q + dh_step_q;
            tap_off_q <= kyoff_q + dh_step_q;
          end else begin
            kx_q      <= kx_q + 8'(mc);
            tap_off_q <= tap_off_q + (reuse_q ? AW'(span) + AW'(dwr_q) : dw_q);
          end
        end else if (gs_left_q == PW'(gsize_q)) begin
          // last read of the plane's last group: the next plane
          cb_q      <= cb_q + 16'd1;
          cb_src_q  <= cb_src_q + cb_in_q;
          cb_dst_q  <= cb_dst_q + AW'(cb_out_q);
          cb_wgt_q  <= cb_wgt_q + wstep_q;
          cb_par_q  <= cb_par_q + AW'(npu_pkg::DwParamLines);
          cb_b_q    <= cb_b_q + ((bmode_q == 2'd1) ? AW'(1) : AW'(0));
          gs_ox_q   <= '0;
          gs_oy_q   <= '0;
          gs_row_q  <= cb_src_q + cb_in_q;
          gs_pos_q  <= cb_src_q + cb_in_q;
          gs_dst_q  <= cb_dst_q + AW'(cb_out_q);
          gs_left_q <= cb_out_q;
        end else begin
          // last read of the group: the next group starts after its last position
          gs_ox_q   <= sx_ox;
          gs_oy_q   <= sx_oy;
          gs_row_q  <= sx_row;
          gs_pos_q  <= sx_pos;
          gs_dst_q  <= gs_dst_q + AW'(gsize_q);
          gs_left_q <= gs_left_q - PW'(gsize_q);
        end
      end
      default: ;
    endcase
    // the finish: taken over at the start of a group's last tap
    if (handover) begin
      fg_q   <= gsize_q;
      fdst_q <= gs_dst_q;
      ft_q   <= '0;
      fcnt_q <= '0;
    end else begin
      if (fin_fire) ft_q <= ft_q + 1'b1;
      if (last_ret) fcnt_q <= fcnt_q + 1'b1;
    end
  end

  // the multipliers a returning data line feeds: tap m of the pass adds it to
  // the position its read recorded for it (ret_tgt_q[m]) when it served m
  logic [M-1:0]   fv;
  logic [TIW-1:0] ftgt [M];
  always_comb begin
    for (int m = 0; m < M; m++) begin
      fv[m]   = ret_v_q && state_q != SAbort && ret_tag_q == TgData && ret_srv_q[m];
      ftgt[m] = ret_tgt_q[m];
    end
  end
  always_comb begin
    fold_o = '0;
    for (int m = 0; m < M; m++) fold_o = fold_o + MCW'(fv[m]);
  end
  assign rq_line_o = p0_q;

  assign rd_req_o     = rd_req_q;
  assign rd_addr_o    = rd_addr_q;
  assign insn_ready_o = state_q == SIdle;
  assign busy_o       = state_q != SIdle;
  assign done_o       = state_q == SEnd && ob_cnt_q == '0 && !p0_q && !p1_q && !p2_q && rd_idle
                        && !fin_on_q;

  // the read of the previous cycle's grant comes back now
  always_ff @(posedge gclk) begin
    if (rd_fire) begin
      ret_tag_q   <= rd_tag_q;
      ret_srv_q   <= rd_srv_q;
      for (int m = 0; m < M; m++) ret_tgt_q[m] <= rd_tgt_q[m];
      ret_first_q <= rd_first_q;
      ret_last_q  <= rd_last_q;
      ret_b_q     <= rd_b_q;
      ret_j_q     <= rd_j_q;
    end
  end

  // ---------------------------------------------------------------------------
  // Lanes: fold a returning line into acc_q[t]; parameters, weights, table
  // ---------------------------------------------------------------------------
  // one lane of the fold: o = the lane so far, b = the returning byte
  function automatic logic [31:0] fold_lane(logic [2:0] kind, logic first, logic isb,
                                            logic [31:0] o, logic [7:0] b, logic [7:0] w,
                                            logic [7:0] za, logic [7:0] zb,
                                            logic [15:0] ma, logic [15:0] mb);
    logic signed [31:0] so, v, d, sw, sma, smb;
    so  = $signed(o);
    v   = {{24{b[7]}}, b};
    d   = v - (isb ? {{24{zb[7]}}, zb} : {{24{za[7]}}, za});
    sw  = {{24{w[7]}}, w};
    sma = {{16{ma[15]}}, ma};
    smb = {{16{mb[15]}}, mb};
    // all products are exact in 32 bits (docs/ISA.md)
    if (kind == KMax)      fold_lane = (first || v > so) ? v : so;
    else if (kind == KAvg) fold_lane = (first ? 32'sd0 : so) + d;
    else if (kind == KDw)  fold_lane = (first ? 32'sd0 : so) + d * sw;
    else if (kind == KAdd) fold_lane = isb ? so + smb * d : sma * d;
    else if (kind == KMul) fold_lane = isb ? so * d : d;
    else                   fold_lane = v;  // LUT: the byte itself
  endfunction

  // a further multiplier of a DWCONV lane (tap m > 0 of a pass): the
  // product of two int8 differences fits 17 bits
  function automatic logic [31:0] dw_lane(logic [31:0] o, logic [7:0] b, logic [7:0] w,
                                          logic [7:0] za);
    logic signed [8:0]  d;
    logic signed [16:0] pr;
    d  = $signed({b[7], b}) - $signed({za[7], za});
    pr = d * $signed(w);
    dw_lane = o + {{15{pr[16]}}, pr};
  endfunction

  always_ff @(posedge gclk) begin
    logic [32*R-1:0] ov, nv;
    if (ret_v_q && state_q != SAbort) begin
      unique case (ret_tag_q)
        TgData: begin
          for (int m = 0; m < M; m++) begin
            if (fv[m]) begin
              ov = acc_q[ftgt[m]];
              for (int r = 0; r < R; r++)
                nv[32*r +: 32] = (m == 0)
                  ? fold_lane(kind_q, ret_first_q, ret_b_q, ov[32*r +: 32],
                              rd_rdata_i[8*r +: 8], w_q[0][8*r +: 8], za_q, zb_q, ma_q, mb_q)
                  : dw_lane(ov[32*r +: 32], rd_rdata_i[8*r +: 8], w_q[m][8*r +: 8], za_q);
              acc_q[ftgt[m]] <= nv;
            end
          end
        end
        TgWgt: for (int m = 0; m < M; m++) if (ret_j_q == JW'(m)) w_q[m] <= rd_rdata_i;
        TgParam: begin
          if (ret_j_q < JW'(4))       bias_q[ret_j_q[1:0] * DW8 +: DW8] <= rd_rdata_i;
          else if (ret_j_q < JW'(8))  pmult_q[ret_j_q[1:0] * DW8 +: DW8] <= rd_rdata_i;
          else                        pshift_q <= rd_rdata_i;
        end
        default: begin  // TgTable
          for (int i = 0; i < R; i++) table_q[32'(ret_j_q) * R + i] <= rd_rdata_i[8*i +: 8];
        end
      endcase
    end
  end

  // ---------------------------------------------------------------------------
  // Finish: R requant lanes, then the output buffer and the write port
  // ---------------------------------------------------------------------------
  // the lanes' inputs are registered when a line is issued (p0), so an idle
  // unit has no combinational datapath for a simulator to evaluate
  logic [32*R-1:0] f_acc_q, f_bias_q, f_mult_q;
  logic [8*R-1:0]  f_shift_q;
  logic [7:0]      f_zp_q, f_lo_q, f_hi_q;
  always_ff @(posedge gclk) begin
    if (fin_fire) begin
      f_acc_q <= acc_q[ft_q[TIW-1:0]];
      for (int r = 0; r < R; r++) begin
        if (kind_q == KDw) begin
          f_bias_q[32*r +: 32] <= bias_q[32*r +: 32];
          f_mult_q[32*r +: 32] <= pmult_q[32*r +: 32];
          f_shift_q[8*r +: 8]  <= pshift_q[8*r +: 8];
        end else if (kind_q == KMax || kind_q == KLut) begin
          // identity: srdhm(x, 2^31-1) = x for any int8 x, shift 0
          f_bias_q[32*r +: 32] <= '0;
          f_mult_q[32*r +: 32] <= 32'h7fff_ffff;
          f_shift_q[8*r +: 8]  <= '0;
        end else begin
          f_bias_q[32*r +: 32] <= '0;
          f_mult_q[32*r +: 32] <= mult_q;
          f_shift_q[8*r +: 8]  <= 8'(shift_q);
        end
      end
      f_zp_q <= (kind_q == KMax || kind_q == KLut) ? 8'd0 : zo_q;
      f_lo_q <= (kind_q == KLut) ? 8'h80 : lo_q;
      f_hi_q <= (kind_q == KLut) ? 8'h7f : hi_q;
    end
  end

  npu_requant #(.Lanes(R), .ShiftW(8)) u_rq (
    .clk_i   (gclk),
    .rst_ni  (rst_ni),
    .valid_i (p0_q),
    .acc_i   (f_acc_q),
    .bias_i  (f_bias_q),
    .mult_i  (f_mult_q),
    .shift_i (f_shift_q),
    .zp_i    (f_zp_q),
    .lo_i    (f_lo_q),
    .hi_i    (f_hi_q),
    .valid_o (lane_v),
    .q_o     (lane_q)
  );

  logic ob_push, ob_pop;
  assign ob_push = p2_q && state_q != SAbort;
  assign ob_pop  = wr_req_o && wr_gnt_i;

  always_ff @(posedge gclk) begin
    if (!rst_ni) begin
      p0_q     <= 1'b0;
      p1_q     <= 1'b0;
      p2_q     <= 1'b0;
      ob_wp_q  <= '0;
      ob_rp_q  <= '0;
      ob_cnt_q <= '0;
    end else begin
      p0_q <= fin_fire;
      p1_q <= p0_q;
      p2_q <= p1_q;
      if (state_q == SAbort) begin
        ob_rp_q  <= ob_wp_q;
        ob_cnt_q <= '0;
      end else begin
        if (ob_push) ob_wp_q <= ob_wp_q + OW'(1);
        if (ob_pop)  ob_rp_q <= ob_rp_q + OW'(1);
        ob_cnt_q <= ob_cnt_q + (OW+1)'(ob_push) - (OW+1)'(ob_pop);
      end
    end
  end

  always_ff @(posedge gclk) begin
    if (fin_fire) fa0_q <= fdst_q + AW'(ft_q);
    if (p0_q)     fa1_q <= fa0_q;
    if (p1_q)     fa2_q <= fa1_q;
    if (ob_push) begin
      ob_addr_q[ob_wp_q] <= fa2_q;
      if (kind_q == KLut) begin
        for (int r = 0; r < R; r++)
          ob_data_q[ob_wp_q][8*r +: 8] <= table_q[TabIW'({~lane_q[8*r+7], lane_q[8*r +: 7]})];
      end else begin
        ob_data_q[ob_wp_q] <= lane_q;
      end
    end
  end

  assign wr_req_o   = ob_cnt_q != '0 && state_q != SAbort;
  assign wr_addr_o  = ob_addr_q[ob_rp_q];
  assign wr_wdata_o = ob_data_q[ob_rp_q];

  // the lanes' valid equals p2_q by construction
  logic unused;
  assign unused = ^{lane_v, ie, ip, id, il, gsize_full[PW-1:TW], pshift_q};

`ifndef SYNTHESIS
  // checks from the first edge after reset (a flop)
  logic chk_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) chk_q <= 1'b0;
    else         chk_q <= 1'b1;
  end
  always_ff @(posedge clk_i) begin
    if (chk_q) begin
      assert (rd_rvalid_i == ret_v_q)
        else $error("npu_vector: read data must follow its grant by one cycle");
      assert (!(wr_req_o && state_q == SIdle))
        else $error("npu_vector: write request while idle");
    end
  end
`endif
endmodule
