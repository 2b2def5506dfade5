// npu_sram.sv - a single-ported SRAM macro (one read or write per cycle,
// registered read data): the scratchpad is built from these, one per bank.
// For synthesis and area estimates it is a black box (define
// LOOM_SRAM_BLACKBOX): area comes from a documented bit density, not from
// flip-flops.
`ifdef LOOM_SRAM_BLACKBOX
(* blackbox *)
`endif
module npu_sram #(
  parameter int unsigned Width = 128,
  parameter int unsigned Depth = 1024,
  localparam int unsigned AW = $clog2(Depth)
) (
  input  logic             clk_i,
  input  logic             en_i,
  input  logic             we_i,
  input  logic [AW-1:0]    addr_i,
  input  logic [Width-1:0] wdata_i,
  output logic [Width-1:0] rdata_o
);
`ifndef LOOM_SRAM_BLACKBOX
  // mem is read only here, never in the cycle it is written: a blocking
  // write is the same as a nonblocking one, without a simulator's
  // per-element bookkeeping (a flag, an index and a value per cycle)
  logic [Width-1:0] mem [Depth];
  always_ff @(posedge clk_i) begin
    if (en_i) begin
      if (we_i) mem[addr_i] = wdata_i;
      else      rdata_o <= mem[addr_i];
    end
  end
`endif
endmodule
