// npu_acc_lane.sv - one lane (array column) of the accumulator: Depth
// int32 words with an accumulate-or-overwrite port (compute), a write port
// (load DMA) and a read port with registered data (store DMA). A black box
// for synthesis (LOOM_SRAM_BLACKBOX), like npu_sram.
`ifdef LOOM_SRAM_BLACKBOX
(* blackbox *)
`endif
module npu_acc_lane #(
  parameter int unsigned Depth = 1024,
  localparam int unsigned AW = $clog2(Depth)
) (
  input  logic          clk_i,
  input  logic          cp_valid_i,
  input  logic [AW-1:0] cp_addr_i,
  input  logic          cp_overwrite_i,
  input  logic [31:0]   cp_data_i,
  input  logic          ld_we_i,
  input  logic [AW-1:0] ld_addr_i,
  input  logic [31:0]   ld_wdata_i,
  input  logic          st_re_i,
  input  logic [AW-1:0] st_addr_i,
  output logic [31:0]   st_rdata_o
);
`ifndef LOOM_SRAM_BLACKBOX
  // mem is read only here: it is written with blocking assignments, after
  // every read of the cycle, which is what nonblocking ones would do, without
  // the simulator's per-element bookkeeping of a nonblocking array write
  // (a flag, an index and a value set every cycle and tested at its end)
  logic [31:0] mem [Depth];
  always_ff @(posedge clk_i) begin
    logic [31:0] cp_v;
    if (st_re_i) st_rdata_o <= mem[st_addr_i];
    cp_v = cp_overwrite_i ? cp_data_i : mem[cp_addr_i] + cp_data_i;
    if (ld_we_i) mem[ld_addr_i] = ld_wdata_i;
    // compute wins a same-line collision (a program race, undefined by the ISA)
    if (cp_valid_i) mem[cp_addr_i] = cp_v;
  end
`endif
endmodule
