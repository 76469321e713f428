#include "protocol/zone_scripts.hpp"

#include <gtest/gtest.h>

#include <string>

namespace latlab::zone_lab {

namespace {

// Steps inside take_pair that any recording thread reaches.
constexpr ZoneStep kWindowSteps[] = {
    ZoneStep::announced,    ZoneStep::block_loaded, ZoneStep::block_stored, ZoneStep::abandoning,
    ZoneStep::claim_loaded, ZoneStep::claimed,      ZoneStep::installed};
// The closer's: next_frame and the collector's hold on other threads' lanes.
constexpr ZoneStep kCloserSteps[] = {ZoneStep::before_exchange, ZoneStep::exchanged,
                                     ZoneStep::holding, ZoneStep::fenced, ZoneStep::skipped};

std::string named(const std::string& what, int t, ZoneStep s) {
  return what + " " + std::to_string(t) + " at " + step_name(s);
}

}  // namespace

std::vector<Script> park_scripts(int n) {
  std::vector<Script> out;
  // Each thread at each step inside take_pair: first (its warm block still
  // of the open frame), or after the closer closed frames.
  for (int t = 0; t < n; ++t) {
    for (const ZoneStep s : kWindowSteps) {
      out.push_back(
          {named("first, thread", t, s), {arm(t, s), release(t), release(-1), unpark(t)}});
      if (t == kCloser) continue;
      out.push_back({named("after the closer, thread", t, s),
                     {arm(t, s), release(kCloser), release(t), release(-1), unpark(t)}});
    }
  }
  // The closer at each of its steps while each other thread records.
  for (const ZoneStep s : kCloserSteps) {
    for (int t = 0; t < n; ++t) {
      if (t == kCloser) continue;
      out.push_back(
          {named("closer at " + std::string(step_name(s)) + ", thread", t, ZoneStep::announced),
           {arm(kCloser, s), release(kCloser), release(t), release(-1), unpark(kCloser)}});
    }
  }
  for (int t = 0; t < n; ++t) {
    if (t == kCloser) continue;
    // A thread inside take_pair while the collector holds its lane: the
    // collector leaves the lane to a later collection.
    for (const ZoneStep s : {ZoneStep::announced, ZoneStep::block_loaded, ZoneStep::block_stored}) {
      out.push_back({named("closer passing thread", t, s),
                     {arm(t, s), release(t), arm(kCloser, ZoneStep::busy_lane), release(kCloser),
                      unpark(kCloser), unpark(t), release(-1)}});
    }
    // The collector holds a thread's lane as it comes to take a record: the
    // thread waits.
    for (const ZoneStep cs : {ZoneStep::holding, ZoneStep::fenced}) {
      out.push_back(
          {named("closer at " + std::string(step_name(cs)) + ", thread", t, ZoneStep::waiting_held),
           {arm(kCloser, cs), release(kCloser), arm(t, ZoneStep::waiting_held), release(t),
            unpark(kCloser), unpark(t), release(-1)}});
    }
  }
  return out;
}

std::set<std::pair<int, ZoneStep>> expected_parks(int n) {
  std::set<std::pair<int, ZoneStep>> out;
  for (int t = 0; t < n; ++t) {
    for (const ZoneStep s : kWindowSteps) out.insert({t, s});
    if (t != kCloser) out.insert({t, ZoneStep::waiting_held});
  }
  for (const ZoneStep s : kCloserSteps) out.insert({kCloser, s});
  out.insert({kCloser, ZoneStep::busy_lane});
  return out;
}

int run_scripts(const LabConfig& config, const std::vector<Script>& all, bool no_drops,
                std::set<std::pair<int, ZoneStep>>& parked, bool report) {
  int failures = 0;
  for (const Script& s : all) {
    Lab lab(config);
    std::string why;
    const bool ran = lab.run(s, why);
    EXPECT_TRUE(ran) << s.what << ": " << why;
    if (!ran) return failures + 1;  // a deadlock: no point in more scripts
    const std::string problems = lab.check(no_drops);
    if (!problems.empty() && ++failures <= 10 && report) {
      ADD_FAILURE() << s.what << ": " << problems;
    }
    parked.insert(lab.parked_at().begin(), lab.parked_at().end());
  }
  return failures;
}

}  // namespace latlab::zone_lab
