#include "base/toml_util.h"

#include "base/error.h"

namespace asbx {

std::string where(const std::string& path, const toml::node& node) {
  return path + ":" + std::to_string(node.source().begin.line);
}

toml::table parse_toml(const std::string& text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw Error(ErrorKind::config, path + ":" + std::to_string(e.source().begin.line) + ": " +
                                       std::string(e.description()));
  }
}

void for_each_key(const toml::table& table, const std::string& path,
                  const std::map<std::string, std::function<void(const toml::node&)>>& handlers) {
  for (const auto& [key, node] : table) {
    auto it = handlers.find(std::string(key.str()));
    if (it == handlers.end())
      throw Error(ErrorKind::config, where(path, node) + ": unknown key '" + std::string(key.str()) + "'");
    it->second(node);
  }
}

namespace {
[[noreturn]] void wrong_type(const toml::node& node, const std::string& path, const std::string& key,
                             const char* expected) {
  throw Error(ErrorKind::config, where(path, node) + ": '" + key + "' must be " + expected);
}
}  // namespace

std::string get_string(const toml::node& node, const std::string& path, const std::string& key) {
  if (!node.is_string()) wrong_type(node, path, key, "a string");
  return std::string(*node.value<std::string_view>());
}

std::int64_t get_int(const toml::node& node, const std::string& path, const std::string& key) {
  if (!node.is_integer()) wrong_type(node, path, key, "an integer");
  return *node.value<std::int64_t>();
}

double get_number(const toml::node& node, const std::string& path, const std::string& key) {
  if (!node.is_number()) wrong_type(node, path, key, "a number");
  return *node.value<double>();
}

bool get_bool(const toml::node& node, const std::string& path, const std::string& key) {
  if (!node.is_boolean()) wrong_type(node, path, key, "true or false");
  return *node.value<bool>();
}

std::vector<std::string> get_strings(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* array = node.as_array();
  if (!array) wrong_type(node, path, key, "an array of strings");
  std::vector<std::string> out;
  for (const auto& item : *array) out.push_back(get_string(item, path, key));
  return out;
}

}  // namespace asbx
