// npu_sp.sv - the banked scratchpad: SpLines lines of SpLineBytes int8,
// split into SpBanks banks of contiguous lines, each bank one single-ported
// SRAM (npu_sram). Five clients: act and wgt (compute reads; the vector
// unit reads through act, it never runs beside MATMUL), st (store reads),
// vw (vector unit writes), ld (load writes). A bank serves one client per
// cycle, priority act > wgt > st > vw > ld; a refused client keeps its
// request and the refusal is counted as a bank conflict. Grants are combinational; read data comes
// one cycle after the grant.
module npu_sp (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // compute: activations
  input  logic                              act_req_i,
  input  logic [npu_pkg::SpAddrW-1:0]       act_addr_i,
  output logic                              act_gnt_o,
  output logic                              act_rvalid_o,
  output logic [8*npu_pkg::SpLineBytes-1:0] act_rdata_o,
  // compute: weights
  input  logic                              wgt_req_i,
  input  logic [npu_pkg::SpAddrW-1:0]       wgt_addr_i,
  output logic                              wgt_gnt_o,
  output logic                              wgt_rvalid_o,
  output logic [8*npu_pkg::SpLineBytes-1:0] wgt_rdata_o,
  // store DMA reads
  input  logic                              st_req_i,
  input  logic [npu_pkg::SpAddrW-1:0]       st_addr_i,
  output logic                              st_gnt_o,
  output logic                              st_rvalid_o,
  output logic [8*npu_pkg::SpLineBytes-1:0] st_rdata_o,
  // vector unit writes
  input  logic                              vw_req_i,
  input  logic [npu_pkg::SpAddrW-1:0]       vw_addr_i,
  input  logic [8*npu_pkg::SpLineBytes-1:0] vw_wdata_i,
  output logic                              vw_gnt_o,
  // load DMA writes
  input  logic                              ld_req_i,
  input  logic [npu_pkg::SpAddrW-1:0]       ld_addr_i,
  input  logic [8*npu_pkg::SpLineBytes-1:0] ld_wdata_i,
  output logic                              ld_gnt_o,
  // refused requests this cycle (0..4)
  output logic [2:0]                        conflicts_o
);
  localparam int unsigned Banks = npu_pkg::SpBanks;
  localparam int unsigned BW    = npu_pkg::SpBankW;
  localparam int unsigned LW    = npu_pkg::SpBankLineW;
  localparam int unsigned DW    = 8 * npu_pkg::SpLineBytes;

  function automatic logic [BW-1:0] bank_of(logic [npu_pkg::SpAddrW-1:0] a);
    // (Yosys 0.23 has no `return`: assign the function name)
    if (Banks == 1) bank_of = '0;
    else bank_of = BW'(a >> LW);
  endfunction

  logic [BW-1:0] act_b, wgt_b, st_b, vw_b, ld_b;
  assign act_b = bank_of(act_addr_i);
  assign wgt_b = bank_of(wgt_addr_i);
  assign st_b  = bank_of(st_addr_i);
  assign vw_b  = bank_of(vw_addr_i);
  assign ld_b  = bank_of(ld_addr_i);

  // Arbitration in priority order: a client is granted unless a client
  // before it already holds its bank (busy), and its grant makes it the
  // bank's owner (own; the same grants as comparing each client's bank with
  // every granted client before it, in a few operations a cycle).
  localparam logic [2:0] OwnAct = 3'd0, OwnWgt = 3'd1, OwnSt = 3'd2, OwnVw = 3'd3, OwnLd = 3'd4;
  logic [Banks-1:0]   busy;
  logic [3*Banks-1:0] own;  // bank b's client at [3*b +: 3], where busy[b]
  always_comb begin
    busy = '0;
    own  = '0;
    act_gnt_o = act_req_i;
    if (act_gnt_o) begin
      busy[act_b] = 1'b1;
      own[3*act_b +: 3] = OwnAct;
    end
    wgt_gnt_o = wgt_req_i && !busy[wgt_b];
    if (wgt_gnt_o) begin
      busy[wgt_b] = 1'b1;
      own[3*wgt_b +: 3] = OwnWgt;
    end
    st_gnt_o = st_req_i && !busy[st_b];
    if (st_gnt_o) begin
      busy[st_b] = 1'b1;
      own[3*st_b +: 3] = OwnSt;
    end
    vw_gnt_o = vw_req_i && !busy[vw_b];
    if (vw_gnt_o) begin
      busy[vw_b] = 1'b1;
      own[3*vw_b +: 3] = OwnVw;
    end
    ld_gnt_o = ld_req_i && !busy[ld_b];
    if (ld_gnt_o) begin
      busy[ld_b] = 1'b1;
      own[3*ld_b +: 3] = OwnLd;
    end
    conflicts_o = 3'(wgt_req_i && !wgt_gnt_o) + 3'(st_req_i && !st_gnt_o)
                + 3'(vw_req_i && !vw_gnt_o) + 3'(ld_req_i && !ld_gnt_o);
  end

  // one port per bank; bank b's read data at [DW*b +: DW] (a flat vector:
  // Yosys 0.23 drops an instance whose output drives an unpacked array element)
  logic [Banks*DW-1:0] bank_rdata;
  for (genvar b = 0; b < Banks; b++) begin : g_bank
    logic          en, we;
    logic [2:0]    o;
    logic [LW-1:0] addr;
    logic [DW-1:0] wdata;
    assign o     = own[3*b +: 3];
    assign en    = busy[b];
    assign we    = busy[b] && (o == OwnVw || o == OwnLd);
    assign wdata = o == OwnVw ? vw_wdata_i : ld_wdata_i;
    always_comb begin
      case (o)
        OwnWgt:  addr = LW'(wgt_addr_i);
        OwnSt:   addr = LW'(st_addr_i);
        OwnVw:   addr = LW'(vw_addr_i);
        OwnLd:   addr = LW'(ld_addr_i);
        default: addr = LW'(act_addr_i);
      endcase
    end
    npu_sram #(.Width(DW), .Depth(2**LW)) u_sram (
      .clk_i   (clk_i),
      .en_i    (en),
      .we_i    (we),
      .addr_i  (addr),
      .wdata_i (wdata),
      .rdata_o (bank_rdata[DW*b +: DW])
    );
  end

  // read data returns the cycle after the grant, from the bank then chosen
  logic          act_v_q, wgt_v_q, st_v_q;
  logic [BW-1:0] act_bq, wgt_bq, st_bq;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      act_v_q <= 1'b0;
      wgt_v_q <= 1'b0;
      st_v_q  <= 1'b0;
    end else begin
      act_v_q <= act_gnt_o;
      wgt_v_q <= wgt_gnt_o;
      st_v_q  <= st_gnt_o;
    end
  end
  always_ff @(posedge clk_i) begin
    act_bq <= act_b;
    wgt_bq <= wgt_b;
    st_bq  <= st_b;
  end
  assign act_rvalid_o = act_v_q;
  assign wgt_rvalid_o = wgt_v_q;
  assign st_rvalid_o  = st_v_q;
  assign act_rdata_o  = bank_rdata[DW*act_bq +: DW];
  assign wgt_rdata_o  = bank_rdata[DW*wgt_bq +: DW];
  assign st_rdata_o   = bank_rdata[DW*st_bq +: DW];
endmodule
