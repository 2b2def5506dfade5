// npu_acc.sv - the accumulator: AccLines lines of ArrayCols int32, stored
// as one lane memory per array column so that each column of the skewed
// systolic array can add its result at its own cycle. Ports: per-lane
// accumulate-or-overwrite from compute; whole-line writes from the load DMA;
// whole-line reads for the store DMA (data the cycle after the request).
// Each lane is an npu_acc_lane macro.
// Two engines touching the same line in one cycle is a program race (the
// ISA leaves it undefined); compute wins.
module npu_acc (
  input  logic                                              clk_i,
  input  logic [npu_pkg::ArrayCols-1:0]                     cp_valid_i,
  input  logic [npu_pkg::ArrayCols*npu_pkg::AccAddrW-1:0]  cp_addr_i,  // lane c at [c*AccAddrW +: AccAddrW]
  input  logic [npu_pkg::ArrayCols-1:0]                     cp_overwrite_i,
  input  logic [32*npu_pkg::ArrayCols-1:0]                  cp_data_i,  // lane c at [32*c +: 32]
  input  logic                                              ld_we_i,
  input  logic [npu_pkg::AccAddrW-1:0]                      ld_addr_i,
  input  logic [32*npu_pkg::ArrayCols-1:0]                  ld_wdata_i,
  input  logic                                              st_re_i,
  input  logic [npu_pkg::AccAddrW-1:0]                      st_addr_i,
  output logic [32*npu_pkg::ArrayCols-1:0]                  st_rdata_o
);
  localparam int unsigned C = npu_pkg::ArrayCols;

  for (genvar c = 0; c < C; c++) begin : g_lane
    npu_acc_lane #(.Depth(npu_pkg::AccLines)) u_lane (
      .clk_i          (clk_i),
      .cp_valid_i     (cp_valid_i[c]),
      .cp_addr_i      (cp_addr_i[c*npu_pkg::AccAddrW +: npu_pkg::AccAddrW]),
      .cp_overwrite_i (cp_overwrite_i[c]),
      .cp_data_i      (cp_data_i[32*c +: 32]),
      .ld_we_i        (ld_we_i),
      .ld_addr_i      (ld_addr_i),
      .ld_wdata_i     (ld_wdata_i[32*c +: 32]),
      .st_re_i        (st_re_i),
      .st_addr_i      (st_addr_i),
      .st_rdata_o     (st_rdata_o[32*c +: 32])
    );
  end
endmodule
