// `gov lsp` end to end (issue 24): the real binary as an editor starts it, spoken to over pipes
// with Content-Length framing. Diagnostics across imports, hover, completion, definition,
// references, formatting, symbols, quick fixes, and hostile input answered with JSON-RPC errors.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "tests/check/json_reader.hpp"
#include "tests/support/test_support.hpp"

using gov::test::Json;

namespace {

/// `gov lsp` as a child process with its standard input and output as pipes.
class Client {
 public:
  Client() {
    int to_child[2], from_child[2];
    REQUIRE(::pipe(to_child) == 0);
    REQUIRE(::pipe(from_child) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      ::close(to_child[1]);
      ::close(from_child[0]);
      ::execl(GOV_BINARY, GOV_BINARY, "lsp", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    ::signal(SIGPIPE, SIG_IGN);
  }
  ~Client() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void raw(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(in_, bytes.data() + done, bytes.size() - done);
      REQUIRE(n > 0);
      done += static_cast<size_t>(n);
    }
  }
  void send(const std::string& json) { raw("Content-Length: " + std::to_string(json.size()) + "\r\n\r\n" + json); }
  void request(int id, const std::string& method, const std::string& params) {
    send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params + "}");
  }
  void notify(const std::string& method, const std::string& params) {
    send(R"({"jsonrpc":"2.0","method":")" + method + R"(","params":)" + params + "}");
  }

