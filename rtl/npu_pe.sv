// npu_pe.sv - one processing element of npu_array: two 8-bit weight
// registers (buffers 0 and 1, loaded one column at a time by the array),
// an 8x8 multiply of the activation passing through with the weight its
// select bit picks, and the int32 partial sum moving down:
// ps_q <= ps_i + a * w. The operands are offset binary (the array stores
// an int8 x as x + 128, 0..255: its top bit inverted), so the product is
// unsigned; npu_array feeds row 0's partial-sum input with the correction
// that makes each column's sum the signed one. Pass: the activation and
// its select bit go on to the right one cycle later (not from the last
// column). A module of its own so that synthesis maps one PE and the array
// instantiates it Rows x Cols times (sweep/area.c).
module npu_pe #(
  parameter bit Pass = 1'b1   // the activation moves on to the right
) (
  input  logic        clk_i,
  input  logic [8:0]  as_i,        // {select bit, activation (offset binary)}
  input  logic [31:0] ps_i,
  input  logic        wload_i,     // load this PE's column of buffer wload_buf_i
  input  logic        wload_buf_i,
  input  logic [7:0]  wload_data_i,  // offset binary
  output logic [8:0]  as_o,
  output logic [31:0] ps_o
);
  // inlined into the array whatever its size (Verilator would otherwise
  // call it per instance)
  /* verilator inline_module */
  logic [7:0]  w0_q, w1_q;
  logic [31:0] ps_q;

  always_ff @(posedge clk_i) begin
    if (wload_i) begin
      if (wload_buf_i) w1_q <= wload_data_i;
      else             w0_q <= wload_data_i;
    end
  end

  // the multiply-add inside the clocked block (docs/ARCHITECTURE.md): the
  // exact unsigned 8x8 product (the expression's width is 32), one
  // expression, no block-local temporaries (a simulator would keep them in
  // memory). Unsigned operands need no sign extension, which a simulator
  // pays for per PE and cycle.
  always_ff @(posedge clk_i) begin
    ps_q <= ps_i + {24'd0, as_i[7:0]} * {24'd0, as_i[8] ? w1_q : w0_q};
  end
  assign ps_o = ps_q;

  // the activation and its select bit in one register: one move a cycle
  // for a simulator, not two
  if (Pass) begin : g_pass
    logic [8:0] as_q;
    always_ff @(posedge clk_i) as_q <= as_i;
    assign as_o = as_q;
  end else begin : g_end
    assign as_o = '0;
  end
endmodule
