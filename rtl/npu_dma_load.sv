// npu_dma_load.sv - the load DMA: executes LOAD (docs/ISA.md), DRAM -> SP or
// ACC lines, padding included.
//
// Three decoupled parts:
//  * walker: steps through the padded plane (i3, y, x). A padding row costs
//    one cycle for the whole row; a data line costs one cycle and issues one
//    AR burst (beats a/B .. (a+n0-1)/B) into the AR output register. Padding
//    lines are not queued one by one: they are counted (pend_q) and the count
//    rides on the next data line's descriptor (pads to write before it), or
//    on a final pad-only descriptor. A descriptor is pushed when its burst is
//    issued, so the descriptor FIFO (DescDepth >= DmaOutstanding + 1) holds
//    every burst in flight plus the one being written.
//  * writer: pops descriptors in order; writes the pad lines (PAD_VALUE for
//    SP, 0 for ACC), then collects the burst's beats into span_q and, with
//    the last beat, shifts the n0 bytes down by the 4-byte offset a % B,
//    zeroes the rest of the line and pushes it to the output FIFO. Non-last
//    beats are always accepted; the last beat only with room in the output
//    FIFO (r_ready_o back-pressures the bus while lines wait for the SP).
//  * output FIFO (2 lines): drives the SP write port (held until granted) or
//    the ACC write port (always accepted).
// Up to DmaOutstanding bursts are in flight (issued, last beat not back).
//
// Timing: done_o is a registered one-cycle pulse in the first idle cycle
// after the last SP/ACC write (insn_ready_o is high in that same cycle). No
// output depends combinationally on an input. The only input-to-register
// paths of note are r_data_i -> line extraction -> output FIFO, and
// sp_gnt_i / ar_ready_i -> FIFO pointers.
//
// abort_i (a pulse or a level): the walker stops; an AR already presented
// stays until accepted (AXI); every beat of the bursts in flight is taken
// and dropped; queued lines are discarded; then idle, no done_o.
module npu_dma_load (
  input  logic                                 clk_i,
  input  logic                                 rst_ni,
  // engine instruction port
  input  logic                                 insn_valid_i,
  input  logic [255:0]                         insn_i,
  output logic                                 insn_ready_o,
  output logic                                 done_o,
  output logic                                 busy_o,
  input  logic                                 abort_i,
  // AXI4-style read master (responses in order)
  output logic                                 ar_valid_o,
  input  logic                                 ar_ready_i,
  output logic [31:0]                          ar_addr_o,
  output logic [7:0]                           ar_len_o,
  input  logic                                 r_valid_i,
  output logic                                 r_ready_o,
  input  logic [npu_pkg::BeatW-1:0]            r_data_i,
  input  logic                                 r_last_i,
  // scratchpad write client
  output logic                                 sp_req_o,
  output logic                                 sp_we_o,
  output logic [npu_pkg::SpAddrW-1:0]          sp_addr_o,
  output logic [8*npu_pkg::ArrayRows-1:0]      sp_wdata_o,
  input  logic                                 sp_gnt_i,
  // accumulator line write (always accepted)
  output logic                                 acc_we_o,
  output logic [npu_pkg::AccAddrW-1:0]         acc_addr_o,
  output logic [32*npu_pkg::ArrayCols-1:0]     acc_wdata_o
);

  // ------------------------------------------------------------ parameters
  localparam int unsigned R         = npu_pkg::ArrayRows;
  localparam int unsigned C         = npu_pkg::ArrayCols;
  localparam int unsigned B         = npu_pkg::DramBeatBytes;
  localparam int unsigned BeatW     = npu_pkg::BeatW;
  localparam int unsigned OffW      = npu_pkg::BeatOffW;
  localparam int unsigned WOffW     = OffW - 2;                // word offset in a beat
  localparam int unsigned MaxOut    = npu_pkg::DmaOutstanding;
  localparam int unsigned LineBytes = (R > 4 * C) ? R : 4 * C; // widest line
  localparam int unsigned LineWords = LineBytes / 4;
  localparam int unsigned LineW     = 8 * LineBytes;
  // a row of n0 <= LineBytes bytes at offset <= B-4 spans at most SpanBeats
  localparam int unsigned SpanBeats = (LineBytes + B - 4 + B - 1) / B;
  localparam int unsigned SpanW     = SpanBeats * BeatW;
  localparam int unsigned BIdxW     = (SpanBeats > 1) ? $clog2(SpanBeats) : 1;
  localparam int unsigned DescDepth = 2 ** $clog2(MaxOut + 1);
  localparam int unsigned DPtrW     = $clog2(DescDepth);
  localparam int unsigned OutCntW   = $clog2(MaxOut + 1);
  localparam int unsigned LineAW    = 24;                      // MEM_ADDR width
  localparam int unsigned PadW      = 24;                      // < 2^24 lines per LOAD

  typedef enum logic {
    StIdle,
    StRun
  } state_e;

  typedef struct packed {
    logic [PadW-1:0]  pads;   // pad lines to write before this entry's data
    logic             data;   // 1: a data line follows the pads
    logic [WOffW-1:0] woff;   // DRAM address % B, in words
    logic [BIdxW-1:0] nb1;    // beats of the burst - 1
  } desc_t;

  // ----------------------------------------------------- instruction state
  npu_pkg::insn_load_t insn_q, insn_d;
  state_e              state_q, state_d;
  logic                abort_q, abort_d;
  logic                done_q, done_d;

  logic                accept;
  logic                is_acc;
  logic [12:0]         h_last, w_full;        // padded plane height - 1, width
  logic [12:0]         y_data_end;            // PAD_TOP + N2
  logic                empty_insn;

  npu_pkg::insn_load_t li;                    // the instruction offered
  assign li         = insn_i;
  assign empty_insn = (li.n1 == '0) || (li.n2 == '0) || (li.n3 == '0);

  assign insn_ready_o = (state_q == StIdle);
  assign accept       = insn_valid_i && insn_ready_o;
  assign busy_o       = (state_q != StIdle);
  assign done_o       = done_q;

  assign is_acc     = insn_q.target[0];
  assign y_data_end = 13'(insn_q.pad_top) + 13'(insn_q.n2);
  assign h_last     = y_data_end + 13'(insn_q.pad_bottom) - 13'd1;
  assign w_full     = 13'(insn_q.pad_left) + 13'(insn_q.n1) + 13'(insn_q.pad_right);

  // --------------------------------------------------------------- walker
  logic              walk_q, walk_d;          // lines left to visit
  logic              tail_q, tail_d;          // final pad-only descriptor due
  logic [7:0]        i3_q, i3_d;
  logic [12:0]       y_q, y_d;
  logic [11:0]       i1_q, i1_d;
  logic [31:0]       a1_q, a1_d, a2_q, a2_d, a3_q, a3_d;
  logic [PadW-1:0]   pend_q, pend_d;

  logic              ar_valid_q, ar_valid_d;
  logic [31-OffW:0]  ar_beat_q, ar_beat_d;
  logic [7:0]        ar_len_q, ar_len_d;
  logic [OutCntW-1:0] out_q, out_d;           // bursts in flight

  logic              row_is_data, line_is_last_x, plane_end, insn_end;
  logic [10:0]       span_end;                // offset + n0 - 1
  logic [BIdxW-1:0]  nb1_new;
  logic              ar_free, desc_full;
  logic              step_pad_row, step_data;
  logic              desc_push;
  desc_t             desc_new;
  logic              r_hs, r_hs_last;

  // descriptor FIFO
  desc_t             desc_mem_q [DescDepth];
  logic [DPtrW-1:0]  desc_wp_q, desc_wp_d, desc_rp_q, desc_rp_d;
  logic [DPtrW:0]    desc_cnt_q, desc_cnt_d;
  desc_t             head;
  logic              desc_pop;

  assign row_is_data    = (y_q >= 13'(insn_q.pad_top)) && (y_q < y_data_end);
  assign line_is_last_x = (i1_q == insn_q.n1 - 12'd1);
  assign plane_end      = (y_q == h_last) && (!row_is_data || line_is_last_x);
  assign insn_end       = plane_end && (i3_q == insn_q.n3 - 8'd1);
  assign span_end       = 11'({a1_q[OffW-1:2], 2'b00}) + 11'({insn_q.row_words, 2'b00}) - 11'd1;
  assign nb1_new        = BIdxW'(span_end >> OffW);
  assign ar_free        = !ar_valid_q || ar_ready_i;
  assign desc_full      = (desc_cnt_q == (DPtrW + 1)'(DescDepth));

  always_comb begin
    walk_d       = walk_q;
    tail_d       = tail_q;
    i3_d         = i3_q;
    y_d          = y_q;
    i1_d         = i1_q;
    a1_d         = a1_q;
    a2_d         = a2_q;
    a3_d         = a3_q;
    pend_d       = pend_q;
    ar_valid_d   = ar_valid_q && !ar_ready_i;
    ar_beat_d    = ar_beat_q;
    ar_len_d     = ar_len_q;
    step_pad_row = 1'b0;
    step_data    = 1'b0;
    desc_push    = 1'b0;
    desc_new     = '0;

    if (walk_q && !abort_q) begin
      if (!row_is_data) begin
        step_pad_row = 1'b1;
        pend_d       = pend_q + PadW'(w_full);
      end else if (ar_free && !desc_full && (out_q != OutCntW'(MaxOut))) begin
        step_data      = 1'b1;
        desc_push      = 1'b1;
        desc_new.pads  = pend_q + ((i1_q == '0) ? PadW'(insn_q.pad_left) : '0);
        desc_new.data  = 1'b1;
        desc_new.woff  = a1_q[OffW-1:2];
        desc_new.nb1   = nb1_new;
        pend_d         = line_is_last_x ? PadW'(insn_q.pad_right) : '0;
        ar_valid_d     = 1'b1;
        ar_beat_d      = a1_q[31:OffW];
        ar_len_d       = 8'(nb1_new);
      end
      // advance (i3, y, x) and the DRAM addresses
      if (step_data && !line_is_last_x) begin
        i1_d = i1_q + 12'd1;
        a1_d = a1_q + insn_q.stride1;
      end else if (step_pad_row || step_data) begin
        i1_d = '0;
        if (plane_end) begin
          y_d  = '0;
          i3_d = i3_q + 8'd1;
          a3_d = a3_q + insn_q.stride3;
          a2_d = a3_d;
          a1_d = a3_d;
          if (insn_end) begin
            walk_d = 1'b0;
            tail_d = (pend_d != '0);
          end
        end else begin
          y_d = y_q + 13'd1;
          if (row_is_data) begin
            a2_d = a2_q + insn_q.stride2;
            a1_d = a2_d;
          end
        end
      end
    end else if (tail_q && !abort_q && !desc_full) begin
      desc_push     = 1'b1;
      desc_new.pads = pend_q;
      tail_d        = 1'b0;
    end

    if (abort_q) begin
      walk_d = 1'b0;
      tail_d = 1'b0;
    end

    // start of an instruction: everything from insn_i (insn_q loads at the
    // same edge)
    if (accept) begin
      walk_d = !empty_insn;
      tail_d = 1'b0;
      i3_d   = '0;
      y_d    = '0;
      i1_d   = '0;
      a1_d   = li.dram_addr;
      a2_d   = li.dram_addr;
      a3_d   = li.dram_addr;
      pend_d = '0;
    end
  end

  assign ar_valid_o = ar_valid_q;
  assign ar_addr_o  = {ar_beat_q, OffW'(0)};
  assign ar_len_o   = ar_len_q;

  // --------------------------------------------------------------- writer
  localparam int unsigned OutDepth = 2;

  logic [PadW-1:0]   padc_q, padc_d;          // pads of head already written
  logic [BIdxW-1:0]  beat_q, beat_d;
  logic [SpanW-1:0]  span_q, span_d, span_full;  // beat j in bits [j*BeatW +: BeatW]
  logic              pads_rem, out_full, is_last_beat;
  logic              out_push;
  logic [LineW-1:0]  line_new, line_pad, out_wdata;
  logic [SpanW-1:0]  span_shifted;
  logic [LineAW-1:0] line_q, line_d;

  logic [LineW-1:0]  out_data_q [OutDepth];
  logic [LineAW-1:0] out_addr_q [OutDepth];
  logic              out_wp_q, out_wp_d, out_rp_q, out_rp_d;
  logic [1:0]        out_cnt_q, out_cnt_d;
  logic              out_pop;

  assign head         = desc_mem_q[desc_rp_q];
  assign pads_rem     = (desc_cnt_q != '0) && (head.pads != padc_q) && !abort_q;
  assign out_full     = (out_cnt_q == 2'(OutDepth));
  assign is_last_beat = (beat_q == head.nb1);
  assign r_ready_o    = (desc_cnt_q != '0) && head.data &&
                        (abort_q || !is_last_beat || (!pads_rem && !out_full));
  assign r_hs         = r_valid_i && r_ready_o;
  assign r_hs_last    = r_hs && r_last_i;

  // line of the burst in span_q plus the beat arriving now, shifted down by
  // the word offset, bytes >= n0 zeroed
  always_comb begin
    span_full = span_q;
    span_full[32'(beat_q) * BeatW +: BeatW] = r_data_i;
    span_shifted = span_full >> {head.woff, 5'b00000};
    for (int unsigned k = 0; k < LineWords; k++) begin
      line_new[32*k +: 32] = (k < 32'(insn_q.row_words)) ? span_shifted[32*k +: 32] : 32'd0;
    end
    line_pad  = is_acc ? '0 : {LineBytes{insn_q.pad_value}};
    out_wdata = pads_rem ? line_pad : line_new;
  end

  always_comb begin
    padc_d   = padc_q;
    beat_d   = beat_q;
    span_d   = span_q;
    desc_pop = 1'b0;
    out_push = 1'b0;
    line_d   = line_q;

    // pad lines of the head descriptor, one per cycle
    if (pads_rem && !out_full) begin
      out_push = 1'b1;
      padc_d   = padc_q + PadW'(1);
      if (!head.data && (padc_d == head.pads)) begin
        desc_pop = 1'b1;                          // pad-only descriptor done
      end
    end else if ((desc_cnt_q != '0) && !pads_rem && !head.data) begin
      desc_pop = 1'b1;                            // pad-only, aborted
    end
    // beats of the head's burst (the last one only when !pads_rem)
    if (r_hs) begin
      if (!is_last_beat) begin
        span_d[32'(beat_q) * BeatW +: BeatW] = r_data_i;
        beat_d         = beat_q + BIdxW'(1);
      end else begin
        out_push = !abort_q;
        desc_pop = 1'b1;
      end
    end
    if (desc_pop) begin
      padc_d = '0;
      beat_d = '0;
    end
    if (out_push) begin
      line_d = line_q + LineAW'(1);
    end
    if (accept) begin
      line_d = li.mem_addr;
    end
  end

  // ---------------------------------------------------------- output FIFO
  assign out_pop     = (out_cnt_q != '0) && (abort_q || is_acc || sp_gnt_i);
  assign sp_req_o    = (out_cnt_q != '0) && !is_acc && !abort_q;
  assign sp_we_o     = 1'b1;
  assign sp_addr_o   = out_addr_q[out_rp_q][npu_pkg::SpAddrW-1:0];
  assign sp_wdata_o  = out_data_q[out_rp_q][8*R-1:0];
  assign acc_we_o    = (out_cnt_q != '0) && is_acc && !abort_q;
  assign acc_addr_o  = out_addr_q[out_rp_q][npu_pkg::AccAddrW-1:0];
  assign acc_wdata_o = out_data_q[out_rp_q][32*C-1:0];

  always_comb begin
    out_wp_d  = out_wp_q ^ out_push;
    out_rp_d  = out_rp_q ^ out_pop;
    out_cnt_d = out_cnt_q + 2'(out_push) - 2'(out_pop);
  end

  always_ff @(posedge clk_i) begin
    if (out_push) begin
      out_data_q[out_wp_q] <= out_wdata;
      out_addr_q[out_wp_q] <= line_q;
    end
  end

  // ------------------------------------------------------- descriptor FIFO
  always_comb begin
    desc_wp_d  = desc_wp_q + DPtrW'(desc_push);
    desc_rp_d  = desc_rp_q + DPtrW'(desc_pop);
    desc_cnt_d = desc_cnt_q + (DPtrW + 1)'(desc_push) - (DPtrW + 1)'(desc_pop);
    out_d      = out_q + OutCntW'(step_data) - OutCntW'(r_hs_last);
  end

  always_ff @(posedge clk_i) begin
    if (desc_push) begin
      desc_mem_q[desc_wp_q] <= desc_new;
    end
  end

  // ------------------------------------------------------------ sequencing
  always_comb begin
    state_d = state_q;
    insn_d  = insn_q;
    abort_d = abort_q || abort_i;
    done_d  = 1'b0;
    unique case (state_q)
      StIdle: begin
        abort_d = 1'b0;
        if (accept) begin
          state_d = StRun;
          insn_d  = li;
          abort_d = abort_i;
        end
      end
      StRun: begin
        if (!walk_d && !tail_d && (desc_cnt_d == '0) && (out_cnt_d == '0) &&
            !ar_valid_d && (out_d == '0)) begin
          state_d = StIdle;
          done_d  = !abort_d;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      abort_q    <= 1'b0;
      done_q     <= 1'b0;
      walk_q     <= 1'b0;
      tail_q     <= 1'b0;
      ar_valid_q <= 1'b0;
      out_q      <= '0;
      desc_wp_q  <= '0;
      desc_rp_q  <= '0;
      desc_cnt_q <= '0;
      out_wp_q   <= 1'b0;
      out_rp_q   <= 1'b0;
      out_cnt_q  <= '0;
      padc_q     <= '0;
      beat_q     <= '0;
    end else begin
      state_q    <= state_d;
      abort_q    <= abort_d;
      done_q     <= done_d;
      walk_q     <= walk_d;
      tail_q     <= tail_d;
      ar_valid_q <= ar_valid_d;
      out_q      <= out_d;
      desc_wp_q  <= desc_wp_d;
      desc_rp_q  <= desc_rp_d;
      desc_cnt_q <= desc_cnt_d;
      out_wp_q   <= out_wp_d;
      out_rp_q   <= out_rp_d;
      out_cnt_q  <= out_cnt_d;
      padc_q     <= padc_d;
      beat_q     <= beat_d;
    end
  end

  always_ff @(posedge clk_i) begin
    insn_q    <= insn_d;
    i3_q      <= i3_d;
    y_q       <= y_d;
    i1_q      <= i1_d;
    a1_q      <= a1_d;
    a2_q      <= a2_d;
    a3_q      <= a3_d;
    pend_q    <= pend_d;
    ar_beat_q <= ar_beat_d;
    ar_len_q  <= ar_len_d;
    span_q    <= span_d;
    line_q    <= line_d;
  end

  // instruction bits the engine does not need (tokens are the controller's)
  logic unused_insn;
  assign unused_insn = ^{insn_q.opcode, insn_q.rsvd_8, insn_q.pop_next, insn_q.rsvd_10,
                         insn_q.push_next, insn_q.rsvd_14, insn_q.target[1], insn_q.rsvd_88,
                         insn_q.dram_addr, insn_q.mem_addr};

endmodule
