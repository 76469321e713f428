// Reading a result document strictly: every value at its key path with the
// type it must have, or an error naming the path
// ("modes.baseline.blocks[2].stages.gpu_execution.p50: expected a number").
// A key the reader requires is missing -> error; a key older documents may
// lack is read only when present (has()), but then with its type checked.
// Private to the result reader (src/report/read_*.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "latlab/stats.hpp"

namespace latlab {

// The largest magnitude of a distribution's statistic (us) a result can
// hold: the host clock's int64 nanoseconds (about 107 days). A reader
// refuses statistics beyond it ("p50": 1e308 is no measurement).
inline constexpr double kMaxResultUs = 9.223372036854775807e15;

}  // namespace latlab

namespace latlab::reading {

using json = nlohmann::ordered_json;

// The first problem found, with its key path; thrown inside the reader only
// and caught by read_result_json.
struct BadResult {
  std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& what);

// "null", "a boolean", "a number", "a string", "an array", "an object".
std::string kind_of(const json& j);

// `path` + "." + key (or key alone at the top).
std::string join(const std::string& path, std::string_view key);

// An array at `path`, or BadResult.
const json& array_of(const json& j, const std::string& path);

// One object of the document at its key path.
class Obj {
 public:
  // BadResult when `j` is not an object.
  Obj(const json& j, std::string path);

  const std::string& path() const { return path_; }
  const json& raw() const { return *j_; }
  bool has(std::string_view key) const;
  // The value at `key` (present, any type); BadResult when absent.
  const json& at(std::string_view key) const;
  std::string key_path(std::string_view key) const { return join(path_, key); }

  Obj obj(std::string_view key) const;
  // nullopt when null (present: required).
  std::optional<Obj> obj_or_null(std::string_view key) const;
  const json& array(std::string_view key) const;

  std::string str(std::string_view key) const;
  std::string str_or_empty(std::string_view key) const;  // null -> ""
  bool boolean(std::string_view key) const;
  uint64_t u64(std::string_view key) const;
  uint32_t u32(std::string_view key) const;
  int64_t i64(std::string_view key) const;
  double number(std::string_view key) const;
  std::optional<int64_t> i64_or_null(std::string_view key) const;
  std::optional<uint64_t> u64_or_null(std::string_view key) const;
  std::optional<double> number_or_null(std::string_view key) const;
  Distribution distribution(std::string_view key) const;

  // `key` into `out` when present and not null (keys older documents lack,
  // and values written null where they do not apply); a string's null is "".
  void opt(std::string_view key, uint64_t& out) const;
  void opt(std::string_view key, uint32_t& out) const;
  void opt(std::string_view key, int64_t& out) const;
  void opt(std::string_view key, double& out) const;
  void opt(std::string_view key, bool& out) const;
  void opt(std::string_view key, std::string& out) const;
  void opt(std::string_view key, Distribution& out) const;

 private:
  const json* j_;
  std::string path_;
};

// Typed scalars of a value at `path` (an array element).
uint64_t u64_value(const json& v, const std::string& path);
uint32_t u32_value(const json& v, const std::string& path);
bool bool_value(const json& v, const std::string& path);
int64_t i64_value(const json& v, const std::string& path);
double number_value(const json& v, const std::string& path);
std::string str_value(const json& v, const std::string& path);

// A distribution: count and missing always; the statistics numbers when
// count > 0 and null when count is 0 (read as 0: empty()); stddev null below
// two samples (older files: 0). |statistic| <= kMaxResultUs.
Distribution distribution_value(const json& j, const std::string& path);

}  // namespace latlab::reading
