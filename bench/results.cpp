#include "results.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace zyfa::bench {

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
          out += buf;
        } else {
          out += char(ch);
        }
    }
  }
  return out + "\"";
}

namespace {
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}
}  // namespace

Record &Record::raw(const std::string &key, std::string json_value) {
  for (auto &f : fields_) {
    if (f.first == key) {
      f.second = std::move(json_value);
      return *this;
    }
  }
  fields_.emplace_back(key, std::move(json_value));
  return *this;
}

Record &Record::set(const std::string &key, const std::string &value) { return raw(key, json_string(value)); }
Record &Record::set(const std::string &key, double value) { return raw(key, json_number(value)); }
Record &Record::set(const std::string &key, int64_t value) { return raw(key, std::to_string(value)); }
Record &Record::set_null(const std::string &key) { return raw(key, "null"); }
Record &Record::set(const std::string &key, const std::vector<double> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + json_number(values[i]);
  return raw(key, s + "]");
}

Record &Record::set(const std::string &key, const std::vector<std::pair<int64_t, int64_t>> &pairs) {
  std::string s = "[";
  for (size_t i = 0; i < pairs.size(); ++i)
    s += (i ? ", [" : "[") + std::to_string(pairs[i].first) + ", " + std::to_string(pairs[i].second) + "]";
  return raw(key, s + "]");
}

std::string Record::json() const {
  std::string s = "{";
  for (size_t i = 0; i < fields_.size(); ++i)
    s += (i ? ", " : "") + json_string(fields_[i].first) + ": " + fields_[i].second;
  return s + "}";
}

Record base_record(const std::string &run, const Case &c, const std::string &mode) {
  const RunName name = split_run_name(run);
  Record r;
  r.set("impl", name.impl).set("dtype", dtype_name(c.dtype)).set("d_qk", c.shape.d_qk).set("d_v", c.shape.d_v)
      .set("batch", c.shape.batch).set("seqlen", c.shape.seqlen).set("nheads", c.shape.nheads)
      .set("nheads_k", c.shape.nheads_k).set("inputs", inputs_name(c.inputs)).set("mode", mode)
      .set("family", c.shape.family);
  if (!name.p_rounding.empty()) r.set("p_rounding", name.p_rounding);
  return r;
}

void write_records(const std::string &path, const std::vector<std::string> &argv, const std::vector<Record> &records) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "{\"tool\": \"zyfa_bench\", \"argv\": [";
  for (size_t i = 0; i < argv.size(); ++i) f << (i ? ", " : "") << json_string(argv[i]);
  f << "],\n \"records\": [\n";
  for (size_t i = 0; i < records.size(); ++i) f << "  " << records[i].json() << (i + 1 < records.size() ? ",\n" : "\n");
  f << " ]}\n";
  if (!f) throw std::runtime_error("error writing " + path);
}

}  // namespace zyfa::bench
