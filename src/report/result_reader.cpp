#include "report/result_reader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab {

using reading::BadResult;
using reading::fail;
using reading::json;
using reading::Obj;

namespace {

// `score` into r.score when the document has one; a latency run of
// schema_version 1 or 2 (written before the score) gets none, with why.
void read_score_or_why_not(const Obj& doc, int schema_version, RunResult& r) {
  if (doc.has("score")) {
    r.score = fields::read_object<LatencyScore>(doc.obj("score"), fields::kScoreFields);
  } else if (r.latency && schema_version < 3) {
    LatencyScore none;
    none.unavailable_reason = fmt::format(
        "the result was written with schema_version {}, before latlab computed a latency score",
        schema_version);
    r.score = std::move(none);
  }
}

// A document of kind latency_run: every section into the typed result.
RunResult read_latency_run(const Obj& doc, int version, const ReadOptions& options) {
  RunResult r;
  const reading::PartialFlag partial = reading::read_head(doc, r.meta);
  LatencyRun& run = r.latency.emplace();
  run.device = fields::read_object<DeviceInfo>(doc.obj("device"), fields::kDeviceFields);
  r.device = run.device;
  if (doc.has("host_clock")) doc.obj("host_clock").opt("time_source", run.time_source);
  if (doc.has("clock_model")) {
    run.clock_model =
        fields::read_object<ClockModelReport>(doc.obj("clock_model"), fields::kClockModelFields);
  }
  reading::read_settings(doc.obj("settings"), r.meta, run);
  // Before the modes: their present stages name its observers.
  if (doc.has("present") && !doc.at("present").is_null()) {
    run.present.emplace();
    fields::read_fields(doc.obj("present"), fields::kPresentFields, run);
  }
  reading::read_modes(doc, r);
  reading::read_other_blocks(doc, run);
  reading::read_block_order(doc, run);
  reading::read_diagnostics(doc, r);
  reading::read_outcomes(doc, partial, r);
  if (options.per_frame && doc.has("per_frame"))
    r.per_frame =
        fields::read_object<PerFrameSeries>(doc.obj("per_frame"), fields::kPerFrameFields);
  read_score_or_why_not(doc, version, r);
  return r;
}

RunResult read_one_device(const Obj& doc, int version, const ReadOptions& options);

// `devices_run` of a several-device run: every section, each with its own
// whole result (read as one), and which of them the top-level keys describe.
RunResult read_devices_run(const Obj& doc, int version, const ReadOptions& options) {
  if (const std::string kind = doc.str("kind"); kind != "latency_run")
    fail("kind", "'" + kind + "' with devices_run: only a latency_run has device sections");
  const Obj dr = doc.obj("devices_run");
  RunResult r;
  fields::read_fields(dr, fields::kDevicesRunFields, r);
  const json& sections = dr.array("sections");
  if (sections.empty()) fail(dr.key_path("sections"), "expected a non-empty array");
  for (size_t i = 0; i < sections.size(); ++i) {
    const Obj s(sections[i], fmt::format("devices_run.sections[{}]", i));
    DeviceSectionResult& d = r.sections.emplace_back();
    fields::read_fields(s, fields::kSectionFields, d);
    if (const std::optional<Obj> res = s.obj_or_null("result")) {
      d.result.push_back(read_one_device(*res, version, options));
    } else if (d.status != "failed") {
      fail(s.key_path("result"), "null, but the status is " + d.status);
    }
    d.device_name = d.result.empty() ? d.head.name : d.result[0].device.name;
  }
  if (!r.top_section || *r.top_section >= r.sections.size() ||
      r.sections[*r.top_section].result.empty())
    fail(dr.key_path("top_level_section"), "names no section with a result");
  r.meta = r.sections[*r.top_section].result[0].meta;
  r.meta.validation.reset();
  return r;
}

RunResult read_one_device(const Obj& doc, int version, const ReadOptions& options) {
  const std::string kind = doc.str("kind");
  if (kind != "latency_run" && kind != "performance_run" && kind != "capture") {
    fail(doc.key_path("kind"),
         fmt::format("'{}' is not a latlab run result (latency_run, performance_run or capture)",
                     kind));
  }
  if (kind == "latency_run") return read_latency_run(doc, version, options);
  RunResult r;
  const reading::PartialFlag partial = reading::read_head(doc, r.meta);
  if (kind == "performance_run") {
    reading::read_performance_run(doc, r);
  } else {
    fields::read_fields(doc, fields::kCaptureFields, r.capture.emplace());
    r.capture->partial_reason = partial.reason;
  }
  return r;
}

// The document's schema_version, when this build reads it.
Result<int> schema_version(const json& doc, std::string_view source) {
  const Obj top(doc, "");
  const json& v = top.at("schema_version");
  if (!v.is_number_integer())
    fail("schema_version", "not an integer (found " + reading::kind_of(v) + ")");
  const int64_t version = v.get<int64_t>();
  if (version > kResultSchemaVersion) {
    return make_error(fmt::format(
        "{}: schema_version {} is newer than this latlab ({}) reads (schema_version {}); use a "
        "newer latlab",
        source, version, kVersion, kResultSchemaVersion));
  }
  if (version < kOldestResultSchemaVersion) {
    return make_error(fmt::format(
        "{}: schema_version {} is not supported: this latlab ({}) reads schema_version {} to {}",
        source, version, kVersion, kOldestResultSchemaVersion, kResultSchemaVersion));
  }
  return static_cast<int>(version);
}

Result<json> parse(const std::string& text, std::string_view source, const ReadOptions& options) {
  try {
    // Without per_frame, its values are parsed but not kept.
    const json::parser_callback_t skip_per_frame = [](int depth, json::parse_event_t event,
                                                      json& parsed) {
      return !(depth == 1 && event == json::parse_event_t::key && parsed == "per_frame");
    };
    return options.per_frame ? json::parse(text) : json::parse(text, skip_per_frame);
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    return make_error(fmt::format("{}: not valid JSON{} (byte {} of {}): {}", source,
                                  truncated ? ", it ends early (truncated?)" : "", e.byte,
                                  text.size(), e.what()));
  } catch (const json::exception& e) {
    // Not a parse_error: e.g. out_of_range 406, a number too large for a
    // double ("1e99999"), found by fuzz_result_reader.
    return make_error(fmt::format("{}: not valid JSON latlab can read: {}", source, e.what()));
  }
}

}  // namespace

