#include <algorithm>
#include <utility>

#include "latlab/bench/tick_mapper.hpp"

namespace latlab {
namespace {

class FunctionMapper final : public TickMapper {
 public:
  FunctionMapper(std::function<std::optional<MappedTime>(uint64_t)> fn, std::string source)
      : fn_(std::move(fn)), source_(std::move(source)) {}
  Result<void> start() override {
    if (!fn_) return make_error("no mapping function given");
    return {};
  }
  void stop() override {}
  Result<void> take_pair() override { return {}; }  // the function needs no pairs
  std::optional<MappedSpan> map_pair(uint64_t begin_ticks, uint64_t end_ticks) const override {
    const auto b = fn_(begin_ticks);
    const auto e = fn_(end_ticks);
    if (!b || !e) return std::nullopt;
    return MappedSpan{b->host_ns, e->host_ns, std::max(b->error_ns, e->error_ns)};
  }
  // The function is the same during and after the run.
  std::optional<MappedSpan> map_final(uint64_t begin_ticks, uint64_t end_ticks,
                                      int64_t /*near_host_ns*/) const override {
    return map_pair(begin_ticks, end_ticks);
  }
  ClockModelReport report() const override {
    ClockModelReport r;
    r.available = static_cast<bool>(fn_);
    r.source = source_;
    r.frame_mapping = "function";
    return r;
  }

 private:
  std::function<std::optional<MappedTime>(uint64_t)> fn_;
  std::string source_;
};

}  // namespace

std::unique_ptr<TickMapper> make_function_mapper(
    std::function<std::optional<MappedTime>(uint64_t)> fn, std::string source) {
  return std::make_unique<FunctionMapper>(std::move(fn), std::move(source));
}

}  // namespace latlab
