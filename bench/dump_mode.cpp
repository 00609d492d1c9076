// Writes each case's inputs as raw BSHD bytes for bench/peers.py, so that the Python peers run on the
// very tensors (and FP8 codes and descales) that zyfa and cuDNN get, from the one generator. With
// --purpose=accuracy it also writes the sampled rows and their fp64 reference. Layout of DIR/<case>/:
//   meta.json   shape, dtype, inputs, input_std, seed, descales, softmax_scale, rows
//   q.bin k.bin v.bin   bf16 or e4m3 bytes, (batch, seqlen, heads, dim) contiguous
//   rows.bin    int64 (b, h, s) per sampled row;  ref_out.bin float64 rows x d_v;  ref_lse.bin float64
//   row_weights.bin   float64 per sampled row: the rows of its head it stands for (RowId::weight)
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "case_context.hpp"
#include "modes.hpp"
#include "results.hpp"
#include "sampled_reference.hpp"

namespace zyfa::bench {
namespace {

void write_file(const std::string &path, const void *data, size_t bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char *>(data), std::streamsize(bytes));
  if (!f) throw std::runtime_error("cannot write " + path);
}

void make_dir(const std::string &path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) throw std::runtime_error("cannot create " + path);
}

std::string case_dir_name(const Case &c) {
  std::string s = c.name();
  for (char &ch : s) if (ch == '/' || ch == ':') ch = '_';
  return s;
}

}  // namespace

int run_dump_mode(const Options &o) {
  if (o.dump_dir.empty()) throw std::invalid_argument("--mode=dump needs --dump-dir=DIR");
  make_dir(o.dump_dir);
  const Purpose purpose = o.purpose == "accuracy" ? Purpose::kAccuracy : Purpose::kTiming;
  ActivationCache activations;
  for (const Case &c : expand_cases(o)) {
    const test::ActivationSpec spec = activation_spec(c.inputs, purpose, o.input_std);
    const auto host = make_host_inputs(c, activations.get(c.shape, c.inputs, spec));
    const std::string dir = o.dump_dir + "/" + case_dir_name(c);
    make_dir(dir);
    write_file(dir + "/q.bin", host->q.data(), host->q.size_bytes());
    write_file(dir + "/k.bin", host->k.data(), host->k.size_bytes());
    write_file(dir + "/v.bin", host->v.data(), host->v.size_bytes());
    int64_t n_rows = 0;
    if (purpose == Purpose::kAccuracy) {
      const SampledReference ref =
          reference_rows(host->problem(), sample_rows(c.shape, o.rows_per_head, case_seed(c.shape, c.inputs)));
      std::vector<int64_t> ids;
      for (const RowId &r : ref.rows) ids.insert(ids.end(), {r.b, r.h, r.s});
      write_file(dir + "/rows.bin", ids.data(), ids.size() * sizeof(int64_t));
      const std::vector<double> weights = value_weights(ref.rows, 1);  // one per row: RowId::weight
      write_file(dir + "/row_weights.bin", weights.data(), weights.size() * sizeof(double));
      write_file(dir + "/ref_out.bin", ref.out.data(), ref.out.size() * sizeof(double));
      write_file(dir + "/ref_lse.bin", ref.lse.data(), ref.lse.size() * sizeof(double));
      n_rows = int64_t(ref.rows.size());
    }
    Record meta = base_record("", c, purpose == Purpose::kAccuracy ? "accuracy" : "kernel");
    meta.set("input_std", double(spec.std)).set("seed", std::to_string(case_seed(c.shape, c.inputs)))
        .set("layout", "bshd").set("q_descale", double(host->q_descale.at(0)))
        .set("k_descale", double(host->k_descale.at(0))).set("v_descale", double(host->v_descale.at(0)))
        .set("softmax_scale", 1.0 / std::sqrt(double(c.shape.d_qk))).set("rows", n_rows)
        .set("case", c.name());
    std::ofstream(dir + "/meta.json") << meta.json() << "\n";
    std::printf("%s\n", dir.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace zyfa::bench
