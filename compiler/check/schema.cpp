// The schema check: every block's properties against its table (surface.hpp), and `expect`
// steps' outcomes and clauses.
#include "compiler/check/schema.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include <fmt/format.h>

#include "compiler/ast/source_text.hpp"
#include "compiler/check/surface.hpp"
#include "compiler/model/hyperpod_names.hpp"

namespace gov::check {
namespace {

using K = ValueKind;

std::string_view kind_description(ValueKind kind) {
  switch (kind) {
    case K::integer: return "a whole number";
    case K::vcpu_count: return "a vCPU count such as `8`, `0.5` or `500m`";
    case K::size: return "a size such as `128 GiB`";
    case K::percentage: return "a percentage such as `50%`";
    case K::decimal: return "a number such as `1` or `0.5`";
    case K::name: return "a name";
    case K::boolean: return "`true` or `false`";
    case K::choice: return "one of the choices";
    case K::capacity_map: return "a map of instance types to counts, such as `{ ml.g5.8xlarge: 4 }`";
    case K::profile_map: return "a map of MIG profiles to counts, such as `{ mig-1g.10gb: 2 }`";
    case K::labels_map: return "a map of label keys to strings, such as `{ project: \"llm\" }`";
    case K::resources: return "resources such as `{ gpus = 1, memory = 64 GiB }`";
    case K::choice_list: return "a list of choices such as `[a, b]`";
    case K::choice_or_block: return "one of the choices or a block such as `{ policy = lower-priority }`";
    case K::string_list: return "a list of strings such as `[\"ml-research\"]`";
    case K::pod_set_map: return "pod sets by name, such as `{ master: { vcpus = 4 }, worker: { pods = 3, gpus = 8 } }`";
    case K::group_map: return "resource groups by name, such as `{ compute: { covers = [vcpus, memory], flavors = [ml.c5.xlarge] } }`";
    case K::name_list: return "a list of names such as `[ml.c5.xlarge, ml.m5.xlarge]`";
  }
  return "a value";
}

/// The help for `word` where one of `candidates` was expected, when `word` is a HyperPod API or
/// console name (or a candidate in another case convention): "HyperPod's `LendAndBorrow` is
/// `lend-and-borrow` in gov". nullopt when it is not one (then did-you-mean applies).
std::optional<std::string> foreign_spelling_help(std::string_view word, const std::vector<std::string>& candidates) {
  const auto offered = [&](std::string_view name) {
    return std::find(candidates.begin(), candidates.end(), name) != candidates.end();
  };
  if (const std::optional<std::string_view> gov = model::gov_word_for_hyperpod_name(word); gov && offered(*gov)) {
    return fmt::format("HyperPod's `{}` is `{}` in gov", word, *gov);
  }
  const std::string kebab = model::kebab_case(word);
  if (kebab != word && offered(kebab)) return fmt::format("`{}` is written `{}` in gov", word, kebab);
  return std::nullopt;
}

std::string describe_value(const ast::Value& v) {
  switch (v.kind) {
    case ast::Value::Kind::number: {
      const char* what = v.number.unit == ast::Unit::percent ? "the percentage"
                         : v.number.unit == ast::Unit::none  ? "the number"
                                                             : "the quantity";
      return fmt::format("{} `{}`", what, ast::number_text(v.number));
    }
    case ast::Value::Kind::string: return "a string";
    case ast::Value::Kind::boolean: return fmt::format("`{}`", v.boolean ? "true" : "false");
    case ast::Value::Kind::name: return fmt::format("the name `{}`", v.name.text);
    case ast::Value::Kind::list: return "a list";
    case ast::Value::Kind::map: return "a map";
    case ast::Value::Kind::block: return "a block";
  }
  return "a value";
}

class Validator {
 public:
  Validator(SourceId source, Diagnostics& diagnostics) : source_(source), diagnostics_(diagnostics) {}

