// cpu_tb_top.sv - block-test wrapper for npu_cpu (driven by cpu_tb.cpp):
// the core plus the memory system of docs/CONTROL.md's map, as the ISS's
// unit test (tests/unit/test_rv_iss.c) models it, so that the rv32 test
// programs see the same system on both:
//   ITCM   0x0000_0000  64 KiB  read, write, execute (any size)
//   DTCM   0x1000_0000  32 KiB  read, write, execute (any size)
//   NPU    0x2000_0000   4 KiB  word accesses only: reads 0, writes ignored
//   PERIPH 0x2000_1000   4 KiB  word accesses only (core.def LOOM_CORE_REG):
//          MTIME_LO/HI (cycles since reset), MTIMECMP_LO/HI (reset all
//          ones; irq_timer_i = mtime >= mtimecmp), IRQ_PENDING,
//          DOORBELL_ACK (clears line 16), HOST_IRQ_SET (ignored), TOHOST,
//          MBOX_H2F0..3 (read 0), MBOX_F2H0..3 (plain registers, but see
//          below); write-only and unused offsets read 0, writes to
//          read-only and unused offsets are ignored
//   DRAM   0x8000_0000   1 MiB  read, write (any size), no fetch
//   fetches outside the TCMs, sub-word accesses to NPU and PERIPH and every
//   other address fault (mem_err_i with rvalid).
//
// Test-bench only: a write to MBOX_F2H3 (0x2000_103c) also sets the local
// interrupt lines irq_i[18:16] to bits 18..16 of the written value (levels,
// held until the next such write; DOORBELL_ACK clears line 16), so that a
// test program can raise and drop the local lines itself. In the NPU this
// register is an ordinary mailbox word.
//
// Handshake: a request is granted after 0..2 cycles (gnt may come in the
// request's first cycle) and answered 1..3 cycles after the grant; with
// rand_i the delays come from a 32-bit LFSR (seed_i, loaded during reset),
// else they are 0 and 1. The access itself (read sample, write) happens at
// the granting edge. The wrapper counts port protocol errors (a new request
// while a response is outstanding; a waiting request that drops or changes).
//
// C++ reaches the TCMs through DPI-C exports (tb_mem_write/read); TOHOST
// writes show on done_o / tohost_o (done_o is sticky until reset).
module cpu_tb_top (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         rand_i,       // random grant / response delays
  input  logic [31:0]  seed_i,       // LFSR seed, loaded during reset
  output logic         done_o,       // TOHOST has been written
  output logic [31:0]  tohost_o,     // the first value written to TOHOST
  output logic         wfi_o,
  output logic [31:0]  pc_o,
  output logic [63:0]  cycles_o,     // mtime: cycles since reset
  output logic [63:0]  retired_o,    // retire_o pulses
  output logic [63:0]  wfi_cycles_o, // cycles with wfi_o
  output logic [31:0]  errors_o      // port protocol errors
);
  localparam int unsigned ItcmWords = 16384;
  localparam int unsigned DtcmWords = 8192;
  localparam int unsigned DramWords = 262144;  // 1 MiB

  // ---------------------------------------------------------------------------
  // DUT
  // ---------------------------------------------------------------------------
  logic        req, we, fetch, gnt, rvalid, err;
  logic [31:0] addr, wdata, rdata;
  logic [3:0]  be;
  logic [18:16] irq_q;
  logic        irq_timer, retire;

  npu_cpu u_dut (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .mem_req_o    (req),
    .mem_we_o     (we),
    .mem_addr_o   (addr),
    .mem_wdata_o  (wdata),
    .mem_be_o     (be),
    .mem_fetch_o  (fetch),
    .mem_gnt_i    (gnt),
    .mem_rvalid_i (rvalid),
    .mem_rdata_i  (rdata),
    .mem_err_i    (err),
    .irq_i        (irq_q),
    .irq_timer_i  (irq_timer),
    .wfi_o        (wfi_o),
    .pc_o         (pc_o),
    .retire_o     (retire)
  );

  // ---------------------------------------------------------------------------
  // Delays
  // ---------------------------------------------------------------------------
  logic [31:0] lfsr_q;
  logic [1:0]  gdly_q, gcnt_q, rcnt_q;
  logic        pend_q;
  logic [31:0] rdata_q;
  logic        err_q;

  function automatic logic [1:0] pick(logic [1:0] r);  // 0..2
    pick = (r == 2'd3) ? 2'd1 : r;
  endfunction

  assign gnt    = req && !pend_q && (gcnt_q == gdly_q);
  assign rvalid = pend_q && (rcnt_q == 2'd0);
  assign rdata  = rdata_q;
  assign err    = err_q;

  // ---------------------------------------------------------------------------
  // Memories and peripheral
  // ---------------------------------------------------------------------------
  logic [31:0] itcm [ItcmWords];
  logic [31:0] dtcm [DtcmWords];
  logic [31:0] dram [DramWords];
  logic [63:0] mtime_q, mtimecmp_q, retired_q, wfi_cyc_q;
  logic [31:0] tohost_q, f2h_q [4], errors_q;
  logic        done_q;

  assign irq_timer = (mtime_q >= mtimecmp_q);

  logic in_itcm, in_dtcm, in_dram, in_npu, in_per, per_ok, npu_ok, dram_ok, ok;
  assign in_itcm = (addr[31:16] == 16'h0000);
  assign in_dtcm = (addr[31:15] == 17'h0_2000);
  assign in_dram = (addr[31:20] == 12'h800);
  assign in_npu  = (addr[31:12] == 20'h2_0000);
  assign in_per  = (addr[31:12] == 20'h2_0001);
  assign per_ok  = in_per && !fetch && be == 4'hf;
  assign npu_ok  = in_npu && !fetch && be == 4'hf;
  assign dram_ok = in_dram && !fetch;
  assign ok      = in_itcm || in_dtcm || dram_ok || npu_ok || per_ok;

  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] nw, logic [3:0] m);
    for (int i = 0; i < 4; i++) merge[8*i +: 8] = m[i] ? nw[8*i +: 8] : old[8*i +: 8];
  endfunction

  // the granted access (reads sampled, writes done at the granting edge)
  always_ff @(posedge clk_i) begin
    if (gnt) begin
      err_q   <= !ok;
      rdata_q <= 32'hdead_beef;
      if (in_itcm) begin
        if (we) itcm[addr[15:2]] <= merge(itcm[addr[15:2]], wdata, be);
        else    rdata_q <= itcm[addr[15:2]];
      end else if (in_dtcm) begin
        if (we) dtcm[addr[14:2]] <= merge(dtcm[addr[14:2]], wdata, be);
        else    rdata_q <= dtcm[addr[14:2]];
      end else if (dram_ok) begin
        if (we) dram[addr[19:2]] <= merge(dram[addr[19:2]], wdata, be);
        else    rdata_q <= dram[addr[19:2]];
      end else if (npu_ok && !we) begin
        rdata_q <= '0;
      end else if (per_ok && !we) begin
        rdata_q <= '0;
        if (addr[11:6] == 6'd0) begin
          unique case (addr[5:2])
            4'h0: rdata_q <= mtime_q[31:0];
            4'h1: rdata_q <= mtime_q[63:32];
            4'h2: rdata_q <= mtimecmp_q[31:0];
            4'h3: rdata_q <= mtimecmp_q[63:32];
            4'h4: rdata_q <= {13'b0, irq_q, 16'b0};
            4'h7: rdata_q <= tohost_q;
            4'hc, 4'hd, 4'he, 4'hf: rdata_q <= f2h_q[addr[3:2]];
            default: rdata_q <= '0;  // DOORBELL_ACK, HOST_IRQ_SET, MBOX_H2F*
          endcase
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lfsr_q     <= (seed_i == '0) ? 32'h1 : seed_i;
      gdly_q     <= '0;
      gcnt_q     <= '0;
      rcnt_q     <= '0;
      pend_q     <= 1'b0;
      mtime_q    <= '0;
      mtimecmp_q <= '1;
      irq_q      <= '0;
      tohost_q   <= '0;
      done_q     <= 1'b0;
      for (int i = 0; i < 4; i++) f2h_q[i] <= '0;
      retired_q  <= '0;
      wfi_cyc_q  <= '0;
    end else begin
      lfsr_q    <= {lfsr_q[30:0], 1'b0} ^ (lfsr_q[31] ? 32'h0040_0007 : 32'h0);
      mtime_q   <= mtime_q + 64'd1;
      retired_q <= retired_q + 64'(retire);
      wfi_cyc_q <= wfi_cyc_q + 64'(wfi_o);
      if (gnt) begin
        gcnt_q <= '0;
        gdly_q <= rand_i ? pick(lfsr_q[1:0]) : 2'd0;
        pend_q <= 1'b1;
        rcnt_q <= rand_i ? pick(lfsr_q[9:8]) : 2'd0;
      end else if (req && !pend_q) begin
        gcnt_q <= gcnt_q + 2'd1;
      end
      if (pend_q) begin
        if (rcnt_q == 2'd0) pend_q <= 1'b0;
        else                rcnt_q <= rcnt_q - 2'd1;
      end
      if (gnt && we && per_ok && addr[11:6] == 6'd0) begin
        unique case (addr[5:2])
          4'h2: mtimecmp_q[31:0]  <= wdata;
          4'h3: mtimecmp_q[63:32] <= wdata;
          4'h5: irq_q[16]         <= 1'b0;   // DOORBELL_ACK
          4'h7: begin
            if (!done_q) tohost_q <= wdata;
            done_q <= 1'b1;
          end
          4'hc, 4'hd, 4'he: f2h_q[addr[3:2]] <= wdata;
          4'hf: begin
            f2h_q[3] <= wdata;
            irq_q    <= wdata[18:16];            // test bench only (see header)
          end
          default: ;
        endcase
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Protocol checks
  // ---------------------------------------------------------------------------
  logic        wait_q, same;
  logic [69:0] held_q;   // {we, fetch, be, addr, wdata} of the last cycle
  assign same = req && {we, fetch, be, addr} == held_q[69:32] && (!we || wdata == held_q[31:0]);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wait_q   <= 1'b0;
      errors_q <= '0;
    end else begin
      wait_q <= req && !gnt;
      if ((req && pend_q) || (wait_q && !same)) errors_q <= errors_q + 32'd1;
    end
  end

  always_ff @(posedge clk_i) begin
    held_q <= {we, fetch, be, addr, wdata};
  end

  assign done_o       = done_q;
  assign tohost_o     = tohost_q;
  assign cycles_o     = mtime_q;
  assign retired_o    = retired_q;
  assign wfi_cycles_o = wfi_cyc_q;
  assign errors_o     = errors_q;

  // ---------------------------------------------------------------------------
  // DPI-C access for the C++ test
  // ---------------------------------------------------------------------------
  export "DPI-C" function tb_mem_write;
  export "DPI-C" function tb_mem_read;
  export "DPI-C" function tb_dram_clear;

  function automatic void tb_dram_clear();
    for (int i = 0; i < DramWords; i++) dram[i] = '0;
  endfunction

  // the word at byte address a (a TCM or DRAM address, 4-aligned); returns 0
  // when a is in neither
  function automatic int tb_mem_write(input int unsigned a, input int unsigned val);
    tb_mem_write = 1;
    if (a[31:16] == 16'h0000)       itcm[a[15:2]] = val;
    else if (a[31:15] == 17'h0_2000) dtcm[a[14:2]] = val;
    else if (a[31:20] == 12'h800)    dram[a[19:2]] = val;
    else                             tb_mem_write = 0;
  endfunction

  function automatic int unsigned tb_mem_read(input int unsigned a);
    if (a[31:16] == 16'h0000)       tb_mem_read = itcm[a[15:2]];
    else if (a[31:15] == 17'h0_2000) tb_mem_read = dtcm[a[14:2]];
    else if (a[31:20] == 12'h800)    tb_mem_read = dram[a[19:2]];
    else                             tb_mem_read = 32'hffff_ffff;
  endfunction

endmodule
