// The result reader: `score` (docs/result-schema.md, "score"; schema_version
// 3), strictly: a malformed one is refused naming its key ("score.ci95").
#include <fmt/format.h>

#include <cmath>

#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

double positive(const json& v, const std::string& path) {
  const double x = number_value(v, path);
  if (!(x > 0)) fail(path, "expected a finite number above 0");
  return x;
}

void read_interval(const Obj& s, LatencyScore& out) {
  const json& ci = s.at("ci95");
  if (!ci.is_array() || ci.size() != 2) fail(s.key_path("ci95"), "expected [low, high]");
  out.ci_low = positive(ci[0], s.key_path("ci95") + "[0]");
  out.ci_high = positive(ci[1], s.key_path("ci95") + "[1]");
  if (*out.ci_low > *out.ci_high) fail(s.key_path("ci95"), "low above high");
  const Obj in = s.obj("interval");
  out.resamples = in.u32("resamples");
  out.seed = in.u64("seed");
  const Obj blocks = in.obj("blocks");
  out.baseline_blocks = blocks.u32("baseline");
  out.loaded_blocks = blocks.u32("loaded");
}

void read_components(const Obj& s, LatencyScore& out) {
  const json& cs = s.at("components");
  if (!cs.is_array() || cs.size() != 4) fail(s.key_path("components"), "expected an array of 4");
  for (size_t i = 0; i < cs.size(); ++i) {
    const Obj c(cs[i], fmt::format("{}[{}]", s.key_path("components"), i));
    out.components.push_back({c.str("mode"), c.str("statistic"),
                              positive(c.at("value_us"), c.key_path("value_us")),
                              positive(c.at("weight"), c.key_path("weight"))});
  }
}

}  // namespace

LatencyScore read_score(const Obj& s) {
  LatencyScore out;
  out.formula = s.str("formula");
  if (out.formula.empty()) fail(s.key_path("formula"), "empty");
  const json& v = s.at("value");
  if (v.is_null()) {
    out.unavailable_reason = s.str("unavailable_reason");
    if (out.unavailable_reason.empty())
      fail(s.key_path("unavailable_reason"), "empty, but value is null");
    return out;
  }
  out.value = positive(v, s.key_path("value"));
  read_interval(s, out);
  read_components(s, out);
  return out;
}

void read_score_or_why_not(const Obj& doc, int schema_version, RunResult& r) {
  if (doc.has("score")) {
    r.score = read_score(doc.obj("score"));
  } else if (r.latency && schema_version < 3) {
    LatencyScore none;
    none.unavailable_reason = fmt::format(
        "the result was written with schema_version {}, before latlab computed a latency score",
        schema_version);
    r.score = std::move(none);
  }
}

}  // namespace latlab::reading