  /// The next message from the server; fails the test rather than hang when none comes within a
  /// minute (a bound against hanging, not a speed assertion).
  Json next() {
    for (;;) {
      const size_t header_end = buffer_.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        const size_t length = std::stoul(buffer_.substr(buffer_.find(':') + 1, header_end));
        if (buffer_.size() >= header_end + 4 + length) {
          const std::string body = buffer_.substr(header_end + 4, length);
          buffer_.erase(0, header_end + 4 + length);
          INFO(body);
          return gov::test::JsonReader(body).document();
        }
      }
      pollfd p{out_, POLLIN, 0};
      REQUIRE(::poll(&p, 1, 60'000) == 1);
      char chunk[65536];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      REQUIRE(n > 0);
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  /// The response to request `id` (notifications before it are skipped).
  Json response(int id) {
    for (;;) {
      Json m = next();
      if (has(m, "id") && m["id"].kind == Json::Kind::number && m["id"].integer() == id) return m;
    }
  }
  /// The next diagnostics published for `uri`.
  Json diagnostics(const std::string& uri) {
    for (;;) {
      Json m = next();
      if (has(m, "method") && m["method"].str() == "textDocument/publishDiagnostics" && m["params"]["uri"].str() == uri) {
        return m["params"]["diagnostics"];
      }
    }
  }
  int wait_exit() {
    ::close(in_);
    in_ = -1;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static bool has(const Json& object, const std::string& key) {
    for (const std::string& k : object.keys) {
      if (k == key) return true;
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

constexpr const char* kCatalog = R"(catalog lab {
  instance ml.g5.8xlarge { gpus = 1, vcpus = 32, memory = 128 GiB, efa = 1 }
  instance ml.p5.48xlarge { gpus = 8, vcpus = 192, memory = 2 TiB, efa = 32, mig-profiles = { mig-1g.10gb: 7, mig-7g.80gb: 1 } }
}
)";

constexpr const char* kPolicy = R"(import "catalog.gov"

cluster c {
  catalog  = lab
  capacity = { ml.g5.8xlarge: 4 }
}

policy {
  priority high = 90
}

team team-a {
  quota ml.g5.8xlarge { instances = 2 }
}

rule only-a {
  when task.team != team-a
  deny "team-a only"
}
)";

/// A workspace with the catalog and the policy, the client initialised on it, both documents open.
struct Session {
  gov::test::TempDir dir{"lsp"};
  std::string catalog = dir.write("catalog.gov", kCatalog);
  std::string policy = dir.write("policy.gov", kPolicy);
  std::string catalog_uri = "file://" + catalog;
  std::string policy_uri = "file://" + policy;
  Client client;

  Session() {
    client.request(1, "initialize", R"({"processId":null,"rootUri":")" + std::string("file://") + dir.path().string() +
                                        R"(","capabilities":{}})");
    Json init = client.response(1);
    REQUIRE(Client::has(init, "result"));
    client.notify("initialized", "{}");
  }
  void open(const std::string& uri, const std::string& text, int version = 1) {
    client.notify("textDocument/didOpen", R"({"textDocument":{"uri":")" + uri + R"(","languageId":"gov","version":)" +
                                              std::to_string(version) + R"(,"text":)" + quoted(text) + "}}");
  }
  void change(const std::string& uri, const std::string& text, int version) {
    client.notify("textDocument/didChange", R"({"textDocument":{"uri":")" + uri + R"(","version":)" + std::to_string(version) +
                                                R"(},"contentChanges":[{"text":)" + quoted(text) + "}]}");
  }
  std::string at(const std::string& uri, int line, int character) const {
    return R"({"textDocument":{"uri":")" + uri + R"("},"position":{"line":)" + std::to_string(line) +
           R"(,"character":)" + std::to_string(character) + "}}";
  }
  /// The labels completion offers in the policy at (line, character), asked as request `id`.
  std::vector<std::string> completion_labels(int id, int line, int character) {
    client.request(id, "textDocument/completion", at(policy_uri, line, character));
    std::vector<std::string> out;
    const Json reply = client.response(id);  // kept: a temporary in the range would dangle
    for (const Json& item : reply["result"]["items"].items) out.push_back(item["label"].str());
    return out;
  }
};

bool any_code(const Json& diagnostics, const std::string& code) {
  for (const Json& d : diagnostics.items) {
    if (d["code"].str() == code) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("gov lsp: initialize, shutdown and exit", "[lsp]") {
  Client client;
  client.request(1, "initialize", R"({"processId":null,"rootUri":null,"capabilities":{}})");
  const Json init = client.response(1);
  const Json& capabilities = init["result"]["capabilities"];
  CHECK(capabilities["hoverProvider"].boolean);
  CHECK(capabilities["documentFormattingProvider"].boolean);
  CHECK(capabilities["textDocumentSync"]["change"].integer() == 1);
  client.request(2, "shutdown", "null");
  CHECK(client.response(2)["result"].kind == Json::Kind::null);
  client.notify("exit", "null");
  CHECK(client.wait_exit() == 0);

  Client abrupt;  // exit without shutdown: status 1, as the protocol says
  abrupt.notify("exit", "null");
  CHECK(abrupt.wait_exit() == 1);
}

TEST_CASE("gov lsp: diagnostics on open and change, across imports", "[lsp]") {
  Session s;
  std::string typo = kPolicy;
  typo.replace(typo.find("quota ml.g5.8xlarge"), std::string("quota ml.g5.8xlarge").size(), "quota ml.g5.8xlargee");
  s.open(s.catalog_uri, kCatalog);
  s.open(s.policy_uri, typo);
  Json diagnostics = s.client.diagnostics(s.policy_uri);
  REQUIRE(diagnostics.size() >= 1);
  const Json& d = diagnostics[0];
  CHECK(d["code"].str() == "E0203");
  CHECK(d["source"].str() == "gov");
  CHECK(d["severity"].integer() == 1);
  CHECK(d["range"]["start"]["line"].integer() == 12);
  CHECK(d["range"]["start"]["character"].integer() == 8);
  CHECK(d["message"].str().find("did you mean `ml.g5.8xlarge`") != std::string::npos);
  CHECK(d["codeDescription"]["href"].str().ends_with("docs/diagnostics.md#e0203"));

  // Fixed in the buffer (not on disk): no diagnostics.
  s.change(s.policy_uri, kPolicy, 2);
  CHECK(s.client.diagnostics(s.policy_uri).size() == 0);

  // The catalog's buffer loses ml.g5.8xlarge: the policy that imports it is re-checked.
  std::string smaller = kCatalog;
  smaller.erase(smaller.find("  instance ml.g5.8xlarge"), smaller.find("  instance ml.p5") - smaller.find("  instance ml.g5.8xlarge"));
  s.change(s.catalog_uri, smaller, 2);
  bool reported = false;
  for (int i = 0; i < 4 && !reported; ++i) reported = any_code(s.client.diagnostics(s.policy_uri), "E0203");
  CHECK(reported);
}

TEST_CASE("gov lsp: hover, completion, definition and references", "[lsp]") {
  Session s;
  s.open(s.catalog_uri, kCatalog);
  s.open(s.policy_uri, kPolicy);
  CHECK(s.client.diagnostics(s.policy_uri).size() == 0);
  // Hover on `ml.g5.8xlarge` in the quota (line 12, `  quota ml.g5.8xlarge`).
  s.client.request(10, "textDocument/hover", s.at(s.policy_uri, 12, 12));
  const std::string type = s.client.response(10)["result"]["contents"]["value"].str();
  CHECK(type.find("**ml.g5.8xlarge**: 1 gpus, 32 vcpus, 128 GiB memory, 1 efa") != std::string::npos);
  // On the team's name: its resolved quota.
  s.client.request(11, "textDocument/hover", s.at(s.policy_uri, 11, 7));
  const std::string team = s.client.response(11)["result"]["contents"]["value"].str();
  CHECK(team.find("**team team-a**") != std::string::npos);
  CHECK(team.find("`ml.g5.8xlarge`: gpus 2 (+1)") != std::string::npos);
  // On an instance type in the catalog: its resources and MIG profiles.
  s.client.request(13, "textDocument/hover", s.at(s.catalog_uri, 2, 14));
  const std::string p5 = s.client.response(13)["result"]["contents"]["value"].str();
  CHECK(p5.find("**ml.p5.48xlarge**: 8 gpus, 192 vcpus, 2 TiB memory, 32 efa") != std::string::npos);
  CHECK(p5.find("MIG profiles: mig-1g.10gb (7 per GPU), mig-7g.80gb (1 per GPU)") != std::string::npos);
  // On a class: its weight and rank.
  s.client.request(12, "textDocument/hover", s.at(s.policy_uri, 8, 12));
  CHECK(s.client.response(12)["result"]["contents"]["value"].str() == "**priority class high**: weight 90, rank 1 of 1");

  // Completion: a choice property's values, instance types after `quota`, task fields.
  std::string editing = kPolicy;
  editing.replace(editing.find("  quota ml.g5.8xlarge { instances = 2 }\n"), 0, "  sharing = \n  quota \n");
  s.change(s.policy_uri, editing, 2);
  auto labels = [&](int id, int line, int character) { return s.completion_labels(id, line, character); };
  const std::vector<std::string> sharing = labels(20, 12, 12);
  CHECK(sharing == std::vector<std::string>{"lend-and-borrow", "lend", "dont-lend"});
  const std::vector<std::string> types = labels(21, 13, 8);
  CHECK(std::find(types.begin(), types.end(), "ml.p5.48xlarge") != types.end());
  const std::vector<std::string> fields = labels(22, 18, 12);  // `  when task.` (line 18 after the edit)
  CHECK(std::find(fields.begin(), fields.end(), "task.gpus") != fields.end());
  s.change(s.policy_uri, kPolicy, 3);

  // Definition of `team-a` in the rule (line 16): the team's declaration, line 11.
  s.client.request(30, "textDocument/definition", s.at(s.policy_uri, 16, 21));
  const Json location = s.client.response(30)["result"];
  CHECK(location["uri"].str() == s.policy_uri);
  CHECK(location["range"]["start"]["line"].integer() == 11);
  // Definition of an instance type: in the catalog file.
  s.client.request(31, "textDocument/definition", s.at(s.policy_uri, 12, 12));
  CHECK(s.client.response(31)["result"]["uri"].str() == s.catalog_uri);
  // References of team-a: its declaration and its use in the rule.
  s.client.request(32, "textDocument/references", s.at(s.policy_uri, 11, 7));
  CHECK(s.client.response(32)["result"].size() == 2);
}

TEST_CASE("gov lsp: formatting, symbols and quick fixes", "[lsp]") {
  Session s;
  s.open(s.catalog_uri, kCatalog);
  const std::string messy = "import \"catalog.gov\"\nteam team-a {\n  sharing=LendAndBorrow\n  quota ml.g5.8xlarge {instances=2}\n}\n";
  s.open(s.policy_uri, messy);
  s.client.diagnostics(s.policy_uri);
  // A syntax error: no formatting edit (as `gov fmt` writes nothing).
  s.client.request(40, "textDocument/formatting", R"({"textDocument":{"uri":")" + s.policy_uri + R"("},"options":{"tabSize":2,"insertSpaces":true}})");
  CHECK(s.client.response(40)["result"].size() == 0);
  // The quick fix for the AWS spelling.
  s.client.request(41, "textDocument/codeAction", R"({"textDocument":{"uri":")" + s.policy_uri +
                                                      R"("},"range":{"start":{"line":2,"character":10},"end":{"line":2,"character":10}},"context":{"diagnostics":[]}})");
  const Json actions = s.client.response(41)["result"];
  REQUIRE(actions.size() == 1);
  CHECK(actions[0]["title"].str() == "replace with `lend-and-borrow`");
  CHECK(actions[0]["edit"]["changes"][s.policy_uri][0]["newText"].str() == "lend-and-borrow");

  const std::string fixed = "import \"catalog.gov\"\nteam team-a {\n  sharing=lend-and-borrow\n  quota ml.g5.8xlarge {instances=2}\n}\n";
  s.change(s.policy_uri, fixed, 2);
  s.client.request(42, "textDocument/formatting", R"({"textDocument":{"uri":")" + s.policy_uri + R"("},"options":{"tabSize":2,"insertSpaces":true}})");
  const Json edits = s.client.response(42)["result"];
  REQUIRE(edits.size() == 1);
  CHECK(edits[0]["newText"].str() ==
        "import \"catalog.gov\"\n\nteam team-a {\n  sharing = lend-and-borrow\n  quota ml.g5.8xlarge { instances = 2 }\n}\n");
  s.client.request(43, "textDocument/documentSymbol", R"({"textDocument":{"uri":")" + s.policy_uri + R"("}})");
  const Json symbols = s.client.response(43)["result"];
  REQUIRE(symbols.size() == 1);
  CHECK(symbols[0]["name"].str() == "team team-a");
  CHECK(symbols[0]["children"][0]["name"].str() == "quota ml.g5.8xlarge");
}

// References honour includeDeclaration, reach the open files that import the declaring one, and
// an import's path (no name) has none: before, the path's word matched the `catalog` keyword.
TEST_CASE("gov lsp: references across importers, without the declaration when asked", "[lsp]") {
  Session s;
  const std::string teams = s.dir.write("teams.gov", "team team-b {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n");
  const std::string teams_uri = "file://" + teams;
  s.open(s.catalog_uri, kCatalog);
  std::string policy = kPolicy;
  policy.replace(0, 0, "import \"teams.gov\"\n");
  policy += "rule only-b {\n  when task.team == team-b\n  warn \"b\"\n}\n";
  s.open(s.policy_uri, policy);
  s.open(teams_uri, gov::test::read_text(teams));
  s.client.diagnostics(teams_uri);
  const auto places = [&](int id, const std::string& request) {
    s.client.request(id, "textDocument/references", request);
    std::vector<std::pair<std::string, long>> out;
    const Json reply = s.client.response(id);
    REQUIRE(reply["result"].kind == Json::Kind::array);
    for (const Json& l : reply["result"].items) out.push_back({l["uri"].str(), l["range"]["start"]["line"].integer()});
    std::sort(out.begin(), out.end());
    return out;
  };
  // From the team's own file: its declaration and the importer's use (line 21 of the policy).
  const auto from_teams = places(80, s.at(teams_uri, 0, 7));
  CHECK(from_teams == std::vector<std::pair<std::string, long>>{{s.policy_uri, 21}, {teams_uri, 0}});
  // Without the declaration.
  std::string without = s.at(teams_uri, 0, 7);
  without.insert(without.size() - 1, R"(,"context":{"includeDeclaration":false})");
  CHECK(places(81, without) == std::vector<std::pair<std::string, long>>{{s.policy_uri, 21}});
  // On the import's path: nothing (line 1, `import "catalog.gov"`, on `catalog`).
  CHECK(places(82, s.at(s.policy_uri, 1, 9)).empty());
}

// Completion read the line with regular expressions that offered memory units after any word
// ending in a digit (`expect a1 `), nothing after a second dot (`team.borrowed.`), and task
// fields inside comments.
TEST_CASE("gov lsp: completion of outcomes, nested fields and amounts, none in comments", "[lsp]") {
  Session s;
  s.open(s.catalog_uri, kCatalog);
  const std::string text = std::string(kPolicy) +
                           "test \"t\" {\n  submit a1 { team = team-a, memory = 64 }\n  expect a1 \n  at 10 \n}\n"
                           "rule r2 {\n  when team.borrowed.\n  warn \"x\"  # see task.\n}\n";
  s.open(s.policy_uri, text);
  auto labels = [&](int id, int line, int character) { return s.completion_labels(id, line, character); };
  const auto has = [](const std::vector<std::string>& items, const std::string& label) {
    return std::find(items.begin(), items.end(), label) != items.end();
  };
  // Line 19 is the test's first line (kPolicy has 19).
  CHECK(has(labels(70, 20, 41), "GiB"));  // `memory = 64 |`
  const std::vector<std::string> outcomes = labels(71, 21, 12);  // `expect a1 |`
  CHECK(has(outcomes, "admitted"));
  CHECK_FALSE(has(outcomes, "GiB"));
  CHECK(labels(72, 22, 8).empty());  // `at 10 |`
  CHECK(has(labels(73, 25, 21), "team.borrowed.gpus"));  // `when team.borrowed.|`
  CHECK(labels(74, 26, 23).empty());  // `# see task.|`
}

// docs/editors.md promises quick fixes for the AWS-name hints: E0034's for a property written
// the API's way (`BorrowLimit`) had none.
TEST_CASE("gov lsp: a quick fix for a property written the AWS way", "[lsp]") {
  Session s;
  s.open(s.catalog_uri, kCatalog);
  s.open(s.policy_uri, "import \"catalog.gov\"\nteam team-a {\n  quota ml.g5.8xlarge { instances = 2 }\n  BorrowLimit = 50%\n}\n");
  s.client.diagnostics(s.policy_uri);
  s.client.request(44, "textDocument/codeAction", R"({"textDocument":{"uri":")" + s.policy_uri +
                                                      R"("},"range":{"start":{"line":3,"character":4},"end":{"line":3,"character":4}},"context":{"diagnostics":[]}})");
  const Json actions = s.client.response(44)["result"];
  REQUIRE(actions.size() == 1);
  CHECK(actions[0]["title"].str() == "replace with `borrow-limit`");
  const Json& edit = actions[0]["edit"]["changes"][s.policy_uri][0];
  CHECK(edit["range"]["start"]["character"].integer() == 2);
  CHECK(edit["range"]["end"]["character"].integer() == 13);
}

