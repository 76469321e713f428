// The result reader: `block_order` and `diagnostics` (docs/result-schema.md):
// the bare-loop and raw-sleep blocks, every block in run order, and
// latlab's bookkeeping, generator, poll observer, memory and validation.
#include <fmt/format.h>

#include <algorithm>

#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

std::optional<Obj> diagnostic(const Obj& doc, const char* key) {
  if (!doc.has("diagnostics")) return std::nullopt;
  const Obj diag = doc.obj("diagnostics");
  if (!diag.has(key)) return std::nullopt;
  return diag.obj_or_null(key);
}

}  // namespace

void read_other_blocks(const Obj& doc, LatencyRun& run) {
  if (const std::optional<Obj> b = diagnostic(doc, "bare_loop"))
    fields::read_fields(*b, fields::kBareLoopFields, run);
  if (const std::optional<Obj> s = diagnostic(doc, "raw_sleep"))
    fields::read_fields(*s, fields::kRawSleepFields, run);
  std::stable_sort(run.blocks.begin(), run.blocks.end(),
                   [](const BlockResult& a, const BlockResult& b) { return a.order < b.order; });
}

void read_block_order(const Obj& doc, LatencyRun& run) {
  if (!doc.has("block_order")) return;
  for (const fields::BlockOrderEntry& e : fields::read_records<fields::BlockOrderEntry>(
           doc.at("block_order"), doc.key_path("block_order"), fields::kBlockOrderFields)) {
    const auto b = std::find_if(run.blocks.begin(), run.blocks.end(),
                                [&e](const BlockResult& x) { return x.order == e.block.order; });
    if (b == run.blocks.end()) continue;  // a block whose figures the document does not hold
    b->turn_warmup_frames = e.block.turn_warmup_frames;
    b->turn_warmup_wall_ns = e.block.turn_warmup_wall_ns;
    if (b->kind != BlockKind::bare_loop && b->kind != BlockKind::raw_sleep) continue;
    for (uint32_t m = 0; m < run.modes.size(); ++m) {
      if (run.modes[m].name == e.mode) b->mode = m;
    }
  }
}

namespace {

void read_bookkeeping(const Obj& k, LatencyRun& run) {
  if (k.has("spans")) {
    const json& spans = k.array("spans");
    for (size_t i = 0; i < spans.size(); ++i) {
      const std::string p = fmt::format("{}[{}]", k.key_path("spans"), i);
      if (!array_of(spans[i], p).is_array() || spans[i].size() != 2)
        fail(p, "expected [start_ns, end_ns]");
      run.bookkeeping.push_back(
          {i64_value(spans[i][0], p + "[0]"), i64_value(spans[i][1], p + "[1]")});
    }
  }
  if (k.has("modes")) {
    const Obj modes = k.obj("modes");
    for (LatencyModeResult& m : run.modes) {
      if (modes.has(m.name))
        fields::read_fields(modes.obj(m.name), fields::kBookkeepingModeFields, m.bookkeeping);
    }
  }
  if (!k.has("thread_preparation_ns")) return;
  const json& prep = k.array("thread_preparation_ns");
  for (size_t i = 0; i < prep.size() && i < run.blocks.size(); ++i) {
    if (!prep[i].is_null())
      run.blocks[i].thread_preparation_ns =
          i64_value(prep[i], fmt::format("{}[{}]", k.key_path("thread_preparation_ns"), i));
  }
}

uint64_t read_checksum(const Obj& d) {
  const std::string hex = d.str("cpu_checksum");
  if (hex.empty() || hex.size() > 16 ||
      hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail(d.key_path("cpu_checksum"), "expected 16 hex digits");
  return std::stoull(hex, nullptr, 16);
}

}  // namespace

void read_diagnostics(const Obj& doc, RunResult& r) {
  if (!doc.has("diagnostics")) return;
  const Obj d = doc.obj("diagnostics");
  LatencyRun& run = *r.latency;
  if (d.has("bookkeeping")) read_bookkeeping(d.obj("bookkeeping"), run);
  if (d.has("generator")) fields::read_fields(d.obj("generator"), fields::kGeneratorFields, run);
  if (d.has("cpu_checksum")) run.cpu_checksum = read_checksum(d);
  if (d.has("poll")) fields::read_fields(d.obj("poll"), fields::kPollFields, run);
  if (d.has("process_memory"))
    fields::read_fields(d.obj("process_memory"), fields::kProcessMemoryFields, r.meta);
  if (const std::optional<Obj> c = diagnostic(doc, "comparison")) {
    if (c->has("core_latency_without_deliberate"))
      c->obj("core_latency_without_deliberate")
          .opt("distribution", run.core_latency_without_deliberate);
  }
  if (const std::optional<Obj> v = diagnostic(doc, "validation"))
    r.meta.validation = fields::read_object<ValidationReport>(*v, fields::kValidationFields);
}

}  // namespace latlab::reading