  void block(const std::vector<ast::Property>& properties, BlockKind kind, std::string_view where) {
    std::vector<const ast::Property*> refs;
    for (const ast::Property& p : properties) refs.push_back(&p);
    block(refs, kind, where);
  }

  void block(const std::vector<const ast::Property*>& properties, BlockKind kind, std::string_view where) {
    const std::vector<const PropertySpec*>& schema = block_schema(kind);
    std::map<std::string, Span> seen;
    for (const ast::Property* property : properties) {
      const ast::Property& p = *property;
      auto spec = std::find_if(schema.begin(), schema.end(), [&](const PropertySpec* s) { return s->key == p.key.text; });
      if (spec == schema.end()) {
        unknown_property(p, schema, where);
        continue;
      }
      if (auto [it, inserted] = seen.emplace(p.key.text, p.key.span); !inserted) {
        Diagnostic d = make_diagnostic(Code::duplicate_property, at(p.key.span),
                                       fmt::format("`{}` is set twice in {}", p.key.text, where), "set again here");
        d.notes.push_back({at(it->second), "first set here"});
        d.help = "remove one of them";
        diagnostics_.report(std::move(d));
        continue;
      }
      value(*p.value, **spec, p.key.text);
    }
  }

  void expect(const ast::Step& step) {
    using C = ast::ExpectClause::Kind;
    const auto& outcomes = expect_outcomes();
    const std::string& outcome = step.outcome.text;
    if (std::find(outcomes.begin(), outcomes.end(), outcome) == outcomes.end()) {
      Diagnostic d = make_diagnostic(Code::unknown_outcome, at(step.outcome.span),
                                     fmt::format("unknown outcome `{}`", outcome), "not an outcome");
      std::vector<std::string> names(outcomes.begin(), outcomes.end());
      d.help = did_you_mean(outcome, names).value_or(
          "outcomes are `admitted`, `pending`, `preempted`, `rejected`, `finished`, `cancelled` and `invalid`");
      diagnostics_.report(std::move(d));
      return;
    }
    // A clause that names one fact given twice (two `borrowing`, two reasons): only one can hold,
    // and the test checked the last (a policy author's finding, session 43: `borrowing { gpus =
    // 1 } borrowing { }` passed with nothing borrowed). `on` and `warned by` may repeat: a task
    // has pod sets on several types and may match several warn rules.
    std::map<C, Span> given;
    for (const ast::ExpectClause& c : step.clauses) {
      if (c.kind == C::on || c.kind == C::warned_by) continue;
      const auto [first, inserted] = given.emplace(c.kind, c.span);
      if (inserted) continue;
      const std::string what = c.kind == C::word ? std::string("a reason") : fmt::format("`{}`", clause_word(c.kind));
      Diagnostic d = make_diagnostic(Code::duplicate_property, at(c.span),
                                     fmt::format("{} is given twice in one `expect`: a decision has one", what),
                                     "given again here");
      d.notes.push_back({at(first->second), "first given here"});
      d.help = "remove one of them, or expect the other in a step of its own";
      diagnostics_.report(std::move(d));
    }
    for (const ast::ExpectClause& c : step.clauses) {
      if (c.kind == C::borrowing || c.kind == C::short_of) block(c.resources, BlockKind::resources, "resources");
      const std::vector<std::string_view> words = words_for(outcome);
      bool allowed = true;
      std::string what;
      switch (c.kind) {
        case C::on: allowed = outcome == "admitted"; what = "`on`"; break;
        case C::borrowing: allowed = outcome == "admitted"; what = "`borrowing`"; break;
        case C::warned_by: allowed = outcome == "admitted"; what = "`warned by`"; break;
        case C::by: allowed = outcome == "preempted" || outcome == "rejected"; what = "`by`"; break;
        case C::short_of: allowed = outcome == "pending"; what = "`short`"; break;
        case C::message: allowed = true; break;
        case C::word:
          allowed = std::find(words.begin(), words.end(), c.name.text) != words.end();
          what = fmt::format("`{}`", c.name.text);
          break;
      }
      if (allowed) continue;
      Diagnostic d = make_diagnostic(Code::clause_not_allowed, at(c.span),
                                     fmt::format("{} does not apply to a task that is {}", what, outcome),
                                     "not for this outcome");
      if (c.kind == C::short_of) d.help = "`short` applies to `pending` tasks; an admitted task has `borrowing { ... }`";
      if (c.kind == C::borrowing) d.help = "`borrowing` applies to `admitted` tasks; a pending task has `short { ... }`";
      if (c.kind == C::on || c.kind == C::warned_by) d.help = fmt::format("{} applies to `admitted` tasks", what);
      if (c.kind == C::by) d.help = "`by` applies to `preempted` and `rejected` tasks";
      if (c.kind == C::word && !words.empty()) {
        std::vector<std::string> names(words.begin(), words.end());
        d.help = did_you_mean(c.name.text, names)
                     .value_or(fmt::format("a {} task takes one of: `{}`", outcome, fmt::join(words, "`, `")));
      }
      diagnostics_.report(std::move(d));
    }
  }