// Cohorts are declarations like teams: hover, definition from `cohort = NAME` and `parent = NAME`,
// symbols, and completion of their names.
TEST_CASE("gov lsp: cohorts of a tree have hover, definition, symbols and completion", "[lsp]") {
  Session s;
  std::string tree = kPolicy;
  tree.replace(tree.find("team team-a {\n"), std::string("team team-a {\n").size(),
               "cohort org {}\n\ncohort eng {\n  parent = org\n}\n\nteam team-a {\n  cohort = eng\n");
  s.open(s.catalog_uri, kCatalog);
  s.open(s.policy_uri, tree);
  REQUIRE(s.client.diagnostics(s.policy_uri).size() == 0);
  // Lines: 11 `cohort org {}`, 13 `cohort eng {`, 14 `  parent = org`, 17 `team team-a {`, 18 `  cohort = eng`.
  s.client.request(50, "textDocument/hover", s.at(s.policy_uri, 13, 8));
  const std::string hover = s.client.response(50)["result"]["contents"]["value"].str();
  CHECK(hover.find("**cohort eng**: parent org, fair-share weight 1, teams team-a") != std::string::npos);
  s.client.request(51, "textDocument/definition", s.at(s.policy_uri, 18, 12));
  const Json eng = s.client.response(51)["result"];
  CHECK(eng["range"]["start"]["line"].integer() == 13);
  s.client.request(52, "textDocument/definition", s.at(s.policy_uri, 14, 12));
  CHECK(s.client.response(52)["result"]["range"]["start"]["line"].integer() == 11);
  s.client.request(53, "textDocument/documentSymbol", R"({"textDocument":{"uri":")" + s.policy_uri + R"("}})");
  const Json symbols = s.client.response(53)["result"];
  std::vector<std::string> names;
  for (const Json& symbol : symbols.items) names.push_back(symbol["name"].str());
  CHECK(std::find(names.begin(), names.end(), "cohort org") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cohort eng") != names.end());
  std::string editing = tree;
  editing.replace(editing.find("  cohort = eng\n"), std::string("  cohort = eng\n").size(), "  cohort = \n");
  s.change(s.policy_uri, editing, 2);
  s.client.request(54, "textDocument/completion", s.at(s.policy_uri, 18, 11));
  const Json reply = s.client.response(54);
  std::vector<std::string> labels;
  for (const Json& item : reply["result"]["items"].items) labels.push_back(item["label"].str());
  CHECK(std::find(labels.begin(), labels.end(), "eng") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "org") != labels.end());

  // Inside a cohort block, its properties and `quota`; at the top level, `cohort` among the
  // declarations (both were missing).
  std::string inside = tree;
  inside.replace(inside.find("  parent = org\n"), std::string("  parent = org\n").size(), "  parent = org\n  \n");
  inside.replace(inside.find("cohort org {}\n"), std::string("cohort org {}\n").size(), "cohort org {}\n\n");
  s.change(s.policy_uri, inside, 3);
  const auto labels_at = [&](int id, int line, int character) { return s.completion_labels(id, line, character); };
  const std::vector<std::string> in_cohort = labels_at(55, 16, 2);  // the empty line after `parent = org`
  for (const char* property : {"parent", "fair-share-weight", "quota"}) {
    INFO(property);
    CHECK(std::find(in_cohort.begin(), in_cohort.end(), property) != in_cohort.end());
  }
  const std::vector<std::string> top = labels_at(56, 12, 0);  // the empty line after `cohort org {}`
  CHECK(std::find(top.begin(), top.end(), "cohort") != top.end());
}

