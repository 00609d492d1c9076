#include "cpp_layer_call.hpp"

#include "zyfa/zyfa.hpp"

namespace zyfa::test {
namespace {

zyfa_descale as_cpp(const zyfa_descale &d) {
  return d.kind == ZYFA_DESCALE_HOST ? zyfa::Descale::host(d.value)
                                     : zyfa::Descale::device(d.ptr, d.batch_stride, d.head_stride);
}

// c's call, rebuilt field by field through the builder.
zyfa::Attention builder_for(const zyfa_attn_desc &c) {
  zyfa::Attention attn;
  attn.shape(c.batch, c.seqlen, c.nheads, c.nheads_k)
      .head_dims(c.d_qk, c.d_v)
      .tensors(c.q, c.k, c.v, c.out)
      .lse(c.lse)
      .softmax_scale(c.softmax_scale)
      .workspace(c.workspace, c.workspace_bytes);
  if (c.layout == ZYFA_LAYOUT_STRIDED) {
    attn.strides(c.q_strides, c.k_strides, c.v_strides, c.out_strides);
  } else {
    attn.layout(c.layout);
  }
  if (c.dtype == ZYFA_DTYPE_FP8_E4M3) {
    attn.fp8(as_cpp(c.q_descale), as_cpp(c.k_descale), as_cpp(c.v_descale)).p_rounding(c.p_rounding);
  }
  return attn;
}

}  // namespace

std::string cpp_layer_workspace_size(const zyfa_attn_desc &c, size_t *bytes) {
  try {
    *bytes = builder_for(c).workspace_size();
  } catch (const zyfa::Error &e) {
    return e.what();
  }
  return "";
}

std::string cpp_layer_prepare_and_forward(const zyfa_attn_desc &c, void *stream) {
  const zyfa::Attention attn = builder_for(c);
  if (zyfa_status s = attn.try_prepare(stream)) {
    return std::string("try_prepare: ") + zyfa_status_string(s) + ": " + zyfa_last_error();
  }
  try {
    attn.forward(stream);
  } catch (const zyfa::Error &e) {
    return std::string("forward: ") + e.what();
  }
  return "";
}

}  // namespace zyfa::test
