// The CLI's parsers of option values (outside input), apart from the
// subcommands so tests and fuzz targets (bench/fuzz/) can call them. Each is
// total: any text gives a value or "no value" (with `why` where it says so),
// never a crash. The size parsers of run, profile and calibrate-load accept
// different syntaxes (see each). The number parsers are behind every numeric
// option (cli_options.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace latlab::cli {

// A number option's value: decimal ("12", "-0.5", "1e-3"; no sign '+', no
// blanks, no hex, no "inf"/"nan"), finite, in [lo, hi]. No value otherwise.
std::optional<double> parse_real(const std::string& text, double lo, double hi);

// A whole-number option's value: decimal digits only, with a leading '-'
// only where lo < 0 ("0x10", "010" as octal, "1e3", "+5", " 5" are not
// numbers here), in [lo, hi] (no clamping: 2^64 is out of range, not
// 2^64 - 1). No value otherwise.
std::optional<int64_t> parse_whole(const std::string& text, int64_t lo, int64_t hi);
std::optional<uint64_t> parse_unsigned(const std::string& text, uint64_t lo, uint64_t hi);

// `latlab run --interval-ms`: "A-B" or "A" (ms, decimals allowed) -> ns range
// with 0 < A <= B <= 10000. No value (and `why` set) otherwise.
std::optional<std::pair<int64_t, int64_t>> parse_interval_ms(const std::string& text,
                                                             std::string& why);

// `latlab run --size/--load-size/--perf-size`: "WxH", lowercase x, both
// sides 1..16384 in at most 5 plain digits.
std::optional<std::pair<uint32_t, uint32_t>> parse_run_size(const std::string& s);

// `latlab profile --size`: "WxH", lowercase x, both sides 1..max_side
// (std::from_chars: digits only).
std::optional<std::pair<uint32_t, uint32_t>> parse_profile_size(const std::string& s,
                                                                uint32_t max_side);

// `latlab calibrate-load --size`: "WxH" or "WXH", both sides 1..16384
// (sscanf %lu: leading blanks and a sign are accepted, as they always were).
std::optional<std::pair<uint32_t, uint32_t>> parse_calibrate_size(const std::string& text);

}  // namespace latlab::cli
