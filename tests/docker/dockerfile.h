#pragma once
// A Dockerfile read instruction by instruction, for tests that check one without a Docker
// engine.

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kaja::docker {

using Strings = std::vector<std::string>;

/// Splits `text` at whitespace.
inline Strings words(const std::string& text) {
  Strings out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

struct Instruction {
  std::string keyword;  ///< upper case: FROM, RUN, COPY, …
  std::string rest;     ///< the rest, with continuation lines joined
};

struct Stage {
  std::string from;
  std::vector<Instruction> instructions;

  [[nodiscard]] std::vector<Instruction> all(const std::string& keyword) const {
    std::vector<Instruction> out;
    for (const auto& i : instructions) {
      if (i.keyword == keyword) out.push_back(i);
    }
    return out;
  }

  /// Every RUN of this stage, one a line, its words separated by single spaces.
  [[nodiscard]] std::string runs() const {
    std::string out;
    for (const auto& run : all("RUN")) {
      for (const auto& word : words(run.rest)) out += word + " ";
      out += "\n";
    }
    return out;
  }

  /// The packages of every `apt-get install` in this stage.
  [[nodiscard]] std::set<std::string> aptPackages() const {
    std::set<std::string> packages;
    for (const auto& run : all("RUN")) {
      Strings w = words(run.rest);
      for (std::size_t i = 0; i + 1 < w.size(); ++i) {
        if (w[i] != "apt-get" || w[i + 1] != "install") continue;
        for (std::size_t j = i + 2; j < w.size() && w[j] != "&&" && w[j] != ";"; ++j) {
          if (!w[j].starts_with("-")) packages.insert(w[j]);
        }
      }
    }
    return packages;
  }
};

/// Splits a Dockerfile into stages. Comment lines go, also inside a continued instruction,
/// as Docker drops them.
inline std::vector<Stage> parseDockerfile(const std::string& text) {
  std::vector<Stage> stages;
  std::istringstream in(text);
  std::string pending;
  auto flush = [&] {
    auto first = pending.find_first_not_of(" \t");
    if (first == std::string::npos) return;
    std::string body = pending.substr(first);
    pending.clear();
    auto space = body.find_first_of(" \t");
    Instruction inst{body.substr(0, space),
                     space == std::string::npos ? "" : body.substr(space + 1)};
    std::transform(inst.keyword.begin(), inst.keyword.end(), inst.keyword.begin(), ::toupper);
    if (inst.keyword == "FROM") stages.push_back({inst.rest, {}});
    if (!stages.empty()) stages.back().instructions.push_back(inst);
  };
  for (std::string line; std::getline(in, line);) {
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (line.ends_with("\\")) {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    pending += line;
    flush();
  }
  flush();
  return stages;
}

}  // namespace kaja::docker