TEST_CASE("gov lsp: hostile input is a JSON-RPC error, never a crash or a hang", "[lsp][security]") {
  Session s;
  // A header without Content-Length, then a valid request: both answered.
  s.client.raw("Content-Type: application/vscode-jsonrpc\r\n\r\n");
  Json bad = s.client.next();
  CHECK(bad["error"]["code"].integer() == -32700);
  CHECK(bad["id"].kind == Json::Kind::null);
  // A header line over 4 KiB followed by the blank line: answered (a hostile-input helper saw the
  // server end silently when no Content-Length line followed the long one).
  s.client.raw("X-" + std::string(5000, 'a') + ": y\r\n\r\n");
  Json long_header = s.client.next();
  CHECK(long_header["error"]["code"].integer() == -32700);
  CHECK(long_header["error"]["message"].str() == "a header line is longer than 4096 bytes");
  // Malformed JSON.
  s.client.send("{\"jsonrpc\":\"2.0\",\"id\":");
  CHECK(s.client.next()["error"]["code"].integer() == -32700);
  // An unknown method.
  s.client.request(50, "textDocument/teleport", "{}");
  CHECK(s.client.response(50)["error"]["code"].integer() == -32601);
  // A file outside the workspace.
  s.client.request(51, "textDocument/hover", s.at("file:///etc/passwd", 0, 0));
  const Json outside = s.client.response(51);
  CHECK(outside["error"]["code"].integer() == -32602);
  CHECK(outside["error"]["message"].str().find("outside the workspace") != std::string::npos);
  // A message over 64 MiB: skipped, reported, and the server goes on.
  const size_t huge = (size_t{64} << 20) + 1;
  s.client.raw("Content-Length: " + std::to_string(huge) + "\r\n\r\n");
  const std::string chunk(1 << 20, ' ');
  for (size_t sent = 0; sent < huge; sent += chunk.size()) s.client.raw(chunk.substr(0, std::min(chunk.size(), huge - sent)));
  Json too_large = s.client.next();
  CHECK(too_large["error"]["message"].str().find("larger than the 64 MiB") != std::string::npos);
  s.client.request(52, "shutdown", "null");
  CHECK(s.client.response(52)["result"].kind == Json::Kind::null);
  s.client.notify("exit", "null");
  CHECK(s.client.wait_exit() == 0);
}

