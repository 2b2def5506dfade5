// npu_tcm.sv - a tightly-coupled memory of the control core: a single-ported
// SRAM macro of 32-bit words with byte enables and registered read data
// (one read or one write per cycle). A black box for synthesis (define
// LOOM_SRAM_BLACKBOX), like npu_sram: area comes from a bit density.
`ifdef LOOM_SRAM_BLACKBOX
(* blackbox *)
`endif
module npu_tcm #(
  parameter int unsigned Depth = 1024,   // words
  localparam int unsigned AW = $clog2(Depth)
) (
  input  logic          clk_i,
  input  logic          en_i,
  input  logic          we_i,
  input  logic [3:0]    be_i,
  input  logic [AW-1:0] addr_i,
  input  logic [31:0]   wdata_i,
  output logic [31:0]   rdata_o
);
`ifndef LOOM_SRAM_BLACKBOX
  // mem is read only here, never in the cycle it is written: a blocking
  // write is the same as a nonblocking one, without a simulator's
  // per-element bookkeeping
  logic [31:0] mem [Depth];
  always_ff @(posedge clk_i) begin
    if (en_i) begin
      if (we_i) begin
        for (int b = 0; b < 4; b++)
          if (be_i[b]) mem[addr_i][8*b +: 8] = wdata_i[8*b +: 8];
      end else begin
        rdata_o <= mem[addr_i];
      end
    end
  end
`endif
endmodule
