// compute_tb_top.sv - block-test wrapper for npu_compute (driven by
// compute_tb.cpp): the engine plus a behavioural scratchpad (SpLines x R
// bytes, two read ports with npu_sp's timing: grant combinational, rvalid and
// rdata the cycle after) and a behavioural C-lane accumulator (add or
// overwrite at the edge). C++ reaches the memories through DPI-C exports.
//
// Stalls: a 32-bit LFSR refuses the act / wgt request when its byte is below
// stall_i (stall_i/256 refusal rate per port); with bank_i the wgt request is
// also refused when act is granted the same bank (npu_sp's priority).
// The wrapper checks the port protocol (a refused request is held with the
// same address; ACC lane addresses in range) and counts statistics.
module compute_tb_top (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         insn_valid_i,
  input  logic [255:0] insn_i,
  output logic         insn_ready_o,
  output logic         done_o,
  output logic         busy_o,
  input  logic         abort_i,
  input  logic [7:0]   stall_i,        // refusal rate of both ports, /256
  input  logic         bank_i,         // wgt loses to act on the same bank
  input  logic [31:0]  seed_i,         // LFSR seed, loaded during reset
  input  logic         stat_clr_i,     // clear the statistics at this edge (do it once after reset)
  output logic [31:0]  stat_cycles_o,  // cycles since the last clear
  output logic [31:0]  stat_busy_o,    // cycles with busy_o high
  output logic [31:0]  stat_lines_o,   // mac_line_o pulses
  output logic [31:0]  stat_first_o,   // cycle (since clear) of the first line
  output logic [31:0]  stat_last_o,    // cycle (since clear) of the last line
  output logic [31:0]  stat_refused_o, // requests refused (either port)
  output logic [31:0]  stat_errors_o,  // protocol errors (never cleared)
  output logic [31:0]  stat_min_gap_o  // fewest cycles between two lane writes of one ACC line
);
  localparam int unsigned R        = npu_pkg::ArrayRows;
  localparam int unsigned C        = npu_pkg::ArrayCols;
  localparam int unsigned AW       = npu_pkg::SpAddrW;
  localparam int unsigned CW       = npu_pkg::AccAddrW;
  localparam int unsigned SpLines  = npu_pkg::SpLines;
  localparam int unsigned AccLines = npu_pkg::AccLines;
  localparam int unsigned BankW    = $clog2(npu_pkg::SpBankLines);

  // ---------------------------------------------------------------------------
  // DUT
  // ---------------------------------------------------------------------------
  logic                act_req, act_gnt, act_rvalid, wgt_req, wgt_gnt, wgt_rvalid;
  logic [AW-1:0]       act_addr, wgt_addr;
  logic [8*R-1:0]      act_rdata, wgt_rdata;
  logic [C-1:0]        acc_valid, acc_overwrite;
  logic [C*CW-1:0]     acc_addr;
  logic [C*32-1:0]     acc_data;
  logic                mac_line;

  npu_compute u_dut (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .insn_valid_i    (insn_valid_i),
    .insn_i          (insn_i),
    .insn_ready_o    (insn_ready_o),
    .done_o          (done_o),
    .busy_o          (busy_o),
    .abort_i         (abort_i),
    .act_req_o       (act_req),
    .act_addr_o      (act_addr),
    .act_gnt_i       (act_gnt),
    .act_rvalid_i    (act_rvalid),
    .act_rdata_i     (act_rdata),
    .wgt_req_o       (wgt_req),
    .wgt_addr_o      (wgt_addr),
    .wgt_gnt_i       (wgt_gnt),
    .wgt_rvalid_i    (wgt_rvalid),
    .wgt_rdata_i     (wgt_rdata),
    .acc_valid_o     (acc_valid),
    .acc_addr_o      (acc_addr),
    .acc_overwrite_o (acc_overwrite),
    .acc_data_o      (acc_data),
    .mac_line_o      (mac_line)
  );

  // ---------------------------------------------------------------------------
  // Grants
  // ---------------------------------------------------------------------------
  logic [31:0] lfsr_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lfsr_q <= (seed_i == '0) ? 32'h1 : seed_i;
    end else begin
      lfsr_q <= {lfsr_q[30:0], 1'b0} ^ (lfsr_q[31] ? 32'h0040_0007 : 32'h0);
    end
  end

  logic same_bank;
  assign same_bank = (act_addr >> BankW) == (wgt_addr >> BankW);
  assign act_gnt   = act_req && !(lfsr_q[7:0] < stall_i);
  assign wgt_gnt   = wgt_req && !(lfsr_q[23:16] < stall_i) && !(bank_i && act_gnt && same_bank);

  // ---------------------------------------------------------------------------
  // Scratchpad
  // ---------------------------------------------------------------------------
  logic [8*R-1:0] sp_mem [SpLines];

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      act_rvalid <= 1'b0;
      wgt_rvalid <= 1'b0;
    end else begin
      act_rvalid <= act_gnt;
      wgt_rvalid <= wgt_gnt;
    end
  end

  always_ff @(posedge clk_i) begin
    // rdata is junk unless rvalid (as a real SRAM): the DUT must not care
    act_rdata <= act_gnt ? sp_mem[act_addr] : {R{8'ha5}};
    wgt_rdata <= wgt_gnt ? sp_mem[wgt_addr] : {R{8'h5a}};
  end

  // ---------------------------------------------------------------------------
  // Accumulator: AccLines x C words, word (line, c) at index line*C + c
  // ---------------------------------------------------------------------------
  localparam int unsigned IdxW = $clog2(AccLines * C);

  logic [31:0]     acc_mem [AccLines*C];
  logic [31:0]     last_wr [AccLines*C];  // cycle of the last lane write + 1 (0 = none)
  logic [IdxW-1:0] lane_idx [C];
  logic [C-1:0]    lane_we, lane_bad;

  logic [31:0] now_q, cyc_q, busy_q, lines_q, first_q, last_q, refused_q, errors_q, min_gap_q;

  always_comb begin
    for (int c = 0; c < C; c++) begin
      lane_idx[c] = IdxW'(acc_addr[c*CW +: CW]) * IdxW'(C) + IdxW'(c);
      lane_bad[c] = acc_valid[c] && (32'(acc_addr[c*CW +: CW]) >= AccLines);
      lane_we[c]  = acc_valid[c] && !lane_bad[c];
    end
  end

  always_ff @(posedge clk_i) begin
    for (int c = 0; c < C; c++) begin
      if (lane_we[c]) begin
        acc_mem[lane_idx[c]] <= acc_overwrite[c] ? acc_data[c*32 +: 32]
                                                 : acc_mem[lane_idx[c]] + acc_data[c*32 +: 32];
        last_wr[lane_idx[c]] <= now_q + 1;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Protocol checks and statistics
  // ---------------------------------------------------------------------------
  logic          act_wait_q, wgt_wait_q, abort_q, done_seen_q;
  logic [AW-1:0] act_addr_q, wgt_addr_q;
  logic [31:0]   err_d, gap_d;

  always_comb begin
    err_d = '0;
    gap_d = min_gap_q;
    if (act_wait_q && !abort_q && !(act_req && act_addr == act_addr_q)) err_d++;
    if (wgt_wait_q && !abort_q && !(wgt_req && wgt_addr == wgt_addr_q)) err_d++;
    // ACC writes only while busy, and none in or after the done_o cycle:
    // done_o means every write of the instruction has happened
    if ((|acc_valid) && (!busy_o || done_o || done_seen_q)) err_d++;
    for (int c = 0; c < C; c++) begin
      if (lane_bad[c]) err_d++;
      if (lane_we[c] && last_wr[lane_idx[c]] != '0 && now_q + 1 - last_wr[lane_idx[c]] < gap_d) begin
        gap_d = now_q + 1 - last_wr[lane_idx[c]];
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      act_wait_q <= 1'b0;
      wgt_wait_q <= 1'b0;
      abort_q    <= 1'b0;
      done_seen_q <= 1'b0;
      errors_q   <= '0;
      now_q      <= '0;
    end else begin
      if (done_o) begin
        done_seen_q <= 1'b1;
      end else if (insn_valid_i && insn_ready_o) begin
        done_seen_q <= 1'b0;
      end
      now_q      <= now_q + 1;
      act_wait_q <= act_req && !act_gnt;
      wgt_wait_q <= wgt_req && !wgt_gnt;
      abort_q    <= abort_i;
      errors_q   <= errors_q + err_d;
    end
  end

  always_ff @(posedge clk_i) begin
    act_addr_q <= act_addr;
    wgt_addr_q <= wgt_addr;
    if (stat_clr_i) begin
      cyc_q     <= '0;
      busy_q    <= '0;
      lines_q   <= '0;
      first_q   <= '0;
      last_q    <= '0;
      refused_q <= '0;
      min_gap_q <= 32'hffff_ffff;
    end else begin
      cyc_q     <= cyc_q + 1;
      busy_q    <= busy_q + 32'(busy_o);
      lines_q   <= lines_q + 32'(mac_line);
      if (mac_line && lines_q == 0) first_q <= cyc_q;
      if (mac_line) last_q <= cyc_q;
      refused_q <= refused_q + 32'(act_req && !act_gnt) + 32'(wgt_req && !wgt_gnt);
      min_gap_q <= gap_d;
    end
  end

  assign stat_cycles_o  = cyc_q;
  assign stat_busy_o    = busy_q;
  assign stat_lines_o   = lines_q;
  assign stat_first_o   = first_q;
  assign stat_last_o    = last_q;
  assign stat_refused_o = refused_q;
  assign stat_errors_o  = errors_q;
  assign stat_min_gap_o = min_gap_q;

  // ---------------------------------------------------------------------------
  // DPI-C access for the C++ test
  // ---------------------------------------------------------------------------
  export "DPI-C" function tb_param;
  export "DPI-C" function tb_sp_set;
  export "DPI-C" function tb_acc_set;
  export "DPI-C" function tb_acc_get;

  // 0 = R, 1 = C, 2 = SP lines, 3 = ACC lines, 4 = SP bank lines
  function automatic int tb_param(input int idx);
    unique case (idx)
      0: return R;
      1: return C;
      2: return SpLines;
      3: return AccLines;
      4: return npu_pkg::SpBankLines;
      default: return 0;
    endcase
  endfunction

  // bytes 4w..4w+3 of SP line `line` (little-endian)
  function automatic void tb_sp_set(input int line, input int w, input int val);
    sp_mem[line][32*w +: 32] = val;
  endfunction

  function automatic void tb_acc_set(input int line, input int c, input int val);
    acc_mem[line*C + c] = val;
    last_wr[line*C + c] = '0;
  endfunction

  function automatic int tb_acc_get(input int line, input int c);
    return acc_mem[line*C + c];
  endfunction

endmodule
