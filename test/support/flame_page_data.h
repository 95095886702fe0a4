// The data a --flamegraph page draws: the JSON assigned to DATA in its script, for tests that
// check what a page shows without a browser.
#pragma once

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace tprof {

// Null when the file has no DATA or it does not parse.
inline nlohmann::json FlamePageData(const std::string& html_path) {
  std::ifstream in(html_path);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string start = "const DATA = ";
  const size_t at = html.find(start);
  if (at == std::string::npos) return nlohmann::json();
  const size_t end = html.find(";\n", at);
  return nlohmann::json::parse(html.substr(at + start.size(), end - at - start.size()), nullptr,
                               false);
}

// The index of the detail column called `name` (data["columnNames"]); their count when none is.
inline size_t FlamePageColumn(const nlohmann::json& data, const std::string& name) {
  const nlohmann::json& columns = data["columnNames"];
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  return columns.size();
}

}  // namespace tprof
