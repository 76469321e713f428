#include "latlab/bench/run_result.hpp"

namespace latlab {

bool RunResult::partial() const {
  return !partial_reason().empty() || (latency && latency->partial);
}

std::string RunResult::partial_reason() const {
  if (!sections.empty()) {
    const RunResult& top = sections.at(top_section.value()).result.at(0);
    return top.partial_reason();
  }
  if (latency) return latency->partial ? latency->partial_reason : performance.interrupted;
  if (performance.report) return performance.report->partial_reason;
  return "";
}

}  // namespace latlab
