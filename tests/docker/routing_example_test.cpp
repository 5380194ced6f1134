// docker/README.md's "Routing a user to a worker": its worked example and its measured
// figures, recomputed from the scheme it describes (SHA-256 points, virtual nodes, first
// point clockwise), so that the page cannot drift from the arithmetic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::docker {
namespace {

using ::testing::HasSubstr;

// The README's pseudo-code, in Python. Prints the rings and rows of the worked example,
// then the moved fraction and the spread for 10,000 users going from 3 to 4 workers.
constexpr const char* kRing = R"(
import bisect, hashlib
def point(s): return int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], 'big')
def ring(n, v):
    return sorted((point('kaja-sandbox-%d#%d' % (w, i)), w) for w in range(n) for i in range(v))
def worker(r, user):
    i = bisect.bisect_left([p for p, _ in r], point(user))
    return r[i % len(r)][1]
print('RING ' + '  '.join('%04x:%d' % (p >> 48, w) for p, w in ring(3, 2)))
print('ADDED ' + ' '.join('%04x' % (p >> 48) for p, w in ring(4, 2) if w == 3))
for user in ['ana', 'ben', 'gus', 'chloe']:
    print('USER %s %04x %d %d' % (user, point(user) >> 48, worker(ring(3, 2), user),
                                  worker(ring(4, 2), user)))
users = ['user-%d' % i for i in range(10000)]
for v in (160, 1):
    r3, r4 = ring(3, v), ring(4, v)
    moved = [u for u in users if worker(r3, u) != worker(r4, u)]
    counts = [0] * 4
    for u in users: counts[worker(r4, u)] += 1
    print('MEASURE %d %.1f%% %s %d %d' % (v, 100.0 * len(moved) / len(users),
          all(worker(r4, u) == 3 for u in moved), min(counts), max(counts)))
)";

std::string withCommas(int n) {
  std::string digits = std::to_string(n);
  return n >= 1000 ? digits.substr(0, digits.size() - 3) + "," + digits.substr(digits.size() - 3)
                   : digits;
}

TEST(RoutingExampleTest, TheReadmeMatchesTheScheme) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed";
  auto result = testing::runCommand({"/usr/bin/python3", "-c", kRing}, {"PATH=/usr/bin:/bin"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::string readme =
      testing::readFile(std::string(kaja::test::sourceDir()) + "/docker/README.md");
  // Tables and prose wrap at different places; compare with runs of blanks made one space.
  std::string flat;
  for (char c : readme) {
    if (c == '\n') c = ' ';
    if (c != ' ' || flat.empty() || flat.back() != ' ') flat += c;
  }
  std::istringstream lines(result.out);
  int facts = 0;
  for (std::string line; std::getline(lines, line); ++facts) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    std::string rest = line.substr(kind.size() + 1);
    if (kind == "RING") {
      EXPECT_THAT(readme, HasSubstr("`" + rest + "`"));
    } else if (kind == "ADDED") {
      std::string a, b;
      std::istringstream(rest) >> a >> b;
      EXPECT_THAT(flat, HasSubstr("adds `" + a + ":3` and `" + b + ":3`"));
    } else if (kind == "USER") {
      std::string user, point;
      int before = 0;
      int after = 0;
      std::istringstream(rest) >> user >> point >> before >> after;
      std::string row = "| " + user + " | " + point + " | ";
      auto at = readme.find(row);
      ASSERT_NE(at, std::string::npos) << row;
      std::string cells = readme.substr(at, readme.find('\n', at) - at);
      auto third = cells.find('|', row.size());
      EXPECT_THAT(cells.substr(row.size(), third - row.size()),
                  HasSubstr("kaja-sandbox-" + std::to_string(before)))
          << cells;
      EXPECT_THAT(cells.substr(third), HasSubstr("kaja-sandbox-" + std::to_string(after))) << cells;
      EXPECT_EQ(cells.find("moved") != std::string::npos, before != after) << cells;
    } else if (kind == "MEASURE") {
      std::string v, moved, allToNew;
      int low = 0;
      int high = 0;
      std::istringstream(rest) >> v >> moved >> allToNew >> low >> high;
      EXPECT_THAT(flat, HasSubstr("V = " + v + ", " + moved + " moved")) << line;
      EXPECT_THAT(flat, HasSubstr(withCommas(low) + " to " + withCommas(high) + " users each"))
          << line;
      if (v == "160") {
        EXPECT_EQ(allToNew, "True");
        EXPECT_THAT(flat, HasSubstr("every one of them to the new worker"));
      }
    }
  }
  EXPECT_EQ(facts, 8);
}

}  // namespace
}  // namespace kaja::docker
