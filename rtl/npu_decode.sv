// npu_decode.sv - the instruction decoder's static checks, registered (the
// result is that of the instruction present at the last edge with en_i):
// the same checks in the same order as loom_insn_check() in common/isa.c
// (docs/ISA.md, "Decoding and errors"). The first failing check gives the
// error cause and the id of the field (ERR_INFO). Co-simulation against the
// C model keeps the two implementations equal.
module npu_decode (
  input  logic         clk_i,
  input  logic         en_i,     // check insn_i at this edge
  input  logic [255:0] insn_i,
  input  logic         win_en_i,   // DMA windows: a legal DRAM span must lie in one
  input  logic [127:0] win_base_i, // (window i at [32*i +: 32])
  input  logic [127:0] win_size_i,
  output logic [7:0]   cause_o,  // npu_pkg::Err*; ErrNone when legal
  output logic [15:0]  info_o,   // npu_pkg::F* field id or FNone
  output logic [1:0]   queue_o   // 0 load, 1 compute, 2 store, 3 command processor
);
  localparam int unsigned R  = npu_pkg::ArrayRows;
  localparam int unsigned C  = npu_pkg::ArrayCols;
  localparam logic [63:0] SpLines  = 64'(npu_pkg::SpLines);
  localparam logic [63:0] AccLines = 64'(npu_pkg::AccLines);
  localparam logic [63:0] Dram     = 64'(npu_pkg::DramBytes);
  // STORE SOURCE 3 rows fit an SP line (the residual) and the C lanes
  localparam int unsigned MinRC    = (R < C) ? R : C;

  npu_pkg::insn_load_t   ld;
  npu_pkg::insn_store_t  st;
  npu_pkg::insn_matmul_t mm;
  npu_pkg::insn_mark_t   mk;
  npu_pkg::insn_eltwise_t ve;
  npu_pkg::insn_pool_t    vp;
  npu_pkg::insn_dwconv_t  vd;
  npu_pkg::insn_lut_t     vl;
  assign ld = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign st = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  logic st_res;         // STORE SOURCE 3: STRIDE3 is the residual's SP line, N3 its step
  assign st_res = (st.source == 2'd3);
  assign mm = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign mk = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign ve = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign vp = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign vd = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  assign vl = insn_i;  // a packed struct is a 256-bit vector (Yosys 0.23 has no type casts)
  localparam int unsigned LutL     = (npu_pkg::LutEntries + R - 1) / R;
  localparam logic [63:0] LutLines = 64'(LutL);

  // end (exclusive) of the DRAM bytes a LOAD/STORE touches
  function automatic logic [63:0] dram_end(logic [31:0] a, logic [31:0] s1, logic [31:0] s2,
                                           logic [31:0] s3, logic [11:0] n1, logic [11:0] n2,
                                           logic [7:0] n3, logic [7:0] rw);
    dram_end = 64'(a) + (64'(n3) - 64'd1) * 64'(s3) + (64'(n2) - 64'd1) * 64'(s2)
         + (64'(n1) - 64'd1) * 64'(s1) + 64'({rw, 2'b00});
  endfunction

  // [s, e) inside one window of non-zero size, or windows disabled
  function automatic logic in_win(logic en, logic [127:0] base, logic [127:0] size,
                                  logic [63:0] s, logic [63:0] e);
    in_win = !en;
    for (int i = 0; i < 4; i++) begin
      if (size[32*i +: 32] != '0 && s >= 64'(base[32*i +: 32])
          && e <= 64'(base[32*i +: 32]) + 64'(size[32*i +: 32]))
        in_win = 1'b1;
    end
  endfunction

  // Evaluated in a clocked block, once per instruction (en_i): an idle
  // decoder costs a simulator nothing. Results are valid the cycle after en_i.
  logic [7:0]  cause_q;
  logic [15:0] info_q;
  logic [1:0]  queue_q;
  always_ff @(posedge clk_i) begin
    logic [63:0] ld_lines, st_lines, ld_end, st_end;
    logic [63:0] mm_w_need, mm_h_need, mm_act_end, mm_wgt_end, mm_acc_end;
    logic [63:0] ve_n, ve_bn, vp_w_need, vp_h_need, vp_src_end, vp_dst_end;
    logic [63:0] vd_w_need, vd_h_need, vd_src_end, vd_dst_end, vd_wgt_end, vd_par_end;
    logic [7:0]  cause;
    logic [15:0] info;
    logic [1:0]  queue;
    if (en_i) begin
      ld_lines = 64'(ld.n3) * (64'(ld.pad_top) + 64'(ld.n2) + 64'(ld.pad_bottom))
                            * (64'(ld.pad_left) + 64'(ld.n1) + 64'(ld.pad_right));
      st_lines = (st_res ? 64'd1 : 64'(st.n3)) * 64'(st.n2) * 64'(st.n1);
      ld_end = dram_end(ld.dram_addr, ld.stride1, ld.stride2, ld.stride3, ld.n1, ld.n2, ld.n3,
                        ld.row_words);
      st_end = dram_end(st.dram_addr, st.stride1, st.stride2, st.stride3, st.n1, st.n2,
                        st_res ? 8'd1 : st.n3, st.row_words);
      mm_w_need  = (64'(mm.out_w) - 64'd1) * 64'(mm.sw) + (64'(mm.kw) - 64'd1) * 64'(mm.dw);
      mm_h_need  = (64'(mm.out_h) - 64'd1) * 64'(mm.sh) + (64'(mm.kh) - 64'd1) * 64'(mm.dh);
      mm_act_end = 64'(mm.act_addr) + 64'(mm.ncb) * 64'(mm.in_h) * 64'(mm.in_w);
      mm_wgt_end = 64'(mm.wgt_addr) + 64'(mm.ncb) * 64'(mm.kh) * 64'(mm.kw) * 64'(C);
      mm_acc_end = 64'(mm.acc_addr) + 64'(mm.out_h) * 64'(mm.out_w);
      // vector unit: lines of ELTWISE, windows and tile ends of POOL / DWCONV
      ve_n       = 64'(ve.planes) * 64'(ve.plane_lines);
      ve_bn      = ve.b_mode == 2'd0 ? ve_n : ve.b_mode == 2'd1 ? 64'(ve.planes) : 64'd1;
      vp_w_need  = (64'(vp.out_w) - 64'd1) * 64'(vp.sw) + (64'(vp.kw) - 64'd1) * 64'(vp.dw);
      vp_h_need  = (64'(vp.out_h) - 64'd1) * 64'(vp.sh) + (64'(vp.kh) - 64'd1) * 64'(vp.dh);
      vp_src_end = 64'(vp.src) + 64'(vp.ncb) * 64'(vp.in_h) * 64'(vp.in_w);
      vp_dst_end = 64'(vp.dst) + 64'(vp.ncb) * 64'(vp.out_h) * 64'(vp.out_w);
      vd_w_need  = (64'(vd.out_w) - 64'd1) * 64'(vd.sw) + (64'(vd.kw) - 64'd1) * 64'(vd.dw);
      vd_h_need  = (64'(vd.out_h) - 64'd1) * 64'(vd.sh) + (64'(vd.kh) - 64'd1) * 64'(vd.dh);
      vd_src_end = 64'(vd.src) + 64'(vd.ncb) * 64'(vd.in_h) * 64'(vd.in_w);
      vd_dst_end = 64'(vd.dst) + 64'(vd.ncb) * 64'(vd.out_h) * 64'(vd.out_w);
      vd_wgt_end = 64'(vd.wgt) + 64'(vd.ncb) * 64'(vd.kh) * 64'(vd.kw);
      vd_par_end = 64'(vd.param) + 64'(vd.ncb) * 64'(npu_pkg::DwParamLines);

      // the first failing check wins
      cause = npu_pkg::ErrNone;
      info  = npu_pkg::FNone;
      queue = 2'd3;
      unique case (insn_i[7:0])
        npu_pkg::OpLoad: begin
          queue = 2'd0;
          if ((insn_i & ~npu_pkg::LoadUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (ld.target > 2'd1) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FLoadTarget;
          end else if (ld.target == 2'd1 && ld.pad_value != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FLoadPadValue;
          end else if (ld.row_words == '0 ||
                       32'({ld.row_words, 2'b00}) > (ld.target[0] ? 32'(4 * C) : 32'(R))) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FLoadRowWords;
          end else if (ld.dram_addr[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FLoadDramAddr;
          end else if (ld.stride1[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FLoadStride1;
          end else if (ld.stride2[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FLoadStride2;
          end else if (ld.stride3[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FLoadStride3;
          end else if (ld.n1 == '0 || ld.n2 == '0 || ld.n3 == '0) begin
            cause = npu_pkg::ErrNone;
          end else if (64'(ld.mem_addr) + ld_lines > (ld.target[0] ? AccLines : SpLines)) begin
            cause = ld.target[0] ? npu_pkg::ErrAccRange : npu_pkg::ErrSpRange;
            info  = npu_pkg::FLoadMemAddr;
          end else if (ld_end > Dram) begin
            cause = npu_pkg::ErrDramRange; info = npu_pkg::FLoadDramAddr;
          end else if (!in_win(win_en_i, win_base_i, win_size_i, 64'(ld.dram_addr), ld_end)) begin
            cause = npu_pkg::ErrDmaWindow; info = npu_pkg::FLoadDramAddr;
          end
        end
        npu_pkg::OpStore: begin
          queue = 2'd2;
          if ((insn_i & ~npu_pkg::StoreUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (st.row_words == '0 || 32'({st.row_words, 2'b00}) >
                       (st.source == 2'd0 ? 32'(R) : st.source == 2'd1 ? 32'(4 * C) :
                        st.source == 2'd2 ? 32'(C) : 32'(MinRC))) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreRowWords;
          end else if (!st.source[1] && st.zero_point != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreZeroPoint;
          end else if (!st.source[1] && st.param_addr != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreParamAddr;
          end else if (!st.source[1] && st.clip_lo != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreClipLo;
          end else if (!st.source[1] && st.clip_hi != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreClipHi;
          end else if (st.source[1] && $signed(st.clip_lo) > $signed(st.clip_hi)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreClipLo;
          end else if (st.source[1] && 64'(st.param_addr) + (st_res ? 64'd4 : 64'd3) > AccLines) begin
            cause = npu_pkg::ErrAccRange; info = npu_pkg::FStoreParamAddr;
          end else if (st_res && st.n3 == 8'd0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FStoreN3;
          end else if (st.dram_addr[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FStoreDramAddr;
          end else if (st.stride1[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FStoreStride1;
          end else if (st.stride2[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FStoreStride2;
          end else if (!st_res && st.stride3[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FStoreStride3;
          end else if (st_lines == '0) begin
            cause = npu_pkg::ErrNone;
          end else if (64'(st.mem_addr) + st_lines > (st.source == 2'd0 ? SpLines : AccLines)) begin
            cause = st.source == 2'd0 ? npu_pkg::ErrSpRange : npu_pkg::ErrAccRange;
            info  = npu_pkg::FStoreMemAddr;
          end else if (st_res && 64'(st.stride3) + (st_lines - 64'd1) * 64'(st.n3) + 64'd1 > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FStoreStride3;
          end else if (st_end > Dram) begin
            cause = npu_pkg::ErrDramRange; info = npu_pkg::FStoreDramAddr;
          end else if (!in_win(win_en_i, win_base_i, win_size_i, 64'(st.dram_addr), st_end)) begin
            cause = npu_pkg::ErrDmaWindow; info = npu_pkg::FStoreDramAddr;
          end
        end
        npu_pkg::OpMatmul: begin
          queue = 2'd1;
          if ((insn_i & ~npu_pkg::MatmulUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (mm.in_w == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulInW;
          end else if (mm.in_h == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulInH;
          end else if (mm.out_w == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulOutW;
          end else if (mm.out_h == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulOutH;
          end else if (mm.ncb == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulNcb;
          end else if (mm.kw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulKw;
          end else if (mm.kh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulKh;
          end else if (mm.sw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulSw;
          end else if (mm.sh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulSh;
          end else if (mm.dw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulDw;
          end else if (mm.dh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulDh;
          end else if (mm_w_need >= 64'(mm.in_w)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulInW;
          end else if (mm_h_need >= 64'(mm.in_h)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FMatmulInH;
          end else if (mm_act_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FMatmulActAddr;
          end else if (mm_wgt_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FMatmulWgtAddr;
          end else if (mm_acc_end > AccLines) begin
            cause = npu_pkg::ErrAccRange; info = npu_pkg::FMatmulAccAddr;
          end
        end
        npu_pkg::OpEltwise: begin
          queue = 2'd1;
          if ((insn_i & ~npu_pkg::EltwiseUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (ve.func > 2'd1) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FEltwiseFunc;
          end else if (ve.b_mode > 2'd2) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FEltwiseBMode;
          end else if (ve.func == 2'd1 && ve.mult_a != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FEltwiseMultA;
          end else if (ve.func == 2'd1 && ve.mult_b != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FEltwiseMultB;
          end else if ($signed(ve.clip_lo) > $signed(ve.clip_hi)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FEltwiseClipLo;
          end else if (ve_n == '0) begin
            cause = npu_pkg::ErrNone;
          end else if (64'(ve.src_a) + ve_n > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FEltwiseSrcA;
          end else if (64'(ve.src_b) + ve_bn > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FEltwiseSrcB;
          end else if (64'(ve.dst) + ve_n > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FEltwiseDst;
          end
        end
        npu_pkg::OpPool: begin
          queue = 2'd1;
          if ((insn_i & ~npu_pkg::PoolUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (vp.func == 1'b0 && vp.zp_in != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolZpIn;
          end else if (vp.func == 1'b0 && vp.zp_out != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolZpOut;
          end else if (vp.func == 1'b0 && vp.shift != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolShift;
          end else if (vp.func == 1'b0 && vp.mult != '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolMult;
          end else if ($signed(vp.clip_lo) > $signed(vp.clip_hi)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolClipLo;
          end else if (vp.in_w == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolInW;
          end else if (vp.in_h == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolInH;
          end else if (vp.out_w == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolOutW;
          end else if (vp.out_h == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolOutH;
          end else if (vp.ncb == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolNcb;
          end else if (vp.kw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolKw;
          end else if (vp.kh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolKh;
          end else if (vp.sw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolSw;
          end else if (vp.sh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolSh;
          end else if (vp.dw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolDw;
          end else if (vp.dh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolDh;
          end else if (vp_w_need >= 64'(vp.in_w)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolInW;
          end else if (vp_h_need >= 64'(vp.in_h)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FPoolInH;
          end else if (vp_src_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FPoolSrc;
          end else if (vp_dst_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FPoolDst;
          end
        end
        npu_pkg::OpDwconv: begin
          queue = 2'd1;
          if ((insn_i & ~npu_pkg::DwconvUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if ($signed(vd.clip_lo) > $signed(vd.clip_hi)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvClipLo;
          end else if (vd.in_w == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvInW;
          end else if (vd.in_h == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvInH;
          end else if (vd.out_w == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvOutW;
          end else if (vd.out_h == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvOutH;
          end else if (vd.ncb == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvNcb;
          end else if (vd.kw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvKw;
          end else if (vd.kh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvKh;
          end else if (vd.sw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvSw;
          end else if (vd.sh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvSh;
          end else if (vd.dw == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvDw;
          end else if (vd.dh == '0) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvDh;
          end else if (vd_w_need >= 64'(vd.in_w)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvInW;
          end else if (vd_h_need >= 64'(vd.in_h)) begin
            cause = npu_pkg::ErrBadField; info = npu_pkg::FDwconvInH;
          end else if (vd_src_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FDwconvSrc;
          end else if (vd_wgt_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FDwconvWgt;
          end else if (vd_par_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FDwconvParam;
          end else if (vd_dst_end > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FDwconvDst;
          end
        end
        npu_pkg::OpLut: begin
          queue = 2'd1;
          if ((insn_i & ~npu_pkg::LutUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (vl.lines == '0) begin
            cause = npu_pkg::ErrNone;
          end else if (64'(vl.src) + 64'(vl.lines) > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FLutSrc;
          end else if (64'(vl.dst) + 64'(vl.lines) > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FLutDst;
          end else if (64'(vl.table_) + LutLines > SpLines) begin
            cause = npu_pkg::ErrSpRange; info = npu_pkg::FLutTable;
          end
        end
        npu_pkg::OpMark: begin
          if ((insn_i & ~npu_pkg::MarkUsedMask) != '0) begin
            cause = npu_pkg::ErrReservedBits;
          end else if (mk.dram_addr[1:0] != '0) begin
            cause = npu_pkg::ErrMisaligned; info = npu_pkg::FMarkDramAddr;
          end else if (64'(mk.dram_addr) + 64'(npu_pkg::MarkBytes) > Dram) begin
            cause = npu_pkg::ErrDramRange; info = npu_pkg::FMarkDramAddr;
          end else if (!in_win(win_en_i, win_base_i, win_size_i, 64'(mk.dram_addr),
                               64'(mk.dram_addr) + 64'(npu_pkg::MarkBytes))) begin
            cause = npu_pkg::ErrDmaWindow; info = npu_pkg::FMarkDramAddr;
          end
        end
        npu_pkg::OpFinish: begin
          if ((insn_i & ~npu_pkg::FinishUsedMask) != '0) cause = npu_pkg::ErrReservedBits;
        end
        default: begin
          cause = npu_pkg::ErrIllegalOpcode;
          info  = npu_pkg::FAnyOpcode;
        end
      endcase
      cause_q <= cause;
      info_q  <= info;
      queue_q <= queue;
    end
  end
  assign cause_o = cause_q;
  assign info_o  = info_q;
  assign queue_o = queue_q;
endmodule
