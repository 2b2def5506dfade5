// npu_requant.sv - Lanes lanes of the STORE requantization (docs/ISA.md),
// each lane:
//
//   q = clamp(rdivpot(srdhm(sat32(acc + bias), mult), shift & 31) + zp, lo, hi)
//
// bit-exact with loom_requant() of common/isa.c for every input, including
// the cases the decoder never lets through (lo > hi: z < lo gives lo, else
// z > hi gives hi, as the C code does; shift words above 31: only bits 4:0).
//
// Pipeline, no stall (a new input may enter every cycle, q_o/valid_o follow
// 2 cycles later), all lanes in step under one valid bit:
//   stage 1  x = saturate_int32(acc + bias)                           -> x_q
//   stage 2  p = int64(x) * int64(mult); srdhm rounding, rounding
//            shift, + zp, clamp                                       -> q_q
// All arithmetic sits inside the clocked blocks under the stage's valid
// bit, so an idle lane costs a simulator nothing (the C-model-sized 64-bit
// datapath of 16..64 lanes would otherwise be evaluated every cycle). The
// lanes share the valid bits and the zero point and clamp registers: one
// test of a valid bit a cycle for all lanes (a module per lane costs a
// simulator its own tests and copies every cycle). Data flops load only with
// a valid input (no reset: datapath); only the valid bits are reset.
// Lane l's operands are bits [32l +: 32] (acc, bias, mult) and
// [ShiftW*l +: ShiftW] (shift), its result bits [8l +: 8].
module npu_requant #(
  parameter int unsigned Lanes  = 1,
  parameter int unsigned ShiftW = 32        // bits of each lane's shift (>= 5)
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  logic                    valid_i,
  input  logic [32*Lanes-1:0]     acc_i,    // int32 accumulator values
  input  logic [32*Lanes-1:0]     bias_i,   // int32 per-channel biases
  input  logic [32*Lanes-1:0]     mult_i,   // int32 multipliers (scale * 2^31)
  input  logic [ShiftW*Lanes-1:0] shift_i,  // right shifts; only bits 4:0 are used
  input  logic [7:0]              zp_i,     // int8 output zero point
  input  logic [7:0]              lo_i,     // int8 clamp low
  input  logic [7:0]              hi_i,     // int8 clamp high
  output logic                    valid_o,
  output logic [8*Lanes-1:0]      q_o       // int8 results
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

  if (ShiftW < 5) begin : g_bad_shift
    $error("npu_requant: ShiftW must be at least 5");
  end

  logic                v1_q, v2_q;
  logic [32*Lanes-1:0] x_q, mult1_q;
  logic [5*Lanes-1:0]  sh1_q;
  logic [7:0]          zp1_q, lo1_q, hi1_q;
  logic [8*Lanes-1:0]  q_q;

  always_ff @(posedge clk_i) begin
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
      for (int unsigned l = 0; l < Lanes; l++) begin
        x_q[32*l +: 32] <= sat_add(acc_i[32*l +: 32], bias_i[32*l +: 32]);
        sh1_q[5*l +: 5] <= shift_i[ShiftW*l +: 5];
      end
      mult1_q <= mult_i;
      zp1_q   <= zp_i;
      lo1_q   <= lo_i;
      hi1_q   <= hi_i;
    end
    if (v1_q) begin
      for (int unsigned l = 0; l < Lanes; l++)
        q_q[8*l +: 8] <= finish(x_q[32*l +: 32], mult1_q[32*l +: 32], sh1_q[5*l +: 5], zp1_q, lo1_q, hi1_q);
    end
  end

  assign valid_o = v2_q;
  assign q_o     = q_q;

  // shift words above 31 act as shift & 31 (docs/ISA.md)
  if (ShiftW > 5) begin : g_unused_shift
    logic unused_shift;
    always_comb begin
      unused_shift = 1'b0;
      for (int unsigned l = 0; l < Lanes; l++) unused_shift ^= ^shift_i[ShiftW*l+5 +: ShiftW-5];
    end
  end

endmodule
