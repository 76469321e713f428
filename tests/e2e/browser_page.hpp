// One page in headless chromium (cdp_pipe.hpp), for the browser tests of
// latlab's HTML pages: open a file, wait for its load event, run a probe
// script, take a screenshot, optionally load it again with JavaScript off
// and run a second probe, and report every exception, console or log error
// and request the browser saw. One browser session per call.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/cdp_pipe.hpp"

namespace latlab::e2e {

// Debian's chromium, or "" when it is not installed.
inline std::string find_chromium_binary() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

// Where a browser test keeps its screenshot `name`: in $LATLAB_ARTIFACTS_DIR
// (created; CI keeps it as an artifact) when set, else in the temp dir.
inline std::filesystem::path artifact_path(const std::string& name) {
  const char* env = std::getenv("LATLAB_ARTIFACTS_DIR");
  if (env == nullptr || *env == '\0') return std::filesystem::temp_directory_path() / name;
  std::error_code ec;
  std::filesystem::create_directories(env, ec);
  return std::filesystem::path(env) / name;
}

struct PageVisit {
  std::string failure;                // why the visit could not be made ("" = it was)
  nlohmann::json probe;               // what the probe returned (parsed JSON)
  nlohmann::json no_js_probe;         // what the second probe returned, JavaScript off
  std::vector<std::string> problems;  // exceptions, console and log errors, foreign requests
  int requests = 0;                   // every request, the page's own included
};

namespace browser_detail {

inline void collect(const CdpBrowser& browser, const std::string& url, PageVisit& v) {
  for (const auto& e : browser.events()) {
    const std::string method = e.value("method", "");
    const auto& p = e.contains("params") ? e["params"] : nlohmann::json::object();
    if (method == "Runtime.exceptionThrown") v.problems.push_back("exception: " + p.dump());
    if (method == "Runtime.consoleAPICalled" &&
        (p.value("type", "") == "error" || p.value("type", "") == "assert"))
      v.problems.push_back("console error: " + p.dump());
    if (method == "Log.entryAdded" && p["entry"].value("level", "") == "error")
      v.problems.push_back("log error: " + p.dump());
    if (method == "Network.requestWillBeSent") {
      const std::string req = p["request"].value("url", "");
      if (req != url) v.problems.push_back("request made by the page: " + req);
      ++v.requests;
    }
  }
}

}  // namespace browser_detail

// Opens `html` in a fresh headless chromium (profile and log under `work`),
// evaluates `probe` (an expression giving a JSON string) once the page has
// loaded, and saves a PNG screenshot of the first 1400 x 1800 pixels to
// `png`. With `no_js_probe`, then loads the page again with scripts off and
// evaluates that too (the page's own request is then made twice).
inline PageVisit visit_page(const std::string& chromium, const std::filesystem::path& html,
                            const std::string& probe, const std::filesystem::path& work,
                            const std::filesystem::path& png, const std::string& no_js_probe = "") {
  PageVisit v;
  auto fail = [&v](std::string why) {
    v.failure = std::move(why);
    return v;
  };
  const std::filesystem::path log = work / "chromium.log";
  CdpBrowser browser(chromium, (work / "profile").string(), log.string());
  if (!browser.ok()) return fail("chromium did not start");
  auto target = browser.call("Target.createTarget", {{"url", "about:blank"}});
  if (!target || !target->contains("result")) return fail("chromium did not answer");
  auto attach = browser.call("Target.attachToTarget",
                             {{"targetId", (*target)["result"]["targetId"]}, {"flatten", true}});
  if (!attach || !attach->contains("result")) return fail("no session");
  const std::string session = (*attach)["result"]["sessionId"];
  for (const char* domain : {"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"})
    if (!browser.call(domain, nlohmann::json::object(), session))
      return fail(std::string(domain) + " failed");
  browser.call("Emulation.setDeviceMetricsOverride",
               {{"width", 1400}, {"height", 1800}, {"deviceScaleFactor", 1}, {"mobile", false}},
               session);
  const std::string url = "file://" + html.string();
  auto nav = browser.call("Page.navigate", {{"url", url}}, session);
  if (!nav || !nav->contains("result")) return fail("navigation failed");
  // Waits for the page's `n`-th load event.
  auto loaded = [&](size_t n) {
    return browser.wait_for(
        [&](const nlohmann::json&) {
          size_t loads = 0;
          for (const auto& e : browser.events())
            if (e.value("method", "") == "Page.loadEventFired" &&
                e.value("sessionId", "") == session)
              ++loads;
          return loads >= n;
        },
        std::chrono::seconds(60));
  };
  auto evaluate = [&](const std::string& expression, nlohmann::json& out) {
    auto result = browser.call("Runtime.evaluate",
                               {{"expression", expression}, {"returnByValue", true}}, session);
    if (!result || !result->contains("result")) return false;
    out = nlohmann::json::parse((*result)["result"]["result"].value("value", std::string("null")),
                                nullptr, false);
    return true;
  };
  if (!loaded(1)) return fail("the page did not finish loading");
  if (!evaluate(probe, v.probe)) return fail("the probe did not run");
  auto shot = browser.call("Page.captureScreenshot", {{"format", "png"}}, session);
  if (shot && shot->contains("result"))
    std::ofstream(png, std::ios::binary) << base64_decode((*shot)["result"]["data"]);
  if (!no_js_probe.empty()) {
    if (!browser.call("Emulation.setScriptExecutionDisabled", {{"value", true}}, session) ||
        !browser.call("Page.reload", nlohmann::json::object(), session))
      return fail("could not load the page again without JavaScript");
    if (!loaded(2)) return fail("the page did not load again");
    if (!evaluate(no_js_probe, v.no_js_probe)) return fail("the second probe did not run");
  }
  browser_detail::collect(browser, url, v);
  return v;
}

}  // namespace latlab::e2e
