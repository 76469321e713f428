// libFuzzer target: the result reader (src/report/result_reader.hpp) on any
// bytes: what `latlab store add`, `latlab compare` and the store's own reads
// (a stored document goes back through read_result_json) parse. It must give
// a model or an error with a message, never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "report/result_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  const auto r = latlab::read_result_json(std::move(text), "fuzz");
  if (!r && r.error().message.empty()) std::abort();  // an error must say why
  return 0;
}
