// A strict little HTML reader for the e2e tests of latlab's pages: every
// element closed in order (void elements and "/>" aside), attributes quoted
// or bare, script and style read as raw text, entities decoded. It fails on
// what a browser would silently repair (a stray end tag, an unclosed element),
// so a page it reads is well formed. Not a general HTML parser.
#pragma once

#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace latlab::e2e {

struct HtmlNode {
  std::string tag;  // lower case; "" for a text node
  std::map<std::string, std::string> attrs;
  std::string text;  // a text node's decoded text
  std::vector<std::unique_ptr<HtmlNode>> children;

  std::string attr(const std::string& name) const {
    const auto it = attrs.find(name);
    return it == attrs.end() ? "" : it->second;
  }
  bool has_class(const std::string& c) const {
    const std::string all = " " + attr("class") + " ";
    return all.find(" " + c + " ") != std::string::npos;
  }
  // The text of this node and every node below it, in order.
  std::string inner_text() const {
    if (tag.empty()) return text;
    std::string s;
    for (const auto& c : children) s += c->inner_text();
    return s;
  }
  // Every element below (and including) this one for which `pred` holds.
  std::vector<const HtmlNode*> find_all(const std::function<bool(const HtmlNode&)>& pred) const {
    std::vector<const HtmlNode*> out;
    walk(pred, out);
    return out;
  }
  std::vector<const HtmlNode*> by_tag(const std::string& t) const {
    return find_all([&](const HtmlNode& n) { return n.tag == t; });
  }
  const HtmlNode* by_id(const std::string& id) const {
    const auto v = find_all([&](const HtmlNode& n) { return n.attr("id") == id; });
    return v.empty() ? nullptr : v.front();
  }

 private:
  void walk(const std::function<bool(const HtmlNode&)>& pred,
            std::vector<const HtmlNode*>& out) const {
    if (!tag.empty() && pred(*this)) out.push_back(this);
    for (const auto& c : children) c->walk(pred, out);
  }
};

namespace html_dom_detail {

inline std::string decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t semi = s.find(';', i);
    if (semi == std::string::npos) return out + s.substr(i);
    const std::string e = s.substr(i + 1, semi - i - 1);
    static const std::map<std::string, std::string> named = {
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    if (named.count(e)) {
      out += named.at(e);
    } else if (e.size() > 1 && e[0] == '#') {
      uint32_t cp = static_cast<uint32_t>(std::stoul(e.substr(1)));
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    } else {
      out += "&" + e + ";";
    }
    i = semi;
  }
  return out;
}

