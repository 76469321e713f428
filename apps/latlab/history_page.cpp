#include "history_page.hpp"

#include <fmt/format.h>

#include "command.hpp"
#include "page_files.hpp"
#include "report/html/history_html.hpp"

namespace latlab::cli {

int write_history_page(store::ResultsStore& s, const std::vector<store::StoredRunSummary>& runs,
                       const std::string& path, bool json) {
  std::vector<HistoryRun> loaded;
  loaded.reserve(runs.size());
  for (const store::StoredRunSummary& summary : runs) {
    Result<RunResult> r = s.load(summary.id);
    if (!r) {
      fmt::print(stderr, "latlab history: {}\n", r.error().message);
      return kExitRunFailed;
    }
    loaded.push_back({summary.id, summary.stored_utc, summary.fingerprint, std::move(r.value())});
  }
  return write_page("latlab history", path, render_history_html(loaded, s.name()), json);
}

}  // namespace latlab::cli
