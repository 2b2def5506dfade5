// npu_requant.sv - one lane of the STORE requantization (docs/ISA.md):
//
//   q = clamp(rdivpot(srdhm(sat32(acc + bias), mult), shift & 31) + zp, lo, hi)
//
// bit-exact with loom_requant() of common/isa.c for every input, including
// the cases the decoder never lets through (lo > hi: z < lo gives lo, else
// z > hi gives hi, as the C code does; shift words above 31: only bits 4:0).
//
// Pipeline, no stall (a new input may enter every cycle, q_o/valid_o follow
// 2 cycles later):
//   stage 1  x = saturate_int32(acc + bias)                           -> x_q
//   stage 2  p = int64(x) * int64(mult); srdhm rounding, rounding
//            shift, + zp, clamp                                       -> q_q
// All arithmetic sits inside the clocked blocks under the stage's valid
// bit, so an idle lane costs a simulator nothing (the C-model-sized 64-bit
// datapath of 16..64 lanes would otherwise be evaluated every cycle). Data
// flops load only with a valid input (no reset: datapath); only the valid
// bits are reset.
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

  // saturate_int32(a + b)
  function automatic logic [31:0] sat_add(logic [31:0] a, logic [31:0] b);
    logic signed [32:0] sum;
    sum = $signed({a[31], a}) + $signed({b[31], b});
    sat_add = sum[31:0];
    if (sum[32] != sum[31]) sat_add = sum[32] ? IntMin : IntMax;
  endfunction

  // clamp(rdivpot(srdhm(x, m), e) + zp, lo, hi)
  function automatic logic [7:0] finish(logic [31:0] x, logic [31:0] m, logic [4:0] e,
                                        logic [7:0] zp, logic [7:0] lo, logic [7:0] hi);
    logic signed [63:0] p, t;
    logic        [31:0] fl, y, mask, rem, thr, ys, z;
    logic signed [9:0]  w;
    logic               z_lo, z_hi;
    // srdhm: (p + nudge) / 2^31 truncated toward zero. |p| <= 2^62, so t
    // cannot overflow 64 bits and the quotient fits int32.
    p  = $signed(x) * $signed(m);
    t  = p + (p >= 0 ? 64'sd1073741824 : -64'sd1073741823);
    fl = t[62:31];                        // floor
    if (t[63] && t[30:0] != '0) fl = fl + 32'd1;  // toward zero
    y = (x == IntMin && m == IntMin) ? IntMax : fl;
    // rdivpot(y, e): (y >> e) + (rem > thr), ties away from zero
    mask = (32'd1 << e) - 32'd1;
    rem  = y & mask;
    thr  = (mask >> 1) + {31'd0, y[31]};
    ys   = $signed(y) >>> e;              // own statement: stays arithmetic
    z    = ys + {31'd0, (rem > thr)};
    // z + zp without overflow, then clamp; z far outside int8 is folded
    // into two flags so the final add and compares stay 10 bits wide
    z_lo = $signed(z) < -32'sd256;
    z_hi = $signed(z) > 32'sd255;
    w    = $signed(z[9:0]) + $signed({{2{zp[7]}}, zp});
    finish = w[7:0];
    if (z_lo || (!z_hi && w < $signed({{2{lo[7]}}, lo}))) finish = lo;
    else if (z_hi || w > $signed({{2{hi[7]}}, hi})) finish = hi;
  endfunction

  logic        v1_q, v2_q;
  logic [31:0] x_q, mult1_q;
  logic [4:0]  sh1_q;
  logic [7:0]  zp1_q, lo1_q, hi1_q, q_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      v1_q <= 1'b0;
      v2_q <= 1'b0;
    end else begin
      v1_q <= valid_i;
      v2_q <= v1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (valid_i) begin
      x_q     <= sat_add(acc_i, bias_i);
      mult1_q <= mult_i;
      sh1_q   <= shift_i[4:0];
      zp1_q   <= zp_i;
      lo1_q   <= lo_i;
      hi1_q   <= hi_i;
    end
    if (v1_q) q_q <= finish(x_q, mult1_q, sh1_q, zp1_q, lo1_q, hi1_q);
  end

  assign valid_o = v2_q;
  assign q_o     = q_q;

  // shift words above 31 act as shift & 31 (docs/ISA.md)
  logic unused_shift;
  assign unused_shift = ^shift_i[31:5];

endmodule
