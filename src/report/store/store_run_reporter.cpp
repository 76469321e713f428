#include "report/store/store_run_reporter.hpp"

#include <fmt/format.h>

namespace latlab::store {
namespace {

class StoreRunReporter final : public RunReporter {
 public:
  explicit StoreRunReporter(ResultsStore& s) : store_(s) {}
  std::string what() const override { return "the run into the store " + store_.name(); }
  std::string if_interrupted() const override {
    return "the append is rolled back: nothing of this run is in the store";
  }
  Result<std::string> write(const RunDocument& doc) override {
    const RunResult& r = doc.result();
    if (!r.top_level().latency) return make_error("--store: the run has no latency result");
    Result<int64_t> id =
        store_.add(r, StoredText{doc.json_text()}, frame_series_of(*r.top_level().latency));
    if (!id) return make_error("--store: " + id.error().message);
    return fmt::format("run stored as {} in {}\n", id.value(), store_.name());
  }

 private:
  ResultsStore& store_;
};

}  // namespace

std::unique_ptr<RunReporter> store_run_reporter(ResultsStore& s) {
  return std::make_unique<StoreRunReporter>(s);
}

}  // namespace latlab::store
