// latlab run (temporary reference form, replaced by the latency benchmark):
// times the reference workload (compute or fragment form), several passes
// per frame, through
// the Vulkan timestamp query pool, two frames in flight, and prints per-pass
// GPU milliseconds per frame and a per-pass summary.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "latlab/stats.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::cli {
namespace {

constexpr uint32_t kFramesInFlight = 2;
constexpr uint32_t kMaxSide = 16384;

struct RunOptions {
  std::string device;         // index or name substring; empty = default device
  uint32_t frames = 60;       // frames to time
  uint32_t passes = 4;        // compute passes per frame
  uint32_t complexity = 16;   // arithmetic iterations per element and pass
  std::string size = "256x256";
  std::string form = "compute";  // "compute" or "fragment"
  bool validation = false;
};

// "WxH" -> {W, H}; nullopt when malformed or out of 1..kMaxSide.
std::optional<ComputeWorkloadDesc> parse_size(const std::string& s) {
  const auto x = s.find('x');
  if (x == std::string::npos) return std::nullopt;
  const auto parse = [](const char* first, const char* last) -> std::optional<uint32_t> {
    uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc{} || ptr != last || v == 0 || v > kMaxSide) return std::nullopt;
    return v;
  };
  const auto w = parse(s.data(), s.data() + x);
  const auto h = parse(s.data() + x + 1, s.data() + s.size());
  if (!w || !h) return std::nullopt;
  return ComputeWorkloadDesc{*w, *h};
}

std::string pass_uid(bool fragment, uint32_t pass, uint64_t frame) {
  return fmt::format("{}:0:pass{}:f{}", fragment ? 'r' : 'c', pass, frame);
}

// The reference workload in either form: both record the same way.
struct AnyWorkload {
  std::unique_ptr<VulkanComputeWorkload> compute;
  std::unique_ptr<VulkanFragmentWorkload> fragment;
  void record(VkCommandBuffer cmd, std::span<const WorkloadPass> passes, uint64_t frame,
              VulkanTimestampQueryPool& pool) {
    if (compute) (void)compute->record(cmd, passes, frame, &pool);
    if (fragment) (void)fragment->record(cmd, passes, frame, &pool);
  }
};

