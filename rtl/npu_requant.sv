// npu_requant.sv - one lane of the STORE requantization (docs/ISA.md):
//
//   q = clamp(rdivpot(srdhm(sat32(acc + bias), mult), shift & 31) + zp, lo, hi)
//
// bit-exact with loom_requant() of common/isa.c for every input, including
// the cases the decoder never lets through (lo > hi: z < lo gives lo, else
// z > hi gives hi, as the C code does; shift words above 31: only bits 4:0).
//
// Pipeline, no stall (a new input may enter every cycle, out_o/valid_o follow
// Latency = 2 cycles later):
//   stage 0 (comb)  x = saturate_int32(acc + bias)                 -> x_q
//   stage 1 (comb)  p = int64(x) * int64(mult)                     -> p_q
//   stage 2 (comb)  srdhm rounding, rounding shift, + zp, clamp    -> q_o
// Data flops load only with a valid input (no reset: datapath); only the
// valid bits are reset.
module npu_requant (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,
  input  logic [31:0] acc_i,    // int32 accumulator value
  input  logic [31:0] bias_i,   // int32 per-channel bias
  input  logic [31:0] mult_i,   // int32 multiplier (scale * 2^31)
  input  logic [31:0] shift_i,  // right shift; only bits 4:0 are used
  input  logic [7:0]  zp_i,     // int8 output zero point
  input  logic [7:0]  lo_i,     // int8 clamp low
  input  logic [7:0]  hi_i,     // int8 clamp high
  output logic        valid_o,
  output logic [7:0]  q_o       // int8 result
);

  localparam logic [31:0] IntMin = 32'h8000_0000;
  localparam logic [31:0] IntMax = 32'h7fff_ffff;

  // ---------------------------------------------------------------- stage 0
  logic signed [32:0] sum;
  logic        [31:0] x_d;

  always_comb begin
    sum = $signed({acc_i[31], acc_i}) + $signed({bias_i[31], bias_i});
    x_d = sum[31:0];
    if (sum[32] != sum[31]) begin
      x_d = sum[32] ? IntMin : IntMax;  // saturate_int32
    end
  end

  logic        v1_q;
  logic [31:0] x_q, mult1_q;
  logic [4:0]  sh1_q;
  logic [7:0]  zp1_q, lo1_q, hi1_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      v1_q <= 1'b0;
    end else begin
      v1_q <= valid_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (valid_i) begin
      x_q     <= x_d;
      mult1_q <= mult_i;
      sh1_q   <= shift_i[4:0];
      zp1_q   <= zp_i;
      lo1_q   <= lo_i;
      hi1_q   <= hi_i;
    end
  end

  // ---------------------------------------------------------------- stage 1
  logic signed [63:0] p_d;
  logic               minmin_d;

  always_comb begin
    p_d      = $signed(x_q) * $signed(mult1_q);
    minmin_d = (x_q == IntMin) && (mult1_q == IntMin);
  end

  logic        v2_q;
  logic [63:0] p_q;
  logic        minmin_q;
  logic [4:0]  sh2_q;
  logic [7:0]  zp2_q, lo2_q, hi2_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      v2_q <= 1'b0;
    end else begin
      v2_q <= v1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (v1_q) begin
      p_q      <= p_d;
      minmin_q <= minmin_d;
      sh2_q    <= sh1_q;
      zp2_q    <= zp1_q;
      lo2_q    <= lo1_q;
      hi2_q    <= hi1_q;
    end
  end

  // ---------------------------------------------------------------- stage 2
  logic signed [63:0] t;      // p + nudge
  logic        [31:0] fl;     // t / 2^31 (fits int32)
  logic        [31:0] y;      // srdhm result
  logic        [31:0] mask, rem, thr, ys, z;
  logic signed [9:0]  w;      // z + zp, only when z is in int8 range +-1
  logic               z_lo, z_hi;  // z + zp below -512 / above 511

  always_comb begin
    // srdhm: (p + nudge) / 2^31 truncated toward zero. |p| <= 2^62, so t
    // cannot overflow 64 bits and the quotient fits int32.
    t  = $signed(p_q) + ($signed(p_q) >= 0 ? 64'sd1073741824 : -64'sd1073741823);
    fl = t[62:31];                        // floor
    if (t[63] && t[30:0] != '0) begin
      fl = fl + 32'd1;                    // toward zero
    end
    y = minmin_q ? IntMax : fl;

    // rdivpot(y, e): (y >> e) + (rem > thr), ties away from zero
    mask = (32'd1 << sh2_q) - 32'd1;
    rem  = y & mask;
    thr  = (mask >> 1) + {31'd0, y[31]};
    ys   = $signed(y) >>> sh2_q;          // own statement: stays arithmetic
    z    = ys + {31'd0, (rem > thr)};

    // z + zp without overflow, then clamp; z far outside int8 is folded
    // into two flags so the final add and compares stay 10 bits wide
    z_lo = $signed(z) < -32'sd256;
    z_hi = $signed(z) > 32'sd255;
    w    = $signed(z[9:0]) + $signed({{2{zp2_q[7]}}, zp2_q});
    q_o  = w[7:0];
    if (z_lo || (!z_hi && w < $signed({{2{lo2_q[7]}}, lo2_q}))) begin
      q_o = lo2_q;
    end else if (z_hi || w > $signed({{2{hi2_q[7]}}, hi2_q})) begin
      q_o = hi2_q;
    end
  end

  assign valid_o = v2_q;

  // shift words above 31 act as shift & 31 (docs/ISA.md)
  logic unused_shift;
  assign unused_shift = ^shift_i[31:5];

endmodule
