#include "run_store.hpp"

#include <fmt/format.h>

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

bool store_run(store::ResultsStore& s, const RunResult& r, const nlohmann::ordered_json& doc,
               std::FILE* info) {
  // The typed result itself, with its document as written (no text parsed).
  const std::string text = doc.dump(2) + "\n";
  Result<int64_t> id = s.add(r, store::StoredText{text}, store::frame_series_of(*r.top_level().latency));
  if (!id) {
    std::fprintf(stderr, "latlab run: --store: %s\n", id.error().message.c_str());
    return false;
  }
  fmt::print(info, "run stored as {} in {}\n", id.value(), s.name());
  return true;
}

}  // namespace latlab::cli
