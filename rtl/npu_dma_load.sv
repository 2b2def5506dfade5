// npu_dma_load.sv - the load DMA: executes LOAD (docs/ISA.md), DRAM -> SP or
// ACC lines, padding included.
//
// Instructions: up to two are held at a time (slot0_q / slot1_q, in acceptance order).
// The walker takes them one after the other; the next one starts as soon as
// the walker has finished the previous one, while that one's bursts are
// still in flight and its lines still being written. done_o pulses once per
// instruction, in order, when its last SP/ACC write is done.
//
// Three decoupled parts:
//  * walker: steps through the padded plane (i3, y, x) of its instruction. A
//    padding row costs one cycle for the whole row; a data line costs one
//    cycle and goes into the open burst (ob_*): appended to it when it
//    continues it, else the open burst is issued to the AR output register
//    and the line opens a new one. A line continues the open burst when both
//    are beat aligned (address % B = 0 and n0 % B = 0), it starts where the
//    burst ends, no padding line lies between them, the burst stays within
//    16 beats and within the 4 KiB page of its first byte. Such a burst moves
//    exactly the beats of its rows, so the ISA's DRAM beat counting holds.
//    Padding lines are not queued one by one: they are counted (pend_q) and
//    the count rides on the next burst's descriptor (pads to write before
//    its first line), or on a final pad-only descriptor. Every instruction
//    ends with a descriptor marked last (an empty instruction: a pad-only
//    descriptor with no pads). A descriptor is pushed when its burst is
//    issued; at most DmaOutstanding bursts are in flight (issued, last beat
//    not back).
//  * writer: pops descriptors in order; writes the pad lines (PAD_VALUE for
//    SP, 0 for ACC), then collects each line's beats into span_q and, with
//    the line's last beat, shifts the n0 bytes down by the 4-byte offset
//    a % B (0 in a multi-line burst), zeroes the rest of the line and pushes
//    it to the output FIFO. Non-last beats of a line are always accepted;
//    a line's last beat only with room in the output FIFO (r_ready_o
//    back-pressures the bus while lines wait for the SP).
//  * output FIFO (2 lines): drives the SP write port (held until granted) or
//    the ACC write port (always accepted). An entry may be a marker that
//    writes nothing (end of an empty instruction); the entry ending an
//    instruction raises done_o in the cycle after it leaves.
//
// Timing: done_o is a registered one-cycle pulse; in its cycle the
// instruction is no longer held (insn_ready_o may be high). No output
// depends combinationally on an input. The only input-to-register paths of
// note are r_data_i -> line extraction -> output FIFO, and sp_gnt_i /
// ar_ready_i -> FIFO pointers.
//
// Bus errors: a beat whose RRESP is an error (r_err_i) still moves as any
// other (its data is written); the instruction it belongs to is marked
// (rerr_q, then the flag of the instruction's last output entry) and its
// done_o pulse comes with derr_o (docs/ISA.md, BUS_ERROR).
//
// abort_i (a pulse or a level) aborts every instruction held: the walker
// stops and the open burst is dropped; an AR already presented stays until
// accepted (AXI); every beat of the bursts in flight is taken and dropped;
// queued lines are discarded; then idle, no done_o (not even for an
// instruction whose last write happened in the abort_i cycle).
module npu_dma_load (
  input  logic                                 clk_i,
  input  logic                                 rst_ni,
  // engine instruction port
  input  logic                                 insn_valid_i,
  input  logic [255:0]                         insn_i,
  output logic                                 insn_ready_o,
  output logic                                 done_o,
  output logic                                 derr_o,    // with done_o: a beat had an error response
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
  input  logic                                 r_err_i,   // RRESP is SLVERR or DECERR
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
  localparam int unsigned MaxBurst  = npu_pkg::DmaMaxBurst;            // beats of a coalesced burst
  localparam int unsigned NlW       = 4;                       // lines of a burst - 1
  localparam int unsigned DescDepth = 2 ** $clog2(MaxOut + 1);
  localparam int unsigned DPtrW     = $clog2(DescDepth);
  localparam int unsigned OutCntW   = $clog2(MaxOut + 1);
  localparam int unsigned LineAW    = 24;                      // MEM_ADDR width
  localparam int unsigned PadW      = 24;                      // < 2^24 lines per LOAD
  localparam int unsigned OutDepth  = 2;
  // FIFO entries are stored as plain vectors: Yosys 0.23 keeps only bit 0
  // of each element of an unpacked array of a packed struct
  localparam int unsigned DescW     = 4 + PadW + WOffW + BIdxW + NlW;  // bits of desc_t
  localparam int unsigned OFlagW    = 4;                               // bits of oflag_t

  typedef struct packed {
    logic             tag;    // slot of the instruction
    logic             first;  // the instruction's first descriptor
    logic             last;   // the instruction's last descriptor
    logic [PadW-1:0]  pads;   // pad lines to write before the first data line
    logic             data;   // 1: a burst of data lines follows the pads
    logic [WOffW-1:0] woff;   // DRAM address % B, in words (0 if several lines)
    logic [BIdxW-1:0] nb1;    // beats per line - 1
    logic [NlW-1:0]   nl1;    // data lines of the burst - 1
  } desc_t;

  typedef struct packed {
    logic wr;                 // 0: marker, writes nothing
    logic acc;                // ACC line (else SP)
    logic last;               // the instruction's last entry
    logic err;                // last: a beat of the instruction had an error response
  } oflag_t;

  // ----------------------------------------------------- instruction slots
  npu_pkg::insn_load_t slot0_q, slot1_q;      // (two registers: Yosys 0.23 loses an
                                              // unpacked array of a package struct)
  npu_pkg::insn_load_t li;                    // the instruction offered
  logic                accept;
  logic [1:0]          nheld_q;               // instructions held
  logic [1:0]          npend_q;               // held, walker not started
  logic                aslot_q;               // slot of the next accepted one
  logic                abort_q;
  logic                done_q, derr_q;
  logic                rerr_q;                // a beat of the writer's instruction had an error
  logic                done_evt;

  assign li           = insn_i;
  assign insn_ready_o = !abort_q && (nheld_q != 2'd2);
  assign accept       = insn_valid_i && insn_ready_o;
  assign busy_o       = (nheld_q != 2'd0);
  assign done_o       = done_q;
  assign derr_o       = derr_q;

  // Quiescence: holding no instruction, offered none and past the cycle
  // after the last done pulse (which clears done_q), the walker, the
  // descriptor and output FIFOs and the bursts in flight are empty (the
  // last instruction's lines are written) and every register's next value
  // is its own. Its clock is then gated, and its next state, worked out
  // inside the clocked block (b_state), is not evaluated at all: an idle
  // engine costs a simulator its handshake outputs a cycle
  // (docs/PERFORMANCE.md, "Simulation speed").
  logic act;
  assign act = (nheld_q != 2'd0) || insn_valid_i || done_q;
  // the engine's clock is gated while quiescent (every flop holds then):
  // the clock gate is the registers' enable
  logic gclk;
  npu_icg u_cg (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (act),
    .gclk_o (gclk)
  );

  // --------------------------------------------------------------- walker
  npu_pkg::insn_load_t wi;                    // the walker's instruction
  logic              wact_q;                  // walker holds slot wslot_q
  logic              wslot_q;
  logic              walk_q;                  // lines left to visit
  logic              first_q;                 // no descriptor pushed yet
  logic [7:0]        i3_q;
  logic [12:0]       y_q;
  logic [11:0]       i1_q;
  logic [31:0]       a1_q, a2_q, a3_q;
  logic [PadW-1:0]   pend_q;

  // open burst
  logic              ob_valid_q;
  logic              ob_co_q;                 // coalescible (beat-aligned lines)
  logic [31-OffW:0]  ob_beat_q;               // first beat
  logic [7:0]        ob_len_q;                // beats - 1
  logic [NlW-1:0]    ob_nl1_q;
  logic [WOffW-1:0]  ob_woff_q;
  logic [BIdxW-1:0]  ob_nb1_q;
  logic [PadW-1:0]   ob_pads_q;
  logic [31:0]       ob_next_q;               // byte after the burst's last row
  logic [31-npu_pkg::DmaPageShift:0] ob_page_q; // page of its first byte

  logic              ar_valid_q;
  logic [31-OffW:0]  ar_beat_q;
  logic [7:0]        ar_len_q;
  logic [OutCntW-1:0] out_q;                  // bursts in flight
  logic              desc_full;

  // descriptor FIFO
  logic [DescW-1:0]  desc_mem_q [DescDepth];
  logic [DPtrW-1:0]  desc_wp_q, desc_rp_q;
  logic [DPtrW:0]    desc_cnt_q;
  desc_t             head;
  logic              burst_end;

  assign wi         = wslot_q ? slot1_q : slot0_q;
  assign desc_full  = (desc_cnt_q == (DPtrW + 1)'(DescDepth));
  assign ar_valid_o = ar_valid_q;
  assign ar_addr_o  = {ar_beat_q, OffW'(0)};
  assign ar_len_o   = ar_len_q;

  // --------------------------------------------------------------- writer
  // the head descriptor's instruction, the fields the writer reads
  logic [7:0]        hi_row_words, hi_pad_value;
  logic [LineAW-1:0] hi_mem_addr;
  logic [PadW-1:0]   padc_q;                  // pads of head already written
  logic [BIdxW-1:0]  beat_q;                  // beat within the line
  logic [NlW-1:0]    lc_q;                    // line within the burst
  logic              hstart_q;                // head has pushed a line
  logic [SpanW-1:0]  span_q;                  // beat j in bits [j*BeatW +: BeatW]
  logic              has_head, pads_rem, out_full, is_last_beat, is_last_line, is_acc_h;
  logic              r_hs;
  logic [LineAW-1:0] line_q, out_addr_new;

  logic [LineW-1:0]  out_data_q [OutDepth];
  logic [LineAW-1:0] out_addr_q [OutDepth];
  logic [OFlagW-1:0] out_flag_q [OutDepth];
  oflag_t            oh;
  logic              out_wp_q, out_rp_q;
  logic [1:0]        out_cnt_q;
  logic              has_out, out_pop;

  assign head         = desc_mem_q[desc_rp_q];
  assign is_acc_h     = head.tag ? slot1_q.target[0] : slot0_q.target[0];
  assign hi_row_words = head.tag ? slot1_q.row_words : slot0_q.row_words;
  assign hi_pad_value = head.tag ? slot1_q.pad_value : slot0_q.pad_value;
  assign hi_mem_addr  = head.tag ? slot1_q.mem_addr : slot0_q.mem_addr;
  assign has_head     = (desc_cnt_q != '0);
  assign pads_rem     = has_head && (head.pads != padc_q) && !abort_q;
  assign out_full     = (out_cnt_q == 2'(OutDepth));
  assign is_last_beat = (beat_q == head.nb1);
  assign is_last_line = (lc_q == head.nl1);
  assign r_ready_o    = has_head && head.data &&
                        (abort_q || !is_last_beat || (!pads_rem && !out_full));
  assign r_hs         = r_valid_i && r_ready_o;
  assign burst_end    = r_hs && is_last_beat && is_last_line;
  assign out_addr_new = (head.first && !hstart_q) ? hi_mem_addr : line_q;

  // the line pushed to the output FIFO (evaluated only when one is pushed):
  // a pad line (PAD_VALUE for SP, 0 for ACC), or the line of the burst in
  // span plus the beat arriving now, shifted down by the word offset, bytes
  // >= n0 zeroed
  function automatic logic [LineW-1:0] out_line(input logic             pad,
                                                input logic             acc,
                                                input logic [7:0]       pad_value,
                                                input logic [SpanW-1:0] span,
                                                input logic [BIdxW-1:0] beat,
                                                input logic [BeatW-1:0] data,
                                                input logic [WOffW-1:0] woff,
                                                input logic [7:0]       row_words);
    logic [SpanW-1:0] full;
    full = span;
    full[32'(beat) * BeatW +: BeatW] = data;
    full = full >> {woff, 5'b00000};
    for (int unsigned k = 0; k < LineWords; k++) begin
      out_line[32*k +: 32] = (k < 32'(row_words)) ? full[32*k +: 32] : 32'd0;
    end
    if (pad) begin
      out_line = acc ? '0 : {LineBytes{pad_value}};
    end
  endfunction

  // ---------------------------------------------------------- output FIFO
  assign oh          = out_flag_q[out_rp_q];
  assign has_out     = (out_cnt_q != '0);
  assign out_pop     = has_out && (abort_q || !oh.wr || oh.acc || sp_gnt_i);
  assign sp_req_o    = has_out && oh.wr && !oh.acc && !abort_q;
  assign sp_we_o     = 1'b1;
  assign sp_addr_o   = out_addr_q[out_rp_q][npu_pkg::SpAddrW-1:0];
  assign sp_wdata_o  = out_data_q[out_rp_q][8*R-1:0];
  assign acc_we_o    = has_out && oh.wr && oh.acc && !abort_q;
  assign acc_addr_o  = out_addr_q[out_rp_q][npu_pkg::AccAddrW-1:0];
  assign acc_wdata_o = out_data_q[out_rp_q][32*C-1:0];
  assign done_evt    = out_pop && oh.last && !abort_q;

  // ------------------------------------------------------------ next state
  // The next state is worked out here, in blocking temporaries inside the
  // clocked block, not in combinational blocks: the clock rises only while
  // act (and in reset), so a quiescent engine evaluates none of it, where a
  // combinational next state would be evaluated every cycle (it reads the
  // bus handshakes and grants of the free clock). Inside the block act is 1
  // out of reset: the gate took it while the clock was low.
  // (its temporaries are plain vectors: Yosys 0.23 cannot select a field of
  // a block-local struct)
  always_ff @(posedge gclk) begin : b_state
    // walker
    logic [31:0]       ws_addr;               // the instruction starting: DRAM_ADDR
    logic              ws_walk;               //   and it has lines to visit
    logic              wstart, wdone;
    logic [12:0]       h_last, w_full;        // padded plane height - 1, width
    logic [12:0]       y_data_end;            // PAD_TOP + N2
    logic [9:0]        n0;                    // row bytes
    logic              row_is_data, line_is_last_x, plane_end, insn_end;
    logic [10:0]       span_end;              // offset + n0 - 1
    logic [BIdxW-1:0]  nb1_new;
    logic [PadW-1:0]   line_pads;
    logic              line_co, can_append, can_issue;
    logic [31:0]       line_next;             // byte after the row
    logic [31-npu_pkg::DmaPageShift:0] line_page;      // page of the row's last byte
    logic [8:0]        len_sum;
    logic              cur_data, cur_pad;
    logic              append, close, open;
    logic              step_pad_row, step_data;
    logic              ar_free;
    logic              desc_push;
    logic              dn_tag, dn_first, dn_last, dn_data;  // the descriptor pushed (desc_t)
    logic [PadW-1:0]   dn_pads;
    logic [WOffW-1:0]  dn_woff;
    logic [BIdxW-1:0]  dn_nb1;
    logic [NlW-1:0]    dn_nl1;
    logic              wact_d, wslot_d, walk_d, first_d;
    logic [7:0]        i3_d;
    logic [12:0]       y_d;
    logic [11:0]       i1_d;
    logic [31:0]       a1_d, a2_d, a3_d;
    logic [PadW-1:0]   pend_d;
    logic              ob_valid_d, ob_co_d;
    logic [31-OffW:0]  ob_beat_d;
    logic [7:0]        ob_len_d;
    logic [NlW-1:0]    ob_nl1_d;
    logic [WOffW-1:0]  ob_woff_d;
    logic [BIdxW-1:0]  ob_nb1_d;
    logic [PadW-1:0]   ob_pads_d;
    logic [31:0]       ob_next_d;
    logic [31-npu_pkg::DmaPageShift:0] ob_page_d;
    logic              ar_valid_d;
    logic [31-OffW:0]  ar_beat_d;
    logic [7:0]        ar_len_d;
    // writer, FIFOs, sequencing
    logic [PadW-1:0]   padc_d;
    logic [BIdxW-1:0]  beat_d;
    logic [NlW-1:0]    lc_d;
    logic              hstart_d;
    logic [LineAW-1:0] line_d;
    logic              desc_pop, out_push;
    logic              of_wr, of_acc, of_last, of_err;      // the entry pushed's flags (oflag_t)
    logic              out_wp_d, out_rp_d;
    logic [1:0]        out_cnt_d;
    logic [DPtrW-1:0]  desc_wp_d, desc_rp_d;
    logic [DPtrW:0]    desc_cnt_d;
    logic [OutCntW-1:0] out_d;
    logic              drained, done_d, aslot_d, abort_d;
    logic [1:0]        nheld_d, npend_d;

    // the walker's next-line arithmetic
    ws_addr        = (npend_q != 2'd0) ? wi.dram_addr : li.dram_addr;
    ws_walk        = (npend_q != 2'd0) ?
                     ((wi.n1 != '0) && (wi.n2 != '0) && (wi.n3 != '0)) :
                     ((li.n1 != '0) && (li.n2 != '0) && (li.n3 != '0));
    wstart         = !wact_q && !abort_q && ((npend_q != 2'd0) || accept);
    y_data_end     = 13'(wi.pad_top) + 13'(wi.n2);
    h_last         = y_data_end + 13'(wi.pad_bottom) - 13'd1;
    w_full         = 13'(wi.pad_left) + 13'(wi.n1) + 13'(wi.pad_right);
    n0             = {wi.row_words, 2'b00};
    row_is_data    = (y_q >= 13'(wi.pad_top)) && (y_q < y_data_end);
    line_is_last_x = (i1_q == wi.n1 - 12'd1);
    plane_end      = (y_q == h_last) && (!row_is_data || line_is_last_x);
    insn_end       = plane_end && (i3_q == wi.n3 - 8'd1);
    span_end       = 11'({a1_q[OffW-1:2], 2'b00}) + 11'(n0) - 11'd1;
    nb1_new        = BIdxW'(span_end >> OffW);
    line_pads      = pend_q + ((i1_q == '0) ? PadW'(wi.pad_left) : '0);
    line_next      = a1_q + 32'(n0);
    line_page      = (32-npu_pkg::DmaPageShift)'((line_next - 32'd1) >> npu_pkg::DmaPageShift);
    line_co        = (a1_q[OffW-1:0] == '0) && (wi.row_words[WOffW-1:0] == '0);
    len_sum        = 9'(ob_len_q) + 9'(nb1_new) + 9'd1;   // beats - 1 if appended
    can_append     = ob_valid_q && ob_co_q && line_co && (line_pads == '0) &&
                     (a1_q == ob_next_q) && (len_sum < 9'(MaxBurst)) &&
                     (line_page == ob_page_q);
    ar_free        = !ar_valid_q || ar_ready_i;
    can_issue      = ar_free && !desc_full && (out_q != OutCntW'(MaxOut));
    cur_data       = wact_q && walk_q && !abort_q && row_is_data;
    cur_pad        = wact_q && walk_q && !abort_q && !row_is_data;
    // the open burst grows by the current line, or is issued when it cannot
    append         = cur_data && can_append;
    close          = ob_valid_q && !abort_q && !append && can_issue;
    open           = cur_data && !append && (!ob_valid_q || close);
    step_data      = append || open;
    step_pad_row   = cur_pad;

    // the walker
    wact_d     = wact_q;
    wslot_d    = wslot_q;
    walk_d     = walk_q;
    first_d    = first_q;
    i3_d       = i3_q;
    y_d        = y_q;
    i1_d       = i1_q;
    a1_d       = a1_q;
    a2_d       = a2_q;
    a3_d       = a3_q;
    pend_d     = pend_q;
    ob_valid_d = ob_valid_q;
    ob_co_d    = ob_co_q;
    ob_beat_d  = ob_beat_q;
    ob_len_d   = ob_len_q;
    ob_nl1_d   = ob_nl1_q;
    ob_woff_d  = ob_woff_q;
    ob_nb1_d   = ob_nb1_q;
    ob_pads_d  = ob_pads_q;
    ob_next_d  = ob_next_q;
    ob_page_d  = ob_page_q;
    ar_beat_d  = ar_beat_q;
    ar_len_d   = ar_len_q;
    desc_push  = 1'b0;
    dn_tag     = 1'b0;
    dn_first   = 1'b0;
    dn_last    = 1'b0;
    dn_pads    = '0;
    dn_data    = 1'b0;
    dn_woff    = '0;
    dn_nb1     = '0;
    dn_nl1     = '0;
    wdone      = 1'b0;
    ar_valid_d = ar_valid_q && !ar_ready_i;

    // issue the open burst
    if (close) begin
      desc_push      = 1'b1;
      dn_tag         = wslot_q;
      dn_first       = first_q;
      dn_last        = !walk_q && (pend_q == '0);
      dn_pads        = ob_pads_q;
      dn_data        = 1'b1;
      dn_woff        = ob_woff_q;
      dn_nb1         = ob_nb1_q;
      dn_nl1         = ob_nl1_q;
      ar_valid_d     = 1'b1;
      ar_beat_d      = ob_beat_q;
      ar_len_d       = ob_len_q;
      ob_valid_d     = 1'b0;
      first_d        = 1'b0;
      wdone          = dn_last;
    end else if (wact_q && !walk_q && !ob_valid_q && !abort_q && !desc_full) begin
      // end of the instruction: trailing pads (or nothing: empty instruction)
      desc_push      = 1'b1;
      dn_tag         = wslot_q;
      dn_first       = first_q;
      dn_last        = 1'b1;
      dn_pads        = pend_q;
      wdone          = 1'b1;
    end

    // the current data line: grow the open burst or open a new one
    if (append) begin
      ob_len_d  = 8'(len_sum);
      ob_nl1_d  = ob_nl1_q + NlW'(1);
      ob_next_d = line_next;
    end else if (open) begin
      ob_valid_d = 1'b1;
      ob_co_d    = line_co;
      ob_beat_d  = a1_q[31:OffW];
      ob_len_d   = 8'(nb1_new);
      ob_nl1_d   = '0;
      ob_woff_d  = a1_q[OffW-1:2];
      ob_nb1_d   = nb1_new;
      ob_pads_d  = line_pads;
      ob_next_d  = line_next;
      ob_page_d  = a1_q[31:npu_pkg::DmaPageShift];
    end
    if (step_data) begin
      pend_d = line_is_last_x ? PadW'(wi.pad_right) : '0;
    end else if (step_pad_row) begin
      pend_d = pend_q + PadW'(w_full);
    end

    // advance (i3, y, x) and the DRAM addresses
    if (step_data && !line_is_last_x) begin
      i1_d = i1_q + 12'd1;
      a1_d = a1_q + wi.stride1;
    end else if (step_pad_row || step_data) begin
      i1_d = '0;
      if (plane_end) begin
        y_d  = '0;
        i3_d = i3_q + 8'd1;
        a3_d = a3_q + wi.stride3;
        a2_d = a3_d;
        a1_d = a3_d;
        if (insn_end) begin
          walk_d = 1'b0;
        end
      end else begin
        y_d = y_q + 13'd1;
        if (row_is_data) begin
          a2_d = a2_q + wi.stride2;
          a1_d = a2_d;
        end
      end
    end

    if (wdone) begin
      wact_d  = 1'b0;
      wslot_d = !wslot_q;
    end

    // next instruction (from its slot, or from insn_i in its accept cycle)
    if (wstart) begin
      wact_d  = 1'b1;
      walk_d  = ws_walk;
      first_d = 1'b1;
      i3_d    = '0;
      y_d     = '0;
      i1_d    = '0;
      a1_d    = ws_addr;
      a2_d    = ws_addr;
      a3_d    = ws_addr;
      pend_d  = '0;
    end

    if (abort_q) begin
      wact_d     = 1'b0;
      walk_d     = 1'b0;
      ob_valid_d = 1'b0;
    end

    // the writer
    padc_d            = padc_q;
    beat_d            = beat_q;
    lc_d              = lc_q;
    hstart_d          = hstart_q;
    line_d            = line_q;
    desc_pop          = 1'b0;
    out_push          = 1'b0;
    of_wr             = 1'b1;
    of_acc            = is_acc_h;
    of_last           = 1'b0;
    of_err            = rerr_q || (r_hs && r_err_i);

    if (pads_rem && !out_full) begin
      // pad lines of the head descriptor, one per cycle
      out_push = 1'b1;
      padc_d   = padc_q + PadW'(1);
      if (!head.data && (padc_d == head.pads)) begin
        desc_pop          = 1'b1;               // pad-only descriptor done
        of_last           = head.last;
      end
    end else if (has_head && !head.data && !pads_rem) begin
      if (abort_q) begin
        desc_pop = 1'b1;                        // pad-only, aborted
      end else if (!out_full) begin
        desc_pop          = 1'b1;               // no pads: marker only
        out_push          = 1'b1;
        of_wr             = 1'b0;
        of_last           = head.last;
      end
    end
    // beats of the head's burst (a line's last one only when !pads_rem)
    if (r_hs) begin
      if (!is_last_beat) begin
        beat_d = beat_q + BIdxW'(1);
      end else begin
        beat_d            = '0;
        lc_d              = lc_q + NlW'(1);
        out_push          = !abort_q;
        of_last           = head.last && is_last_line;
        desc_pop          = is_last_line;
      end
    end
    if (out_push) begin
      line_d   = out_addr_new + LineAW'(1);
      hstart_d = 1'b1;
    end
    if (desc_pop) begin
      padc_d   = '0;
      beat_d   = '0;
      lc_d     = '0;
      hstart_d = 1'b0;
    end

    // output and descriptor FIFOs, bursts in flight
    out_wp_d   = out_wp_q ^ out_push;
    out_rp_d   = out_rp_q ^ out_pop;
    out_cnt_d  = out_cnt_q + 2'(out_push) - 2'(out_pop);
    desc_wp_d  = desc_wp_q + DPtrW'(desc_push);
    desc_rp_d  = desc_rp_q + DPtrW'(desc_pop);
    desc_cnt_d = desc_cnt_q + (DPtrW + 1)'(desc_push) - (DPtrW + 1)'(desc_pop);
    out_d      = out_q + OutCntW'(close) - OutCntW'(burst_end);

    // sequencing; drained: after an abort, nothing left on the bus or in the
    // engine (the walker is stopped and pushes nothing while abort_q)
    drained = abort_q && (desc_cnt_d == '0) && (out_cnt_d == '0) && !ar_valid_d &&
              (out_d == '0);
    done_d  = done_evt && !abort_i;
    nheld_d = nheld_q + 2'(accept) - 2'(done_d);
    npend_d = npend_q + 2'(accept) - 2'(wstart);
    aslot_d = aslot_q ^ accept;
    abort_d = abort_q || (abort_i && ((nheld_q != 2'd0) || accept));
    if (drained) begin
      abort_d = 1'b0;
      nheld_d = '0;
      npend_d = '0;
      aslot_d = wslot_q;                        // the walker's next slot
    end

`ifndef SYNTHESIS
    // FIFOs never overflow
    assert (!(desc_push && desc_full));
    assert (!(out_push && out_full));
`endif

    if (!rst_ni) begin
      nheld_q    <= '0;
      npend_q    <= '0;
      aslot_q    <= 1'b0;
      wslot_q    <= 1'b0;
      abort_q    <= 1'b0;
      done_q     <= 1'b0;
      derr_q     <= 1'b0;
      rerr_q     <= 1'b0;
      wact_q     <= 1'b0;
      walk_q     <= 1'b0;
      ob_valid_q <= 1'b0;
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
      lc_q       <= '0;
      hstart_q   <= 1'b0;
    end else begin
      nheld_q    <= nheld_d;
      npend_q    <= npend_d;
      aslot_q    <= aslot_d;
      wslot_q    <= wslot_d;
      abort_q    <= abort_d;
      done_q     <= done_d;
      derr_q     <= done_d && oh.err;
      // the error mark of the instruction the writer is on: cleared when its
      // last entry (which takes it) is pushed, and by an abort
      if (abort_q || (out_push && of_last)) rerr_q <= 1'b0;
      else if (r_hs && r_err_i)                       rerr_q <= 1'b1;
      wact_q     <= wact_d;
      walk_q     <= walk_d;
      ob_valid_q <= ob_valid_d;
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
      lc_q       <= lc_d;
      hstart_q   <= hstart_d;
    end

    // datapath registers (no reset: loaded before use)
    first_q   <= first_d;
    i3_q      <= i3_d;
    y_q       <= y_d;
    i1_q      <= i1_d;
    a1_q      <= a1_d;
    a2_q      <= a2_d;
    a3_q      <= a3_d;
    pend_q    <= pend_d;
    ob_co_q   <= ob_co_d;
    ob_beat_q <= ob_beat_d;
    ob_len_q  <= ob_len_d;
    ob_nl1_q  <= ob_nl1_d;
    ob_woff_q <= ob_woff_d;
    ob_nb1_q  <= ob_nb1_d;
    ob_pads_q <= ob_pads_d;
    ob_next_q <= ob_next_d;
    ob_page_q <= ob_page_d;
    ar_beat_q <= ar_beat_d;
    ar_len_q  <= ar_len_d;
    line_q    <= line_d;

    // the instruction slots, the FIFOs' entries
    if (accept && !aslot_q) begin
      slot0_q <= li;
    end
    if (accept && aslot_q) begin
      slot1_q <= li;
    end
    if (out_push) begin
      out_data_q[out_wp_q] <= out_line(pads_rem, is_acc_h, hi_pad_value, span_q, beat_q,
                                       r_data_i, head.woff, hi_row_words);
      out_addr_q[out_wp_q] <= out_addr_new;
      out_flag_q[out_wp_q] <= {of_wr, of_acc, of_last, of_err};   // oflag_t
    end
    if (desc_push) begin
      desc_mem_q[desc_wp_q] <= {dn_tag, dn_first, dn_last, dn_pads, dn_data, dn_woff, dn_nb1,
                                dn_nl1};                                    // desc_t
    end
  end

  // the beats of a line before its last one (the last one goes straight into
  // the output FIFO with out_line)
  always_ff @(posedge gclk) begin
    if (r_hs && !is_last_beat) begin
      span_q[32'(beat_q) * BeatW +: BeatW] <= r_data_i;
    end
  end

  // ------------------------------------------------------------ checks
  if (SpanBeats > MaxBurst) begin : g_err_span
    $error("npu_dma_load: a line spans more beats than a burst may hold");
  end

`ifndef SYNTHESIS
  // (no "disable iff (!rst_ni)": the properties also hold in reset)
  // the bus ends each burst where the descriptor says
  assert property (@(posedge clk_i) !(r_hs && !abort_q && (r_last_i != (is_last_beat && is_last_line))));
  // at most two instructions held (FIFO overflows: in b_state)
  assert property (@(posedge clk_i) nheld_q != 2'd3);
  // no beat without a burst in flight
  assert property (@(posedge clk_i) !(r_hs && (out_q == '0)));
`endif

  // instruction bits the engine does not need (tokens are the controller's);
  // the walker's view reads the dimensions, the writer's view the target
  logic unused_insn;
  assign unused_insn = ^{wi.opcode, wi.rsvd_8, wi.pop_next, wi.rsvd_10, wi.push_next, wi.rsvd_14,
                         wi.target, wi.rsvd_88, wi.mem_addr, wi.pad_value, r_last_i};

endmodule
