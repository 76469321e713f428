// A reader of PresentMon-format CSV logs, written from PresentMon's own
// documentation of its console CSV (README-ConsoleApplication.md, 2.x),
// apart from latlab's writer: the tests read latlab's --presentmon-csv
// through it as a tool that reads PresentMon logs would.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace latlab::test {

// PresentMon's columns and what a cell of each holds.
enum class PmUnit { text, integer, hex, seconds, ms };

inline const std::map<std::string, PmUnit>& presentmon_columns() {
  static const std::map<std::string, PmUnit> columns = {
      {"Application", PmUnit::text},
      {"ProcessID", PmUnit::integer},
      {"SwapChainAddress", PmUnit::hex},
      {"PresentRuntime", PmUnit::text},
      {"SyncInterval", PmUnit::integer},
      {"PresentFlags", PmUnit::integer},
      {"AllowsTearing", PmUnit::integer},
      {"PresentMode", PmUnit::text},
      {"CPUStartTime", PmUnit::seconds},
      {"TimeInSeconds", PmUnit::seconds},  // 1.x, read by CapFrameX and OCAT
      {"MsBetweenPresents", PmUnit::ms},
      {"MsInPresentAPI", PmUnit::ms},
      {"MsCPUBusy", PmUnit::ms},
      {"MsCPUWait", PmUnit::ms},
      {"MsGPULatency", PmUnit::ms},
      {"MsGPUTime", PmUnit::ms},
      {"MsGPUBusy", PmUnit::ms},
      {"MsGPUWait", PmUnit::ms},
      {"MsUntilRenderComplete", PmUnit::ms},  // 1.x
      {"MsRenderPresentLatency", PmUnit::ms},
      {"MsUntilDisplayed", PmUnit::ms},
      {"MsBetweenDisplayChange", PmUnit::ms},
      {"DisplayLatency", PmUnit::ms},
      {"DisplayedTime", PmUnit::ms},
      {"Dropped", PmUnit::integer},  // 1.x: 1 when the frame was not displayed
  };
  return columns;
}

struct PmLog {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> errors;  // what a PresentMon reader would reject

  // A number column's value; nullopt for "NA".
  std::optional<double> number(size_t row, const std::string& column) const {
    const std::string& cell = rows.at(row).at(column);
    if (cell == "NA") return std::nullopt;
    return std::strtod(cell.c_str(), nullptr);
  }
};

// One CSV line, RFC 4180 quotes undone.
inline std::vector<std::string> pm_split(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// Whether `cell` is what a column of `unit` may hold: "NA", or a value.
inline bool pm_cell_ok(PmUnit unit, const std::string& cell) {
  if (cell.empty()) return false;  // PresentMon writes NA, never an empty cell
  if (cell == "NA") return true;
  char* end = nullptr;
  switch (unit) {
    case PmUnit::text:
      return true;
    case PmUnit::integer:
      std::strtoll(cell.c_str(), &end, 10);
      return *end == '\0';
    case PmUnit::hex:
      if (cell.rfind("0x", 0) != 0) return false;
      std::strtoull(cell.c_str() + 2, &end, 16);
      return *end == '\0';
    case PmUnit::seconds:
    case PmUnit::ms:
      std::strtod(cell.c_str(), &end);
      return *end == '\0';
  }
  return false;
}

inline PmLog read_presentmon_csv(const std::string& text) {
  PmLog log;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) {
    log.errors.push_back("no header");
    return log;
  }
  log.header = pm_split(line);
  const auto& known = presentmon_columns();
  std::set<std::string> seen;
  for (const auto& name : log.header) {
    if (known.count(name) == 0) log.errors.push_back("not a PresentMon column: " + name);
    if (!seen.insert(name).second) log.errors.push_back("twice: " + name);
  }
  while (std::getline(in, line)) {
    const auto cells = pm_split(line);
    if (cells.size() != log.header.size()) {
      log.errors.push_back("row " + std::to_string(log.rows.size()) + " has " +
                           std::to_string(cells.size()) + " cells: " + line);
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < cells.size(); ++i) {
      const auto unit = known.find(log.header[i]);
      if (unit != known.end() && !pm_cell_ok(unit->second, cells[i]))
        log.errors.push_back(log.header[i] + " = '" + cells[i] + "' in: " + line);
      row[log.header[i]] = cells[i];
    }
    log.rows.push_back(std::move(row));
  }
  return log;
}

}  // namespace latlab::test
