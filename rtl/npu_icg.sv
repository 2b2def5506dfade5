// npu_icg.sv - a clock gate, as an integrated clock-gating cell: gclk_o
// follows clk_i in the cycles whose enable was 1 while the clock was low. A
// latch, transparent while clk_i is low, holds en_i through the high phase,
// so gclk_o cannot glitch when en_i changes after the rising edge.
//
// An engine gates its own clock with it in the cycles where none of its
// flops would change (idle, nothing arriving): in silicon the gated flops
// draw no clock power; in a simulator (Verilator) nothing clocked by gclk_o,
// nor logic fed only by it, is evaluated in a cycle its clock does not rise
// (docs/PERFORMANCE.md, "Simulation speed"). The flops keep their values as
// with an enable on each, so behaviour and cycles do not change; random
// co-simulation against the C model holds the enables to that. en_i must
// come from flops (or logic of flops), or from the MMIO request, which the
// harnesses (verilator_tb/sim.cpp, systemc/npu_ca.cpp) set and then
// evaluate with the clock low, as a bus's registered request would be held
// through the low phase; not from other inputs, which the harnesses change
// just before the rising edge. The clock also runs while rst_ni is low,
// whatever en_i: resets are synchronous, so the gated registers need their
// clock to reset (the harnesses change rst_ni only with the clock low and
// evaluate the model after it).
//
// Two views of the same cell. Synthesis (Yosys, make synth) gets the
// latch, the Verilator simulation a model without one: when clk_i rises,
// gclk_o takes the enable as it stands before the edge (Verilator evaluates
// logic that drives clocks before the flops of the edge, and en_i is logic
// of those flops), and when clk_i falls, gclk_o falls. It needs no
// evaluation while the clock is low, which lets the harness take the
// falling edge without one (verilator_tb/sim.cpp, scripts/rtl_clocks.sh):
// the latch would take the enable only in an evaluation with the clock low.
module npu_icg (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic en_i,
  output logic gclk_o
);
  logic en;  // the enable, forced while in reset
  assign en = en_i || !rst_ni;
`ifdef VERILATOR
  // the simulation model (above): blocking, so with the logic that makes
  // clocks, ahead of the edge's flops
  always @(clk_i) gclk_o = clk_i && en;
`else
  logic en_l;
  always_latch begin
    if (!clk_i) en_l = en;
  end
  assign gclk_o = clk_i & en_l;
`endif
endmodule