TEST_CASE("gov lsp: two errors across an import, one fixed, definition in another file", "[lsp]") {
  Session s;
  const std::string teams = s.dir.write("teams.gov", "team team-b {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n");
  const std::string teams_uri = "file://" + teams;
  const std::string broken = R"(import "catalog.gov"
import "teams.gov"

cluster c {
  catalog  = lab
  capacity = { ml.g5.8xlarge: 4 }
}

policy {
  priority high = 90
}

team team-a {
  quota ml.g5.8xlargee { instances = 2 }
  sharing = lend-and-borrow
}

rule not-b {
  when task.team == team-bb
  deny "no"
}
)";
  s.open(s.policy_uri, broken);
  Json diagnostics = s.client.diagnostics(s.policy_uri);
  REQUIRE(diagnostics.size() == 2);
  CHECK(diagnostics[0]["code"].str() == "E0203");
  CHECK(diagnostics[0]["range"]["start"]["line"].integer() == 13);
  CHECK(diagnostics[0]["range"]["start"]["character"].integer() == 8);
  CHECK(diagnostics[0]["range"]["end"]["character"].integer() == 22);
  CHECK(diagnostics[1]["code"].str() == "E0204");
  CHECK(diagnostics[1]["range"]["start"]["line"].integer() == 18);
  CHECK(diagnostics[1]["range"]["start"]["character"].integer() == 20);
  CHECK(diagnostics[1]["range"]["end"]["character"].integer() == 27);
  CHECK(diagnostics[1]["message"].str().find("did you mean `team-b`") != std::string::npos);

  std::string one_fixed = broken;
  one_fixed.replace(one_fixed.find("team-bb"), 7, "team-b");
  s.change(s.policy_uri, one_fixed, 2);
  diagnostics = s.client.diagnostics(s.policy_uri);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0]["code"].str() == "E0203");
  one_fixed.replace(one_fixed.find("ml.g5.8xlargee"), 14, "ml.g5.8xlarge");
  s.change(s.policy_uri, one_fixed, 3);
  CHECK(s.client.diagnostics(s.policy_uri).size() == 0);

  // Go to team-b's definition, in teams.gov.
  s.client.request(60, "textDocument/definition", s.at(s.policy_uri, 18, 22));
  const Json location = s.client.response(60)["result"];
  CHECK(location["uri"].str() == teams_uri);
  CHECK(location["range"]["start"]["line"].integer() == 0);
  CHECK(location["range"]["start"]["character"].integer() == 5);

  // Completion inside a quota block: the quota's properties.
  std::string in_quota = one_fixed;
  in_quota.replace(in_quota.find("{ instances = 2 }"), 17, "{ in }");
  s.change(s.policy_uri, in_quota, 4);
  s.client.request(61, "textDocument/completion", s.at(s.policy_uri, 13, 26));
  const Json reply = s.client.response(61);
  std::vector<std::string> labels;
  for (const Json& item : reply["result"]["items"].items) labels.push_back(item["label"].str());
  CHECK(std::find(labels.begin(), labels.end(), "instances") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "lending-limit") != labels.end());
}

