// tb_dram_tap.sv - for the cycle-accurate SystemC module only
// (systemc/npu_ca.cpp): bound into tb_dram, it reports each AXI burst the
// DRAM accepts (address and length, at the address handshake) through
// DPI-C, so the module can move each burst's bytes as one TLM transaction
// while tb_dram keeps its timing and its per-beat data calls. The rtl
// backend (sim.cpp) does not include this file; tb_dram is unchanged.
module tb_dram_tap (
  input logic            clk_i,
  input logic            rst_ni,
  input longint unsigned handle_i,
  input logic            ar_valid_i,
  input logic            ar_ready_o,
  input logic [31:0]     ar_addr_i,
  input logic [7:0]      ar_len_i,
  input logic            aw_valid_i,
  input logic            aw_ready_o,
  input logic [31:0]     aw_addr_i,
  input logic [7:0]      aw_len_i
);
  import "DPI-C" function void tb_dram_burst(input longint unsigned h, input bit write,
                                             input int unsigned addr, input int unsigned len);

  // the same handshakes tb_dram takes, at the same clock edge
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
    end else begin
      if (ar_valid_i && ar_ready_o) tb_dram_burst(handle_i, 1'b0, ar_addr_i, 32'(ar_len_i));
      if (aw_valid_i && aw_ready_o) tb_dram_burst(handle_i, 1'b1, aw_addr_i, 32'(aw_len_i));
    end
  end
endmodule

bind tb_dram tb_dram_tap u_tap (.*);