 private:
  static std::string_view clause_word(ast::ExpectClause::Kind kind) {
    using C = ast::ExpectClause::Kind;
    switch (kind) {
      case C::on: return "on";
      case C::by: return "by";
      case C::warned_by: return "warned by";
      case C::borrowing: return "borrowing";
      case C::short_of: return "short";
      case C::message: return "message";
      case C::word: return "reason";
    }
    return "clause";
  }

  static std::vector<std::string_view> words_for(std::string_view outcome) {
    if (outcome == "pending") {
      return {"waiting-for-quota", "exceeds-max-quota", "waiting-for-preemption", "no-matching-flavor",
              "team-inactive"};
    }
    if (outcome == "preempted") return {"in-team", "reclaim", "fair-sharing"};
    return {};
  }

  Location at(Span span) const { return {source_, span}; }

  void unknown_property(const ast::Property& p, const std::vector<const PropertySpec*>& schema, std::string_view where) {
    std::vector<std::string> keys;
    for (const PropertySpec* s : schema) keys.emplace_back(s->key);
    Diagnostic d = make_diagnostic(Code::unknown_property, at(p.key.span),
                                   fmt::format("unknown property `{}` in {}", p.key.text, where), "unknown property");
    std::vector<std::string> quoted;
    for (const std::string& k : keys) quoted.push_back(fmt::format("`{}`", k));
    if (where == "a team" || where == "a cohort") quoted.insert(quoted.begin(), "`quota`");
    if (where == "a cohort's quota" && (p.key.text == "borrow-limit" || p.key.text == "lending-limit")) {
      d.help = "a cohort without a parent borrows from and lends to no one, so its quota has no limits";
      diagnostics_.report(std::move(d));
      return;
    }
    d.help = foreign_spelling_help(p.key.text, keys)
                 .value_or(did_you_mean(p.key.text, keys).value_or(fmt::format("{} takes {}", where, fmt::join(quoted, ", "))));
    diagnostics_.report(std::move(d));
  }

  void wrong_kind(const ast::Value& v, const PropertySpec& spec, std::string_view key, std::optional<std::string> help = {}) {
    Diagnostic d = make_diagnostic(Code::wrong_value_kind, at(v.span),
                                   fmt::format("`{}` takes {}, found {}", key, kind_description(spec.kind), describe_value(v)),
                                   "wrong kind of value");
    // `gpus = "8"`, `priority = "training"` (YAML and JSON habits): the quotes are what is wrong.
    if (!help && v.kind == ast::Value::Kind::string && !v.string.has_interpolation()) {
      const std::string inside = v.string.plain();
      const bool bare = !inside.empty() && inside.size() <= 64 &&
                        std::all_of(inside.begin(), inside.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '%' || c == ' ';
                        });
      if (bare && spec.kind != K::string_list) help = fmt::format("remove the quotes: `{} = {}`", key, inside);
    }
    d.help = std::move(help);
    diagnostics_.report(std::move(d));
  }

