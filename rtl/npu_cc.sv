// npu_cc.sv - the control-core complex (docs/CONTROL.md): the RV32IM core
// (npu_cpu), its instruction and data TCMs (npu_tcm), its local peripheral
// (timer, interrupt lines, doorbell, host interrupt, mailboxes, TOHOST), the
// decoder of its address map (include/loom/core.def), and the host's register
// block of the core (regs.def CORE_CTRL .. CORE_TOHOST).
//
// Core memory port: one request at a time. TCMs, the peripheral and the
// tensor-engine registers answer the cycle after the grant (the engine's
// registers are granted when the host is not using them); the DRAM window
// is passed on as single-word accesses (dram_*: npu_top turns them into
// AXI transactions) and answers when the bus does. An unmapped address, or a
// non-word access to the registers, is granted at once and answered with
// mem_err_i (the core raises an access fault).
//
// The host holds the core in reset until it sets CORE_CTRL.RUN, and loads the
// TCMs while it is held: a write of TCM_DATA stores a word at TCM_ADDR and
// advances TCM_ADDR by 4; a write of TCM_ADDR also reads the word there, which
// TCM_DATA then returns (MMIO reads are combinational and take no clock edge).
// A DRAM access in flight when the core is put back into reset completes on
// the bus and its answer is dropped.
module npu_cc (
  input  logic        clk_i,
  input  logic        rst_ni,
  // host register block
  input  logic        host_req_i,
  input  logic        host_we_i,
  input  logic [11:0] host_addr_i,
  input  logic [31:0] host_wdata_i,
  output logic [31:0] host_rdata_o,
  output logic        host_irq_o,
  // tensor-engine registers (the core's NPU region); the host goes first
  output logic        npu_req_o,
  output logic        npu_we_o,
  output logic [11:0] npu_addr_o,
  output logic [31:0] npu_wdata_o,
  input  logic        npu_gnt_i,
  input  logic [31:0] npu_rdata_i,    // combinational, in the grant cycle
  input  logic [1:0]  engine_irq_i,   // the engine's IRQ_STATUS: {ERROR, DONE}
  // DRAM window: one word access at a time
  output logic        dram_req_o,
  output logic        dram_we_o,
  output logic [31:0] dram_addr_o,    // DRAM byte address, word aligned
  output logic [31:0] dram_wdata_o,
  output logic [3:0]  dram_be_o,
  input  logic        dram_gnt_i,
  input  logic        dram_rvalid_i,  // read data, or the write's response
  input  logic [31:0] dram_rdata_i
);
  localparam int unsigned ItcmWords = npu_pkg::CoreItcmSize / 4;
  localparam int unsigned DtcmWords = npu_pkg::CoreDtcmSize / 4;
  localparam int unsigned IAW       = $clog2(ItcmWords);
  localparam int unsigned DAW       = $clog2(DtcmWords);
  localparam logic [63:0] DramBytes = 64'(npu_pkg::DramBytes);

  typedef enum logic [2:0] {SrcItcm, SrcDtcm, SrcNpu, SrcPeriph, SrcFault, SrcDram} src_e;

  // ---------------------------------------------------------------- host block
  logic        run_q, doorbell_q, host_db;
  logic [31:0] hirq_st_q, hirq_mask_q, tcm_addr_q, tohost_q;
  logic [31:0] h2f_q [4];
  logic [31:0] f2h_q [4];
  logic        hw_wr;
  assign hw_wr   = host_req_i && host_we_i;
  assign host_db = hw_wr && host_addr_i == npu_pkg::RegDoorbell;

  // The whole complex runs on a gated clock (npu_icg), cclk: on while RUN is
  // set, for the one edge after it clears (core_rst_nq still 1: the core's
  // registers take their reset values there), while a DRAM access is in
  // flight, and in the cycles of a host write. Held in reset with none of
  // those, every flop of the complex would keep its value (the core's its
  // reset value; the core's reset-state fetch is masked, c_req below), so
  // the clock stops and a simulator evaluates none of it
  // (docs/PERFORMANCE.md, "Simulation speed"). The host write comes from the
  // MMIO request, which the harnesses set before they evaluate the falling
  // clock (verilator_tb/tb_top.sv), as a bus's registered request would be.
  logic cclk, core_rst_nq, core_rst_n, dram_pend_q, dram_own_q;
  npu_icg u_cg (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (hw_wr || run_q || core_rst_nq || dram_pend_q),
    .gclk_o (cclk)
  );

  // the core is held in reset until RUN (a flop: the reset leaves synchronously).
  // Resets are synchronous (docs/ARCHITECTURE.md): the core's registers take
  // their reset values at the edge where core_rst_nq falls as well as while it
  // is low, hence core_rst_n, which is low in that edge's cycle too (run_q
  // already 0), exactly as the asynchronous reset on core_rst_nq did.
  always_ff @(posedge cclk) begin
    if (!rst_ni) core_rst_nq <= 1'b0;
    else         core_rst_nq <= run_q;
  end
  assign core_rst_n = core_rst_nq && run_q;

  // ---------------------------------------------------------------- core
  logic        m_req, m_we, m_fetch, m_gnt, m_rvalid, m_err, wfi;
  logic [31:0] m_addr, m_wdata, m_rdata, pc;
  logic [3:0]  m_be;
  logic        mtip, retire;

  npu_cpu u_cpu (
    .clk_i        (cclk),
    .rst_ni       (core_rst_n),
    .mem_req_o    (m_req),
    .mem_we_o     (m_we),
    .mem_addr_o   (m_addr),
    .mem_wdata_o  (m_wdata),
    .mem_be_o     (m_be),
    .mem_fetch_o  (m_fetch),
    .mem_gnt_i    (m_gnt),
    .mem_rvalid_i (m_rvalid),
    .mem_rdata_i  (m_rdata),
    .mem_err_i    (m_err),
    .irq_i        ({engine_irq_i[1], engine_irq_i[0], doorbell_q}),
    .irq_timer_i  (mtip),
    .wfi_o        (wfi),
    .pc_o         (pc),
    .retire_o     (retire)
  );

  // ---------------------------------------------------------------- address map
  // The core's request as the complex sees it: none while the core is held
  // in reset (its reset state is a fetch, which would otherwise read the ITCM
  // every cycle; a TCM_DATA read then returns the word of the last TCM_ADDR
  // write however many cycles later it comes).
  logic c_req;
  assign c_req = m_req && core_rst_n;
  logic r_itcm, r_dtcm, r_npu, r_per, r_dram, word;
  logic [31:0] dram_off;
  assign dram_off = m_addr - npu_pkg::CoreDramBase;
  src_e m_src;
  // (decoded only with a request: m_src is looked at only then, and a core
  // waiting in WFI costs a simulator nothing here)
  always_comb begin
    r_itcm = 1'b0;
    r_dtcm = 1'b0;
    r_npu  = 1'b0;
    r_per  = 1'b0;
    r_dram = 1'b0;
    word   = 1'b0;
    m_src  = SrcFault;
    if (c_req) begin
      // (a - base) < size, unsigned: a in [base, base + size)
      r_itcm = m_addr - npu_pkg::CoreItcmBase < npu_pkg::CoreItcmSize;
      r_dtcm = m_addr - npu_pkg::CoreDtcmBase < npu_pkg::CoreDtcmSize;
      r_npu  = m_addr - npu_pkg::CoreNpuBase < npu_pkg::CoreNpuSize;
      r_per  = m_addr - npu_pkg::CorePeriphBase < npu_pkg::CorePeriphSize;
      r_dram = m_addr - npu_pkg::CoreDramBase < npu_pkg::CoreDramSize
               && {32'd0, dram_off} < DramBytes;
      word   = m_be == 4'hf;
      if (r_itcm)              m_src = SrcItcm;
      else if (r_dtcm)         m_src = SrcDtcm;
      else if (r_npu && word)  m_src = SrcNpu;
      else if (r_per && word)  m_src = SrcPeriph;
      else if (r_dram)         m_src = SrcDram;
      else                     m_src = SrcFault;
    end
  end

  // host TCM access (core held in reset): TCM_DATA writes, TCM_ADDR writes
  // read. Worked out only under such a host write: a simulator evaluates
  // what depends on the MMIO inputs at every evaluation, both clock edges.
  logic        h_tcm_wr, h_itcm, h_dtcm;
  logic [31:0] h_tcm_a;
  always_comb begin
    h_tcm_wr = 1'b0;
    h_itcm   = 1'b0;
    h_dtcm   = 1'b0;
    h_tcm_a  = tcm_addr_q;
    if (hw_wr && (host_addr_i == npu_pkg::RegTcmData || host_addr_i == npu_pkg::RegTcmAddr)) begin
      h_tcm_wr = host_addr_i == npu_pkg::RegTcmData;
      if (!h_tcm_wr) h_tcm_a = host_wdata_i;
      h_itcm = h_tcm_a - npu_pkg::CoreItcmBase < npu_pkg::CoreItcmSize;
      h_dtcm = h_tcm_a - npu_pkg::CoreDtcmBase < npu_pkg::CoreDtcmSize;
    end
  end

  // grants
  always_comb begin
    unique case (m_src)
      SrcItcm: m_gnt = c_req && !h_itcm;
      SrcDtcm: m_gnt = c_req && !h_dtcm;
      SrcNpu:  m_gnt = c_req && npu_gnt_i;
      SrcDram: m_gnt = c_req && dram_gnt_i && !dram_pend_q;
      default: m_gnt = c_req;
    endcase
  end

  // TCMs: the core's access, unless the host takes the TCM in this cycle
  // (written without m_gnt, whose DRAM term reads the bus every cycle)
  logic           it_en, it_we, dt_en, dt_we;
  logic [3:0]     it_be, dt_be;
  logic [IAW-1:0] it_addr;
  logic [DAW-1:0] dt_addr;
  logic [31:0]    it_wdata, dt_wdata;
  always_comb begin
    it_en    = c_req && m_src == SrcItcm;
    it_we    = m_we;
    it_be    = m_be;
    it_addr  = m_addr[IAW+1:2];
    it_wdata = m_wdata;
    dt_en    = c_req && m_src == SrcDtcm;
    dt_we    = m_we;
    dt_be    = m_be;
    dt_addr  = m_addr[DAW+1:2];
    dt_wdata = m_wdata;
    if (h_itcm) begin
      it_en    = 1'b1;
      it_we    = h_tcm_wr;
      it_be    = 4'hf;
      it_addr  = h_tcm_a[IAW+1:2];
      it_wdata = host_wdata_i;
    end
    if (h_dtcm) begin
      dt_en    = 1'b1;
      dt_we    = h_tcm_wr;
      dt_be    = 4'hf;
      dt_addr  = h_tcm_a[DAW+1:2];
      dt_wdata = host_wdata_i;
    end
  end
  logic [31:0] itcm_rdata, dtcm_rdata;
  npu_tcm #(.Depth(ItcmWords)) u_itcm (
    .clk_i   (cclk),
    .en_i    (it_en),
    .we_i    (it_we),
    .be_i    (it_be),
    .addr_i  (it_addr),
    .wdata_i (it_wdata),
    .rdata_o (itcm_rdata)
  );
  npu_tcm #(.Depth(DtcmWords)) u_dtcm (
    .clk_i   (cclk),
    .en_i    (dt_en),
    .we_i    (dt_we),
    .be_i    (dt_be),
    .addr_i  (dt_addr),
    .wdata_i (dt_wdata),
    .rdata_o (dtcm_rdata)
  );

  // tensor-engine registers
  assign npu_req_o   = c_req && m_src == SrcNpu;
  assign npu_we_o    = m_we;
  assign npu_addr_o  = m_addr[11:0];
  assign npu_wdata_o = m_wdata;

  // DRAM window
  assign dram_req_o   = c_req && m_src == SrcDram && !dram_pend_q;
  assign dram_we_o    = m_we;
  assign dram_addr_o  = dram_off;
  assign dram_wdata_o = m_wdata;
  assign dram_be_o    = m_be;

  // ---------------------------------------------------------------- peripheral
  logic [63:0] mtime_q, mtimecmp_q;
  logic        p_wr;
  logic [11:0] p_off;
  assign p_off = m_addr[11:0];
  assign p_wr  = m_gnt && m_src == SrcPeriph && m_we;
  assign mtip  = mtime_q >= mtimecmp_q;


  // state reset with the core: timer, doorbell, TOHOST, firmware mailbox
  always_ff @(posedge cclk) begin
    if (!core_rst_n) begin
      mtime_q    <= '0;
      mtimecmp_q <= '1;
      doorbell_q <= 1'b0;
      tohost_q   <= '0;
      for (int i = 0; i < 4; i++) f2h_q[i] <= '0;
    end else begin
      mtime_q <= mtime_q + 64'd1;
      if (p_wr) begin
        if (p_off == npu_pkg::CoreRegMtimecmpLo) mtimecmp_q[31:0]  <= m_wdata;
        if (p_off == npu_pkg::CoreRegMtimecmpHi) mtimecmp_q[63:32] <= m_wdata;
        if (p_off == npu_pkg::CoreRegTohost)     tohost_q <= m_wdata;
        if (p_off == npu_pkg::CoreRegMboxF2h0)   f2h_q[0] <= m_wdata;
        if (p_off == npu_pkg::CoreRegMboxF2h1)   f2h_q[1] <= m_wdata;
        if (p_off == npu_pkg::CoreRegMboxF2h2)   f2h_q[2] <= m_wdata;
        if (p_off == npu_pkg::CoreRegMboxF2h3)   f2h_q[3] <= m_wdata;
      end
      // the host's doorbell wins over an acknowledge in the same cycle
      if (p_wr && p_off == npu_pkg::CoreRegDoorbellAck) doorbell_q <= 1'b0;
      if (host_db) doorbell_q <= 1'b1;
    end
  end

  // ---------------------------------------------------------------- responses
  logic        resp_v_q;
  src_e        resp_src_q;
  logic [31:0] resp_data_q;
  always_ff @(posedge cclk) begin
    if (!core_rst_n) begin
      resp_v_q <= 1'b0;
    end else begin
      resp_v_q <= m_gnt && m_src != SrcDram;
    end
  end
  always_ff @(posedge cclk) begin
    if (m_gnt) begin
      resp_src_q <= m_src;
      if (m_src == SrcNpu)    resp_data_q <= npu_rdata_i;
      if (m_src == SrcPeriph) begin
        // the peripheral's registers, read at the grant
        resp_data_q <= '0;
        unique case (p_off)
          npu_pkg::CoreRegMtimeLo:    resp_data_q <= mtime_q[31:0];
          npu_pkg::CoreRegMtimeHi:    resp_data_q <= mtime_q[63:32];
          npu_pkg::CoreRegMtimecmpLo: resp_data_q <= mtimecmp_q[31:0];
          npu_pkg::CoreRegMtimecmpHi: resp_data_q <= mtimecmp_q[63:32];
          npu_pkg::CoreRegIrqPending: begin
            resp_data_q[npu_pkg::CoreIrqDoorbell]   <= doorbell_q;
            resp_data_q[npu_pkg::CoreIrqEngineDone] <= engine_irq_i[0];
            resp_data_q[npu_pkg::CoreIrqEngineErr]  <= engine_irq_i[1];
          end
          npu_pkg::CoreRegTohost:     resp_data_q <= tohost_q;
          npu_pkg::CoreRegMboxH2f0:   resp_data_q <= h2f_q[0];
          npu_pkg::CoreRegMboxH2f1:   resp_data_q <= h2f_q[1];
          npu_pkg::CoreRegMboxH2f2:   resp_data_q <= h2f_q[2];
          npu_pkg::CoreRegMboxH2f3:   resp_data_q <= h2f_q[3];
          npu_pkg::CoreRegMboxF2h0:   resp_data_q <= f2h_q[0];
          npu_pkg::CoreRegMboxF2h1:   resp_data_q <= f2h_q[1];
          npu_pkg::CoreRegMboxF2h2:   resp_data_q <= f2h_q[2];
          npu_pkg::CoreRegMboxF2h3:   resp_data_q <= f2h_q[3];
          default: ;
        endcase
      end
    end
  end

  // a DRAM access completes on the bus even if the core is reset meanwhile
  always_ff @(posedge cclk) begin
    if (!rst_ni) begin
      dram_pend_q <= 1'b0;
      dram_own_q  <= 1'b0;
    end else begin
      if (dram_req_o && dram_gnt_i) begin
        dram_pend_q <= 1'b1;
        dram_own_q  <= 1'b1;
      end else if (dram_rvalid_i) begin
        dram_pend_q <= 1'b0;
        dram_own_q  <= 1'b0;
      end
      if (!run_q) dram_own_q <= 1'b0;  // the core is being reset: drop the answer
    end
  end

  always_comb begin
    m_rvalid = resp_v_q || (dram_own_q && dram_rvalid_i);
    m_err    = resp_v_q && resp_src_q == SrcFault;
    unique case (resp_src_q)
      SrcItcm: m_rdata = itcm_rdata;
      SrcDtcm: m_rdata = dtcm_rdata;
      SrcDram: m_rdata = dram_rdata_i;
      default: m_rdata = resp_data_q;
    endcase
    if (!resp_v_q) m_rdata = dram_rdata_i;
  end

  // ---------------------------------------------------------------- host registers
  always_ff @(posedge cclk) begin
    if (!rst_ni) begin
      run_q       <= 1'b0;
      hirq_st_q   <= '0;
      hirq_mask_q <= '1;
      tcm_addr_q  <= '0;
      for (int i = 0; i < 4; i++) h2f_q[i] <= '0;
    end else begin
      if (hw_wr) begin
        unique case (host_addr_i)
          npu_pkg::RegCoreCtrl:     run_q <= host_wdata_i[0];
          npu_pkg::RegHostIrqMask:  hirq_mask_q <= host_wdata_i;
          npu_pkg::RegTcmAddr:      tcm_addr_q <= host_wdata_i;
          npu_pkg::RegTcmData:      tcm_addr_q <= tcm_addr_q + 32'd4;
          npu_pkg::RegMboxH2f0:     h2f_q[0] <= host_wdata_i;
          npu_pkg::RegMboxH2f1:     h2f_q[1] <= host_wdata_i;
          npu_pkg::RegMboxH2f2:     h2f_q[2] <= host_wdata_i;
          npu_pkg::RegMboxH2f3:     h2f_q[3] <= host_wdata_i;
          default: ;
        endcase
      end
      // W1C by the host; the firmware's HOST_IRQ_SET wins in the same cycle
      if (hw_wr && host_addr_i == npu_pkg::RegHostIrqStatus) hirq_st_q <= hirq_st_q & ~host_wdata_i;
      if (p_wr && p_off == npu_pkg::CoreRegHostIrqSet) hirq_st_q <= hirq_st_q | m_wdata;
      if (hw_wr && host_addr_i == npu_pkg::RegHostIrqStatus && p_wr
          && p_off == npu_pkg::CoreRegHostIrqSet)
        hirq_st_q <= (hirq_st_q & ~host_wdata_i) | m_wdata;
    end
  end
  assign host_irq_o = |(hirq_st_q & hirq_mask_q);

  logic tcm_in_itcm;
  assign tcm_in_itcm = tcm_addr_q - npu_pkg::CoreItcmBase < npu_pkg::CoreItcmSize;
  always_comb begin
    host_rdata_o = '0;
    if (host_req_i) unique case (host_addr_i)
      npu_pkg::RegCoreCtrl:      host_rdata_o = {31'd0, run_q};
      npu_pkg::RegCoreStatus:    host_rdata_o = {30'd0, wfi && core_rst_nq, run_q};
      npu_pkg::RegCorePc:        host_rdata_o = pc;
      npu_pkg::RegHostIrqStatus: host_rdata_o = hirq_st_q;
      npu_pkg::RegHostIrqMask:   host_rdata_o = hirq_mask_q;
      npu_pkg::RegTcmAddr:       host_rdata_o = tcm_addr_q;
      npu_pkg::RegTcmData:       host_rdata_o = tcm_in_itcm ? itcm_rdata : dtcm_rdata;
      npu_pkg::RegMboxH2f0:      host_rdata_o = h2f_q[0];
      npu_pkg::RegMboxH2f1:      host_rdata_o = h2f_q[1];
      npu_pkg::RegMboxH2f2:      host_rdata_o = h2f_q[2];
      npu_pkg::RegMboxH2f3:      host_rdata_o = h2f_q[3];
      npu_pkg::RegMboxF2h0:      host_rdata_o = f2h_q[0];
      npu_pkg::RegMboxF2h1:      host_rdata_o = f2h_q[1];
      npu_pkg::RegMboxF2h2:      host_rdata_o = f2h_q[2];
      npu_pkg::RegMboxF2h3:      host_rdata_o = f2h_q[3];
      npu_pkg::RegCoreTohost:    host_rdata_o = tohost_q;
      default: ;
    endcase
  end

  logic unused;
  assign unused = ^{m_fetch, retire, host_req_i && !host_we_i};
endmodule
