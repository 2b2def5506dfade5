// npu_array.sv - Rows x Cols weight-stationary MAC array with double-buffered
// weights.
//
// Dataflow (times relative to the cycle t0 in which a line is presented on
// act_*_i, i.e. "enters the array"):
//   * row r of the line is delayed r cycles by a triangle of registers (row r
//     owns r of them), then moves right one PE per cycle: PE[r][c] multiplies
//     it in cycle t0 + r + c;
//   * partial sums move down one row per cycle: PE[r][c] registers
//     psum(above) + a*w at the end of cycle t0 + r + c, so column c's sum is
//     on out_data_o in cycle t0 + Rows + c;
//   * the metadata (valid, ACC address, overwrite) of the line shifts through
//     a chain of Rows + Cols - 1 registers; column c taps stage Rows - 1 + c,
//     so each lane's valid/addr/overwrite arrive in the same cycle as its sum.
// PEs compute unconditionally; only the metadata says whether a lane output
// is real (bubbles carry valid = 0).
//
// Weights: two registers per PE (buffers 0 and 1). A load writes one column
// of one buffer: w[wload_buf_i][r][wload_col_i] = wload_data_i[8r +: 8] for
// every r (scratchpad line c of a fold holds column c). A load at the end of
// cycle X is seen by the PEs from cycle X + 1. Every activation carries a
// select bit (act_sel_i) that travels with it, choosing the buffer.
// Weight-safety bound for the sequencer: the last reader of column col for a
// line entering in t0 is PE[Rows-1][col] in cycle t0 + Rows - 1 + col, so
// writing column col of that buffer in any cycle >= t0 + Rows - 1 + col is
// safe (the write takes effect at the end of that cycle).
//
// Arithmetic: int8 x int8 products summed in int32, wrapping.
module npu_array #(
  parameter int unsigned Rows  = npu_pkg::ArrayRows,
  parameter int unsigned Cols  = npu_pkg::ArrayCols,
  parameter int unsigned AddrW = npu_pkg::AccAddrW
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // weight load (one column of one buffer per cycle)
  input  logic                      wload_valid_i,
  input  logic                      wload_buf_i,
  input  logic [$clog2(Cols)-1:0]   wload_col_i,
  input  logic [8*Rows-1:0]         wload_data_i,
  // activation line entering at the left edge (byte r -> row r)
  input  logic                      act_valid_i,
  input  logic                      act_sel_i,
  input  logic [8*Rows-1:0]         act_data_i,
  input  logic [AddrW-1:0]          act_addr_i,
  input  logic                      act_overwrite_i,
  // bottom edge: one int32 sum per column (lane c at [c*W +: W])
  output logic [Cols-1:0]           out_valid_o,
  output logic [Cols*AddrW-1:0]     out_addr_o,
  output logic [Cols-1:0]           out_overwrite_o,
  output logic [Cols*32-1:0]        out_data_o
);

  localparam int unsigned ColW  = $clog2(Cols);
  localparam int unsigned Chain = Rows + Cols - 1;  // metadata stages

  if (Rows < 2 || Cols < 2) begin : g_bad_size
    $fatal(1, "npu_array: Rows and Cols must be at least 2");
  end

  // Yosys 0.23 mis-sizes packed arrays of typedefs, so every 2-D quantity
  // below is a flat vector sliced with constant [i*W +: W] indices.

  // ---------------------------------------------------------------------------
  // Weights: w0_q[c] / w1_q[c] hold column c of buffer 0 / 1 (byte r = row r)
  // ---------------------------------------------------------------------------
  logic [Cols*8*Rows-1:0] w0_q, w1_q;  // column c at [c*8*Rows +: 8*Rows]

  for (genvar c = 0; c < Cols; c++) begin : g_wcol
    logic we0, we1;
    assign we0 = wload_valid_i && !wload_buf_i && (wload_col_i == ColW'(c));
    assign we1 = wload_valid_i &&  wload_buf_i && (wload_col_i == ColW'(c));

    always_ff @(posedge clk_i) begin
      if (we0) begin
        w0_q[c*8*Rows +: 8*Rows] <= wload_data_i;
      end
      if (we1) begin
        w1_q[c*8*Rows +: 8*Rows] <= wload_data_i;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Input skew: row r delayed r cycles (triangle, row r owns r registers)
  // ---------------------------------------------------------------------------
  logic [Rows*9-1:0] row_in;  // {sel, int8} entering PE[r][0], row r at [9r +: 9]

  assign row_in[8:0] = {act_sel_i, act_data_i[7:0]};

  for (genvar r = 1; r < Rows; r++) begin : g_skew
    logic [9*r-1:0] sk_q;  // stage k at [9k +: 9]; stage r-1 is the oldest
    if (r == 1) begin : g_one
      always_ff @(posedge clk_i) begin
        sk_q <= {act_sel_i, act_data_i[8*r +: 8]};
      end
    end else begin : g_many
      always_ff @(posedge clk_i) begin
        sk_q <= {sk_q[9*(r-1)-1:0], act_sel_i, act_data_i[8*r +: 8]};
      end
    end
    assign row_in[9*r +: 9] = sk_q[9*(r-1) +: 9];
  end

  // ---------------------------------------------------------------------------
  // PE grid
  // ---------------------------------------------------------------------------
  // Flat, index [r*N + c]: a_q = activation leaving PE[r][c] to the right
  // (columns 0..Cols-2 only), ps_q = partial sum leaving PE[r][c] downwards.
  logic [Rows*(Cols-1)*9-1:0] a_q;
  logic [Rows*Cols*32-1:0]    ps_q;

  for (genvar r = 0; r < Rows; r++) begin : g_row
    for (genvar c = 0; c < Cols; c++) begin : g_pe
      logic [8:0]  a_in;   // {sel, int8}
      logic [31:0] ps_in;
      logic [7:0]  w;
      logic [15:0] prod;   // exact signed 8x8 product (two's complement)

      if (c == 0) begin : g_left
        assign a_in = row_in[9*r +: 9];
      end else begin : g_inner
        assign a_in = a_q[(r*(Cols-1)+c-1)*9 +: 9];
      end

      if (r == 0) begin : g_top
        assign ps_in = '0;
      end else begin : g_below
        assign ps_in = ps_q[((r-1)*Cols+c)*32 +: 32];
      end

      assign w    = a_in[8] ? w1_q[(c*Rows+r)*8 +: 8] : w0_q[(c*Rows+r)*8 +: 8];
      assign prod = {{8{a_in[7]}}, a_in[7:0]} * {{8{w[7]}}, w};

      always_ff @(posedge clk_i) begin
        ps_q[(r*Cols+c)*32 +: 32] <= ps_in + {{16{prod[15]}}, prod};
      end

      if (c < Cols - 1) begin : g_pass
        always_ff @(posedge clk_i) begin
          a_q[(r*(Cols-1)+c)*9 +: 9] <= a_in;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Metadata chain: stage i holds the metadata of the line that entered i+1
  // cycles ago; column c's output belongs to stage Rows - 1 + c.
  // ---------------------------------------------------------------------------
  logic [Chain-1:0]       mvalid_q, mow_q;
  logic [Chain*AddrW-1:0] maddr_q;  // stage i at [i*AddrW +: AddrW]

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mvalid_q <= '0;
    end else begin
      mvalid_q <= {mvalid_q[Chain-2:0], act_valid_i};
    end
  end

  always_ff @(posedge clk_i) begin
    mow_q   <= {mow_q[Chain-2:0], act_overwrite_i};
    maddr_q <= {maddr_q[(Chain-1)*AddrW-1:0], act_addr_i};
  end

  for (genvar c = 0; c < Cols; c++) begin : g_out
    assign out_valid_o[c]                 = mvalid_q[Rows-1+c];
    assign out_overwrite_o[c]             = mow_q[Rows-1+c];
    assign out_addr_o[c*AddrW +: AddrW]   = maddr_q[(Rows-1+c)*AddrW +: AddrW];
    assign out_data_o[c*32 +: 32]         = ps_q[((Rows-1)*Cols+c)*32 +: 32];
  end

endmodule