  void value(const ast::Value& v, const PropertySpec& spec, std::string_view key) {
    using U = ast::Unit;
    const bool is_number = v.kind == ast::Value::Kind::number;
    const U unit = v.number.unit;
    if (is_number && unit == U::invalid) return;  // already reported as E0020
    const std::string plain = is_number ? ast::number_text(ast::Number{v.number.micros, U::none, false, {}}) : "";
    // An amount that also takes a word (`gpus = unlimited` in a quota's `borrow-limit`).
    const bool amount_kind = spec.kind == K::integer || spec.kind == K::vcpu_count || spec.kind == K::size;
    if (amount_kind && v.kind == ast::Value::Kind::name && !spec.choices.empty()) {
      word_choice(v, spec, key, spec.kind == K::size ? "a size such as `64 GiB`" : "a count such as `4`");
      return;
    }
    if (amount_kind && spec.resource && v.kind == ast::Value::Kind::name && v.name.text == "unlimited") {
      wrong_kind(v, spec, key,
                 fmt::format("only a quota's borrowing limit takes `unlimited` (`borrow-limit = {{ {} = unlimited }}`); a "
                             "resource a `lending-limit` leaves out is lent without limit",
                             key));
      return;
    }
    switch (spec.kind) {
      case K::integer:
        if (!is_number || unit != U::none || v.number.has_decimals) {
          std::optional<std::string> help;
          if (is_number && unit == U::none) help = "counts are whole numbers";
          if (is_number && unit != U::none && !v.number.has_decimals) help = fmt::format("write `{}`", plain);
          wrong_kind(v, spec, key, help);
        }
        return;
      case K::vcpu_count:
        if (!is_number || (unit != U::none && unit != U::milli)) wrong_kind(v, spec, key);
        return;
      case K::decimal:
        if (!is_number || unit != U::none) {
          wrong_kind(v, spec, key, is_number ? std::optional<std::string>(fmt::format("write `{}`", plain)) : std::nullopt);
        }
        return;
      case K::size:
        if (!is_number || (unit != U::mib && unit != U::gib && unit != U::tib)) {
          wrong_kind(v, spec, key, is_number ? std::optional<std::string>(fmt::format("add a unit: `{} GiB`", plain)) : std::nullopt);
        }
        return;
      case K::percentage:
        if (v.kind == ast::Value::Kind::name && !spec.choices.empty()) {
          word_choice(v, spec, key, "a percentage such as `50%`");
          return;
        }
        if (!is_number || unit != U::percent) {
          std::optional<std::string> help;
          if (is_number) help = fmt::format("write `{}%`", plain);
          // `0.5` is a fraction, as HyperPod's console shows a ratio: it means 50%, not 0.5%.
          if (is_number && unit == U::none && v.number.has_decimals && v.number.micros > 0 && v.number.micros < 1'000'000) {
            const std::string percent = ast::number_text(ast::Number{v.number.micros * 100, U::none, false, {}});
            help = fmt::format("a fraction is written as a percentage: `{}%` (or `{}%` if you meant that)", percent, plain);
          }
          wrong_kind(v, spec, key, help);
        }
        return;
      case K::name:
        if (v.kind != ast::Value::Kind::name) wrong_kind(v, spec, key);
        return;
      case K::boolean:
        if (v.kind != ast::Value::Kind::boolean) wrong_kind(v, spec, key);
        return;
      case K::choice: choice(v, spec, key); return;
      case K::capacity_map: map(v, spec, key, /*string_values=*/false); return;
      case K::profile_map: map(v, spec, key, /*string_values=*/false); return;
      case K::labels_map: map(v, spec, key, /*string_values=*/true); return;
      case K::resources:
        if (v.kind == ast::Value::Kind::name && !spec.choices.empty()) {
          word_choice(v, spec, key, "a block such as `{ gpus = 2 }`");
          return;
        }
        if (v.kind == ast::Value::Kind::block) {
          block(v.block, spec.block, fmt::format("`{}`", key));
        } else if (!(v.kind == ast::Value::Kind::map && v.map.empty())) {
          wrong_kind(v, spec, key);
        }
        return;
      case K::choice_list: choice_list(v, spec, key); return;
      case K::pod_set_map: pod_sets(v, spec, key); return;
      case K::group_map: groups(v, spec, key); return;
      case K::name_list:
        if (v.kind != ast::Value::Kind::list) {
          wrong_kind(v, spec, key,
                     v.kind == ast::Value::Kind::name
                         ? std::optional<std::string>(fmt::format("a list of one is written in brackets: `{} = [{}]`", key, v.name.text))
                         : std::nullopt);
          return;
        }
        for (const ast::Value& item : v.list) {
          if (item.kind != ast::Value::Kind::name) wrong_kind(item, spec, key);
        }
        return;
      case K::string_list:
        if (v.kind != ast::Value::Kind::list) {
          wrong_kind(v, spec, key,
                     v.kind == ast::Value::Kind::string ? std::optional<std::string>(fmt::format(
                                                               "a list of one is written in brackets: `{} = [\"...\"]`", key))
                                                         : std::nullopt);
          return;
        }
        for (const ast::Value& item : v.list) {
          if (item.kind != ast::Value::Kind::string) wrong_kind(item, spec, key);
        }
        return;
      case K::choice_or_block:
        if (v.kind == ast::Value::Kind::block) {
          block(v.block, spec.block, fmt::format("`{}`", key));
        } else if (v.kind == ast::Value::Kind::name) {
          choice(v, spec, key);
        } else {
          wrong_kind(v, spec, key, fmt::format("`{}` is one of {}, or a block such as `{{ policy = {} }}`", key,
                                               quoted_choices(spec), spec.choices.back().word));
        }
        return;
    }
  }

