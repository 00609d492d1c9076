// The typed instruction builder: one method per PTX instruction the kernels use, each checking its
// operand types, so a schedule that mixes up a register's type fails in the emitter, not in ptxas.
// Instructions made inside a Builder::Guard scope are predicated on its register.
#ifndef ZYFA_ASMGEN_BUILDER_HPP_
#define ZYFA_ASMGEN_BUILDER_HPP_

#include <array>
#include <string>
#include <vector>

#include "asmgen/program.hpp"

namespace zyfa::asmgen {

// A prmt.b32 selector (default mode): byte i of the result is byte b<i> of the pair {a, b}, bytes 0-3 from a
// and 4-7 from b. prmt_selector(0, 2, 4, 6) is {a.byte 0, a.byte 2, b.byte 0, b.byte 2}.
constexpr int prmt_selector(int b0, int b1, int b2, int b3) { return b0 | b1 << 4 | b2 << 8 | b3 << 12; }

class Builder {
 public:
  explicit Builder(Program &program) : p_(program) {}

  Reg reg(Type type, const std::string &name) { return p_.regs.make(type, name); }
  Reg temp(Type type, const std::string &prefix) { return p_.regs.temp(type, prefix); }
  Type type(Reg r) const { return p_.regs.type(r); }

  // Predicates every instruction made while it lives on `pred` (or on !pred).
  class Guard {
   public:
    Guard(Builder &b, Reg pred, bool negated, bool uniform = false);
    ~Guard();
    Guard(const Guard &) = delete;
    Guard &operator=(const Guard &) = delete;

   private:
    Builder &b_;
    Reg saved_;
    bool saved_negated_;
    bool saved_uniform_;
  };
  Guard when(Reg pred) { return Guard(*this, pred, false); }
  Guard unless(Reg pred) { return Guard(*this, pred, true); }
  // A guard whose predicate is the same for every thread of each warpgroup: only under it may the
  // .aligned instructions (wgmma, setmaxnreg, named barriers, ldmatrix, shuffles, votes) be predicated;
  // the PTX ISA requires every thread of the warp (warpgroup) to execute them.
  Guard when_uniform(Reg pred) { return Guard(*this, pred, false, true); }

  // ---- integer and generic: the type is the destination's.
  void mov(Reg d, Operand a);
  void add(Reg d, Operand a, Operand b);  // f32: add.rn
  void sub(Reg d, Operand a, Operand b);  // f32: sub.rn
  void mul_lo(Reg d, Operand a, Operand b);
  void mul_wide(Reg d, Operand a, Operand b);  // s64 <- s32 * s32, u64 <- u32 * u32
  void mad_lo(Reg d, Operand a, Operand b, Operand c);
  void div(Reg d, Operand a, Operand b);  // f32: div.rn (IEEE); integers: truncating
  void min(Reg d, Operand a, Operand b);
  void max(Reg d, Operand a, Operand b);
  void shl(Reg d, Operand a, Operand b);
  void shr(Reg d, Operand a, Operand b);
  void and_(Reg d, Operand a, Operand b);
  void or_(Reg d, Operand a, Operand b);
  void xor_(Reg d, Operand a, Operand b);

  // ---- fp32
  void mul(Reg d, Operand a, Operand b);  // mul.rn.f32
  void fma(Reg d, Operand a, Operand b, Operand c);  // fma.rn.f32
  void ex2(Reg d, Operand a);  // ex2.approx.ftz.f32
  void lg2(Reg d, Operand a);  // lg2.approx.ftz.f32

  // ---- conversions and bytes
  void cvt(Reg d, Operand a, Type src_type, Round round);
  // d (b16) = {e4m3(lo) in bits 0-7, e4m3(hi) in bits 8-15}, round to nearest even, saturating to 448.
  void cvt_e4m3x2(Reg d, Operand hi, Operand lo);
  // d (f16x2 in a b32) = {f16(a.byte0) in bits 0-15, f16(a.byte1) in bits 16-31}: exact.
  void cvt_f16x2_e4m3x2(Reg d, Reg a);
  // d (b32) = {bf16(lo) in bits 0-15, bf16(hi) in bits 16-31}, round to nearest even.
  void cvt_bf16x2(Reg d, Operand hi, Operand lo);
  // d (f16x2 in a b32) = {f16(lo) in bits 0-15, f16(hi) in bits 16-31}, round to nearest even.
  void cvt_f16x2_f32(Reg d, Operand hi, Operand lo);
  // d (f16x2) = a - b per half, sub.rn.f16x2 (no flush of subnormals).
  void sub_f16x2(Reg d, Reg a, Reg b);
  // d (b16) = {e4m3(a.lo) in bits 0-7, e4m3(a.hi) in bits 8-15}, round to nearest even, saturating to 448.
  void cvt_e4m3x2_f16x2(Reg d, Reg a);
  void pack16x2(Reg d, Reg lo, Reg hi);    // mov.b32 d, {lo, hi}
  void unpack16x2(Reg lo, Reg hi, Reg a);  // mov.b32 {lo, hi}, a
  void prmt(Reg d, Operand a, Operand b, Operand selector);
  void max_s16x2(Reg d, Reg a, Reg b);  // max.s16x2 (sm_90): each half as a signed 16-bit integer

  // ---- predicates
  void setp(Reg p, Cmp cmp, Type type, Operand a, Operand b);
  void selp(Reg d, Operand a, Operand b, Reg p);  // d = p ? a : b
  void vote_any(Reg d, Reg p);                    // over the full warp

