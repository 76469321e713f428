// A result section's fields declared once: key, member and the rules for
// null and for documents written before the key existed. One table drives
// the writer (write_object: keys in table order) and the strict reader
// (read_object: errors name the key path), and a test holds
// docs/result-schema.md to the same keys. The tables are in result_fields.hpp.
// Private to src/report.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "report/json_reading.hpp"
#include "report/result_json.hpp"

namespace latlab::fields {

using json = nlohmann::ordered_json;

template <class O>
struct Field {
  using Owner = O;
  // Empty: a spread(), whose keys are its table's, in this object.
  std::string_view key;
  // The value as written; not called when null_when holds.
  json (*write)(const O&) = nullptr;
  // Reads a present value into its member; `v` is null only when null_ok
  // (then a string reads as "", anything else keeps its default). nullptr:
  // written, not read (derived from other fields).
  void (*read)(const json& v, const std::string& path, bool null_ok, O&) = nullptr;
  // Written as null when this holds (nullptr: never).
  bool (*null_when)(const O&) = nullptr;
  // Documents written before the key existed lack it: absent or null keeps
  // the default.
  bool older_may_lack = false;
  // Left out of the object when this holds (nullptr: always written); the
  // reader reads the key when present.
  bool (*omit_when)(const O&) = nullptr;
  // Without `write`: this text, the same in every document (not read).
  std::string_view text = {};

