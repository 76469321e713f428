#include "report/result_reader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace latlab {

using json = nlohmann::ordered_json;

const Distribution* ReadSeries::find(std::string_view name) const {
  for (const auto& [n, d] : series) {
    if (n == name) return &d;
  }
  return nullptr;
}

const ReadMode* ReadResult::find_mode(std::string_view name) const {
  for (const ReadMode& m : modes) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

namespace {

// Thrown inside this file only, caught by read_result_json: the first
// problem found, with the key path.
struct BadResult {
  std::string message;
};

std::string kind_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw BadResult{fmt::format("{}: {}", path, what)};
}

const json& member(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object()) fail(path, "expected an object, found " + kind_of(obj));
  auto it = obj.find(key);
  if (it == obj.end()) fail(path.empty() ? key : path + "." + key, "missing");
  return *it;
}

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

const json& object_at(const json& obj, const std::string& path, const char* key) {
  const json& v = member(obj, path, key);
  if (!v.is_object()) fail(join(path, key), "expected an object, found " + kind_of(v));
  return v;
}

std::string string_at(const json& obj, const std::string& path, const char* key,
                      bool nullable = false) {
  const json& v = member(obj, path, key);
  if (nullable && v.is_null()) return "";
  if (!v.is_string()) fail(join(path, key), "expected a string, found " + kind_of(v));
  return v.get<std::string>();
}

uint64_t uint_at(const json& obj, const std::string& path, const char* key) {
  const json& v = member(obj, path, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    fail(join(path, key), "expected a non-negative integer, found " + kind_of(v));
  }
  return v.get<uint64_t>();
}

uint32_t uint32_at(const json& obj, const std::string& path, const char* key) {
  const uint64_t v = uint_at(obj, path, key);
  if (v > UINT32_MAX) fail(join(path, key), "out of range");
  return static_cast<uint32_t>(v);
}

bool bool_at(const json& obj, const std::string& path, const char* key) {
  const json& v = member(obj, path, key);
  if (!v.is_boolean()) fail(join(path, key), "expected true or false, found " + kind_of(v));
  return v.get<bool>();
}

// A distribution: count and missing always; statistics numbers when count >
// 0, null when count is 0 (docs/result-schema.md, "Missing data").
Distribution read_distribution(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, "expected a distribution object, found " + kind_of(j));
  Distribution d;
  d.count = uint_at(j, path, "count");
  d.missing = uint_at(j, path, "missing");
  const std::pair<const char*, double*> stats[] = {
      {"mean", &d.mean}, {"min", &d.min}, {"p50", &d.p50},    {"p90", &d.p90},
      {"p95", &d.p95},   {"p99", &d.p99}, {"p99_9", &d.p999}, {"max", &d.max}};
  auto number = [&](const char* key) -> std::optional<double> {
    const json& v = member(j, path, key);
    if (d.count == 0) {
      if (!v.is_null()) fail(join(path, key), "must be null when count is 0");
      return std::nullopt;
    }
    // A single sample has no sample standard deviation: null (older files: 0).
    if (v.is_null() && std::strcmp(key, "stddev") == 0) return std::nullopt;
    if (!v.is_number()) fail(join(path, key), "expected a number, found " + kind_of(v));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(join(path, key), "not a finite number");
    return x;
  };
  for (const auto& [key, out] : stats) {
    if (const std::optional<double> x = number(key)) *out = *x;
  }
  d.stddev = number("stddev");
  return d;
}

// stages.* then the observers and diagnostics of a block or total.
ReadSeries read_series(const json& j, const std::string& path) {
  ReadSeries s;
  const json& stages = object_at(j, path, "stages");
  if (stages.empty()) fail(join(path, "stages"), "no stage");
  for (auto it = stages.begin(); it != stages.end(); ++it) {
    s.series.emplace_back(it.key(), read_distribution(it.value(), join(path, "stages." + it.key())));
  }
  for (const char* key : {"core_latency", "fence_latency", "timer_lateness", "clock_map_error"}) {
    s.series.emplace_back(key, read_distribution(member(j, path, key), join(path, key)));
  }
  // The poll observer and its diagnostics: results written before it lack them.
  for (const char* key : {"poll_latency", "gpu_end_to_poll_wake", "poll_cpu"}) {
    if (j.contains(key)) s.series.emplace_back(key, read_distribution(j.at(key), join(path, key)));
  }
  return s;
}

