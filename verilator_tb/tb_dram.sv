// tb_dram.sv - the simulated DRAM behind the AXI master of the NPU, for the
// simulation harness: in-order responses, a fixed latency from request to
// first beat (or to the write response) and a bandwidth limit in bytes per
// cycle shared by reads and writes, both set at run time. The bytes live in
// C++ (sim.cpp) and are reached through DPI-C, one call per beat, so no
// per-cycle work is done in C++; with nothing queued a cycle costs a
// simulator a few compares (the credit is full, every update is skipped).
// Each data call returns whether the beat is answered with an error (the
// harness's bus-error range, loom_hw_opts.bus_err_*, or the SystemC
// memory's error response): RRESP of that beat, BRESP of its burst SLVERR.
module tb_dram (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  longint unsigned               handle_i,   // C++ storage (opaque)
  input  int unsigned                   latency_i,  // cycles, >= 1
  input  int unsigned                   bw_i,       // bytes per cycle, 1..beat
  input  logic                          ar_valid_i,
  output logic                          ar_ready_o,
  input  logic [31:0]                   ar_addr_i,
  input  logic [7:0]                    ar_len_i,
  input  logic [1:0]                    ar_id_i,
  output logic                          r_valid_o,
  input  logic                          r_ready_i,
  output logic [npu_pkg::BeatW-1:0]     r_data_o,
  output logic [1:0]                    r_id_o,
  output logic                          r_last_o,
  output logic [1:0]                    r_resp_o,
  input  logic                          aw_valid_i,
  output logic                          aw_ready_o,
  input  logic [31:0]                   aw_addr_i,
  input  logic [7:0]                    aw_len_i,
  input  logic                          w_valid_i,
  output logic                          w_ready_o,
  input  logic [npu_pkg::BeatW-1:0]     w_data_i,
  input  logic [npu_pkg::DramBeatBytes-1:0] w_strb_i,
  input  logic                          w_last_i,
  output logic                          b_valid_o,
  output logic [1:0]                    b_resp_o,
  input  logic                          b_ready_i
);
  localparam int unsigned B = npu_pkg::DramBeatBytes;
  localparam int unsigned Depth = 64;
  localparam int unsigned PW = $clog2(Depth);

  // 1: the beat is answered with an error response
  import "DPI-C" function bit tb_dram_read(input longint unsigned h, input longint unsigned addr,
                                           output bit [npu_pkg::BeatW-1:0] data);
  import "DPI-C" function bit tb_dram_write(input longint unsigned h, input longint unsigned addr,
                                             input bit [npu_pkg::BeatW-1:0] data,
                                             input bit [npu_pkg::DramBeatBytes-1:0] strb);

  longint unsigned now_q;
  int unsigned     credit_q;

  // read requests
  logic [31:0]     rq_addr [Depth];
  logic [7:0]      rq_len  [Depth];
  logic [1:0]      rq_id   [Depth];
  longint unsigned rq_due  [Depth];
  logic [PW:0]     rq_cnt_q;
  logic [PW-1:0]   rq_rd_q, rq_wr_q;
  logic [7:0]      rbeat_q;
  logic            r_valid_q, r_last_q, r_err_q;
  logic [1:0]      r_id_q;
  logic [npu_pkg::BeatW-1:0] r_data_q;

  // write requests and responses
  logic [31:0]     wq_addr [Depth];
  logic [PW:0]     wq_cnt_q;
  logic [PW-1:0]   wq_rd_q, wq_wr_q;
  logic [7:0]      wbeat_q;
  logic            werr_q;             // a beat of the burst on W had an error
  longint unsigned bq_due [Depth];
  logic            bq_err [Depth];
  logic [PW:0]     bq_cnt_q;
  logic [PW-1:0]   bq_rd_q, bq_wr_q;

  logic rd_take, r_pop, ar_hs, aw_hs, w_hs, b_hs, wlast_hs;
  assign ar_ready_o = (rq_cnt_q != (PW+1)'(Depth));
  assign aw_ready_o = (wq_cnt_q != (PW+1)'(Depth)) && (bq_cnt_q != (PW+1)'(Depth));
  assign ar_hs = ar_valid_i && ar_ready_o;
  assign aw_hs = aw_valid_i && aw_ready_o;
  assign r_pop = r_valid_q && r_ready_i;
  assign w_hs = w_valid_i && w_ready_o;
  assign wlast_hs = w_hs && w_last_i;
  assign b_hs = b_valid_o && b_ready_i;
  // (nested tests: with nothing queued a simulator evaluates one compare each)
  always_comb begin
    rd_take = 1'b0;
    if (rq_cnt_q != '0 && (!r_valid_q || r_ready_i))
      rd_take = now_q >= rq_due[rq_rd_q] && credit_q >= B;
    w_ready_o = 1'b0;
    if (wq_cnt_q != '0)
      w_ready_o = (credit_q - (rd_take ? B : 0)) >= B;
    b_valid_o = 1'b0;
    if (bq_cnt_q != '0)
      b_valid_o = now_q >= bq_due[bq_rd_q];
  end
  assign r_valid_o = r_valid_q;
  assign r_data_o = r_data_q;
  assign r_id_o = r_id_q;
  assign r_last_o = r_last_q;
  assign r_resp_o = {r_err_q, 1'b0};
  assign b_resp_o = {b_valid_o && bq_err[bq_rd_q], 1'b0};

  // bursts end on w_last; the length is not needed
  logic unused_aw_len;
  assign unused_aw_len = ^aw_len_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      now_q <= 0;
      credit_q <= 0;
      rq_cnt_q <= '0; rq_rd_q <= '0; rq_wr_q <= '0; rbeat_q <= '0;
      wq_cnt_q <= '0; wq_rd_q <= '0; wq_wr_q <= '0; wbeat_q <= '0;
      bq_cnt_q <= '0; bq_rd_q <= '0; bq_wr_q <= '0;
      r_valid_q <= 1'b0;
      r_last_q <= 1'b0;
      r_err_q <= 1'b0;
      werr_q <= 1'b0;
      r_id_q <= '0;
    end else begin
      int unsigned c;
      logic [npu_pkg::BeatW-1:0] beat;  // the DPI call's output, then a nonblocking write
      logic berr;
      now_q <= now_q + 1;
      if (credit_q != 2 * B || rd_take || w_hs) begin
        c = credit_q + bw_i - (rd_take ? B : 0) - (w_hs ? B : 0);
        credit_q <= (c > 2 * B) ? 2 * B : c;
      end
      if (ar_hs) begin
        rq_addr[rq_wr_q] <= ar_addr_i;
        rq_len[rq_wr_q]  <= ar_len_i;
        rq_id[rq_wr_q]   <= ar_id_i;
        rq_due[rq_wr_q]  <= now_q + longint'(latency_i);
        rq_wr_q <= rq_wr_q + 1'b1;
      end
      if (rd_take) begin
        // through a variable and a non-blocking assignment: a DPI output
        // argument is a blocking write, which the NPU's flops that sample
        // r_data_o on this same edge would race with (verilated without
        // --trace-fst, the model ran a one-FINISH program into ILLEGAL_OPCODE)
        berr = tb_dram_read(handle_i, longint'(rq_addr[rq_rd_q]) + longint'(rbeat_q) * B, beat);
        r_data_q  <= beat;
        r_err_q   <= berr;
        r_valid_q <= 1'b1;
        r_id_q    <= rq_id[rq_rd_q];
        r_last_q  <= (rbeat_q == rq_len[rq_rd_q]);
        if (rbeat_q == rq_len[rq_rd_q]) begin
          rbeat_q <= '0;
          rq_rd_q <= rq_rd_q + 1'b1;
        end else begin
          rbeat_q <= rbeat_q + 1'b1;
        end
      end else if (r_pop) begin
        r_valid_q <= 1'b0;
      end
      if (ar_hs || rd_take)
        rq_cnt_q <= rq_cnt_q + (PW+1)'(ar_hs) - (PW+1)'(rd_take && rbeat_q == rq_len[rq_rd_q]);
      if (aw_hs) begin
        wq_addr[wq_wr_q] <= aw_addr_i;
        wq_wr_q <= wq_wr_q + 1'b1;
      end
      if (w_hs) begin
        berr = tb_dram_write(handle_i, longint'(wq_addr[wq_rd_q]) + longint'(wbeat_q) * B, w_data_i, w_strb_i);
        if (w_last_i) begin
          wbeat_q <= '0;
          werr_q  <= 1'b0;
          wq_rd_q <= wq_rd_q + 1'b1;
          bq_due[bq_wr_q] <= now_q + longint'(latency_i);
          bq_err[bq_wr_q] <= werr_q || berr;
          bq_wr_q <= bq_wr_q + 1'b1;
        end else begin
          wbeat_q <= wbeat_q + 1'b1;
          if (berr) werr_q <= 1'b1;
        end
      end
      if (aw_hs || wlast_hs) wq_cnt_q <= wq_cnt_q + (PW+1)'(aw_hs) - (PW+1)'(wlast_hs);
      if (b_hs) bq_rd_q <= bq_rd_q + 1'b1;
      if (wlast_hs || b_hs) bq_cnt_q <= bq_cnt_q + (PW+1)'(wlast_hs) - (PW+1)'(b_hs);
    end
  end
endmodule
