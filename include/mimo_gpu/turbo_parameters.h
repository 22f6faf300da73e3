// The turbo decoder's parameters by name, as the blocks, GRC, the programs
// and mimo_gpu.core take them ("max-log-map", "crc24b", ...). Each function
// throws std::invalid_argument naming the parameter and the accepted values.
#pragma once

#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <stdexcept>
#include <string>

namespace mimo_gpu {

/// "max-log-map" | "log-map" ('_' accepted for '-').
inline map_algorithm map_algorithm_from_string(const std::string& name)
{
    if (name == "max-log-map" || name == "max_log_map")
        return map_algorithm::max_log_map;
    if (name == "log-map" || name == "log_map")
        return map_algorithm::log_map;
    throw std::invalid_argument(
        "algorithm must be \"max-log-map\" or \"log-map\", got \"" + name + "\"");
}

inline std::string to_string(map_algorithm algorithm)
{
    return algorithm == map_algorithm::log_map ? "log-map" : "max-log-map";
}

/// "none" | "crc24a" | "crc24b" | "crc16" | "crc8".
inline crc_type crc_type_from_string(const std::string& name)
{
    if (name == "none" || name.empty())
        return crc_type::none;
    if (name == "crc24a")
        return crc_type::crc24a;
    if (name == "crc24b")
        return crc_type::crc24b;
    if (name == "crc16")
        return crc_type::crc16;
    if (name == "crc8")
        return crc_type::crc8;
    throw std::invalid_argument(
        "crc must be \"none\", \"crc24a\", \"crc24b\", \"crc16\" or \"crc8\", got \"" +
        name + "\"");
}

/// A validated decoder configuration from the block parameters.
inline turbo_decoder_config turbo_config(const std::string& algorithm,
                                         int iterations,
                                         double extrinsic_scale,
                                         int window,
                                         const std::string& crc = "none")
{
    turbo_decoder_config config;
    config.algorithm = map_algorithm_from_string(algorithm);
    config.iterations = iterations;
    config.extrinsic_scale = static_cast<float>(extrinsic_scale);
    config.window = window;
    config.early_termination = crc_type_from_string(crc);
    config.validate();
    return config;
}

/// K must be one of the 188 code block sizes of table 5.1.3-3.
inline int checked_code_block_size(int K)
{
    if (!qpp_interleaver::is_block_size(K))
        throw std::invalid_argument("K must be a code block size of TS 36.212 table "
                                    "5.1.3-3 (40..6144), got " +
                                    std::to_string(K));
    return K;
}

} // namespace mimo_gpu