  static std::string quoted_choices(const PropertySpec& spec) {
    std::vector<std::string> out;
    for (const Choice& c : spec.choices) out.push_back(fmt::format("`{}`", c.word));
    return fmt::format("{}", fmt::join(out, ", "));
  }

  // A list whose items are each one of the choices (duplicates and order are the checker's).
  void choice_list(const ast::Value& v, const PropertySpec& spec, std::string_view key) {
    if (v.kind != ast::Value::Kind::list) {
      const bool one_choice = v.kind == ast::Value::Kind::name && spec.has_choice(v.name.text);
      wrong_kind(v, spec, key,
                 one_choice ? fmt::format("a list of one is written in brackets: `{} = [{}]`", key, v.name.text)
                            : fmt::format("write `{} = [{}]`", key, fmt::join(spec.words(), ", ")));
      return;
    }
    for (const ast::Value& item : v.list) choice(item, spec, key);
  }

  /// A word where a value of another kind may also stand (`borrow-limit = unlimited`): one of the
  /// choices, else an unknown choice whose help names the other form.
  void word_choice(const ast::Value& v, const PropertySpec& spec, std::string_view key, std::string_view other) {
    if (spec.has_choice(v.name.text)) return;
    const std::vector<std::string_view> words = spec.words();
    std::vector<std::string> names(words.begin(), words.end());
    Diagnostic d = make_diagnostic(Code::unknown_enum_value, at(v.span),
                                   fmt::format("`{}` is not a choice for `{}`", v.name.text, key), "unknown choice");
    d.help = did_you_mean(v.name.text, names)
                 .value_or(fmt::format("`{}` takes {} or {}", key, other, quoted_choices(spec)));
    diagnostics_.report(std::move(d));
  }