ReadMode read_mode(const std::string& name, const json& j, const std::string& path) {
  ReadMode m;
  m.name = name;
  m.available = bool_at(j, path, "available");
  if (!m.available) {
    m.reason = string_at(j, path, "reason", true);
    return m;
  }
  const json& w = object_at(j, path, "workload");
  const std::string wp = join(path, "workload");
  m.workload = ReadWorkload{uint32_at(w, wp, "passes"), uint32_at(w, wp, "complexity"),
                            uint32_at(w, wp, "width"), uint32_at(w, wp, "height"),
                            string_at(w, wp, "form")};
  const json& blocks = member(j, path, "blocks");
  if (!blocks.is_array()) fail(join(path, "blocks"), "expected an array, found " + kind_of(blocks));
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string bp = fmt::format("{}.blocks[{}]", path, i);
    ReadBlock b;
    b.index = uint32_at(blocks[i], bp, "index");
    b.order = uint32_at(blocks[i], bp, "order");
    b.frames_run = uint_at(blocks[i], bp, "frames_run");
    b.series = read_series(blocks[i], bp);
    m.blocks.push_back(std::move(b));
  }
  const json& total = object_at(j, path, "total");
  m.total = read_series(total, join(path, "total"));
  m.total_frames = uint_at(total, join(path, "total"), "frames");
  return m;
}

void read_header(const json& doc, ReadResult& r) {
  r.kind = string_at(doc, "", "kind");
  if (r.kind != "latency_run" && r.kind != "performance_run") {
    fail("kind", fmt::format("'{}' is not a latlab run result (latency_run or performance_run)",
                             r.kind));
  }
  r.tool_version = string_at(object_at(doc, "", "tool"), "tool", "version");
  r.created_utc = string_at(doc, "", "created_utc");
  r.command_line = string_at(doc, "", "command_line");
  r.partial = bool_at(doc, "", "partial");
  r.partial_reason = string_at(doc, "", "partial_reason", true);
  const json& m = object_at(doc, "", "machine");
  r.machine.hostname = string_at(m, "machine", "hostname");
  r.machine.os = string_at(m, "machine", "os", true);
  r.machine.kernel = string_at(m, "machine", "kernel");
  r.machine.arch = string_at(m, "machine", "arch");
  r.machine.cpu_model = string_at(m, "machine", "cpu_model", true);
  r.machine.logical_cpus = uint32_at(m, "machine", "logical_cpus");
  const json& d = object_at(doc, "", "device");
  r.device = ReadDevice{string_at(d, "device", "backend"), string_at(d, "device", "name"),
                        string_at(d, "device", "driver")};
  const json& s = object_at(doc, "", "settings");
  r.settings_mode = string_at(s, "settings", "mode");
  r.settings_backend = string_at(s, "settings", "backend");
  if (r.kind == "latency_run") {
    r.seed = uint_at(s, "settings", "seed");
    r.frames = uint_at(s, "settings", "frames");
    r.blocks = uint_at(s, "settings", "blocks");
  }
  r.settings_json = s.dump();
}

// The modes of a result document.
void read_modes(const json& doc, ReadResult& r) {
  const json& modes = object_at(doc, "", "modes");
  for (auto it = modes.begin(); it != modes.end(); ++it) {
    if (it.key() == "performance") continue;  // no latency series; kept in the text
    r.modes.push_back(read_mode(it.key(), it.value(), "modes." + it.key()));
  }
  if (r.kind == "latency_run" && r.modes.empty()) fail("modes", "no latency mode");
}