int run(const RunOptions& opt) {
  const bool fragment = opt.form == "fragment";
  const auto size = parse_size(opt.size);
  if (!size) {
    std::fprintf(stderr, "latlab run: --size must be WxH with W and H in 1..%u (got \"%s\")\n", kMaxSide,
                 opt.size.c_str());
    return kExitUsage;
  }
  fmt::print("latlab run: reference {} workload (Vulkan)\n", opt.form);
  fmt::print("  device {}  frames {}  passes {}  complexity {}  size {}x{}  form {}  frames in flight {}  validation {}\n",
             opt.device.empty() ? "(default)" : opt.device, opt.frames, opt.passes, opt.complexity, size->width,
             size->height, opt.form, kFramesInFlight, opt.validation ? "on" : "off");

  auto devices = enumerate_vulkan_devices();
  if (devices && devices->empty()) {
    std::fprintf(stderr, "latlab run: no Vulkan device found; install Mesa's lavapipe (apt install "
                         "mesa-vulkan-drivers) for a software device\n");
    return kExitMissingCapability;
  }
  auto ctx_r = VulkanContext::create(VulkanContextDesc{.device = opt.device, .validation = opt.validation});
  if (!ctx_r) {
    std::fprintf(stderr, "latlab run: %s\n", ctx_r.error().message.c_str());
    return opt.device.empty() ? kExitRunFailed : kExitUsage;
  }
  VulkanContext& ctx = *ctx_r.value();
  const auto& caps = ctx.capabilities();
  fmt::print("  on [{}] {}: tick {} ns, {} valid bits, queue family {}\n", ctx.device_index(), ctx.device_name(),
             ctx.tick_format().period_ns(), caps.timestamp_valid_bits, ctx.queue_family());
  for (const auto& m : caps.missing) fmt::print("  missing {}: {}\n", m.name, m.reason);
  if (!caps.timestamps) {
    std::fprintf(stderr, "latlab run: %s cannot write GPU timestamps; nothing to measure\n", ctx.device_name().c_str());
    return kExitMissingCapability;
  }

  const uint64_t bytes = uint64_t{size->width} * size->height * 16;
  if (!fragment && bytes > ctx.properties().limits.maxStorageBufferRange) {
    std::fprintf(stderr, "latlab run: --size %ux%u needs a %llu byte buffer; %s allows %u bytes\n", size->width,
                 size->height, static_cast<unsigned long long>(bytes), ctx.device_name().c_str(),
                 ctx.properties().limits.maxStorageBufferRange);
    return kExitUsage;
  }
  if (fragment && (size->width > ctx.properties().limits.maxFramebufferWidth ||
                   size->height > ctx.properties().limits.maxFramebufferHeight)) {
    std::fprintf(stderr, "latlab run: --size %ux%u exceeds %s's framebuffer limit %ux%u\n", size->width,
                 size->height, ctx.device_name().c_str(), ctx.properties().limits.maxFramebufferWidth,
                 ctx.properties().limits.maxFramebufferHeight);
    return kExitUsage;
  }
  AnyWorkload work;
  if (fragment) {
    auto w = VulkanFragmentWorkload::create(ctx, FragmentWorkloadDesc{size->width, size->height});
    if (!w) {
      std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
      return kExitRunFailed;
    }
    work.fragment = std::move(w.value());
  } else {
    auto w = VulkanComputeWorkload::create(ctx, *size);
    if (!w) {
      std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
      return kExitRunFailed;
    }
    work.compute = std::move(w.value());
  }
  // Room for every pass of the frames in flight, twice over.
  const uint32_t max_queries = std::max<uint32_t>(16, 2 * 2 * kFramesInFlight * opt.passes);
  auto pool_r = VulkanTimestampQueryPool::create(
      ctx, QueryPoolDesc{.max_queries = max_queries, .kind = fragment ? QueryKind::render : QueryKind::compute});
  if (!pool_r) {
    std::fprintf(stderr, "latlab run: %s\n", pool_r.error().message.c_str());
    return kExitRunFailed;
  }
  auto ring_r = VulkanFrameRing::create(ctx, kFramesInFlight);
  if (!ring_r) {
    std::fprintf(stderr, "latlab run: %s\n", ring_r.error().message.c_str());
    return kExitRunFailed;
  }
  VulkanTimestampQueryPool& pool = *pool_r.value();
  VulkanFrameRing& ring = *ring_r.value();

  std::vector<std::vector<double>> per_pass_ms(opt.passes);
  std::vector<uint64_t> per_pass_missing(opt.passes, 0);
  std::vector<double> total_ms;
  uint64_t frames_missing = 0;
  std::vector<uint64_t> slot_frame(kFramesInFlight, 0);

  // After a frame's fence: read its results (never waits on the query),
  // retire it, print its line.
  const auto finish = [&](uint32_t slot) -> Result<void> {
    if (!ring.in_flight(slot)) return {};
    auto waited = ring.wait(slot);
    if (!waited) return waited.error();
    const uint64_t frame = slot_frame[slot];
    (void)pool.resolve_queries_async();
    pool.retire_frame(frame);
    std::string line = fmt::format("frame {:4}", frame);
    double total = 0;
    bool complete = true;
    for (uint32_t p = 0; p < opt.passes; ++p) {
      const TimestampResult r = pool.timestamp(pass_uid(fragment, p, frame));
      if (r.ok()) {
        per_pass_ms[p].push_back(r.duration_ms());
        total += r.duration_ms();
        line += fmt::format("  pass{} {:8.3f}", p, r.duration_ms());
      } else {
        ++per_pass_missing[p];
        complete = false;
        line += fmt::format("  pass{} {:>8}", p, to_string(r.status));
      }
    }
    if (complete) {
      total_ms.push_back(total);
      line += fmt::format("  total {:8.3f} ms", total);
    } else {
      ++frames_missing;
      line += "  total  missing";
    }
    fmt::print("{}\n", line);
    return {};
  };

  std::vector<WorkloadPass> passes(opt.passes);
  for (uint64_t frame = 0; frame < opt.frames; ++frame) {
    const auto slot = static_cast<uint32_t>(frame % kFramesInFlight);
    if (auto f = finish(slot); !f) {
      std::fprintf(stderr, "latlab run: %s\n", f.error().message.c_str());
      return kExitRunFailed;
    }
    auto cmd = ring.begin(slot);
    if (!cmd) {
      std::fprintf(stderr, "latlab run: %s\n", cmd.error().message.c_str());
      return kExitRunFailed;
    }
    for (uint32_t p = 0; p < opt.passes; ++p) passes[p] = WorkloadPass{pass_uid(fragment, p, frame), opt.complexity};
    work.record(*cmd, passes, frame, pool);
    slot_frame[slot] = frame;
    if (auto s = ring.submit(slot); !s) {
      std::fprintf(stderr, "latlab run: %s\n", s.error().message.c_str());
      return kExitRunFailed;
    }
  }
  for (uint64_t frame = opt.frames; frame < opt.frames + kFramesInFlight; ++frame) {
    if (auto f = finish(static_cast<uint32_t>(frame % kFramesInFlight)); !f) {
      std::fprintf(stderr, "latlab run: %s\n", f.error().message.c_str());
      return kExitRunFailed;
    }
  }

  fmt::print("\nper-pass GPU time, ms ({} frames)\n", opt.frames);
  fmt::print("  {:<6} {:>6} {:>8} {:>10} {:>10} {:>10}\n", "pass", "count", "missing", "p50", "min", "max");
  for (uint32_t p = 0; p < opt.passes; ++p) {
    const Distribution d = summarize(per_pass_ms[p], per_pass_missing[p]);
    fmt::print("  {:<6} {:>6} {:>8} {:>10.3f} {:>10.3f} {:>10.3f}\n", fmt::format("pass{}", p), d.count, d.missing,
               d.p50, d.min, d.max);
  }
  const Distribution t = summarize(total_ms, frames_missing);
  fmt::print("  {:<6} {:>6} {:>8} {:>10.3f} {:>10.3f} {:>10.3f}\n", "total", t.count, t.missing, t.p50, t.min, t.max);
  if (opt.validation) {
    fmt::print("validation errors: {}\n", ctx.validation_error_count());
    for (const auto& m : ctx.validation_messages()) fmt::print("  {}\n", m);
    if (ctx.validation_error_count() > 0) return kExitRunFailed;
  }
  return kExitOk;
}

std::function<int()> setup(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Time the reference workload per pass (Vulkan timestamps)");
  auto opt = std::make_shared<RunOptions>();
  sub->add_option("--device", opt->device, "Device index or name substring (default: first discrete GPU, else first)");
  sub->add_option("--frames", opt->frames, "Frames to time")->capture_default_str()->check(CLI::Range(1u, 1000000u));
  sub->add_option("--passes", opt->passes, "Compute passes per frame")->capture_default_str()->check(CLI::Range(1u, 64u));
  sub->add_option("--complexity", opt->complexity, "Arithmetic iterations per element and pass (1..4096)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  sub->add_option("--size", opt->size, "Work size WxH (elements / pixels)")->capture_default_str();
  sub->add_option("--form", opt->form, "Workload form: compute (dispatches) or fragment (full-screen passes)")
      ->capture_default_str()
      ->check(CLI::IsMember({"compute", "fragment"}));
  sub->add_flag("--validation", opt->validation, "Enable the Khronos validation layer (errors fail the run)");
  return [opt]() { return run(*opt); };
}

const RegisterCommand kRegister{{"run", setup, 20}};

}  // namespace
}  // namespace latlab::cli
