// tb_top.sv - the top level the Verilator harness simulates: the NPU and
// the simulated DRAM (tb_dram), with the MMIO slave's request set through a
// DPI-C export (tb_mmio) and its read data and the interrupt as ports, for
// sim.cpp and systemc/npu_ca.cpp.
module tb_top (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  longint unsigned dram_handle_i,
  input  int unsigned     dram_latency_i,
  input  int unsigned     dram_bw_i,
  output logic [31:0]     mmio_rdata_o,
  output logic            irq_o
);
  logic                          ar_valid, ar_ready, r_valid, r_ready, r_last;
  logic [31:0]                   ar_addr, aw_addr;
  logic [7:0]                    ar_len, aw_len;
  logic [1:0]                    ar_id, r_id, r_resp, b_resp;
  logic [npu_pkg::BeatW-1:0]     r_data, w_data;
  logic                          aw_valid, aw_ready, w_valid, w_ready, w_last, b_valid, b_ready;
  logic [npu_pkg::DramBeatBytes-1:0] w_strb;

  // The MMIO request, set by the harness through tb_mmio (a DPI-C export)
  // rather than through input ports: Verilator evaluates whatever depends
  // on a top-level input at every evaluation of the model, both clock
  // edges, while logic that reads variables a DPI export writes runs only
  // in evaluations after such a call (or when its other inputs change).
  logic        mmio_req, mmio_we;
  logic [11:0] mmio_addr;
  logic [31:0] mmio_wdata;
  export "DPI-C" function tb_mmio;
  function void tb_mmio(input bit req, input bit we, input int unsigned addr, input int unsigned wdata);
    mmio_req   = req;
    mmio_we    = we;
    mmio_addr  = addr[11:0];
    mmio_wdata = wdata;
  endfunction

  npu_top u_npu (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .mmio_req_i   (mmio_req),
    .mmio_we_i    (mmio_we),
    .mmio_addr_i  (mmio_addr),
    .mmio_wdata_i (mmio_wdata),
    .mmio_rdata_o (mmio_rdata_o),
    .irq_o        (irq_o),
    .ar_valid_o   (ar_valid),
    .ar_ready_i   (ar_ready),
    .ar_addr_o    (ar_addr),
    .ar_len_o     (ar_len),
    .ar_id_o      (ar_id),
    .r_valid_i    (r_valid),
    .r_ready_o    (r_ready),
    .r_data_i     (r_data),
    .r_id_i       (r_id),
    .r_last_i     (r_last),
    .r_resp_i     (r_resp),
    .aw_valid_o   (aw_valid),
    .aw_ready_i   (aw_ready),
    .aw_addr_o    (aw_addr),
    .aw_len_o     (aw_len),
    .w_valid_o    (w_valid),
    .w_ready_i    (w_ready),
    .w_data_o     (w_data),
    .w_strb_o     (w_strb),
    .w_last_o     (w_last),
    .b_valid_i    (b_valid),
    .b_resp_i     (b_resp),
    .b_ready_o    (b_ready)
  );

  tb_dram u_dram (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .handle_i   (dram_handle_i),
    .latency_i  (dram_latency_i),
    .bw_i       (dram_bw_i),
    .ar_valid_i (ar_valid),
    .ar_ready_o (ar_ready),
    .ar_addr_i  (ar_addr),
    .ar_len_i   (ar_len),
    .ar_id_i    (ar_id),
    .r_valid_o  (r_valid),
    .r_ready_i  (r_ready),
    .r_data_o   (r_data),
    .r_id_o     (r_id),
    .r_last_o   (r_last),
    .r_resp_o   (r_resp),
    .aw_valid_i (aw_valid),
    .aw_ready_o (aw_ready),
    .aw_addr_i  (aw_addr),
    .aw_len_i   (aw_len),
    .w_valid_i  (w_valid),
    .w_ready_o  (w_ready),
    .w_data_i   (w_data),
    .w_strb_i   (w_strb),
    .w_last_i   (w_last),
    .b_valid_o  (b_valid),
    .b_resp_o   (b_resp),
    .b_ready_i  (b_ready)
  );
endmodule
