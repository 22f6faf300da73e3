// What the error-rate programs share: number lists from an option, and the
// SNR where a measured curve crosses a target rate.
#pragma once

#include "command_line.h"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace mimo_gpu_apps {

/// "0,0.5,1" -> {0, 0.5, 1}; a bad number is a usage error.
inline std::vector<double> number_list(const std::string& list)
{
    std::vector<double> out;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty())
            out.push_back(checked_setup([&] { return std::stod(item); }));
    return out;
}

/// SNR where the rate crosses `target`, linear in log rate between the points
/// around it; NaN when no pair brackets it.
inline double
crossing(const std::vector<double>& snr, const std::vector<double>& rate, double target)
{
    for (size_t i = 0; i + 1 < snr.size(); ++i)
        if (rate[i] >= target && rate[i + 1] < target && rate[i + 1] > 0)
            return snr[i] + (std::log(rate[i]) - std::log(target)) /
                                (std::log(rate[i]) - std::log(rate[i + 1])) *
                                (snr[i + 1] - snr[i]);
    return NAN;
}

} // namespace mimo_gpu_apps
