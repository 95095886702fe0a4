#include "core/model/metric_expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace tprof {

struct MetricExpression::Node {
  enum class Kind { kNumber, kVariable, kNegate, kAdd, kSubtract, kMultiply, kDivide, kCall } kind;
  double number = 0;
  std::string name;  // variable or function
  std::vector<std::shared_ptr<const Node>> children;
};

namespace {

using Node = MetricExpression::Node;
using NodePtr = std::shared_ptr<const Node>;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '#' ||
         c == ':';
}

// Recursive descent over: expr := term (('+'|'-') term)*; term := unary (('*'|'/') unary)*;
// unary := '-' unary | primary; primary := number | name | name '(' args ')' | '(' expr ')'.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<NodePtr> ParseAll(std::vector<std::string>* variables) {
    variables_ = variables;
    auto node = Expression();
    if (!node.ok()) return node.error();
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return node;
  }

 private:
  Error Fail(const std::string& what) const {
    return Error("formula '" + std::string(text_) + "', at " + std::to_string(pos_) + ": " + what);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static NodePtr Make(Node::Kind kind, std::vector<NodePtr> children) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->children = std::move(children);
    return n;
  }

  Result<NodePtr> Expression() {
    if (++depth_ > 200) return Fail("nested too deeply");
    auto left = Term();
    if (!left.ok()) return left;
    NodePtr node = left.value();
    while (true) {
      Node::Kind kind;
      if (Accept('+'))
        kind = Node::Kind::kAdd;
      else if (Accept('-'))
        kind = Node::Kind::kSubtract;
      else
        break;
      auto right = Term();
      if (!right.ok()) return right;
      node = Make(kind, {node, right.value()});
    }
    --depth_;
    return node;
  }

  Result<NodePtr> Term() {
    auto left = Unary();
    if (!left.ok()) return left;
    NodePtr node = left.value();
    while (true) {
      Node::Kind kind;
      if (Accept('*'))
        kind = Node::Kind::kMultiply;
      else if (Accept('/'))
        kind = Node::Kind::kDivide;
      else
        break;
      auto right = Unary();
      if (!right.ok()) return right;
      node = Make(kind, {node, right.value()});
    }
    return node;
  }

  Result<NodePtr> Unary() {
    if (Accept('-')) {
      if (++depth_ > 200) return Fail("nested too deeply");
      auto operand = Unary();
      --depth_;
      if (!operand.ok()) return operand;
      return Make(Node::Kind::kNegate, {operand.value()});
    }
    return Primary();
  }

  Result<NodePtr> Primary() {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    if (Accept('(')) {
      auto inner = Expression();
      if (!inner.ok()) return inner;
      if (!Accept(')')) return Fail("missing ')'");
      return inner;
    }
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      std::string number(text_.substr(pos_));
      char* end = nullptr;
      double value = std::strtod(number.c_str(), &end);
      if (end == number.c_str()) return Fail("bad number");
      pos_ += static_cast<size_t>(end - number.c_str());
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kNumber;
      n->number = value;
      return NodePtr(n);
    }
    std::string name;
    while (pos_ < text_.size()) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        name += text_[pos_ + 1];
        pos_ += 2;
      } else if (IsNameChar(text_[pos_])) {
        name += text_[pos_++];
      } else {
        break;
      }
    }
    if (name.empty()) return Fail("expected a number, a name or '('");
    if (Accept('(')) {
      if (name != "max" && name != "min" && name != "abs")
        return Fail("unknown function '" + name + "'");
      std::vector<NodePtr> args;
      if (!Accept(')')) {
        do {
          auto arg = Expression();
          if (!arg.ok()) return arg;
          args.push_back(arg.value());
        } while (Accept(','));
        if (!Accept(')')) return Fail("missing ')' after the arguments of " + name);
      }
      if ((name == "abs" && args.size() != 1) || (name != "abs" && args.size() < 2))
        return Fail("wrong number of arguments to " + name);
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kCall;
      n->name = name;
      n->children = std::move(args);
      return NodePtr(n);
    }
    if (std::find(variables_->begin(), variables_->end(), name) == variables_->end())
      variables_->push_back(name);
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kVariable;
    n->name = name;
    return NodePtr(n);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::string>* variables_ = nullptr;
};

std::optional<double> Eval(const Node& n, const MetricExpression::Lookup& lookup) {
  using Kind = Node::Kind;
  switch (n.kind) {
    case Kind::kNumber:
      return n.number;
    case Kind::kVariable:
      return lookup(n.name);
    case Kind::kNegate: {
      auto v = Eval(*n.children[0], lookup);
      return v ? std::optional<double>(-*v) : std::nullopt;
    }
    case Kind::kCall: {
      std::vector<double> values;
      for (const auto& child : n.children) {
        auto v = Eval(*child, lookup);
        if (!v) return std::nullopt;
        values.push_back(*v);
      }
      if (n.name == "abs") return std::fabs(values[0]);
      if (n.name == "max") return *std::max_element(values.begin(), values.end());
      return *std::min_element(values.begin(), values.end());
    }
    default:
      break;
  }
  auto a = Eval(*n.children[0], lookup);
  auto b = Eval(*n.children[1], lookup);
  if (!a || !b) return std::nullopt;
  double result;
  switch (n.kind) {
    case Kind::kAdd:
      result = *a + *b;
      break;
    case Kind::kSubtract:
      result = *a - *b;
      break;
    case Kind::kMultiply:
      result = *a * *b;
      break;
    default:
      if (*b == 0) return std::nullopt;  // a zero denominator is n/a, not inf
      result = *a / *b;
      break;
  }
  if (!std::isfinite(result)) return std::nullopt;
  return result;
}

}  // namespace

Result<MetricExpression> MetricExpression::Parse(std::string_view text) {
  MetricExpression expression;
  Parser parser(text);
  auto root = parser.ParseAll(&expression.variables_);
  if (!root.ok()) return root.error();
  expression.root_ = root.value();
  expression.text_ = std::string(text);
  return expression;
}

std::optional<double> MetricExpression::Evaluate(const Lookup& lookup) const {
  return Eval(*root_, lookup);
}

}  // namespace tprof