// A problem in an imported file is shown on the import line of the open document, with its place
// as related information: before, a buffer whose import `gov check` rejects showed no problem.
TEST_CASE("gov lsp: an error in an imported file shows on the import line", "[lsp]") {
  Session s;
  const std::string teams = s.dir.write("teams.gov", "team team-b {\n  quota ml.g5.8xlargee { instances = 1 }\n}\n");
  const std::string policy = std::string("import \"catalog.gov\"\nimport \"teams.gov\"\n") +
                             "cluster c {\n  catalog  = lab\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
                             "policy {\n  priority high = 90\n}\n";
  s.open(s.policy_uri, policy);
  const Json diagnostics = s.client.diagnostics(s.policy_uri);
  REQUIRE(diagnostics.size() == 1);
  const Json& d = diagnostics[0];
  CHECK(d["code"].str() == "E0203");
  CHECK(d["severity"].integer() == 1);
  CHECK(d["range"]["start"]["line"].integer() == 1);  // `import "teams.gov"`
  CHECK(d["range"]["start"]["character"].integer() == 0);
  INFO(d["message"].str());
  CHECK(d["message"].str().starts_with("in `teams.gov` (line 2): unknown instance type `ml.g5.8xlargee`"));
  REQUIRE(d["relatedInformation"].size() >= 1);
  const Json& here = d["relatedInformation"][0]["location"];
  CHECK(here["uri"].str() == "file://" + teams);
  CHECK(here["range"]["start"]["line"].integer() == 1);
  CHECK(here["range"]["start"]["character"].integer() == 8);

  // Its quick fix edits the imported file where the problem is. It used to replace this
  // document's import line with the suggestion, deleting the import.
  s.client.request(50, "textDocument/codeAction", R"({"textDocument":{"uri":")" + s.policy_uri +
                                                      R"("},"range":{"start":{"line":1,"character":3},"end":{"line":1,"character":3}},"context":{"diagnostics":[]}})");
  const Json actions = s.client.response(50)["result"];
  REQUIRE(actions.size() == 1);
  CHECK(actions[0]["title"].str() == "replace with `ml.g5.8xlarge` in `teams.gov`");
  const Json& changes = actions[0]["edit"]["changes"];
  CHECK_FALSE(changes.has(s.policy_uri));
  REQUIRE(changes.has("file://" + teams));
  const Json& edit = changes["file://" + teams][0];
  CHECK(edit["range"]["start"]["line"].integer() == 1);
  CHECK(edit["range"]["start"]["character"].integer() == 8);
  CHECK(edit["range"]["end"]["character"].integer() == 22);
  CHECK(edit["newText"].str() == "ml.g5.8xlarge");
}

