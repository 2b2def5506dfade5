// npu_acc.sv - the accumulator: AccLines lines of ArrayCols int32, stored
// as one lane memory per array column so that each column of the skewed
// systolic array can add its result at its own cycle. Ports: per-lane
// accumulate-or-overwrite from compute; whole-line writes from the load DMA;
// whole-line reads for the store DMA (data the cycle after the request).
// Per lane this is a 1R1W + 1W memory (compute read-modify-write, load write).
// Two engines touching the same line in one cycle is a program race (the
// ISA leaves it undefined); compute wins.
module npu_acc (
  input  logic                                              clk_i,
  input  logic [npu_pkg::ArrayCols-1:0]                     cp_valid_i,
  input  logic [npu_pkg::ArrayCols-1:0][npu_pkg::AccAddrW-1:0] cp_addr_i,
  input  logic [npu_pkg::ArrayCols-1:0]                     cp_overwrite_i,
  input  logic [npu_pkg::ArrayCols-1:0][31:0]               cp_data_i,
  input  logic                                              ld_we_i,
  input  logic [npu_pkg::AccAddrW-1:0]                      ld_addr_i,
  input  logic [32*npu_pkg::ArrayCols-1:0]                  ld_wdata_i,
  input  logic                                              st_re_i,
  input  logic [npu_pkg::AccAddrW-1:0]                      st_addr_i,
  output logic [32*npu_pkg::ArrayCols-1:0]                  st_rdata_o
);
  localparam int unsigned C = npu_pkg::ArrayCols;

  for (genvar c = 0; c < C; c++) begin : g_lane
    logic [31:0] mem [npu_pkg::AccLines];
    always_ff @(posedge clk_i) begin
      if (ld_we_i) mem[ld_addr_i] <= ld_wdata_i[32*c +: 32];
      if (cp_valid_i[c]) begin
        mem[cp_addr_i[c]] <= cp_overwrite_i[c] ? cp_data_i[c] : mem[cp_addr_i[c]] + cp_data_i[c];
      end
      if (st_re_i) st_rdata_o[32*c +: 32] <= mem[st_addr_i];
    end
  end
endmodule
