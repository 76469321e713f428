#include "run_store.hpp"

#include <fmt/format.h>

#include "report/result_reader.hpp"

namespace latlab::cli {

std::unique_ptr<store::ResultsStore> open_run_store(const std::string& location) {
  Result<std::unique_ptr<store::ResultsStore>> s =
      store::ResultsStore::open(location, store::ResultsStore::Access::append);
  if (!s) {
    std::fprintf(stderr, "latlab run: --store: %s\n", s.error().message.c_str());
    return nullptr;
  }
  return std::move(s.value());
}

bool store_run(store::ResultsStore& s, const nlohmann::ordered_json& doc, const LatencyRun& run,
               std::FILE* info) {
  // Read back through the reader, so a stored run is exactly what
  // `latlab store add` of the result file would store.
  Result<ReadResult> read = read_result_json(doc.dump(2) + "\n", "this run's result");
  Result<int64_t> id = read ? s.add(read.value(), store::frame_series_of(run))
                            : Result<int64_t>(read.error());
  if (!id) {
    std::fprintf(stderr, "latlab run: --store: %s\n", id.error().message.c_str());
    return false;
  }
  fmt::print(info, "run stored as {} in {}\n", id.value(), s.name());
  return true;
}

}  // namespace latlab::cli