// `devices_run` of a several-device run (absent otherwise). A section's
// result is a whole result document, read as one.
void read_device_sections(const json& doc, ReadResult& r) {
  const auto found = doc.find("devices_run");
  if (found == doc.end()) return;
  const json& dr = *found;
  r.top_level_section = uint32_at(dr, "devices_run", "top_level_section");
  const json& sections = member(dr, "devices_run", "sections");
  if (!sections.is_array() || sections.empty())
    fail("devices_run.sections", "expected a non-empty array, found " + kind_of(sections));
  for (size_t i = 0; i < sections.size(); ++i) {
    const std::string sp = fmt::format("devices_run.sections[{}]", i);
    const json& s = sections[i];
    ReadDeviceSection d;
    d.section = uint32_at(s, sp, "section");
    d.backend = string_at(s, sp, "backend");
    d.selector = string_at(s, sp, "selector");
    d.name = string_at(s, sp, "name", true);
    const json& pd = member(s, sp, "physical_device");
    if (!pd.is_null()) d.physical_device = static_cast<int64_t>(uint_at(s, sp, "physical_device"));
    d.status = string_at(s, sp, "status");
    if (d.status != "ok" && d.status != "partial" && d.status != "failed")
      fail(join(sp, "status"), "'" + d.status + "' is not ok, partial or failed");
    d.failure = string_at(s, sp, "failure", true);
    const json& res = member(s, sp, "result");
    if (!res.is_null()) {
      ReadResult inner;
      try {
        read_header(res, inner);
        read_modes(res, inner);
      } catch (BadResult& e) {
        e.message = sp + ".result." + e.message;
        throw;
      }
      d.has_result = true;
      d.device = inner.device;
      d.partial = inner.partial;
      d.partial_reason = inner.partial_reason;
      d.modes = std::move(inner.modes);
    } else if (d.status != "failed") {
      fail(join(sp, "result"), "null, but the status is " + d.status);
    }
    r.device_sections.push_back(std::move(d));
  }
  if (*r.top_level_section >= r.device_sections.size())
    fail("devices_run.top_level_section", "names no section");
}

}  // namespace

Result<ReadResult> select_device_section(const ReadResult& r, uint32_t section) {
  if (r.device_sections.empty())
    return make_error(fmt::format("the result holds one device (no devices_run), not section {}", section));
  if (section >= r.device_sections.size()) {
    return make_error(fmt::format("the result has device sections 0..{}, not {}",
                                  r.device_sections.size() - 1, section));
  }
  const ReadDeviceSection& s = r.device_sections[section];
  if (!s.has_result)
    return make_error(fmt::format("device section {} ({} {}) has no result: {}", section, s.backend,
                                  s.selector, s.failure));
  ReadResult out = r;
  out.device = s.device;
  out.partial = s.partial;
  out.partial_reason = s.partial_reason;
  out.modes = s.modes;
  out.top_level_section = section;
  return out;
}

Result<ReadResult> read_result_json(std::string text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    return make_error(fmt::format("{}: not valid JSON{} (byte {} of {}): {}", source,
                                  truncated ? ", it ends early (truncated?)" : "", e.byte,
                                  text.size(), e.what()));
  } catch (const json::exception& e) {
    // Not a parse_error: e.g. out_of_range 406, a number too large for a
    // double ("1e99999"), found by fuzz_result_reader. It used to escape and
    // terminate the process.
    return make_error(fmt::format("{}: not valid JSON latlab can read: {}", source, e.what()));
  }
  if (!doc.is_object()) {
    return make_error(fmt::format("{}: not a latlab result: the document is {}, not an object",
                                  source, kind_of(doc)));
  }
  try {
    const json& v = member(doc, "", "schema_version");
    if (!v.is_number_integer()) fail("schema_version", "not an integer (found " + kind_of(v) + ")");
    ReadResult r;
    const int64_t version = v.get<int64_t>();
    if (version > kResultSchemaVersion) {
      return make_error(fmt::format(
          "{}: schema_version {} is newer than this latlab ({}) reads (schema_version {}); use a "
          "newer latlab",
          source, version, kVersion, kResultSchemaVersion));
    }
    if (version != kResultSchemaVersion) {
      return make_error(fmt::format(
          "{}: schema_version {} is not supported: this latlab ({}) reads schema_version {}", source,
          version, kVersion, kResultSchemaVersion));
    }
    r.schema_version = static_cast<int>(version);
    read_header(doc, r);
    read_modes(doc, r);
    read_device_sections(doc, r);
    r.text = std::move(text);
    return r;
  } catch (const BadResult& e) {
    return make_error(fmt::format("{}: not a valid latlab result: {}", source, e.message));
  } catch (const json::exception& e) {
    return make_error(fmt::format("{}: not a valid latlab result: {}", source, e.what()));
  }
}

Result<ReadResult> read_result_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error(fmt::format("{}: cannot read: read error", path));
  return read_result_json(ss.str(), path);
}

}  // namespace latlab
