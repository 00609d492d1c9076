// The records of a run, written as JSON in the schema of bench/results/*.json (see bench/NOTES.md):
// one object per (impl, dtype, shape, inputs, mode) with the fields other tools read.
#ifndef ZYFA_BENCH_RESULTS_HPP_
#define ZYFA_BENCH_RESULTS_HPP_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shapes.hpp"

namespace zyfa::bench {

// One JSON object with fields in insertion order. Numbers that are not finite are written as null.
class Record {
 public:
  Record &set(const std::string &key, const std::string &value);
  Record &set(const std::string &key, const char *value) { return set(key, std::string(value)); }
  Record &set(const std::string &key, double value);
  Record &set(const std::string &key, int64_t value);
  Record &set(const std::string &key, int value) { return set(key, int64_t(value)); }
  Record &set(const std::string &key, bool value) { return raw(key, value ? "true" : "false"); }
  Record &set(const std::string &key, const std::vector<double> &values);
  // [[a, b], ...]: integers written exactly (Unix milliseconds do not fit %.9g).
  Record &set(const std::string &key, const std::vector<std::pair<int64_t, int64_t>> &pairs);
  Record &set_null(const std::string &key);
  std::string json() const;

 private:
  Record &raw(const std::string &key, std::string json_value);
  std::vector<std::pair<std::string, std::string>> fields_;
};

// The schema's identifying fields of one measurement: impl, dtype, d_qk, d_v, batch, seqlen, nheads,
// nheads_k, inputs, mode (and family). `run` is an implementation or a run name (shapes.hpp): "zyfa@exact"
// gives impl "zyfa" and the optional field p_rounding "exact", part of the identity (bench/results_file.py).
Record base_record(const std::string &run, const Case &c, const std::string &mode);

std::string json_string(const std::string &s);

// {"tool": ..., "argv": [...], "records": [...]} to `path`. Throws std::runtime_error on I/O failure.
void write_records(const std::string &path, const std::vector<std::string> &argv, const std::vector<Record> &records);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_RESULTS_HPP_
