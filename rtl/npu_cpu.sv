// npu_cpu.sv - the control core: RV32IM + Zicsr, machine mode only, exactly
// as docs/CONTROL.md specifies (CSR set, traps, interrupts, WFI, MRET).
//
// Multi-cycle, not pipelined: one instruction at a time through
//   StFetch  fetch request at pc_q, held until mem_gnt_i
//   StIWait  wait for the instruction (mem_rvalid_i). Here, before the
//            instruction runs, a pending enabled interrupt is taken
//            (mstatus.MIE && mip & mie != 0, highest set bit first; mepc =
//            pc_q, the instruction is dropped) or a fetch error raises an
//            instruction access fault; else the instruction is latched into
//            ir_q and rs1/rs2 are read from the register file into a_q/b_q.
//   StExec   one cycle: decode, ALU / MUL / DIV (one cycle: one `*` and one
//            unsigned `/`, the remainder as |a| - q*|b| through the
//            multiplier, which synthesizes much faster than a second `%`),
//            branch, CSR, system; loads and stores compute their address,
//            check alignment and go on to StMem
//   StMem    load/store request, held until mem_gnt_i
//   StMWait  wait for the load data / store acknowledge (mem_err_i: access
//            fault)
//   StWfi    a WFI has retired and mip & mie was 0: wait (wfi_o) until
//            mip & mie != 0 (whatever mstatus.MIE says), then fetch the next
//            instruction (whose fetch then takes the interrupt if MIE is set)
// With a memory that grants at once and answers in the next cycle an
// instruction costs 3 cycles (StFetch, StIWait, StExec), a load or store 5,
// a trap adds no cycle (it is taken in the cycle that detects it: pc_q <=
// mtvec, next state StFetch); an interrupt is taken when the fetch of the
// instruction it preempts answers, so that fetch is wasted.
//
// Register write-back: StExec (or StMWait for a load) leaves the result in
// res_q and sets wb_q; the write happens in the next cycle (the first cycle
// of the next fetch), which is always before the next instruction reads its
// operands (its fetch answers at least one cycle after its grant). The
// register file has no reset: a valid bit per register (rfv_q, reset 0)
// makes a register read 0 until it is first written (CONTROL.md: every
// register is 0 after reset); x0 is never written, so rfv_q[0] stays 0.
//
// Blocks: the control block (reset) holds the state, pc, CSRs and
// counters and decides traps and the next pc; the datapath block (no reset)
// holds the instruction, operands, results and the data request. Every
// computation sits inside the clocked blocks under the state that needs it,
// so a core waiting in WFI (or for memory) evaluates almost nothing. The
// legality decode (insn_legal) is a pure function of the instruction bits;
// the datapath computes its results without it (a trapping instruction's
// results are simply never written back).
//
// Memory port (one outstanding request, for fetch and data):
//   mem_req_o, mem_addr_o, mem_we_o, mem_wdata_o, mem_be_o, mem_fetch_o are
//   functions of flops only and stay stable until mem_gnt_i (gnt in the
//   same cycle as req is allowed); mem_rvalid_i comes one or more cycles
//   after the grant, with mem_rdata_i (the whole aligned word, for reads) and
//   mem_err_i (access fault). mem_addr_o is the byte address of the access
//   (low bits as in the instruction; naturally aligned); mem_be_o the bytes
//   accessed (fetch: 4'hf), also for reads; store data is replicated into
//   every byte lane (SB: 4 copies, SH: 2 copies), so byte lane i of
//   mem_wdata_o holds the byte for address (addr & ~3) + i. Misaligned
//   accesses trap in the core and never reach the port.
//
// CSR writes (CONTROL.md, as cmodel/rv_iss.c reads it): a write (CSRRW/CSRRWI
// always; CSRRS/CSRRC and their immediate forms unless rs1 / uimm is 0) to a
// read-only CSR (misa, mip, cycle(h), instret(h), mvendorid .. mhartid) is
// an illegal instruction; writes to mcycle(h), minstret(h) are ignored. An
// unknown CSR is illegal.
module npu_cpu (
  input  logic         clk_i,
  input  logic         rst_ni,
  // memory port: fetch and data, one outstanding request
  output logic         mem_req_o,
  output logic         mem_we_o,
  output logic [31:0]  mem_addr_o,
  output logic [31:0]  mem_wdata_o,
  output logic [3:0]   mem_be_o,
  output logic         mem_fetch_o,
  input  logic         mem_gnt_i,
  input  logic         mem_rvalid_i,
  input  logic [31:0]  mem_rdata_i,
  input  logic         mem_err_i,
  // interrupt lines (levels): mip bits 18..16 and 7 (MTIP)
  input  logic [18:16] irq_i,
  input  logic         irq_timer_i,
  // status
  output logic         wfi_o,
  output logic [31:0]  pc_o,
  output logic         retire_o
);

  typedef enum logic [2:0] {
    StFetch,  // instruction request at pc_q
    StIWait,  // waiting for the instruction
    StExec,   // executing ir_q
    StMem,    // data request
    StMWait,  // waiting for the data response
    StWfi     // waiting in WFI
  } state_e;

  // major opcodes (ir[6:2]; ir[1:0] must be 2'b11)
  localparam logic [4:0] OpLoad    = 5'b00000;
  localparam logic [4:0] OpMiscMem = 5'b00011;
  localparam logic [4:0] OpImm     = 5'b00100;
  localparam logic [4:0] OpAuipc   = 5'b00101;
  localparam logic [4:0] OpStore   = 5'b01000;
  localparam logic [4:0] OpReg     = 5'b01100;
  localparam logic [4:0] OpLui     = 5'b01101;
  localparam logic [4:0] OpBranch  = 5'b11000;
  localparam logic [4:0] OpJalr    = 5'b11001;
  localparam logic [4:0] OpJal     = 5'b11011;
  localparam logic [4:0] OpSystem  = 5'b11100;

  localparam logic [31:0] InsnEcall  = 32'h0000_0073;
  localparam logic [31:0] InsnEbreak = 32'h0010_0073;
  localparam logic [31:0] InsnMret   = 32'h3020_0073;
  localparam logic [31:0] InsnWfi    = 32'h1050_0073;

  localparam logic [31:0] Misa = 32'h4000_1100;  // RV32, I, M

  // mcause of the exceptions
  localparam logic [31:0] CauseInsnMisaligned  = 32'd0;
  localparam logic [31:0] CauseInsnFault       = 32'd1;
  localparam logic [31:0] CauseIllegal         = 32'd2;
  localparam logic [31:0] CauseBreakpoint      = 32'd3;
  localparam logic [31:0] CauseLoadMisaligned  = 32'd4;
  localparam logic [31:0] CauseLoadFault       = 32'd5;
  localparam logic [31:0] CauseStoreMisaligned = 32'd6;
  localparam logic [31:0] CauseStoreFault      = 32'd7;
  localparam logic [31:0] CauseEcallM          = 32'd11;

  // ---------------------------------------------------------------------------
  // Decode helpers (pure functions of their arguments)
  // ---------------------------------------------------------------------------
  // immediates, from the instruction fields that hold them
  function automatic logic [31:0] imm_i(logic [11:0] f);  // ir[31:20]
    imm_i = {{20{f[11]}}, f};
  endfunction

  function automatic logic [31:0] imm_s(logic [11:0] f);  // {ir[31:25], ir[11:7]}
    imm_s = {{20{f[11]}}, f};
  endfunction

  function automatic logic [31:0] imm_b(logic [11:0] f);  // {ir[31:25], ir[11:7]}
    imm_b = {{19{f[11]}}, f[11], f[0], f[10:5], f[4:1], 1'b0};
  endfunction

  function automatic logic [31:0] imm_u(logic [19:0] f);  // ir[31:12]
    imm_u = {f, 12'b0};
  endfunction

  function automatic logic [31:0] imm_j(logic [19:0] f);  // ir[31:12]
    imm_j = {{11{f[19]}}, f[19], f[7:0], f[8], f[18:9], 1'b0};
  endfunction

  // the CSR numbers of CONTROL.md
  function automatic logic csr_exists(logic [11:0] n);
    case (n)
      12'h300, 12'h301, 12'h304, 12'h305, 12'h340, 12'h341, 12'h342, 12'h343, 12'h344,
      12'hb00, 12'hb80, 12'hb02, 12'hb82, 12'hc00, 12'hc80, 12'hc02, 12'hc82,
      12'hf11, 12'hf12, 12'hf13, 12'hf14: csr_exists = 1'b1;
      default: csr_exists = 1'b0;
    endcase
  endfunction

  // read-only CSRs (a write is an illegal instruction): CONTROL.md's misa and
  // mip ("read-only"), and the read-only number space (bits 11:10 = 3:
  // cycle, instret and their high halves, mvendorid .. mhartid)
  function automatic logic csr_ro(logic [11:0] n);
    csr_ro = (n[11:10] == 2'b11) || (n == 12'h301) || (n == 12'h344);
  endfunction

  // a CSR instruction writes its CSR: CSRRW(I) always, CSRRS(I)/CSRRC(I)
  // unless the rs1 field (register or uimm) is 0
  function automatic logic csr_writes(logic [1:0] op, logic [4:0] rs1);  // ir[13:12], ir[19:15]
    csr_writes = (op == 2'b01) || (rs1 != 5'd0);
  endfunction

  // the instruction is one of CONTROL.md's (else: illegal instruction)
  function automatic logic insn_legal(logic [31:0] ir);
    logic [2:0] f3;
    logic [6:0] f7;
    f3 = ir[14:12];
    f7 = ir[31:25];
    insn_legal = 1'b0;
    if (ir[1:0] == 2'b11) begin
      case (ir[6:2])
        OpLui, OpAuipc, OpJal: insn_legal = 1'b1;
        OpJalr:    insn_legal = (f3 == 3'b000);
        OpBranch:  insn_legal = (f3[2:1] != 2'b01);
        OpLoad:    insn_legal = (f3 != 3'b011) && (f3[2:1] != 2'b11);
        OpStore:   insn_legal = (f3[2] == 1'b0) && (f3 != 3'b011);
        OpImm: begin
          if (f3 == 3'b001)      insn_legal = (f7 == 7'b0000000);
          else if (f3 == 3'b101) insn_legal = (f7 == 7'b0000000) || (f7 == 7'b0100000);
          else                   insn_legal = 1'b1;
        end
        OpReg: begin
          if (f7 == 7'b0000000 || f7 == 7'b0000001) insn_legal = 1'b1;
          else if (f7 == 7'b0100000)                insn_legal = (f3 == 3'b000) || (f3 == 3'b101);
          else                                      insn_legal = 1'b0;
        end
        OpMiscMem: insn_legal = (f3[2:1] == 2'b00);  // FENCE, FENCE.I: no-ops
        OpSystem: begin
          if (f3 == 3'b000) begin
            insn_legal = (ir == InsnEcall) || (ir == InsnEbreak) || (ir == InsnMret) ||
                         (ir == InsnWfi);
          end else if (f3 == 3'b100) begin
            insn_legal = 1'b0;
          end else begin
            insn_legal = csr_exists(ir[31:20]) &&
                         !(csr_ro(ir[31:20]) && csr_writes(ir[13:12], ir[19:15]));
          end
        end
        default: insn_legal = 1'b0;
      endcase
    end
  endfunction

  // the instruction (if legal and not trapping) writes rd
  function automatic logic writes_rd(logic [4:0] op, logic [2:0] f3);  // ir[6:2], ir[14:12]
    case (op)
      OpLui, OpAuipc, OpJal, OpJalr, OpImm, OpReg: writes_rd = 1'b1;
      OpSystem: writes_rd = (f3 != 3'b000);
      default:  writes_rd = 1'b0;
    endcase
  endfunction

  function automatic logic branch_taken(logic [2:0] f3, logic [31:0] a, logic [31:0] b);
    case (f3)
      3'b000:  branch_taken = (a == b);
      3'b001:  branch_taken = (a != b);
      3'b100:  branch_taken = ($signed(a) < $signed(b));
      3'b101:  branch_taken = !($signed(a) < $signed(b));
      3'b110:  branch_taken = (a < b);
      default: branch_taken = !(a < b);
    endcase
  endfunction

  // access of size 1 << f3[1:0] at an address with low bits lo is misaligned
  function automatic logic misaligned(logic [1:0] size, logic [1:0] lo);
    case (size)
      2'b00:   misaligned = 1'b0;
      2'b01:   misaligned = lo[0];
      default: misaligned = (lo != 2'b00);
    endcase
  endfunction

  // byte enables of an aligned access of size 1 << size at low bits lo
  function automatic logic [3:0] byte_en(logic [1:0] size, logic [1:0] lo);
    case (size)
      2'b00:   byte_en = 4'b0001 << lo;
      2'b01:   byte_en = lo[1] ? 4'b1100 : 4'b0011;
      default: byte_en = 4'b1111;
    endcase
  endfunction

  function automatic logic [31:0] alu(logic [2:0] f3, logic alt, logic [31:0] a, logic [31:0] b);
    case (f3)
      3'b000: alu = alt ? a - b : a + b;
      3'b001: alu = a << b[4:0];
      3'b010: alu = {31'b0, $signed(a) < $signed(b)};
      3'b011: alu = {31'b0, a < b};
      3'b100: alu = a ^ b;
      3'b101: begin
        if (alt) alu = $unsigned($signed(a) >>> b[4:0]);
        else     alu = a >> b[4:0];
      end
      3'b110:  alu = a | b;
      default: alu = a & b;
    endcase
  endfunction

  // MUL, MULH, MULHSU, MULHU, DIV, DIVU, REM, REMU (by funct3)
  function automatic logic [31:0] muldiv(logic [2:0] f3, logic [31:0] a, logic [31:0] b);
    logic [63:0] p;
    logic [32:0] ma, mb;
    logic        sgn;
    logic [31:0] ua, ub, q, r;
    // DIV/REM on magnitudes: q = |a| / |b|, r = |a| - q * |b| (the
    // multiplier of MUL*; INT32_MIN / -1 gives INT32_MIN, remainder 0)
    sgn = !f3[0];                              // DIV, REM (when f3[2])
    ua  = (sgn && a[31]) ? 32'd0 - a : a;
    ub  = (sgn && b[31]) ? 32'd0 - b : b;
    q   = '0;
    if (!f3[2]) begin
      ma = {((f3 == 3'b001) || (f3 == 3'b010)) & a[31], a};  // MULH, MULHSU: rs1 signed
      mb = {(f3 == 3'b001) & b[31], b};                      // MULH: rs2 signed
    end else begin
      if (b != 32'd0) q = ua / ub;
      ma = {1'b0, q};
      mb = {1'b0, ub};
    end
    p = 64'($signed(ma) * $signed(mb));
    if (!f3[2]) begin
      muldiv = (f3 == 3'b000) ? p[31:0] : p[63:32];
    end else if (b == 32'd0) begin
      muldiv = f3[1] ? a : 32'hffff_ffff;      // REM(U): a, DIV(U): all ones
    end else begin
      r = ua - p[31:0];
      if (f3[1]) muldiv = (sgn && a[31]) ? 32'd0 - r : r;
      else       muldiv = (sgn && (a[31] ^ b[31])) ? 32'd0 - q : q;
    end
  endfunction

  // the 32-bit load result from the aligned word w
  function automatic logic [31:0] load_data(logic [2:0] f3, logic [1:0] lo, logic [31:0] w);
    logic [31:0] s;
    s = w >> {lo, 3'b000};
    case (f3[1:0])
      2'b00:   load_data = f3[2] ? {24'b0, s[7:0]} : {{24{s[7]}}, s[7:0]};
      2'b01:   load_data = f3[2] ? {16'b0, s[15:0]} : {{16{s[15]}}, s[15:0]};
      default: load_data = s;
    endcase
  endfunction

  // CSRRW / CSRRS / CSRRC on the old value
  function automatic logic [31:0] csr_op(logic [1:0] op, logic [31:0] old, logic [31:0] src);
    case (op)
      2'b01:   csr_op = src;
      2'b10:   csr_op = old | src;
      default: csr_op = old & ~src;
    endcase
  endfunction

  function automatic logic [31:0] mstatus_val(logic mie, logic mpie);
    mstatus_val = {19'b0, 2'b11, 3'b0, mpie, 3'b0, mie, 3'b0};  // MPP reads 3
  endfunction

  // mie / mip layout of the 4 implemented bits {18, 17, 16, 7}
  function automatic logic [31:0] irq_val(logic [3:0] v);
    irq_val = {13'b0, v[3:1], 8'b0, v[0], 7'b0};
  endfunction

  // ---------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------
  state_e      state_q;
  logic [31:0] pc_q;
  logic        wb_q;       // write res_q to rd (ir_q[11:7]) in this cycle
  logic        retire_q;
  logic [31:0] rfv_q;      // register written since reset (bit 0 stays 0)
  // CSRs
  logic        mstatus_mie_q, mstatus_mpie_q;
  logic [3:0]  mie_q;      // mie bits {18, 17, 16, 7}
  logic [31:0] mtvec_q, mepc_q;  // bits 1:0 always 0
  logic [31:0] mscratch_q, mcause_q, mtval_q;
  logic [63:0] mcycle_q, minstret_q;

  // datapath
  logic [31:0] rf_q [32];
  logic [31:0] ir_q, a_q, b_q, res_q;
  logic [31:0] maddr_q, wdata_q;
  logic [3:0]  be_q;
  logic        st_q;       // the data request is a store

  // pending and enabled interrupts {18, 17, 16, 7}
  logic [3:0] mip, irq_pend;
  assign mip      = {irq_i, irq_timer_i};
  assign irq_pend = mip & mie_q;

  // ---------------------------------------------------------------------------
  // Outputs (functions of flops only)
  // ---------------------------------------------------------------------------
  assign mem_req_o   = (state_q == StFetch) || (state_q == StMem);
  assign mem_fetch_o = (state_q == StFetch);
  assign mem_we_o    = (state_q == StMem) && st_q;
  assign mem_addr_o  = (state_q == StFetch) ? pc_q : maddr_q;
  assign mem_be_o    = (state_q == StFetch) ? 4'hf : be_q;
  assign mem_wdata_o = wdata_q;
  assign wfi_o       = (state_q == StWfi);
  assign pc_o        = pc_q;
  assign retire_o    = retire_q;

  // ---------------------------------------------------------------------------
  // Control: state, pc, CSRs, counters, traps
  // ---------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q        <= StFetch;
      pc_q           <= '0;
      wb_q           <= 1'b0;
      retire_q       <= 1'b0;
      rfv_q          <= '0;
      mstatus_mie_q  <= 1'b0;
      mstatus_mpie_q <= 1'b0;
      mie_q          <= '0;
      mtvec_q        <= '0;
      mepc_q         <= '0;
      mscratch_q     <= '0;
      mcause_q       <= '0;
      mtval_q        <= '0;
      mcycle_q       <= '0;
      minstret_q     <= '0;
    end else begin : b_ctl
      logic        trap;
      logic [31:0] cause, tval;
      trap  = 1'b0;
      cause = '0;
      tval  = '0;

      mcycle_q <= mcycle_q + 64'd1;
      retire_q <= 1'b0;
      wb_q     <= 1'b0;
      if (wb_q) rfv_q[ir_q[11:7]] <= 1'b1;

      unique case (state_q)
        StFetch: if (mem_gnt_i) state_q <= StIWait;

        StIWait: if (mem_rvalid_i) begin
          if (mstatus_mie_q && irq_pend != 4'd0) begin
            trap  = 1'b1;
            cause = irq_pend[3] ? 32'h8000_0012 :
                    irq_pend[2] ? 32'h8000_0011 :
                    irq_pend[1] ? 32'h8000_0010 : 32'h8000_0007;
          end else if (mem_err_i) begin
            trap  = 1'b1;
            cause = CauseInsnFault;
            tval  = pc_q;
          end else begin
            state_q <= StExec;
          end
        end

        StExec: begin : b_exec
          logic [31:0] next_pc, tgt, addr, src, nv;
          logic        mem, wfi;
          next_pc = pc_q + 32'd4;
          tgt     = '0;
          addr    = '0;
          mem     = 1'b0;
          wfi     = 1'b0;
          if (!insn_legal(ir_q)) begin
            trap  = 1'b1;
            cause = CauseIllegal;
            tval  = ir_q;
          end else begin
            unique case (ir_q[6:2])
              OpJal, OpJalr: begin
                if (ir_q[3]) tgt = pc_q + imm_j(ir_q[31:12]);
                else         tgt = (a_q + imm_i(ir_q[31:20])) & ~32'd1;
                if (tgt[1]) begin
                  trap  = 1'b1;
                  cause = CauseInsnMisaligned;
                  tval  = tgt;
                end else begin
                  next_pc = tgt;
                end
              end
              OpBranch: if (branch_taken(ir_q[14:12], a_q, b_q)) begin
                tgt = pc_q + imm_b({ir_q[31:25], ir_q[11:7]});
                if (tgt[1]) begin
                  trap  = 1'b1;
                  cause = CauseInsnMisaligned;
                  tval  = tgt;
                end else begin
                  next_pc = tgt;
                end
              end
              OpLoad, OpStore: begin
                addr = a_q + (ir_q[5] ? imm_s({ir_q[31:25], ir_q[11:7]}) : imm_i(ir_q[31:20]));
                if (misaligned(ir_q[13:12], addr[1:0])) begin
                  trap  = 1'b1;
                  cause = ir_q[5] ? CauseStoreMisaligned : CauseLoadMisaligned;
                  tval  = addr;
                end else begin
                  mem = 1'b1;
                end
              end
              OpSystem: begin
                if (ir_q[14:12] == 3'b000) begin
                  if (ir_q == InsnEcall) begin
                    trap  = 1'b1;
                    cause = CauseEcallM;
                  end else if (ir_q == InsnEbreak) begin
                    trap  = 1'b1;
                    cause = CauseBreakpoint;
                  end else if (ir_q == InsnMret) begin
                    next_pc = mepc_q;
                    mstatus_mie_q  <= mstatus_mpie_q;
                    mstatus_mpie_q <= 1'b1;
                  end else begin
                    wfi = 1'b1;
                  end
                end else if (csr_writes(ir_q[13:12], ir_q[19:15])) begin
                  src = ir_q[14] ? {27'b0, ir_q[19:15]} : a_q;
                  unique case (ir_q[31:20])
                    12'h300: begin
                      nv = csr_op(ir_q[13:12], mstatus_val(mstatus_mie_q, mstatus_mpie_q), src);
                      mstatus_mie_q  <= nv[3];
                      mstatus_mpie_q <= nv[7];
                    end
                    12'h304: begin
                      nv    = csr_op(ir_q[13:12], irq_val(mie_q), src);
                      mie_q <= {nv[18:16], nv[7]};
                    end
                    12'h305: begin
                      nv      = csr_op(ir_q[13:12], mtvec_q, src);
                      mtvec_q <= nv & 32'hffff_fffc;
                    end
                    12'h340: mscratch_q <= csr_op(ir_q[13:12], mscratch_q, src);
                    12'h341: begin
                      nv     = csr_op(ir_q[13:12], mepc_q, src);
                      mepc_q  <= nv & 32'hffff_fffc;
                    end
                    12'h342: mcause_q <= csr_op(ir_q[13:12], mcause_q, src);
                    12'h343: mtval_q  <= csr_op(ir_q[13:12], mtval_q, src);
                    default: ;  // mcycle(h), minstret(h): writes ignored
                  endcase
                end
              end
              default: ;  // ALU, LUI, AUIPC, FENCE: results in the datapath
            endcase
          end
          if (!trap) begin
            if (mem) begin
              state_q <= StMem;
            end else begin
              pc_q       <= next_pc;
              retire_q   <= 1'b1;
              minstret_q <= minstret_q + 64'd1;
              wb_q       <= writes_rd(ir_q[6:2], ir_q[14:12]) && (ir_q[11:7] != 5'd0);
              state_q    <= (wfi && irq_pend == 4'd0) ? StWfi : StFetch;
            end
          end
        end

        StMem: if (mem_gnt_i) state_q <= StMWait;

        StMWait: if (mem_rvalid_i) begin
          if (mem_err_i) begin
            trap  = 1'b1;
            cause = st_q ? CauseStoreFault : CauseLoadFault;
            tval  = maddr_q;
          end else begin
            pc_q       <= pc_q + 32'd4;
            retire_q   <= 1'b1;
            minstret_q <= minstret_q + 64'd1;
            wb_q       <= !st_q && (ir_q[11:7] != 5'd0);
            state_q    <= StFetch;
          end
        end

        StWfi: if (irq_pend != 4'd0) state_q <= StFetch;

        default: state_q <= StFetch;
      endcase

      if (trap) begin
        mepc_q         <= pc_q;
        mcause_q       <= cause;
        mtval_q        <= tval;
        mstatus_mpie_q <= mstatus_mie_q;
        mstatus_mie_q  <= 1'b0;
        pc_q           <= mtvec_q;
        state_q        <= StFetch;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Datapath: register file, instruction, operands, results, data request
  // ---------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (wb_q) rf_q[ir_q[11:7]] <= res_q;
    unique case (state_q)
      StIWait: if (mem_rvalid_i) begin
        ir_q <= mem_rdata_i;
        a_q  <= rfv_q[mem_rdata_i[19:15]] ? rf_q[mem_rdata_i[19:15]] : 32'd0;
        b_q  <= rfv_q[mem_rdata_i[24:20]] ? rf_q[mem_rdata_i[24:20]] : 32'd0;
      end

      StExec: begin : b_dp
        logic [31:0] addr;
        unique case (ir_q[6:2])
          OpLui:         res_q <= imm_u(ir_q[31:12]);
          OpAuipc:       res_q <= pc_q + imm_u(ir_q[31:12]);
          OpJal, OpJalr: res_q <= pc_q + 32'd4;
          OpImm:         res_q <= alu(ir_q[14:12], ir_q[30] && ir_q[14:12] == 3'b101, a_q,
                                      imm_i(ir_q[31:20]));
          OpReg: begin
            if (ir_q[25]) res_q <= muldiv(ir_q[14:12], a_q, b_q);
            else          res_q <= alu(ir_q[14:12], ir_q[30], a_q, b_q);
          end
          OpLoad, OpStore: begin
            addr    = a_q + (ir_q[5] ? imm_s({ir_q[31:25], ir_q[11:7]}) : imm_i(ir_q[31:20]));
            maddr_q <= addr;
            be_q    <= byte_en(ir_q[13:12], addr[1:0]);
            st_q    <= ir_q[5];
            unique case (ir_q[13:12])
              2'b00:   wdata_q <= {4{b_q[7:0]}};
              2'b01:   wdata_q <= {2{b_q[15:0]}};
              default: wdata_q <= b_q;
            endcase
          end
          OpSystem: begin
            unique case (ir_q[31:20])
              12'h300: res_q <= mstatus_val(mstatus_mie_q, mstatus_mpie_q);
              12'h301: res_q <= Misa;
              12'h304: res_q <= irq_val(mie_q);
              12'h305: res_q <= mtvec_q;
              12'h340: res_q <= mscratch_q;
              12'h341: res_q <= mepc_q;
              12'h342: res_q <= mcause_q;
              12'h343: res_q <= mtval_q;
              12'h344: res_q <= irq_val(mip);
              12'hb00, 12'hc00: res_q <= mcycle_q[31:0];
              12'hb80, 12'hc80: res_q <= mcycle_q[63:32];
              12'hb02, 12'hc02: res_q <= minstret_q[31:0];
              12'hb82, 12'hc82: res_q <= minstret_q[63:32];
              default: res_q <= '0;   // mvendorid..mhartid (others are illegal)
            endcase
          end
          default: ;
        endcase
      end

      StMWait: if (mem_rvalid_i) res_q <= load_data(ir_q[14:12], maddr_q[1:0], mem_rdata_i);

      default: ;
    endcase
  end

  // ---------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  logic chk_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_q <= 1'b0;
    end else begin
      chk_q <= 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (chk_q) begin
      assert (!(mem_gnt_i && !mem_req_o))
        else $error("npu_cpu: mem_gnt_i without a request");
      assert (!(mem_rvalid_i && state_q != StIWait && state_q != StMWait))
        else $error("npu_cpu: mem_rvalid_i without an outstanding request");
      assert (pc_q[1:0] == 2'b00)
        else $error("npu_cpu: misaligned pc");
      assert (!(mem_req_o && !mem_fetch_o && misaligned(be_q == 4'hf ? 2'b10 :
                                                         (be_q == 4'b0011 || be_q == 4'b1100) ? 2'b01 : 2'b00,
                                                         maddr_q[1:0])))
        else $error("npu_cpu: misaligned data request");
    end
  end
`endif

endmodule