  constexpr Field lacking_in_older() const {
    Field f = *this;
    f.older_may_lack = true;
    return f;
  }
  constexpr Field null_if(bool (*when)(const O&)) const {
    Field f = *this;
    f.null_when = when;
    return f;
  }
  constexpr Field omitted_if(bool (*when)(const O&)) const {
    Field f = *this;
    f.omit_when = when;
    return f;
  }
};

template <class T>
struct MemberOf;
template <class O, class V>
struct MemberOf<V O::*> {
  using Owner = O;
  using Value = V;
};
template <auto M>
using OwnerOf = typename MemberOf<decltype(M)>::Owner;

template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

// The member at the path M, Ms... of `o` (e.g. &GpuTargetCheck::target,
// &GpuTimeTarget::target_ms); a std::optional on the way is entered (the
// writer's caller checks it holds a value, the reader's emplaces it).
template <auto M, auto... Ms, class O>
constexpr auto& member(O& o) {
  if constexpr (sizeof...(Ms) == 0) {
    return o.*M;
  } else if constexpr (kIsOptional<std::remove_cvref_t<decltype(o.*M)>>) {
    return member<Ms...>(*(o.*M));
  } else {
    return member<Ms...>(o.*M);
  }
}
template <auto M, auto... Ms>
using ValueAt = std::remove_cvref_t<decltype(member<M, Ms...>(std::declval<OwnerOf<M>&>()))>;
template <class T>
inline constexpr bool kIsVector = false;
template <class T>
inline constexpr bool kIsVector<std::vector<T>> = true;
// (name, value) pairs, written as an object in their order.
template <class T>
inline constexpr bool kIsNamed = false;
template <class T>
inline constexpr bool kIsNamed<std::vector<std::pair<std::string, T>>> = true;

// A value at `path` with its type checked (reading::*_value): a scalar, a
// distribution, an array of scalars, or (name, value) pairs as an object; a
// std::optional one is null when empty.
template <class V>
V scalar_value(const json& v, const std::string& path) {
  if constexpr (kIsOptional<V>) {
    return v.is_null() ? V() : V(scalar_value<typename V::value_type>(v, path));
  } else if constexpr (std::is_same_v<V, std::string>) {
    return reading::str_value(v, path);
  } else if constexpr (std::is_same_v<V, bool>) {
    return reading::bool_value(v, path);
  } else if constexpr (std::is_same_v<V, uint32_t>) {
    return reading::u32_value(v, path);
  } else if constexpr (std::is_same_v<V, uint64_t>) {
    return reading::u64_value(v, path);
  } else if constexpr (std::is_same_v<V, int64_t>) {
    return reading::i64_value(v, path);
  } else if constexpr (std::is_same_v<V, int>) {
    const int64_t x = reading::i64_value(v, path);
    if (x < INT32_MIN || x > INT32_MAX) reading::fail(path, "out of range");
    return static_cast<int>(x);
  } else if constexpr (std::is_same_v<V, Distribution>) {
    return reading::distribution_value(v, path);
  } else if constexpr (kIsNamed<V>) {
    V out;
    const reading::Obj o(v, path);
    for (auto it = v.begin(); it != v.end(); ++it)
      out.emplace_back(it.key(), scalar_value<typename V::value_type::second_type>(
                                     it.value(), o.key_path(it.key())));
    return out;
  } else if constexpr (kIsVector<V>) {
    V out;
    reading::array_of(v, path);
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(scalar_value<typename V::value_type>(v[i], fmt::format("{}[{}]", path, i)));
    return out;
  } else {
    static_assert(std::is_same_v<V, double>, "a field of a type the table cannot read");
    return reading::number_value(v, path);
  }
}

template <class V>
json value_json(const V& v) {
  if constexpr (kIsOptional<V>) {
    return v ? value_json(*v) : json(nullptr);
  } else if constexpr (std::is_same_v<V, Distribution>) {
    return distribution_to_json(v);
  } else if constexpr (kIsNamed<V>) {
    json o = json::object();
    for (const auto& [name, x] : v) o[name] = value_json(x);
    return o;
  } else if constexpr (kIsVector<V>) {
    json a = json::array();
    for (const auto& x : v) a.push_back(value_json(x));
    return a;
  } else {
    return json(v);
  }
}

// A member (or a path of members) of a type scalar_value reads, written as
// it is; a std::optional one is null when empty.
template <auto M, auto... Ms>
constexpr Field<OwnerOf<M>> field(std::string_view key) {
  using O = OwnerOf<M>;
  using V = ValueAt<M, Ms...>;
  return {.key = key,
          .write = +[](const O& o) { return value_json(member<M, Ms...>(o)); },
          .read =
              +[](const json& v, const std::string& path, bool null_ok, O& o) {
                auto& out = member<M, Ms...>(o);
                if (!kIsOptional<V> && v.is_null() && null_ok) {
                  if constexpr (std::is_same_v<V, std::string>) out.clear();
                } else {
                  out = scalar_value<V>(v, path);
                }
              }};
}

// A text or a value V the same in every document (a definition in words, a
// constant): written, not read.
template <class O>
constexpr Field<O> fixed(std::string_view key, std::string_view text) {
  return {.key = key, .text = text};
}
template <class O, auto V>
constexpr Field<O> fixed(std::string_view key) {
  return {.key = key, .write = +[](const O&) { return json(V); }};
}

// null_if's and omitted_if's usual conditions on a member (path) M, Ms....
template <auto M, auto... Ms>
bool when(const OwnerOf<M>& o) {
  return static_cast<bool>(member<M, Ms...>(o));
}
template <auto M, auto... Ms>
bool unless(const OwnerOf<M>& o) {
  return !member<M, Ms...>(o);
}
template <auto M, auto... Ms>
bool negative(const OwnerOf<M>& o) {
  return member<M, Ms...>(o) < 0;
}
template <auto M, auto... Ms>
bool not_positive(const OwnerOf<M>& o) {
  return !(member<M, Ms...>(o) > 0);
}

// A field<M...> that documents written before the key existed lack.
template <auto M, auto... Ms>
constexpr Field<OwnerOf<M>> added(std::string_view key) {
  return field<M, Ms...>(key).lacking_in_older();
}

// A string member (or path) written as null when empty (null reads as "").
template <auto M, auto... Ms>
constexpr Field<OwnerOf<M>> text_or_null(std::string_view key) {
  return field<M, Ms...>(key).null_if(
      +[](const OwnerOf<M>& o) { return member<M, Ms...>(o).empty(); });
}

template <class Owner>
using Table = std::type_identity_t<std::span<const Field<Owner>>>;

template <class Owner>
void append_fields(json& j, const Owner& o, Table<Owner> table) {
  for (const Field<Owner>& f : table) {
    if (f.omit_when != nullptr && f.omit_when(o)) continue;
    if (f.key.empty()) {
      j.update(f.write(o));
      continue;
    }
    j[std::string(f.key)] = f.null_when != nullptr && f.null_when(o) ? json(nullptr)
                            : f.write != nullptr                     ? f.write(o)
                                                                     : json(f.text);
  }
}

template <class Owner>
json write_object(const Owner& o, Table<Owner> table) {
  json j = json::object();
  append_fields(j, o, table);
  return j;
}

// Every field of `table` read from `obj` into `o`: a key the table does not
// let older documents lack is required, null only where the table writes it.
template <class Owner>
void read_fields(const reading::Obj& obj, Table<Owner> table, Owner& o) {
  for (const Field<Owner>& f : table) {
    if (f.key.empty()) {
      f.read(obj.raw(), obj.path(), false, o);
      continue;
    }
    if (f.read == nullptr || ((f.older_may_lack || f.omit_when != nullptr) && !obj.has(f.key)))
      continue;
    f.read(obj.at(f.key), obj.key_path(f.key), f.older_may_lack || f.null_when != nullptr, o);
  }
}

template <class Owner>
Owner read_object(const reading::Obj& obj, Table<Owner> table) {
  Owner o;
  read_fields(obj, table, o);
  return o;
}

template <class Rec>
json write_records(const std::vector<Rec>& recs, Table<Rec> table) {
  json a = json::array();
  for (const Rec& r : recs) a.push_back(write_object(r, table));
  return a;
}

// An array of objects at `path`, each read by `table` ("path[i].key" in errors).
template <class Rec>
std::vector<Rec> read_records(const json& a, const std::string& path, Table<Rec> table) {
  reading::array_of(a, path);
  std::vector<Rec> out;
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(read_object<Rec>(reading::Obj(a[i], fmt::format("{}[{}]", path, i)), table));
  return out;
}

// A std::vector<Rec> member written as an array of `Fields`' objects.
template <const auto& Fields, auto M>
constexpr Field<OwnerOf<M>> records(std::string_view key) {
  using O = OwnerOf<M>;
  using Rec = typename ValueAt<M>::value_type;
  return {.key = key,
          .write = +[](const O& o) { return write_records<Rec>(o.*M, Fields); },
          .read =
              +[](const json& v, const std::string& path, bool null_ok, O& o) {
                if (!(v.is_null() && null_ok)) o.*M = read_records<Rec>(v, path, Fields);
              }};
}

// The member C of each record of the vector M as one array (a table in
// columns); the column with `kSizes` sets the vector's length, and the
// others must have it.
template <auto M, auto C, bool kSizes = false>
constexpr Field<OwnerOf<M>> column(std::string_view key) {
  using O = OwnerOf<M>;
  using Rec = typename ValueAt<M>::value_type;
  return {.key = key,
          .write =
              +[](const O& o) {
                json a = json::array();
                for (const Rec& r : o.*M) a.push_back(r.*C);
                return a;
              },
          .read =
              +[](const json& v, const std::string& path, bool, O& o) {
                const size_t n = reading::array_of(v, path).size();
                if (kSizes) (o.*M).resize(n);
                if (n != (o.*M).size()) reading::fail(path, "the columns differ in length");
                for (size_t i = 0; i < n; ++i)
                  (o.*M)[i].*C = scalar_value<std::remove_cvref_t<decltype(Rec{}.*C)>>(
                      v[i], fmt::format("{}[{}]", path, i));
              }};
}

// A struct member (or a path of members) written as the object of `Fields`
// and read into it; a std::optional one is written null when empty and reads
// null as empty.
template <const auto& Fields, auto M, auto... Ms>
constexpr Field<OwnerOf<M>> object(std::string_view key) {
  using O = OwnerOf<M>;
  using V = ValueAt<M, Ms...>;
  if constexpr (kIsOptional<V>) {
    using Rec = typename V::value_type;
    return {.key = key,
            .write =
                +[](const O& o) {
                  const V& v = member<M, Ms...>(o);
                  return v ? write_object<Rec>(*v, Fields) : json(nullptr);
                },
            .read =
                +[](const json& v, const std::string& path, bool, O& o) {
                  V& out = member<M, Ms...>(o);
                  if (v.is_null()) {
                    out.reset();
                  } else {
                    read_fields<Rec>(reading::Obj(v, path), Fields, out ? *out : out.emplace());
                  }
                }};
  } else {
    return {.key = key,
            .write = +[](const O& o) { return write_object<V>(member<M, Ms...>(o), Fields); },
            .read =
                +[](const json& v, const std::string& path, bool null_ok, O& o) {
                  if (!(v.is_null() && null_ok))
                    read_fields<V>(reading::Obj(v, path), Fields, member<M, Ms...>(o));
                }};
  }
}

// A key whose object holds more members of the same owner, by `Fields`
// (e.g. a flat struct's `before_us: {p50, min, max}`).
template <const auto& Fields>
constexpr auto group(std::string_view key) {
  using O = typename std::remove_cvref_t<decltype(Fields)>::value_type::Owner;
  return Field<O>{.key = key,
                  .write = +[](const O& o) { return write_object<O>(o, Fields); },
                  .read =
                      +[](const json& v, const std::string& path, bool null_ok, O& o) {
                        if (!(v.is_null() && null_ok))
                          read_fields<O>(reading::Obj(v, path), Fields, o);
                      }};
}

// The same for a group whose fields are all written, not read (fixed
// texts): the group is not read either. Declared by the table, not found
// by comparing the fields' read functions with nullptr, which GCC does not
// take as a constant expression under the sanitizers.
template <const auto& Fields>
constexpr auto written_group(std::string_view key) {
  using O = typename std::remove_cvref_t<decltype(Fields)>::value_type::Owner;
  return Field<O>{.key = key, .write = +[](const O& o) { return write_object<O>(o, Fields); }};
}

// The member M's fields, by `Fields`, among the owner's own keys (a block's
// series before its index); its Field has no key.
template <auto M, const auto& Fields>
constexpr Field<OwnerOf<M>> spread() {
  using O = OwnerOf<M>;
  return {.key = {},
          .write = +[](const O& o) { return write_object(o.*M, Fields); },
          .read = +[](const json& v, const std::string& path, bool,
                      O& o) { read_fields(reading::Obj(v, path), Fields, o.*M); }};
}
// The owner's fields of another table, among these (a device's identity).
template <const auto& Fields>
constexpr auto spread() {
  using O = typename std::remove_cvref_t<decltype(Fields)>::value_type::Owner;
  return Field<O>{.key = {},
                  .write = +[](const O& o) { return write_object<O>(o, Fields); },
                  .read = +[](const json& v, const std::string& path, bool,
                              O& o) { read_fields<O>(reading::Obj(v, path), Fields, o); }};
}

}  // namespace latlab::fields
