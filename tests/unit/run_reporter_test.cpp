// run's reporters (report/run_reporter.hpp): the result file holds the
// run's document as built once, says where it went, and a file that cannot
// be written is an error that leaves the previous one whole; the HTML page
// is written through the same interface.
#include "report/run_reporter.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "report/html/html_run_reporter.hpp"
#include "temp_dir.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab {
namespace {

using test::slurp;
using test::TempDir;

// A sim run's result (two blocks of 10 frames).
RunResult sim_run() {
  RunResult r;
  r.latency.emplace();
  EXPECT_FALSE(
      testing::sim_result_doc(testing::SimRunSpec{.frames = 10, .blocks = 2}, &*r.latency).empty());
  r.device = r.latency->device;
  return r;
}

TEST(RunReporter, TheResultFileIsTheDocumentAndSaysWhereItWent) {
  const RunResult r = sim_run();
  const RunDocument doc(r);
  ASSERT_FALSE(doc.json_text().empty());
  EXPECT_EQ(doc.json_text().back(), '\n');
  TempDir dir;
  const std::string path = (dir.path / "r.json").string();
  auto rep = result_file_reporter(path);
  EXPECT_EQ(rep->what(), "the result '" + path + "'");
  Result<std::string> said = rep->write(doc);
  ASSERT_TRUE(said.ok()) << said.error().message;
  EXPECT_EQ(said.value().rfind("result written to " + path, 0), 0u) << said.value();
  EXPECT_EQ(slurp(path), doc.json_text());
}

TEST(RunReporter, AFileThatCannotBeWrittenIsAnErrorAndKeepsThePreviousOne) {
  const RunResult r = sim_run();
  const RunDocument doc(r);
  TempDir dir;
  // A directory where the file should be: the rename cannot replace it.
  const std::string path = (dir.path / "taken").string();
  std::filesystem::create_directory(path);
  std::ofstream(dir.path / "taken" / "inside") << "kept";
  std::unique_ptr<RunReporter> reporters[] = {result_file_reporter(path),
                                              html_run_reporter(path, "t")};
  for (const auto& rep : reporters) {
    Result<std::string> said = rep->write(doc);
    ASSERT_FALSE(said.ok()) << rep->what();
    EXPECT_FALSE(said.error().message.empty());
  }
  EXPECT_EQ(slurp(dir.path / "taken" / "inside"), "kept");
}

}  // namespace
}  // namespace latlab
