// zyfa_asmgen: writes the FP8 attention kernels as PTX at build time.
//   zyfa_asmgen DIR    writes DIR/<variant>.ptx for every variant and DIR/manifest.txt, one line per variant:
//                      name entry threads dynamic_shared_memory_bytes d_qk d_v lean_p schedule split_p vt_prepass
//                      query_tile_rows overlaps_prepass
// Read by position in cmake/build_code_objects.cmake, src/asmgen/cmake/check_ptxas_report.cmake and
// tools/check_fp8_sass.sh: a field is appended there too.
// The build assembles each PTX with ptxas and embeds the cubins with the manifest's metadata
// (cmake/build_code_objects.cmake).
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "asmgen/fp8_attention.hpp"
#include "asmgen/ptx_printer.hpp"
#include "asmgen/variants.hpp"

namespace {

bool write_file(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) std::fprintf(stderr, "zyfa_asmgen: cannot write %s\n", path.c_str());
  return bool(f);
}

}  // namespace

int main(int argc, char **argv) {
  using namespace zyfa::asmgen;
  if (argc != 2) {
    std::fprintf(stderr, "usage: zyfa_asmgen OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::string manifest;
  for (const Variant &v : variants()) {
    try {
      const Program prog = build_fp8_kernel(v);
      if (!write_file(dir + "/" + v.name + ".ptx", print_ptx(prog))) return 1;
      manifest += v.name + " " + prog.entry + " " + std::to_string(prog.threads) + " " +
                  std::to_string(prog.dynamic_smem_bytes) + " " + std::to_string(v.d_qk) + " " +
                  std::to_string(v.d_v) + " " + (v.lean_p ? "1" : "0") + " " + schedule_name(v.schedule) + " " +
                  (v.split_p ? "1" : "0") + " " + (v.vt_prepass ? "1" : "0") + " " + std::to_string(query_tile_rows(v)) + " " +
                  (v.overlaps_prepass ? "1" : "0") + "\n";
    } catch (const std::exception &e) {
      std::fprintf(stderr, "zyfa_asmgen: %s: %s\n", v.name.c_str(), e.what());
      return 1;
    }
  }
  return write_file(dir + "/manifest.txt", manifest) ? 0 : 1;
}
