// npu_fifo.sv - a synchronous FIFO of Width-bit entries, Depth deep
// (power of two). Used for the instruction queues. Pushing when full or
// popping when empty is a design error and is asserted against.
module npu_fifo #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             clear_i,
  input  logic             push_i,
  input  logic [Width-1:0] wdata_i,
  input  logic             pop_i,
  output logic [Width-1:0] rdata_o,
  output logic             empty_o,
  output logic             full_o
);
  localparam int unsigned PtrW = $clog2(Depth);

  logic [Width-1:0] mem_q [Depth];
  logic [PtrW-1:0]  rd_q, wr_q;
  logic [PtrW:0]    cnt_q;

  assign rdata_o = mem_q[rd_q];
  assign empty_o = (cnt_q == '0);
  assign full_o  = (cnt_q == (PtrW+1)'(Depth));

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rd_q  <= '0;
      wr_q  <= '0;
      cnt_q <= '0;
    end else if (clear_i) begin
      rd_q  <= '0;
      wr_q  <= '0;
      cnt_q <= '0;
    end else if (push_i || pop_i) begin
      if (push_i) wr_q <= wr_q + 1'b1;
      if (pop_i)  rd_q <= rd_q + 1'b1;
      cnt_q <= cnt_q + (PtrW+1)'(push_i) - (PtrW+1)'(pop_i);
    end
  end

  always_ff @(posedge clk_i) begin
    if (push_i && !clear_i) mem_q[wr_q] <= wdata_i;
  end

`ifndef SYNTHESIS
  // a full queue is never pushed, an empty one never popped
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clear_i) begin
      assert (!(push_i && full_o && !pop_i)) else $error("npu_fifo: push when full");
      assert (!(pop_i && empty_o)) else $error("npu_fifo: pop when empty");
    end
  end
`endif
endmodule
