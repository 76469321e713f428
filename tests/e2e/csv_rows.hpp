// latlab's per-frame CSV (--frames-csv) as rows of named cells, for the
// capture tests.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace latlab::e2e {

using CsvRow = std::map<std::string, std::string>;

// One row per line after the header; a cell is "" where the line has none.
inline std::vector<CsvRow> read_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> names;
  std::vector<CsvRow> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells;
    std::string cell;
    std::stringstream ss(l);
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!l.empty() && l.back() == ',') cells.emplace_back();
    return cells;
  };
  if (std::getline(in, line)) names = split(line);
  while (std::getline(in, line)) {
    const auto cells = split(line);
    CsvRow row;
    for (size_t i = 0; i < names.size() && i < cells.size(); ++i) row[names[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace latlab::e2e