  // ---- memory. Loads take their type from the destinations, stores from `type`.
  void ld_param(Reg d, int offset);
  void ld_global(const std::vector<Reg> &d, Reg addr, int64_t offset, bool non_coherent);
  void st_global(Type type, Reg addr, int64_t offset, const std::vector<Operand> &values);
  void ld_shared(const std::vector<Reg> &d, Reg addr, int64_t offset);
  void st_shared(Type type, Reg addr, int64_t offset, const std::vector<Operand> &values);
  // Four 8x8 matrices of 16-bit elements; `transpose` gives each thread a column pair instead of a row pair.
  void ldmatrix_x4(const std::array<Reg, 4> &d, Reg addr, int64_t offset, bool transpose);
  // ldmatrix's inverse (not transposed): thread (g = lane / 4, t = lane % 4) writes values[m] as elements
  // 2t, 2t + 1 of row g of matrix m, whose 16 bytes start at the address lane 8 m + g gives.
  void stmatrix_x4(Reg addr, int64_t offset, const std::array<Reg, 4> &values);

  // 16 bytes global -> shared, asynchronously; bytes past `src_bytes` (0 or 16) are written as zeros and
  // not read. Complete (for this thread) after cp_async_wait; visible to others after a barrier too.
  void cp_async_16(Reg smem_addr, int64_t smem_offset, Reg global_addr, Operand src_bytes);
  void cp_async_commit();                // closes the group of this thread's copies issued so far
  void cp_async_wait(int pending_groups);  // waits until at most that many groups are incomplete

  // ---- collectives
  void shfl_bfly(Reg d, Reg a, int lane_mask);
  // d = a of lane `src_lane`: the same in every lane, which ptxas can then prove warp-uniform and keep in
  // uniform registers (a value derived from %tid it cannot).
  void shfl_idx(Reg d, Reg a, int src_lane);
  void bar_sync(int barrier);
  // d = a * b + c, m16n8k16, f16 inputs (f16x2 registers), fp32 accumulators.
  void mma_f16(const std::array<Reg, 4> &d, const std::array<Reg, 4> &a, const std::array<Reg, 2> &b,
               const std::array<Reg, 4> &c);

  // ---- Hopper: named barriers among some threads, register budgets, mbarriers, TMA and wgmma.
  // (bar_sync above waits for the whole CTA; these name a thread count, a multiple of 32.)
  void bar_sync_count(Operand barrier, int threads);
  void bar_arrive(Operand barrier, int threads);
  // d (u64) = the generic address of the kernel parameter block + offset (a tensor map lives there).
  void param_address(Reg d, int offset);
  void prefetch_tensormap(Reg generic_addr);
  // setmaxnreg.inc (grow) or .dec: every warp of the warpgroup must run it.
  void setmaxnreg(bool grow, int registers);
  // Waits until the grids this launch depends on programmatically (the V^T pre-pass) have completed and their
  // writes are visible; returns at once in a launch without such a dependency.
  void grid_dependency_wait();
  void fence_proxy_async();    // orders this thread's shared-memory writes before later async-proxy reads
  void fence_mbarrier_init();  // makes mbarrier.init visible to the async proxy
  void mbar_init(Reg addr, int arrivals);
  void mbar_arrive(Reg addr);
  void mbar_arrive_expect_tx(Reg addr, int bytes);
  // Spins until the phase of `parity` has completed (try_wait in a loop). Not allowed under a Guard.
  void mbar_wait(Reg addr, Operand parity);
  // The box at (c0, c1, c2, c3) of a rank-4 tensor map to shared memory, completing bytes on `mbar`.
  void tma_load_4d(Reg smem_addr, Reg tensor_map, const std::array<Operand, 4> &coords, Reg mbar,
                   Operand cache_hint);
  // d (+)= A B, m64nNk32, e4m3 x e4m3 -> f32. A from a shared-memory descriptor (a_desc) or from four
  // registers of e4m3 quadruples (a_regs); B from a descriptor; both K-major. `accumulate` is a predicate:
  // false overwrites d.
  void wgmma_e4m3(const std::vector<Reg> &d, Reg a_desc, Reg b_desc, Reg accumulate);
  void wgmma_e4m3(const std::vector<Reg> &d, const std::array<Reg, 4> &a_regs, Reg b_desc, Reg accumulate);
  void wgmma_fence();
  void wgmma_commit();
  void wgmma_wait(int pending_groups);

  // ---- special registers and control flow
  void read_special(Reg d, Special s);
  int new_label(const std::string &name);
  void place(int label);
  void bra(int label);  // warp-uniform
  // if (a cmp b) goto label: a fresh predicate named `pred_name`, then a guarded bra.
  void bra_if(Cmp cmp, Type type, Operand a, Operand b, int label, const char *pred_name);
  void exit();

 private:
  Instr &push(Op op, Type type);
  // d (type) = two f32 operands converted and packed (hi in the upper half); d (type) = packed a converted.
  void pack_f32_pair(Op op, Type type, Reg d, Operand hi, Operand lo, const char *what);
  void convert_packed(Op op, Type type, Reg d, Type src_type, Reg a, const char *what);
  void named_barrier(Op op, const char *what, Operand barrier, int threads);  // bar.sync / bar.arrive
  void expect(Reg r, Type t, const char *what) const;
  void expect_same_width(Operand o, Type t, const char *what) const;
  Program &p_;
  void expect_converged(const char *what) const;  // no guard, or a uniform one
  Reg guard_;
  bool guard_negated_ = false;
  bool guard_uniform_ = false;
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_BUILDER_HPP_
