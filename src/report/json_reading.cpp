#include "report/json_reading.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <utility>

namespace latlab::reading {

void fail(const std::string& path, const std::string& what) {
  throw BadResult{fmt::format("{}: {}", path, what)};
}

std::string kind_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

const json& array_of(const json& j, const std::string& path) {
  if (!j.is_array()) fail(path, "expected an array, found " + kind_of(j));
  return j;
}

uint64_t u64_value(const json& v, const std::string& path) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    fail(path, "expected a non-negative integer, found " + kind_of(v));
  return v.get<uint64_t>();
}

uint32_t u32_value(const json& v, const std::string& path) {
  const uint64_t x = u64_value(v, path);
  if (x > UINT32_MAX) fail(path, "out of range");
  return static_cast<uint32_t>(x);
}

bool bool_value(const json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, "expected true or false, found " + kind_of(v));
  return v.get<bool>();
}

int64_t i64_value(const json& v, const std::string& path) {
  if (!v.is_number_integer()) fail(path, "expected an integer, found " + kind_of(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail(path, "out of range");
  return v.get<int64_t>();
}

double number_value(const json& v, const std::string& path) {
  if (!v.is_number()) fail(path, "expected a number, found " + kind_of(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail(path, "not a finite number");
  return x;
}

std::string str_value(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "expected a string, found " + kind_of(v));
  return v.get<std::string>();
}

Obj::Obj(const json& j, std::string path) : j_(&j), path_(std::move(path)) {
  if (!j.is_object()) fail(path_, "expected an object, found " + kind_of(j));
}

bool Obj::has(std::string_view key) const { return j_->contains(key); }

const json& Obj::at(std::string_view key) const {
  const auto it = j_->find(key);
  if (it == j_->end()) fail(key_path(key), "missing");
  return *it;
}

Obj Obj::obj(std::string_view key) const { return Obj(at(key), key_path(key)); }

std::optional<Obj> Obj::obj_or_null(std::string_view key) const {
  const json& v = at(key);
  if (v.is_null()) return std::nullopt;
  return Obj(v, key_path(key));
}

const json& Obj::array(std::string_view key) const { return array_of(at(key), key_path(key)); }

std::string Obj::str(std::string_view key) const { return str_value(at(key), key_path(key)); }

std::string Obj::str_or_empty(std::string_view key) const {
  const json& v = at(key);
  return v.is_null() ? std::string() : str_value(v, key_path(key));
}

bool Obj::boolean(std::string_view key) const { return bool_value(at(key), key_path(key)); }

uint64_t Obj::u64(std::string_view key) const { return u64_value(at(key), key_path(key)); }

uint32_t Obj::u32(std::string_view key) const { return u32_value(at(key), key_path(key)); }

int64_t Obj::i64(std::string_view key) const { return i64_value(at(key), key_path(key)); }

double Obj::number(std::string_view key) const { return number_value(at(key), key_path(key)); }

std::optional<int64_t> Obj::i64_or_null(std::string_view key) const {
  if (at(key).is_null()) return std::nullopt;
  return i64(key);
}

std::optional<uint64_t> Obj::u64_or_null(std::string_view key) const {
  if (at(key).is_null()) return std::nullopt;
  return u64(key);
}

std::optional<double> Obj::number_or_null(std::string_view key) const {
  if (at(key).is_null()) return std::nullopt;
  return number(key);
}

Distribution Obj::distribution(std::string_view key) const {
  return distribution_value(at(key), key_path(key));
}

namespace {

bool given(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

}  // namespace

void Obj::opt(std::string_view key, uint64_t& out) const {
  if (given(*j_, key)) out = u64(key);
}
void Obj::opt(std::string_view key, uint32_t& out) const {
  if (given(*j_, key)) out = u32(key);
}
void Obj::opt(std::string_view key, int64_t& out) const {
  if (given(*j_, key)) out = i64(key);
}
void Obj::opt(std::string_view key, double& out) const {
  if (given(*j_, key)) out = number(key);
}
void Obj::opt(std::string_view key, bool& out) const {
  if (given(*j_, key)) out = boolean(key);
}
void Obj::opt(std::string_view key, std::string& out) const {
  if (has(key)) out = str_or_empty(key);
}
void Obj::opt(std::string_view key, Distribution& out) const {
  if (given(*j_, key)) out = distribution(key);
}

namespace {

// One statistic of a distribution with `count` samples: null when count is
// 0; a number within what a result can hold otherwise (stddev: null too).
std::optional<double> statistic(const Obj& d, uint64_t count, const char* key) {
  const json& v = d.at(key);
  if (count == 0) {
    if (!v.is_null()) fail(d.key_path(key), "must be null when count is 0");
    return std::nullopt;
  }
  // A single sample has no sample standard deviation: null (older files: 0).
  if (v.is_null() && std::strcmp(key, "stddev") == 0) return std::nullopt;
  const double x = number_value(v, d.key_path(key));
  if (std::fabs(x) > kMaxResultUs) {
    fail(d.key_path(key), fmt::format("{:g} us is outside what a result can hold (|value| <= "
                                      "{:.4g} us, the host clock's int64 nanoseconds)",
                                      x, kMaxResultUs));
  }
  return x;
}

}  // namespace

Distribution distribution_value(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, "expected a distribution object, found " + kind_of(j));
  const Obj o(j, path);
  Distribution d;
  d.count = o.u64("count");
  d.missing = o.u64("missing");
  const std::pair<const char*, double*> stats[] = {
      {"mean", &d.mean}, {"min", &d.min}, {"p50", &d.p50},    {"p90", &d.p90},
      {"p95", &d.p95},   {"p99", &d.p99}, {"p99_9", &d.p999}, {"max", &d.max}};
  for (const auto& [key, out] : stats) {
    if (const std::optional<double> x = statistic(o, d.count, key)) *out = *x;
  }
  d.stddev = statistic(o, d.count, "stddev");
  if (d.stddev && *d.stddev < 0) fail(o.key_path("stddev"), "negative");
  // Absent: exact percentiles (every result written before histograms).
  if (o.has("percentile_resolution")) {
    d.percentile_resolution = o.number("percentile_resolution");
    if (!(*d.percentile_resolution > 0 && *d.percentile_resolution < 1))
      fail(o.key_path("percentile_resolution"), "must lie between 0 and 1");
  }
  return d;
}

}  // namespace latlab::reading
