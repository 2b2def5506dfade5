// npu_pe.sv - one processing element of npu_array: two int8 weight
// registers (buffers 0 and 1, loaded one column at a time by the array),
// an int8 x int8 multiply of the activation passing through with the
// weight its select bit picks, and the int32 partial sum moving down:
// ps_q <= ps_i + a * w (row 0: ps_q <= a * w). Pass: the activation and
// its select bit go on to the right one cycle later (not from the last
// column). A module of its own so that synthesis maps one PE and the array
// instantiates it Rows x Cols times (sweep/area.c).
module npu_pe #(
  parameter bit First = 1'b0,  // row 0: no partial sum from above
  parameter bit Pass  = 1'b1   // the activation moves on to the right
) (
  input  logic        clk_i,
  input  logic [7:0]  a_i,
  input  logic        s_i,
  input  logic [31:0] ps_i,
  input  logic        wload_i,     // load this PE's column of buffer wload_buf_i
  input  logic        wload_buf_i,
  input  logic [7:0]  wload_data_i,
  output logic [7:0]  a_o,
  output logic        s_o,
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
  // exact signed 8x8 product in 16 bits (two's complement), sign-extended;
  // one expression, no block-local temporaries (a simulator would keep them
  // in memory), the same netlist as with them (Yosys cell counts unchanged)
  always_ff @(posedge clk_i) begin
    ps_q <= (First ? 32'd0 : ps_i)
            + 32'($signed(16'({{8{a_i[7]}}, a_i} * (s_i ? {{8{w1_q[7]}}, w1_q} : {{8{w0_q[7]}}, w0_q}))));
  end
  assign ps_o = ps_q;

  if (First) begin : g_first
    logic unused_ps;
    assign unused_ps = ^ps_i;
  end

  if (Pass) begin : g_pass
    logic [7:0] a_q;
    logic       s_q;
    always_ff @(posedge clk_i) begin
      a_q <= a_i;
      s_q <= s_i;
    end
    assign a_o = a_q;
    assign s_o = s_q;
  end else begin : g_end
    assign a_o = '0;
    assign s_o = 1'b0;
  end
endmodule
