// npu_regs.sv - the MMIO register file (include/loom/regs.def): ID,
// version and configuration read-back, control, status, error cause,
// interrupt status/mask, the DMA windows (win_*_o, writable only while
// idle), the performance counters, which also feed the MARK record
// (ctr_o), and the energy event counters (EVT_*, registers only). Reads are
// combinational; writes take effect at the clock edge. Counters clear on
// START and count while a run is active.
module npu_regs (
  input  logic         clk_i,
  input  logic         rst_ni,
  // MMIO slave
  input  logic         req_i,
  input  logic         we_i,
  input  logic [11:0]  addr_i,
  input  logic [31:0]  wdata_i,
  output logic [31:0]  rdata_o,
  output logic         irq_o,
  output logic [1:0]   irq_st_o,     // IRQ_STATUS {ERROR, DONE}, unmasked (control core)
  // command processor
  output logic         start_o,
  output logic         abort_o,
  output logic [31:0]  insn_base_o,
  output logic         win_en_o,
  output logic [127:0] win_base_o,   // window i at [32*i +: 32]
  output logic [127:0] win_size_o,
  input  logic         busy_i,
  input  logic         done_i,
  input  logic         err_i,
  input  logic         aborted_i,
  input  logic [7:0]   err_cause_i,
  input  logic [31:0]  err_pc_i,
  input  logic [15:0]  err_info_i,
  // events counted
  input  logic [2:0]   eng_busy_i,   // load, compute, store
  input  logic [2:0]   stall_i,
  input  logic         mac_line_i,
  input  logic         rd_beat_i,
  input  logic         wr_beat_i,
  input  logic [2:0]   conflicts_i,
  input  logic [1:0]   retired_i,    // instructions retired this cycle (0..3)
  // energy events (regs.def LOOM_EVT), per cycle
  input  logic [1:0]   sp_rd_i,      // scratchpad lines read (0..3)
  input  logic [1:0]   sp_wr_i,      // scratchpad lines written (0..2)
  input  logic [1:0]   acc_rd_i,     // accumulator lines read (0..2)
  input  logic [1:0]   acc_wr_i,     // accumulator lines written (0..2)
  input  logic [$clog2(npu_pkg::VecMacs+1)-1:0] vec_line_i,  // products (line x tap) into the vector unit's lanes
  input  logic         rq_vec_i,     // a line into the vector unit's R requant lanes
  input  logic [1:0]   rq_st_i,      // rows times C values into the store's requant lanes (0..2)
  output logic [32*npu_pkg::NumCtrs-1:0] ctr_o
);
  localparam int unsigned N = npu_pkg::NumCtrs;
  localparam int unsigned NE = npu_pkg::NumEvts;
  localparam logic [63:0] MacsPerLine = 64'(npu_pkg::ArrayRows * npu_pkg::ArrayCols);

  logic [31:0] ctr_q [N];
  logic [31:0] evt_q [NE];
  logic [63:0] macs_q;
  logic [31:0] base_q;
  logic        win_en_q;
  logic [1:0]  irq_st_q, irq_mask_q;
  logic        done_q, error_q;

  logic wr;
  assign wr = req_i && we_i;
  assign start_o = wr && addr_i == npu_pkg::RegCtrl && wdata_i[0];
  assign abort_o = wr && addr_i == npu_pkg::RegCtrl && wdata_i[1];
  assign insn_base_o = base_q;
  assign win_en_o    = win_en_q;
  // the DMA windows: one register each (an unpacked array written with
  // nonblocking assignments costs a simulator a flag per element every cycle);
  // window i's BASE and SIZE are WinStride bytes after window 0's (regs.def)
  localparam logic [11:0] WinStride = npu_pkg::RegWin1Base - npu_pkg::RegWin0Base;
  for (genvar i = 0; i < 4; i++) begin : g_win
    logic [31:0] wbase_q, wsize_q;
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        wbase_q <= '0;
        wsize_q <= '0;
      end else if (wr && !busy_i) begin
        if (addr_i == npu_pkg::RegWin0Base + 12'(i) * WinStride) wbase_q <= wdata_i;
        if (addr_i == npu_pkg::RegWin0Size + 12'(i) * WinStride) wsize_q <= wdata_i;
      end
    end
    assign win_base_o[32*i +: 32] = wbase_q;
    assign win_size_o[32*i +: 32] = wsize_q;
  end
  assign irq_o = |(irq_st_q & irq_mask_q);
  assign irq_st_o = irq_st_q;

  logic clr;
  assign clr = start_o && !abort_o && !busy_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      base_q     <= '0;
      win_en_q   <= 1'b0;
      irq_st_q   <= '0;
      irq_mask_q <= 2'b11;
      done_q     <= 1'b0;
      error_q    <= 1'b0;
    end else begin
      if (wr && addr_i == npu_pkg::RegInsnBase) base_q <= wdata_i;
      if (wr && !busy_i && addr_i == npu_pkg::RegWinCtrl) win_en_q <= wdata_i[0];
      if (wr && addr_i == npu_pkg::RegIrqMask) irq_mask_q <= wdata_i[1:0];
      if (wr && addr_i == npu_pkg::RegIrqStatus) irq_st_q <= irq_st_q & ~wdata_i[1:0];
      if (done_i) irq_st_q[0] <= 1'b1;
      if (err_i) irq_st_q[1] <= 1'b1;
      if (clr) begin
        done_q  <= 1'b0;
        error_q <= 1'b0;
      end else begin
        if (done_i) done_q <= 1'b1;
        if (err_i) error_q <= 1'b1;
      end
    end
  end

  // counters
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int i = 0; i < N; i++) ctr_q[i] <= '0;
      macs_q <= '0;
    end else if (clr) begin
      for (int i = 0; i < N; i++) ctr_q[i] <= '0;
      macs_q <= '0;
    end else if (busy_i) begin
      ctr_q[npu_pkg::CtrCycles]        <= ctr_q[npu_pkg::CtrCycles] + 32'd1;
      ctr_q[npu_pkg::CtrBusyLoad]      <= ctr_q[npu_pkg::CtrBusyLoad] + 32'(eng_busy_i[0]);
      ctr_q[npu_pkg::CtrBusyCompute]   <= ctr_q[npu_pkg::CtrBusyCompute] + 32'(eng_busy_i[1]);
      ctr_q[npu_pkg::CtrBusyStore]     <= ctr_q[npu_pkg::CtrBusyStore] + 32'(eng_busy_i[2]);
      ctr_q[npu_pkg::CtrStallLoad]     <= ctr_q[npu_pkg::CtrStallLoad] + 32'(stall_i[0]);
      ctr_q[npu_pkg::CtrStallCompute]  <= ctr_q[npu_pkg::CtrStallCompute] + 32'(stall_i[1]);
      ctr_q[npu_pkg::CtrStallStore]    <= ctr_q[npu_pkg::CtrStallStore] + 32'(stall_i[2]);
      ctr_q[npu_pkg::CtrDramRdBytes]   <= ctr_q[npu_pkg::CtrDramRdBytes]
                                          + (rd_beat_i ? 32'(npu_pkg::DramBeatBytes) : 32'd0);
      ctr_q[npu_pkg::CtrDramWrBytes]   <= ctr_q[npu_pkg::CtrDramWrBytes]
                                          + (wr_beat_i ? 32'(npu_pkg::DramBeatBytes) : 32'd0);
      ctr_q[npu_pkg::CtrBankConflicts] <= ctr_q[npu_pkg::CtrBankConflicts] + 32'(conflicts_i);
      ctr_q[npu_pkg::CtrInsns]         <= ctr_q[npu_pkg::CtrInsns] + 32'(retired_i);
      if (mac_line_i) macs_q <= macs_q + MacsPerLine;
    end
  end

  // energy event counters
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int i = 0; i < NE; i++) evt_q[i] <= '0;
    end else if (clr) begin
      for (int i = 0; i < NE; i++) evt_q[i] <= '0;
    end else if (busy_i) begin
      evt_q[npu_pkg::EvtSpRd]     <= evt_q[npu_pkg::EvtSpRd] + 32'(sp_rd_i);
      evt_q[npu_pkg::EvtSpWr]     <= evt_q[npu_pkg::EvtSpWr] + 32'(sp_wr_i);
      evt_q[npu_pkg::EvtAccRd]    <= evt_q[npu_pkg::EvtAccRd] + 32'(acc_rd_i);
      evt_q[npu_pkg::EvtAccWr]    <= evt_q[npu_pkg::EvtAccWr] + 32'(acc_wr_i);
      evt_q[npu_pkg::EvtVecLines] <= evt_q[npu_pkg::EvtVecLines] + 32'(vec_line_i);
      evt_q[npu_pkg::EvtRqValues] <= evt_q[npu_pkg::EvtRqValues]
                                     + (rq_vec_i ? 32'(npu_pkg::ArrayRows) : 32'd0)
                                     + 32'(rq_st_i) * 32'(npu_pkg::ArrayCols);
    end
  end

  always_comb begin
    for (int i = 0; i < N; i++) ctr_o[32*i +: 32] = ctr_q[i];
    ctr_o[32*npu_pkg::CtrMacsLo +: 32] = macs_q[31:0];
    ctr_o[32*npu_pkg::CtrMacsHi +: 32] = macs_q[63:32];
  end

  // (only while addressed: an idle register file costs a simulator nothing)
  always_comb begin
    rdata_o = '0;
    if (req_i) unique case (addr_i)
      npu_pkg::RegId:            rdata_o = npu_pkg::IdValue;
      npu_pkg::RegVersion:       rdata_o = npu_pkg::IsaVersion;
      npu_pkg::RegHwArray:       rdata_o = {8'(npu_pkg::DmaOutstanding), 8'(npu_pkg::SpBanks),
                                            8'(npu_pkg::ArrayCols), 8'(npu_pkg::ArrayRows)};
      npu_pkg::RegHwSpBytes:     rdata_o = 32'(npu_pkg::SpBytes);
      npu_pkg::RegHwAccBytes:    rdata_o = 32'(npu_pkg::AccBytes);
      npu_pkg::RegHwBus:         rdata_o = {16'(npu_pkg::DramMib), 16'(npu_pkg::DramBeatBytes)};
      npu_pkg::RegHwFingerprint: rdata_o = npu_pkg::HwFingerprint;
      npu_pkg::RegStatus:        rdata_o = {29'd0, error_q, done_q, busy_i};
      npu_pkg::RegInsnBase:      rdata_o = base_q;
      npu_pkg::RegErrCause:      rdata_o = 32'(err_cause_i);
      npu_pkg::RegErrPc:         rdata_o = err_pc_i;
      npu_pkg::RegErrInfo:       rdata_o = 32'(err_info_i);
      npu_pkg::RegIrqStatus:     rdata_o = 32'(irq_st_q);
      npu_pkg::RegIrqMask:       rdata_o = 32'(irq_mask_q);
      npu_pkg::RegWinCtrl:       rdata_o = {31'd0, win_en_q};
      default: begin
        for (int i = 0; i < 4; i++) begin
          if (addr_i == npu_pkg::RegWin0Base + 12'(i) * WinStride) rdata_o = win_base_o[32*i +: 32];
          if (addr_i == npu_pkg::RegWin0Size + 12'(i) * WinStride) rdata_o = win_size_o[32*i +: 32];
        end
        if (addr_i >= npu_pkg::RegCtrBase && addr_i < npu_pkg::RegCtrBase + 12'(4 * N)
            && addr_i[1:0] == 2'b00) begin
          rdata_o = ctr_o[32 * ((32'(addr_i) - 32'(npu_pkg::RegCtrBase)) >> 2) +: 32];
        end
        for (int i = 0; i < NE; i++) begin
          if (addr_i == npu_pkg::RegEvtBase + 12'(4 * i)) rdata_o = evt_q[i];
        end
      end
    endcase
  end

  logic unused;
  assign unused = aborted_i;
endmodule
