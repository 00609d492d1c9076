// Calls through the C++ layer (zyfa.hpp) for test_cpp_layer_device.cpp. Their own translation unit: zyfa.hpp's
// public zyfa::Descale and the library's internal one (src/host/problem.hpp, which the test support reaches)
// cannot meet in one.
#ifndef ZYFA_TEST_GPU_CPP_LAYER_CALL_HPP_
#define ZYFA_TEST_GPU_CPP_LAYER_CALL_HPP_

#include <cstddef>
#include <string>

#include "zyfa/zyfa.h"

namespace zyfa::test {

// The descriptor's workspace bytes, asked through a zyfa::Attention that the builder fills with c's fields;
// "" or what was thrown.
std::string cpp_layer_workspace_size(const zyfa_attn_desc &c, size_t *bytes);
// c's call through the builder: try_prepare, then forward (the throwing form) on `stream`; "" or the
// status and message.
std::string cpp_layer_prepare_and_forward(const zyfa_attn_desc &c, void *stream);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_GPU_CPP_LAYER_CALL_HPP_