  void choice(const ast::Value& v, const PropertySpec& spec, std::string_view key) {
    const auto quoted = [&] { return quoted_choices(spec); };
    if (v.kind == ast::Value::Kind::string && !v.string.has_interpolation() && spec.has_choice(v.string.plain())) {
      wrong_kind(v, spec, key);  // a choice in quotes: its help says to remove them
      return;
    }
    if (v.kind != ast::Value::Kind::name) {
      wrong_kind(v, spec, key, fmt::format("`{}` is one of {}", key, quoted()));
      return;
    }
    if (spec.has_choice(v.name.text)) return;
    const std::vector<std::string_view> words = spec.words();
    std::vector<std::string> names(words.begin(), words.end());
    Diagnostic d = make_diagnostic(Code::unknown_enum_value, at(v.span),
                                   fmt::format("`{}` is not a choice for `{}`", v.name.text, key), "unknown choice");
    d.help = foreign_spelling_help(v.name.text, names)
                 .value_or(did_you_mean(v.name.text, names).value_or(fmt::format("`{}` is one of {}", key, quoted())));
    diagnostics_.report(std::move(d));
  }

  // A key of the map `v` (property `key`) given twice: "<what>`k` appears twice in `key`".
  void duplicate_keys(const ast::Value& v, std::string_view key, std::string_view what) {
    std::map<std::string, Span> seen;
    for (const ast::MapEntry& e : v.map) {
      const auto [it, inserted] = seen.emplace(e.key.text, e.key.span);
      if (inserted) continue;
      Diagnostic d = make_diagnostic(Code::duplicate_property, at(e.key.span),
                                     fmt::format("{}`{}` appears twice in `{}`", what, e.key.text, key), "again here");
      d.notes.push_back({at(it->second), "first here"});
      diagnostics_.report(std::move(d));
    }
  }

  // `{ master: { ... }, worker: { ... } }`: unique names, each a pod set block.
  void pod_sets(const ast::Value& v, const PropertySpec& spec, std::string_view key) {
    if (v.kind != ast::Value::Kind::map || v.map.empty()) {
      wrong_kind(v, spec, key);
      return;
    }
    duplicate_keys(v, key, "pod set ");
    for (const ast::MapEntry& e : v.map) {
      if (e.value->kind != ast::Value::Kind::block) {
        wrong_kind(*e.value, spec, key, fmt::format("write `{}: {{ pods = 1, gpus = 1 }}`", e.key.text));
        continue;
      }
      block(e.value->block, BlockKind::pod_set, fmt::format("pod set `{}`", e.key.text));
    }
  }

  // `{ compute: { covers = [...], flavors = [...] }, ... }`: unique names, each a group block.
  void groups(const ast::Value& v, const PropertySpec& spec, std::string_view key) {
    if (v.kind != ast::Value::Kind::map || v.map.empty()) {
      wrong_kind(v, spec, key);
      return;
    }
    duplicate_keys(v, key, "resource group ");
    for (const ast::MapEntry& e : v.map) {
      if (e.value->kind != ast::Value::Kind::block) {
        wrong_kind(*e.value, spec, key, fmt::format("write `{}: {{ covers = [vcpus], flavors = [...] }}`", e.key.text));
        continue;
      }
      block(e.value->block, BlockKind::resource_group, fmt::format("resource group `{}`", e.key.text));
    }
  }

  void map(const ast::Value& v, const PropertySpec& spec, std::string_view key, bool string_values) {
    if (v.kind != ast::Value::Kind::map) {
      wrong_kind(v, spec, key);
      return;
    }
    duplicate_keys(v, key, "");
    for (const ast::MapEntry& e : v.map) {
      const ast::Value& item = *e.value;
      const bool ok = string_values ? item.kind == ast::Value::Kind::string
                                    : item.kind == ast::Value::Kind::number && item.number.unit == ast::Unit::none &&
                                          !item.number.has_decimals && !e.key_is_string;
      if (!ok) wrong_kind(item, spec, key);
    }
  }