Result<ResultDocument> read_result_json(std::string text, std::string_view source,
                                        ReadOptions options) {
  Result<json> doc = parse(text, source, options);
  if (!doc) return doc.error();
  if (!doc->is_object()) {
    return make_error(fmt::format("{}: not a latlab result: the document is {}, not an object",
                                  source, reading::kind_of(*doc)));
  }
  try {
    Result<int> version = schema_version(*doc, source);
    if (!version) return version.error();
    const Obj top(*doc, "");
    ResultDocument out;
    out.schema_version = *version;
    out.result = top.has("devices_run") ? read_devices_run(top, *version, options)
                                        : read_one_device(top, *version, options);
    out.text = std::move(text);
    return out;
  } catch (const BadResult& e) {
    return make_error(fmt::format("{}: not a valid latlab result: {}", source, e.message));
  } catch (const json::exception& e) {
    return make_error(fmt::format("{}: not a valid latlab result: {}", source, e.what()));
  }
}

Result<RunResult> select_device_section(const RunResult& r, uint32_t section) {
  if (r.sections.empty())
    return make_error(
        fmt::format("the result holds one device (no devices_run), not section {}", section));
  if (section >= r.sections.size()) {
    return make_error(fmt::format("the result has device sections 0..{}, not {}",
                                  r.sections.size() - 1, section));
  }
  const DeviceSectionResult& s = r.sections[section];
  if (s.result.empty())
    return make_error(fmt::format("device section {} ({} {}) has no result: {}", section,
                                  s.head.backend, s.head.selector, s.failure));
  return s.result[0];
}

Result<ResultDocument> read_result_file(const std::string& path, ReadOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  // Read once into the text the document keeps (a stream copy held it twice).
  in.seekg(0, std::ios::end);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  std::string text;
  if (size > 0 && in.seekg(0)) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    if (in.gcount() != size) return make_error(fmt::format("{}: cannot read: read error", path));
  } else {
    in.clear();  // not seekable (a pipe): read to its end
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return make_error(fmt::format("{}: cannot read: read error", path));
    text = ss.str();
  }
  return read_result_json(std::move(text), path, options);
}

}  // namespace latlab