// A policy author's findings (session 43), each a protocol case the server got wrong.
TEST_CASE("gov lsp: no stale quick fix, watched files re-check, // comments, placeless notes, one initialize", "[lsp]") {
  Session s;
  s.open(s.catalog_uri, kCatalog);
  const std::string typo = std::string(kPolicy).replace(std::string(kPolicy).find("when task.team"), 14, "when task.tean");
  s.open(s.policy_uri, typo);
  REQUIRE(any_code(s.client.diagnostics(s.policy_uri), "E0209"));
  // Two spaces typed before the field, and a quick fix asked at once: the published diagnostics
  // are of the older text, whose spans would replace the wrong bytes (`task.teanan`). No fix
  // until they are of this text.
  std::string moved = typo;
  moved.replace(moved.find("when task.tean"), 14, "when   task.tean");
  s.change(s.policy_uri, moved, 2);
  const int line = 16;  // the rule's `when`
  s.client.request(10, "textDocument/codeAction",
                   R"({"textDocument":{"uri":")" + s.policy_uri + R"("},"range":{"start":{"line":)" + std::to_string(line) +
                       R"(,"character":9},"end":{"line":)" + std::to_string(line) + R"(,"character":9}},"context":{"diagnostics":[]}})");
  CHECK(s.client.response(10)["result"].size() == 0);
  // Once the diagnostics are of this text, the fix is offered where the field now is.
  REQUIRE(any_code(s.client.diagnostics(s.policy_uri), "E0209"));
  s.client.request(11, "textDocument/codeAction",
                   R"({"textDocument":{"uri":")" + s.policy_uri + R"("},"range":{"start":{"line":)" + std::to_string(line) +
                       R"(,"character":9},"end":{"line":)" + std::to_string(line) + R"(,"character":9}},"context":{"diagnostics":[]}})");
  const Json fixes = s.client.response(11)["result"];
  REQUIRE(fixes.size() == 1);
  CHECK(fixes[0]["edit"]["changes"][s.policy_uri][0]["range"]["start"]["character"].integer() == 9);

  // A file changed on disk, not open: the editor's file watcher says so, and importers re-check.
  s.client.notify("textDocument/didClose", R"({"textDocument":{"uri":")" + s.catalog_uri + R"("}})");
  s.change(s.policy_uri, kPolicy, 3);
  CHECK(s.client.diagnostics(s.policy_uri).size() == 0);
  std::string smaller = kCatalog;
  smaller.erase(smaller.find("  instance ml.g5.8xlarge"), smaller.find("  instance ml.p5") - smaller.find("  instance ml.g5.8xlarge"));
  gov::test::write_text(s.catalog, smaller);
  s.client.notify("workspace/didChangeWatchedFiles", R"({"changes":[{"uri":")" + s.catalog_uri + R"(","type":2}]})");
  CHECK(any_code(s.client.diagnostics(s.policy_uri), "E0203"));
  gov::test::write_text(s.catalog, kCatalog);
  s.client.notify("workspace/didChangeWatchedFiles", R"({"changes":[{"uri":")" + s.catalog_uri + R"(","type":2}]})");
  CHECK(s.client.diagnostics(s.policy_uri).size() == 0);

  // `//` is a comment: no reference in it, and no block opened by a brace in it.
  std::string commented = kPolicy;
  commented.replace(commented.find("team team-a {"), 13, "// team-a {owns} it\nteam team-a {");
  s.change(s.policy_uri, commented, 4);
  CHECK(s.client.diagnostics(s.policy_uri).size() == 0);
  s.client.request(12, "textDocument/references", R"({"textDocument":{"uri":")" + s.policy_uri +
                                                      R"("},"position":{"line":12,"character":6},"context":{"includeDeclaration":true}})");
  const Json references = s.client.response(12);  // kept: a temporary in the range would dangle
  CHECK(references["result"].size() >= 2);      // the declaration and the rule's use
  for (const Json& location : references["result"].items) CHECK(location["range"]["start"]["line"].integer() != 11);

  // A note without a place is in the message, as `gov check` prints it.
  std::string bidi = kPolicy;
  bidi.replace(bidi.find("team team-a {"), 13, "team team-a { # \xE2\x80\xAE");
  s.change(s.policy_uri, bidi, 5);
  const Json shown = s.client.diagnostics(s.policy_uri);
  REQUIRE(shown.size() >= 1);
  CHECK(shown[0]["message"].str().find("\nnote: these characters make text display in another order") != std::string::npos);

  // A second initialize is refused; the workspace stays.
  s.client.request(13, "initialize", R"({"processId":null,"rootUri":"file:///","capabilities":{}})");
  CHECK(s.client.response(13)["error"]["code"].integer() == -32600);
}