  SourceId source_;
  Diagnostics& diagnostics_;
};

}  // namespace

const std::vector<std::string_view>& expect_outcomes() {
  static const std::vector<std::string_view> outcomes = {"admitted",  "pending",   "preempted", "rejected",
                                                         "finished", "cancelled", "invalid"};
  return outcomes;
}

bool is_shape_error(Code code) {
  switch (code) {
    case Code::unknown_property:
    case Code::duplicate_property:
    case Code::wrong_value_kind:
    case Code::unknown_enum_value:
    case Code::unknown_outcome:
    case Code::clause_not_allowed: return true;
    default: return false;
  }
}

bool stops_checking(const Diagnostics& diagnostics) {
  return std::any_of(diagnostics.items().begin(), diagnostics.items().end(), [](const Diagnostic& d) {
    return d.severity == Severity::error && !is_shape_error(d.code);
  });
}

grammar::ParseResult parse_file(const SourceMap& sources, SourceId source) {
  grammar::ParseResult result = grammar::parse(sources, source);
  const size_t syntax = result.diagnostics.items().size();
  validate_schema(result.file, result.diagnostics);
  // grammar::parse sorted its own; sorting again when shapes were reported keeps the order
  // of one sort of both (the sort is stable).
  if (result.diagnostics.items().size() != syntax) result.diagnostics.sort();
  return result;
}

void validate_schema(const ast::File& file, Diagnostics& diagnostics) {
  Validator v(file.source, diagnostics);
  for (const ast::Declaration& declaration : file.declarations) {
    if (const auto* catalog = std::get_if<ast::Catalog>(&declaration)) {
      for (const ast::Instance& i : catalog->instances) v.block(i.properties, BlockKind::instance, "an instance");
    } else if (const auto* cluster = std::get_if<ast::Cluster>(&declaration)) {
      v.block(cluster->properties, BlockKind::cluster, "a cluster");
    } else if (const auto* policy = std::get_if<ast::Policy>(&declaration)) {
      std::vector<const ast::Property*> properties;
      for (const auto& item : policy->items) {
        if (const auto* p = std::get_if<ast::Property>(&item)) properties.push_back(p);
      }
      v.block(properties, BlockKind::policy, "the policy");
    } else if (const auto* team = std::get_if<ast::Team>(&declaration)) {
      std::vector<const ast::Property*> properties;
      for (const auto& item : team->items) {
        if (const auto* p = std::get_if<ast::Property>(&item)) {
          properties.push_back(p);
        } else {
          v.block(std::get<ast::Quota>(item).properties, BlockKind::quota, "a quota");
        }
      }
      v.block(properties, BlockKind::team, "a team");
    } else if (const auto* cohort = std::get_if<ast::Cohort>(&declaration)) {
      std::vector<const ast::Property*> properties;
      // A cohort with a parent borrows and lends: its quotas take a team's quota's limits.
      const bool has_parent = std::any_of(cohort->items.begin(), cohort->items.end(), [](const auto& item) {
        const auto* p = std::get_if<ast::Property>(&item);
        return p && p->key.text == "parent";
      });
      for (const auto& item : cohort->items) {
        if (const auto* p = std::get_if<ast::Property>(&item)) {
          properties.push_back(p);
        } else if (has_parent) {
          v.block(std::get<ast::Quota>(item).properties, BlockKind::quota, "a quota");
        } else {
          v.block(std::get<ast::Quota>(item).properties, BlockKind::cohort_quota, "a cohort's quota");
        }
      }
      v.block(properties, BlockKind::cohort, "a cohort");
    } else if (const auto* test = std::get_if<ast::Test>(&declaration)) {
      for (const ast::Step& step : test->steps) {
        if (step.kind == ast::Step::Kind::submit) v.block(step.properties, BlockKind::submit, "a task");
        if (step.kind == ast::Step::Kind::expect) v.expect(step);
      }
    }
  }
}

}  // namespace gov::check
