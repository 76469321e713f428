// Walks a Chrome trace's events lane by lane (one lane per pid, tid) and
// checks what every lane must hold: only B/E events besides metadata, ts
// non-decreasing in file order, each E closing the innermost open B of the
// same name, nothing left open at the end. The trace tests and the
// streaming writer's tests both read their files through it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace latlab::test {

// on_event(pid, thread_name, ph, name, ts, begin_ts) runs for every B
// (begin_ts empty) and every E that closes its B (begin_ts: that B's ts).
template <class OnEvent>
void walk_trace_lanes(const nlohmann::json& doc, OnEvent on_event) {
  using Lane = std::pair<int, int>;
  std::map<Lane, std::string> names;
  std::map<Lane, std::vector<std::pair<std::string, double>>> stacks;
  std::map<Lane, double> last_ts;
  for (const auto& ev : doc.at("traceEvents")) {
    const Lane key{ev.at("pid").get<int>(), ev.at("tid").get<int>()};
    const std::string ph = ev.at("ph");
    if (ph == "M") {
      if (ev.at("name") == "thread_name") names[key] = ev.at("args").at("name");
      continue;
    }
    EXPECT_TRUE(ph == "B" || ph == "E") << ph;
    const double ts = ev.at("ts");
    if (last_ts.count(key) != 0) {
      EXPECT_GE(ts, last_ts[key]) << ev.dump();
    }
    last_ts[key] = ts;
    const std::string name = ev.at("name");
    auto& st = stacks[key];
    if (ph == "B") {
      st.emplace_back(name, ts);
      on_event(key.first, names[key], ph, name, ts, std::optional<double>{});
      continue;
    }
    EXPECT_FALSE(st.empty()) << "E without B: " << ev.dump();
    if (st.empty()) continue;
    EXPECT_EQ(st.back().first, name);
    on_event(key.first, names[key], ph, name, ts, std::optional<double>(st.back().second));
    st.pop_back();
  }
  for (const auto& [key, st] : stacks) EXPECT_TRUE(st.empty()) << "unclosed on tid " << key.second;
}

}  // namespace latlab::test
