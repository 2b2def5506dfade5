// npu_top.sv - the Loom NPU: the control-core complex (npu_cc: RV32IM core,
// TCMs, its host registers at 0x100..), the tensor engine's MMIO registers,
// command processor, load/compute/store engines (the compute queue feeds the MATMUL
// engine and the vector unit, one at a time), scratchpad and accumulator, and the
// one AXI4-style master they share (fetch and load DMA on the read channel,
// arbitrated with the grant held until the address is accepted; store DMA
// and MARK records on the write channel). The control core reaches DRAM
// through the same master: single-beat reads (AXI id 2) and single-beat
// writes, which take the write channel only while the store engine is idle.
// An error response (RRESP, BRESP SLVERR or DECERR: bit 1) to a fetch beat,
// a LOAD's beat or a STORE's or MARK's burst ends the run with BUS_ERROR
// (npu_ctrl, docs/ISA.md); the control core's accesses ignore the response.
// The host's MMIO goes to the tensor engine's registers below 0x100 and to
// the core's block above; the core reaches the engine's registers when the
// host does not.
module npu_top (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // MMIO slave (combinational read data)
  input  logic                              mmio_req_i,
  input  logic                              mmio_we_i,
  input  logic [11:0]                       mmio_addr_i,
  input  logic [31:0]                       mmio_wdata_i,
  output logic [31:0]                       mmio_rdata_o,
  output logic                              irq_o,
  // AXI master
  output logic                              ar_valid_o,
  input  logic                              ar_ready_i,
  output logic [31:0]                       ar_addr_o,
  output logic [7:0]                        ar_len_o,
  output logic [1:0]                        ar_id_o,
  input  logic                              r_valid_i,
  output logic                              r_ready_o,
  input  logic [npu_pkg::BeatW-1:0]         r_data_i,
  input  logic [1:0]                        r_id_i,
  input  logic                              r_last_i,
  input  logic [1:0]                        r_resp_i,
  output logic                              aw_valid_o,
  input  logic                              aw_ready_i,
  output logic [31:0]                       aw_addr_o,
  output logic [7:0]                        aw_len_o,
  output logic                              w_valid_o,
  input  logic                              w_ready_i,
  output logic [npu_pkg::BeatW-1:0]         w_data_o,
  output logic [npu_pkg::DramBeatBytes-1:0] w_strb_o,
  output logic                              w_last_o,
  input  logic                              b_valid_i,
  input  logic [1:0]                        b_resp_i,
  output logic                              b_ready_o
);
  localparam int unsigned R = npu_pkg::ArrayRows;
  localparam int unsigned C = npu_pkg::ArrayCols;

  // ---------------------------------------------------------------- registers
  logic        start, abort, busy, done, err, aborted;
  logic [31:0] insn_base, err_pc;
  logic        win_en;
  logic [127:0] win_base, win_size;
  logic [7:0]  err_cause;
  logic [15:0] err_info;
  logic [2:0]  stall;
  logic        mac_line;
  logic [2:0]  conflicts;
  logic [1:0]  retired;
  logic [32*npu_pkg::NumCtrs-1:0] ctrs;
  // energy events (regs.def LOOM_EVT), counted where the access happens
  logic [1:0]  ev_sp_rd, ev_sp_wr, ev_acc_rd, ev_acc_wr;
  logic [$clog2(npu_pkg::VecMacs+1)-1:0] ev_vec_fold;
  logic        ev_vec_rq;
  logic [1:0]  ev_st_rq;
  logic        ld_busy, cp_busy, st_busy, ld_done, cp_done, st_done, ld_derr, st_derr;
  logic        resp_unused;
  assign resp_unused = r_resp_i[0] ^ b_resp_i[0];  // OKAY/EXOKAY, SLVERR/DECERR: bit 1 tells an error

  // ---------------------------------------------------------------- control core
  logic        h_eng, h_cc;                      // host MMIO to the engine / the core block
  logic        cc_npu_req, cc_npu_we, cc_irq, eng_irq;
  logic [11:0] cc_npu_addr;
  logic [31:0] cc_npu_wdata, cc_rdata, reg_rdata;
  logic [1:0]  eng_irq_st;
  logic        cd_req, cd_we, cd_gnt, cd_rvalid;
  logic [31:0] cd_addr, cd_wdata, cd_rdata;
  logic [3:0]  cd_be;
  assign h_eng = mmio_req_i && mmio_addr_i < 12'h100;
  assign h_cc  = mmio_req_i && mmio_addr_i >= 12'h100;
  assign mmio_rdata_o = mmio_addr_i < 12'h100 ? reg_rdata : cc_rdata;
  assign irq_o = eng_irq || cc_irq;

  npu_cc u_cc (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .host_req_i    (h_cc),
    .host_we_i     (mmio_we_i),
    .host_addr_i   (mmio_addr_i),
    .host_wdata_i  (mmio_wdata_i),
    .host_rdata_o  (cc_rdata),
    .host_irq_o    (cc_irq),
    .npu_req_o     (cc_npu_req),
    .npu_we_o      (cc_npu_we),
    .npu_addr_o    (cc_npu_addr),
    .npu_wdata_o   (cc_npu_wdata),
    .npu_gnt_i     (!h_eng),
    .npu_rdata_i   (reg_rdata),
    .engine_irq_i  (eng_irq_st),
    .dram_req_o    (cd_req),
    .dram_we_o     (cd_we),
    .dram_addr_o   (cd_addr),
    .dram_wdata_o  (cd_wdata),
    .dram_be_o     (cd_be),
    .dram_gnt_i    (cd_gnt),
    .dram_rvalid_i (cd_rvalid),
    .dram_rdata_i  (cd_rdata)
  );

  npu_regs u_regs (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .req_i       (h_eng || cc_npu_req),
    .we_i        (h_eng ? mmio_we_i : cc_npu_we),
    .addr_i      (h_eng ? mmio_addr_i : cc_npu_addr),
    .wdata_i     (h_eng ? mmio_wdata_i : cc_npu_wdata),
    .rdata_o     (reg_rdata),
    .irq_o       (eng_irq),
    .irq_st_o    (eng_irq_st),
    .start_o     (start),
    .abort_o     (abort),
    .insn_base_o (insn_base),
    .win_en_o    (win_en),
    .win_base_o  (win_base),
    .win_size_o  (win_size),
    .busy_i      (busy),
    .done_i      (done),
    .err_i       (err),
    .aborted_i   (aborted),
    .err_cause_i (err_cause),
    .err_pc_i    (err_pc),
    .err_info_i  (err_info),
    .eng_busy_i  ({st_busy, cp_busy, ld_busy}),
    .stall_i     (stall),
    .mac_line_i  (mac_line),
    .rd_beat_i   (r_valid_i && r_ready_o && r_id_i != 2'd2),  // the engine's beats only
    .wr_beat_i   (w_valid_o && w_ready_i && !cw_own),
    .conflicts_i (conflicts),
    .retired_i   (retired),
    .sp_rd_i     (ev_sp_rd),
    .sp_wr_i     (ev_sp_wr),
    .acc_rd_i    (ev_acc_rd),
    .acc_wr_i    (ev_acc_wr),
    .vec_line_i  (ev_vec_fold),
    .rq_vec_i    (ev_vec_rq),
    .rq_st_i     (ev_st_rq),
    .ctr_o       (ctrs)
  );
  assign retired = 2'(ld_done) + 2'(cp_done) + 2'(st_done);

  // ---------------------------------------------------------------- read bus
  // ids: 0 fetch, 1 load DMA, 2 control core; priority in that order, the
  // grant held until the address is accepted
  logic        f_ar_valid, f_ar_ready, l_ar_valid, l_ar_ready, c_ar_valid, c_ar_ready;
  logic [31:0] f_ar_addr, l_ar_addr, c_ar_addr;
  logic [7:0]  f_ar_len, l_ar_len;
  logic        l_r_ready;
  logic        ar_lock_q;
  logic [1:0]  ar_sel_q, ar_sel;
  assign ar_sel     = ar_lock_q ? ar_sel_q : f_ar_valid ? 2'd0 : l_ar_valid ? 2'd1 : 2'd2;
  assign ar_valid_o = ar_sel == 2'd0 ? f_ar_valid : ar_sel == 2'd1 ? l_ar_valid : c_ar_valid;
  assign ar_addr_o  = ar_sel == 2'd0 ? f_ar_addr : ar_sel == 2'd1 ? l_ar_addr : c_ar_addr;
  assign ar_len_o   = ar_sel == 2'd0 ? f_ar_len : ar_sel == 2'd1 ? l_ar_len : 8'd0;
  assign ar_id_o    = ar_sel;
  assign f_ar_ready = ar_ready_i && ar_sel == 2'd0;
  assign l_ar_ready = ar_ready_i && ar_sel == 2'd1;
  assign c_ar_ready = ar_ready_i && ar_sel == 2'd2;
  assign r_ready_o  = (r_id_i == 2'd1) ? l_r_ready : 1'b1;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ar_lock_q <= 1'b0;
      ar_sel_q  <= 2'd0;
    end else begin
      ar_lock_q <= ar_valid_o && !ar_ready_i;
      ar_sel_q  <= ar_sel;
    end
  end

  // ---------------------------------------------------------------- core DRAM window
  // one single-beat access at a time; a write waits until the store engine
  // is idle, then owns the write channel until its response
  localparam int unsigned BOW = npu_pkg::BeatOffW;
  typedef enum logic [2:0] {CwIdle, CwRdAddr, CwRdData, CwWrWait, CwWrAddr, CwWrData, CwWrResp} cw_e;
  cw_e         cw_q;
  logic [31:0] cw_addr_q, cw_wdata_q;
  logic [3:0]  cw_be_q;
  logic        st_aw_valid, st_aw_ready, st_w_valid, st_w_ready, st_w_last, st_b_valid, st_b_ready;
  logic [31:0] st_aw_addr;
  logic [7:0]  st_aw_len;
  logic [npu_pkg::BeatW-1:0]         st_w_data;
  logic [npu_pkg::DramBeatBytes-1:0] st_w_strb;
  logic        cw_own;
  assign cw_own     = cw_q == CwWrAddr || cw_q == CwWrData || cw_q == CwWrResp;
  assign cd_gnt     = cw_q == CwIdle;
  assign c_ar_valid = cw_q == CwRdAddr;
  assign c_ar_addr  = {cw_addr_q[31:BOW], BOW'(0)};
  assign cd_rvalid  = (cw_q == CwRdData && r_valid_i && r_id_i == 2'd2)
                   || (cw_q == CwWrResp && b_valid_i);
  if (BOW > 2) begin : g_cw_wide
    assign cd_rdata = r_data_i[32 * cw_addr_q[BOW-1:2] +: 32];
  end else begin : g_cw_word
    assign cd_rdata = r_data_i[31:0];
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cw_q <= CwIdle;
    end else begin
      unique case (cw_q)
        CwIdle:   if (cd_req) cw_q <= cd_we ? CwWrWait : CwRdAddr;
        CwRdAddr: if (c_ar_ready) cw_q <= CwRdData;
        CwRdData: if (r_valid_i && r_id_i == 2'd2) cw_q <= CwIdle;
        CwWrWait: if (!st_busy) cw_q <= CwWrAddr;
        CwWrAddr: if (aw_ready_i) cw_q <= CwWrData;
        CwWrData: if (w_ready_i) cw_q <= CwWrResp;
        CwWrResp: if (b_valid_i) cw_q <= CwIdle;
        default:  cw_q <= CwIdle;
      endcase
    end
  end
  logic cw_unused;
  assign cw_unused = ^cw_addr_q[1:0];  // word accesses: the byte lanes come from cw_be_q
  always_ff @(posedge clk_i) begin
    if (cw_q == CwIdle && cd_req) begin
      cw_addr_q  <= cd_addr;
      cw_wdata_q <= cd_wdata;
      cw_be_q    <= cd_be;
    end
  end
  // the write channel: the core while it owns it, else the store engine
  assign aw_valid_o  = cw_own ? cw_q == CwWrAddr : st_aw_valid;
  assign aw_addr_o   = cw_own ? {cw_addr_q[31:BOW], BOW'(0)} : st_aw_addr;
  assign aw_len_o    = cw_own ? 8'd0 : st_aw_len;
  assign w_valid_o   = cw_own ? cw_q == CwWrData : st_w_valid;
  assign w_last_o    = cw_own ? 1'b1 : st_w_last;
  assign b_ready_o   = cw_own ? 1'b1 : st_b_ready;
  assign st_aw_ready = aw_ready_i && !cw_own;
  assign st_w_ready  = w_ready_i && !cw_own;
  assign st_b_valid  = b_valid_i && !cw_own;
  always_comb begin
    w_data_o = st_w_data;
    w_strb_o = st_w_strb;
    if (cw_own) begin
      w_data_o = {(npu_pkg::BeatW / 32){cw_wdata_q}};
      w_strb_o = '0;
      if (BOW > 2) w_strb_o[4 * cw_addr_q[BOW-1:2] +: 4] = cw_be_q;
      else         w_strb_o[3:0] = cw_be_q;
    end
  end

  // ---------------------------------------------------------------- command processor
  logic         eng_abort;
  logic         ld_valid, cp_valid, st_valid, ld_ready, cp_ready, st_ready;
  logic [255:0] ld_insn, cp_insn, st_insn;

  npu_ctrl u_ctrl (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (start),
    .abort_i     (abort),
    .insn_base_i (insn_base),
    .win_en_i    (win_en),
    .win_base_i  (win_base),
    .win_size_i  (win_size),
    .busy_o      (busy),
    .done_o      (done),
    .err_o       (err),
    .aborted_o   (aborted),
    .err_cause_o (err_cause),
    .err_pc_o    (err_pc),
    .err_info_o  (err_info),
    .stall_o     (stall),
    .ar_valid_o  (f_ar_valid),
    .ar_ready_i  (f_ar_ready),
    .ar_addr_o   (f_ar_addr),
    .ar_len_o    (f_ar_len),
    .r_valid_i   (r_valid_i && r_id_i == 2'd0),
    .r_data_i    (r_data_i),
    .r_last_i    (r_last_i),
    .r_err_i     (r_resp_i[1]),
    .abort_o     (eng_abort),
    .ld_valid_o  (ld_valid),
    .ld_insn_o   (ld_insn),
    .ld_ready_i  (ld_ready),
    .ld_done_i   (ld_done),
    .ld_derr_i   (ld_derr),
    .ld_busy_i   (ld_busy),
    .cp_valid_o  (cp_valid),
    .cp_insn_o   (cp_insn),
    .cp_ready_i  (cp_ready),
    .cp_done_i   (cp_done),
    .cp_busy_i   (cp_busy),
    .st_valid_o  (st_valid),
    .st_insn_o   (st_insn),
    .st_ready_i  (st_ready),
    .st_done_i   (st_done),
    .st_derr_i   (st_derr),
    .st_busy_i   (st_busy)
  );

  // ---------------------------------------------------------------- memories
  logic                       act_req, act_gnt, act_rvalid, wgt_req, wgt_gnt, wgt_rvalid;
  logic                       sst_req, sst_gnt, sst_rvalid, sld_req, sld_we, sld_gnt;
  logic                       vw_req, vw_gnt;
  logic [npu_pkg::SpAddrW-1:0] act_addr, wgt_addr, sst_addr, sld_addr, vw_addr;
  logic [8*R-1:0]             act_rdata, wgt_rdata, sst_rdata, sld_wdata, vw_wdata;
  // the act port is shared by MATMUL and the vector unit (never both busy)
  logic                       mm_act_req, vr_req, vr_sel_q;
  logic [npu_pkg::SpAddrW-1:0] mm_act_addr, vr_addr;
  assign act_req  = mm_act_req || vr_req;
  assign act_addr = vr_req ? vr_addr : mm_act_addr;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) vr_sel_q <= 1'b0;
    else         vr_sel_q <= vr_req && act_gnt;
  end

  npu_sp u_sp (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .act_req_i    (act_req),
    .act_addr_i   (act_addr),
    .act_gnt_o    (act_gnt),
    .act_rvalid_o (act_rvalid),
    .act_rdata_o  (act_rdata),
    .wgt_req_i    (wgt_req),
    .wgt_addr_i   (wgt_addr),
    .wgt_gnt_o    (wgt_gnt),
    .wgt_rvalid_o (wgt_rvalid),
    .wgt_rdata_o  (wgt_rdata),
    .st_req_i     (sst_req),
    .st_addr_i    (sst_addr),
    .st_gnt_o     (sst_gnt),
    .st_rvalid_o  (sst_rvalid),
    .st_rdata_o   (sst_rdata),
    .vw_req_i     (vw_req),
    .vw_addr_i    (vw_addr),
    .vw_wdata_i   (vw_wdata),
    .vw_gnt_o     (vw_gnt),
    .ld_req_i     (sld_req && sld_we),
    .ld_addr_i    (sld_addr),
    .ld_wdata_i   (sld_wdata),
    .ld_gnt_o     (sld_gnt),
    .conflicts_o  (conflicts)
  );

  logic [C-1:0]                       cp_acc_valid, cp_acc_overwrite;
  logic [C*npu_pkg::AccAddrW-1:0]     cp_acc_addr;
  logic [32*C-1:0]                    cp_acc_data;
  logic                               ald_we, ast_re;
  logic [npu_pkg::AccAddrW-1:0]       ald_addr, ast_addr;
  logic [32*C-1:0]                    ald_wdata, ast_rdata;

  // a grant is one line access of a bank; the accumulator's compute lanes
  // count a line once, at lane 0 (the other lanes follow it, one per cycle)
  assign ev_sp_rd  = 2'(act_gnt) + 2'(wgt_gnt) + 2'(sst_gnt);
  assign ev_sp_wr  = 2'(vw_gnt) + 2'(sld_gnt);
  assign ev_acc_rd = 2'(ast_re) + 2'(cp_acc_valid[0] && !cp_acc_overwrite[0]);
  assign ev_acc_wr = 2'(ald_we) + 2'(cp_acc_valid[0]);
  npu_acc u_acc (
    .clk_i          (clk_i),
    .cp_valid_i     (cp_acc_valid),
    .cp_addr_i      (cp_acc_addr),
    .cp_overwrite_i (cp_acc_overwrite),
    .cp_data_i      (cp_acc_data),
    .ld_we_i        (ald_we),
    .ld_addr_i      (ald_addr),
    .ld_wdata_i     (ald_wdata),
    .st_re_i        (ast_re),
    .st_addr_i      (ast_addr),
    .st_rdata_o     (ast_rdata)
  );

  // ---------------------------------------------------------------- engines
  npu_dma_load u_load (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .insn_valid_i (ld_valid),
    .insn_i       (ld_insn),
    .insn_ready_o (ld_ready),
    .done_o       (ld_done),
    .derr_o       (ld_derr),
    .busy_o       (ld_busy),
    .abort_i      (eng_abort),
    .ar_valid_o   (l_ar_valid),
    .ar_ready_i   (l_ar_ready),
    .ar_addr_o    (l_ar_addr),
    .ar_len_o     (l_ar_len),
    .r_valid_i    (r_valid_i && r_id_i == 2'd1),
    .r_ready_o    (l_r_ready),
    .r_data_i     (r_data_i),
    .r_last_i     (r_last_i),
    .r_err_i      (r_resp_i[1]),
    .sp_req_o     (sld_req),
    .sp_we_o      (sld_we),
    .sp_addr_o    (sld_addr),
    .sp_wdata_o   (sld_wdata),
    .sp_gnt_i     (sld_gnt),
    .acc_we_o     (ald_we),
    .acc_addr_o   (ald_addr),
    .acc_wdata_o  (ald_wdata)
  );

  // compute queue: MATMUL to npu_compute, the other opcodes to npu_vector;
  // an instruction waits until the other engine is idle, so the queue stays
  // in order and its done pulses retire in order
  logic cp_is_vec, mm_ready, mm_done, mm_busy, vec_ready, vec_done, vec_busy;
  assign cp_is_vec = cp_insn[7:0] != npu_pkg::OpMatmul;
  assign cp_ready  = cp_is_vec ? (vec_ready && !mm_busy) : (mm_ready && !vec_busy);
  assign cp_done   = mm_done || vec_done;
  assign cp_busy   = mm_busy || vec_busy;

  npu_compute u_compute (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .insn_valid_i    (cp_valid && !cp_is_vec && !vec_busy),
    .insn_i          (cp_insn),
    .insn_ready_o    (mm_ready),
    .done_o          (mm_done),
    .busy_o          (mm_busy),
    .abort_i         (eng_abort),
    .act_req_o       (mm_act_req),
    .act_addr_o      (mm_act_addr),
    .act_gnt_i       (act_gnt),
    .act_rvalid_i    (act_rvalid && !vr_sel_q),
    .act_rdata_i     (act_rdata),
    .wgt_req_o       (wgt_req),
    .wgt_addr_o      (wgt_addr),
    .wgt_gnt_i       (wgt_gnt),
    .wgt_rvalid_i    (wgt_rvalid),
    .wgt_rdata_i     (wgt_rdata),
    .acc_valid_o     (cp_acc_valid),
    .acc_addr_o      (cp_acc_addr),
    .acc_overwrite_o (cp_acc_overwrite),
    .acc_data_o      (cp_acc_data),
    .mac_line_o      (mac_line)
  );

  npu_vector u_vector (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .insn_valid_i (cp_valid && cp_is_vec && !mm_busy),
    .insn_i       (cp_insn),
    .insn_ready_o (vec_ready),
    .done_o       (vec_done),
    .busy_o       (vec_busy),
    .abort_i      (eng_abort),
    .rd_req_o     (vr_req),
    .rd_addr_o    (vr_addr),
    .rd_gnt_i     (act_gnt),
    .rd_rvalid_i  (act_rvalid && vr_sel_q),
    .rd_rdata_i   (act_rdata),
    .wr_req_o     (vw_req),
    .wr_addr_o    (vw_addr),
    .wr_wdata_o   (vw_wdata),
    .wr_gnt_i     (vw_gnt),
    .fold_o       (ev_vec_fold),
    .rq_line_o    (ev_vec_rq)
  );

  npu_dma_store u_store (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .insn_valid_i   (st_valid),
    .insn_i         (st_insn),
    .insn_ready_o   (st_ready),
    .done_o         (st_done),
    .derr_o         (st_derr),
    .busy_o         (st_busy),
    .abort_i        (eng_abort),
    .aw_valid_o     (st_aw_valid),
    .aw_ready_i     (st_aw_ready),
    .aw_addr_o      (st_aw_addr),
    .aw_len_o       (st_aw_len),
    .w_valid_o      (st_w_valid),
    .w_ready_i      (st_w_ready),
    .w_data_o       (st_w_data),
    .w_strb_o       (st_w_strb),
    .w_last_o       (st_w_last),
    .b_valid_i      (st_b_valid),
    .b_err_i        (b_resp_i[1]),
    .b_ready_o      (st_b_ready),
    .sp_req_o       (sst_req),
    .sp_addr_o      (sst_addr),
    .sp_gnt_i       (sst_gnt),
    .sp_rvalid_i    (sst_rvalid),
    .sp_rdata_i     (sst_rdata),
    .acc_re_o       (ast_re),
    .acc_addr_o     (ast_addr),
    .acc_rdata_i    (ast_rdata),
    .ctr_snapshot_i (ctrs),
    .rq_row_o       (ev_st_rq)
  );
endmodule