// A policy author's findings (session 43): a team and a priority class of one name (as in the
// shipped mig-partitions.gov) were one name to hover, definition and references; and an
// instance type showed the first catalog's definition, not the cluster's.
TEST_CASE("gov lsp: a team and a class of one name, and the cluster's catalog's instance type", "[lsp]") {
  Session s;
  s.open(s.catalog_uri, kCatalog);
  const std::string text = std::string(kPolicy) +
                           "team high {\n  quota ml.g5.8xlarge { instances = 1 }\n}\n"                  // lines 19-21
                           "test \"t\" {\n  submit a { team = high, priority = high, gpus = 1 }\n  expect a admitted\n}\n"  // 22-25
                           "catalog other {\n  instance ml.g5.8xlarge { gpus = 1, vcpus = 30, memory = 120 GiB }\n}\n";
  s.open(s.policy_uri, text);
  const Json diagnostics = s.client.diagnostics(s.policy_uri);
  INFO((diagnostics.size() > 0 ? diagnostics[0]["message"].str() : std::string()));
  REQUIRE(diagnostics.size() == 0);
  const int submit_line = 23;
  const int class_at = static_cast<int>(std::string("  submit a { team = high, priority = ").size());
  s.client.request(20, "textDocument/hover", s.at(s.policy_uri, submit_line, class_at + 1));
  CHECK(s.client.response(20)["result"]["contents"]["value"].str().rfind("**priority class high**", 0) == 0);
  s.client.request(21, "textDocument/hover", s.at(s.policy_uri, submit_line, 20));  // team = high
  CHECK(s.client.response(21)["result"]["contents"]["value"].str().rfind("**team high**", 0) == 0);
  s.client.request(22, "textDocument/definition", s.at(s.policy_uri, submit_line, class_at + 1));
  CHECK(s.client.response(22)["result"]["range"]["start"]["line"].integer() == 8);  // `priority high = 90`
  s.client.request(23, "textDocument/references",
                   R"({"textDocument":{"uri":")" + s.policy_uri + R"("},"position":{"line":8,"character":12},"context":{"includeDeclaration":true}})");
  const Json references = s.client.response(23);  // kept: a temporary in the range would dangle
  std::vector<std::pair<int64_t, int64_t>> at;
  for (const Json& location : references["result"].items) {
    at.emplace_back(location["range"]["start"]["line"].integer(), location["range"]["start"]["character"].integer());
  }
  CHECK(at == std::vector<std::pair<int64_t, int64_t>>{{8, 11}, {submit_line, class_at}});
  // The cluster uses `lab`: its ml.g5.8xlarge, with 32 vCPUs, not `other`'s 30.
  s.client.request(24, "textDocument/hover", s.at(s.policy_uri, 4, 16));
  CHECK(s.client.response(24)["result"]["contents"]["value"].str().find("32 vcpus") != std::string::npos);
}
