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
// Arithmetic: int8 x int8 products summed in int32, wrapping. Inside the
// array both operands are offset binary: u = a + 128 and v = w + 128 (0..255,
// the top bit of the int8 inverted on the way in), so each PE multiplies
// unsigned bytes (no sign extension: the cheapest form for a simulator).
// Since (u - 128)(v - 128) = uv - 128u - 128v + 16384, row 0's partial-sum
// input of column c is the correction 128 * (128 Rows - U - V): U the sum of
// the line's u bytes (an adder tree at the left edge, then one register per
// column along row 0, in step with the line), V the sum of column c's v
// bytes in the buffer the line selects (a register per column and buffer,
// written with the weights). Every column's sum is then exactly the signed
// one, cycle for cycle as before. Bubbles (valid = 0) carry other values
// than before; nothing reads them.
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
  localparam int unsigned SW    = 8 + $clog2(Rows); // a sum of Rows bytes

  if (Rows < 2 || Cols < 2) begin : g_bad_size
    $fatal(1, "npu_array: Rows and Cols must be at least 2");
  end

  // Every PE is an npu_pe instance with its own small registers (neighbours
  // reach its outputs as g_row[r].g_pe[c].as_out / ps): Verilator inlines it
  // and keeps each register in a native integer, which simulates several
  // times faster than slices of one wide flat vector; Yosys maps one PE per
  // parameter set (Pass) and stat counts the instances, so the
  // array's synthesis does not grow with Rows x Cols (sweep/area.c).

  // offset binary (int8 x -> x + 128): the top bit of every byte inverted
  logic [8*Rows-1:0] act_u, wload_u;
  assign act_u   = act_data_i ^ {Rows{8'h80}};
  assign wload_u = wload_data_i ^ {Rows{8'h80}};

  // U of the line entering (sum of its u bytes) and V of the weight column
  // being loaded (sum of its v bytes)
  logic [SW-1:0] su_in, sv_in;
  always_comb begin
    su_in = '0;
    sv_in = '0;
    for (int r = 0; r < Rows; r++) begin
      su_in = su_in + SW'(act_u[8*r +: 8]);
      sv_in = sv_in + SW'(wload_u[8*r +: 8]);
    end
  end

  // ---------------------------------------------------------------------------
  // Input skew: row r delayed r cycles (triangle, row r owns r registers)
  // ---------------------------------------------------------------------------
  // g_skew[r].out: {sel, int8} entering PE[r][0]; stage k of row r is
  // g_skew[r].g_st[k].q_q (stage r-1 the oldest)
  for (genvar r = 0; r < Rows; r++) begin : g_skew
    logic [8:0] out;
    if (r == 0) begin : g_direct
      assign out = {act_sel_i, act_u[7:0]};
    end else begin : g_delay
      for (genvar k = 0; k < r; k++) begin : g_st
        logic [8:0] q_q;
        if (k == 0) begin : g_first
          always_ff @(posedge clk_i) q_q <= {act_sel_i, act_u[8*r +: 8]};
        end else begin : g_next
          always_ff @(posedge clk_i) q_q <= g_st[k-1].q_q;
        end
      end
      assign out = g_st[r-1].q_q;
    end
  end

  // ---------------------------------------------------------------------------
  // PE grid: PE[r][c] is an npu_pe (g_row[r].g_pe[c].u_pe); as_out =
  // {select bit, activation} leaving to the right, ps = partial sum leaving
  // downwards. The weight load of column c is decoded once per column.
  // ---------------------------------------------------------------------------
  logic [Cols-1:0] wsel;
  for (genvar c = 0; c < Cols; c++) begin : g_wsel
    assign wsel[c] = wload_valid_i && wload_col_i == ColW'(c);
  end

  for (genvar r = 0; r < Rows; r++) begin : g_row
    for (genvar c = 0; c < Cols; c++) begin : g_pe
      logic [8:0]  as_in, as_out;  // {select bit, activation}
      logic [31:0] ps_in, ps;

      if (c == 0) begin : g_left
        assign as_in = g_skew[r].out;
      end else begin : g_inner
        assign as_in = g_row[r].g_pe[c-1].as_out;
      end

      if (c == Cols - 1) begin : g_last
        logic unused_pass;  // the last column passes nothing on (npu_pe drives 0)
        assign unused_pass = ^as_out;
      end

      if (r == 0) begin : g_top
        // the correction 128 * (128 Rows - U - V) of the line reaching
        // PE[0][c] in this cycle: U rides along row 0 with it, V is column
        // c's sum in the buffer its select bit picks (written together with
        // the column's weights, so it matches the weights the line sees)
        logic [SW-1:0] su, sv;
        if (c == 0) begin : g_su_in
          assign su = su_in;
        end else begin : g_su_reg
          logic [SW-1:0] su_q;
          always_ff @(posedge clk_i) su_q <= g_row[0].g_pe[c-1].g_top.su;
          assign su = su_q;
        end
        logic [SW-1:0] sv0_q, sv1_q;
        always_ff @(posedge clk_i) begin
          if (wsel[c]) begin
            if (wload_buf_i) sv1_q <= sv_in;
            else             sv0_q <= sv_in;
          end
        end
        assign sv    = as_in[8] ? sv1_q : sv0_q;
        assign ps_in = 32'(Rows * 16384) - ((32'(su) + 32'(sv)) << 7);
      end else begin : g_below
        assign ps_in = g_row[r-1].g_pe[c].ps;
      end

      npu_pe #(
        .Pass  (c < Cols - 1)
      ) u_pe (
        .clk_i        (clk_i),
        .as_i         (as_in),
        .ps_i         (ps_in),
        .wload_i      (wsel[c]),
        .wload_buf_i  (wload_buf_i),
        .wload_data_i (wload_u[8*r +: 8]),
        .as_o         (as_out),
        .ps_o         (ps)
      );
    end
  end

  // ---------------------------------------------------------------------------
  // Metadata chain: stage i holds the metadata of the line that entered i+1
  // cycles ago; column c's output belongs to stage Rows - 1 + c.
  // ---------------------------------------------------------------------------
  logic [Chain-1:0]       mvalid_q, mow_q;
  logic [Chain*AddrW-1:0] maddr_q;  // stage i at [i*AddrW +: AddrW]

  always_ff @(posedge clk_i) begin
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
    assign out_data_o[c*32 +: 32]         = g_row[Rows-1].g_pe[c].ps;
  end

endmodule