inline bool is_void(const std::string& t) {
  for (const char* v :
       {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"})
    if (t == v) return true;
  return false;
}

}  // namespace html_dom_detail

namespace html_dom_detail {

// Reads one page; each step reads one token at `i` and says what was wrong.
class Reader {
 public:
  explicit Reader(const std::string& html) : html_(html) {
    root_ = std::make_unique<HtmlNode>();
    root_->tag = "#root";
    open_.push_back(root_.get());
  }

  std::unique_ptr<HtmlNode> read(std::string& error) {
    while (error_.empty() && i_ < html_.size()) step();
    if (error_.empty() && open_.size() != 1) fail("<" + open_.back()->tag + "> is never closed");
    if (!error_.empty()) {
      error = error_;
      return nullptr;
    }
    return std::move(root_);
  }

 private:
  void fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(i_);
    i_ = html_.size();
  }
  bool space(size_t p) const { return std::isspace(static_cast<unsigned char>(html_[p])) != 0; }

  void add_text(size_t end) {
    if (end == i_) return;
    auto n = std::make_unique<HtmlNode>();
    n->text = decode(html_.substr(i_, end - i_));
    open_.back()->children.push_back(std::move(n));
  }

  void step() {
    const size_t lt = html_.find('<', i_);
    add_text(lt == std::string::npos ? html_.size() : lt);
    if (lt == std::string::npos) {
      i_ = html_.size();
      return;
    }
    i_ = lt;
    if (html_.compare(i_, 4, "<!--") == 0) return skip_to("-->", "unclosed comment");
    if (html_.compare(i_, 2, "<!") == 0) return skip_to(">", "unclosed doctype");
    const bool closing = html_.compare(i_, 2, "</") == 0;
    size_t p = i_ + (closing ? 2 : 1);
    const size_t begin = p;
    while (p < html_.size() &&
           (std::isalnum(static_cast<unsigned char>(html_[p])) || html_[p] == '-'))
      ++p;
    std::string name = html_.substr(begin, p - begin);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name.empty()) return fail("'<' that starts no tag (unescaped text?)");
    if (closing) return end_tag(name, p);
    start_tag(name, p);
  }

  void skip_to(const char* end, const char* what) {
    const size_t at = html_.find(end, i_);
    if (at == std::string::npos) return fail(what);
    i_ = at + std::string(end).size();
  }

  void end_tag(const std::string& name, size_t p) {
    const size_t gt = html_.find('>', p);
    if (gt == std::string::npos) return fail("unclosed end tag");
    if (open_.size() < 2 || open_.back()->tag != name)
      return fail("</" + name + "> does not close the open <" + open_.back()->tag + ">");
    open_.pop_back();
    i_ = gt + 1;
  }

  // One attribute at `p` into `node`; false at the tag's end (p on '>' or "/>").
  bool attribute(HtmlNode& node, size_t& p) {
    while (p < html_.size() && space(p)) ++p;
    if (p >= html_.size()) return fail("unclosed tag <" + node.tag + ">"), false;
    if (html_[p] == '>' || html_.compare(p, 2, "/>") == 0) return false;
    const size_t an = p;
    while (p < html_.size() && html_[p] != '=' && html_[p] != '>' && html_[p] != '/' && !space(p))
      ++p;
    const std::string attr = html_.substr(an, p - an);
    if (attr.empty()) return fail("bad attribute in <" + node.tag + ">"), false;
    std::string value;
    if (p < html_.size() && html_[p] == '=') {
      ++p;
      const char q = html_[p];
      const size_t close = q == '"' || q == '\'' ? html_.find(q, p + 1) : std::string::npos;
      if ((q == '"' || q == '\'') && close == std::string::npos)
        return fail("unclosed attribute value"), false;
      if (close != std::string::npos) {
        value = html_.substr(p + 1, close - p - 1);
        p = close + 1;
      } else {
        const size_t vs = p;
        while (p < html_.size() && html_[p] != '>' && !space(p)) ++p;
        value = html_.substr(vs, p - vs);
      }
    }
    if (node.attrs.count(attr))
      return fail("attribute " + attr + " twice in <" + node.tag + ">"), false;
    node.attrs[attr] = decode(value);
    return true;
  }

  void start_tag(const std::string& name, size_t p) {
    auto node = std::make_unique<HtmlNode>();
    node->tag = name;
    while (attribute(*node, p)) {
    }
    if (!error_.empty()) return;
    const bool self_closed = html_[p] == '/';
    i_ = p + (self_closed ? 2 : 1);
    HtmlNode* raw = node.get();
    open_.back()->children.push_back(std::move(node));
    if (self_closed || is_void(name)) return;
    if (name == "script" || name == "style") {  // raw text up to its end tag
      const size_t end = html_.find("</" + name, i_);
      if (end == std::string::npos) return fail("unclosed <" + name + ">");
      auto t = std::make_unique<HtmlNode>();
      t->text = html_.substr(i_, end - i_);
      raw->children.push_back(std::move(t));
      const size_t gt = html_.find('>', end);
      if (gt == std::string::npos) return fail("unclosed </" + name + ">");
      i_ = gt + 1;
      return;
    }
    open_.push_back(raw);
  }

  const std::string& html_;
  size_t i_ = 0;
  std::string error_;
  std::unique_ptr<HtmlNode> root_;
  std::vector<HtmlNode*> open_;
};

}  // namespace html_dom_detail

// Parses `html` into a root node (tag "#root"); nullptr with `error` set
// (what and at which byte) when it is not well formed.
inline std::unique_ptr<HtmlNode> parse_html(const std::string& html, std::string& error) {
  return html_dom_detail::Reader(html).read(error);
}

}  // namespace latlab::e2e
