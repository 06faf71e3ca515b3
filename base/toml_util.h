// Small helpers over toml++ that turn every mistake into Error(config, "file:line: ...").
#pragma once
#include <functional>
#include <map>
#include <string>
#include <toml++/toml.h>

namespace asbx {

std::string where(const std::string& path, const toml::node& node);
toml::table parse_toml(const std::string& text, const std::string& path);
// Calls the handler of each key; a key with no handler is an error naming file:line.
void for_each_key(const toml::table& table, const std::string& path,
                  const std::map<std::string, std::function<void(const toml::node&)>>& handlers);
std::string get_string(const toml::node& node, const std::string& path, const std::string& key);
std::int64_t get_int(const toml::node& node, const std::string& path, const std::string& key);
double get_number(const toml::node& node, const std::string& path, const std::string& key);
bool get_bool(const toml::node& node, const std::string& path, const std::string& key);
std::vector<std::string> get_strings(const toml::node& node, const std::string& path, const std::string& key);

}  // namespace asbx
