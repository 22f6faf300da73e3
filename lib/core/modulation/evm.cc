#include <mimo_gpu/evm.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace mimo_gpu {

namespace {

/// The constellation point nearest to a finite z (the constellation's own hard
/// decision, mapped back).
cfloat nearest_point(cfloat z, const constellation& c, std::vector<uint8_t>& bits)
{
    cfloat point;
    c.hard_demap(&z, bits.data(), 1);
    c.map(bits.data(), &point, 1);
    return point;
}

double ratio(double error, double power)
{
    return power > 0 ? std::sqrt(error / power)
                     : std::numeric_limits<double>::quiet_NaN();
}

} // namespace

evm_measurement measure_evm(
    const cfloat* z, const cfloat* x, size_t problems, int nt, const constellation& c)
{
    if (nt < 1)
        throw std::invalid_argument("mimo_gpu: measure_evm: nt must be >= 1, got " +
                                    std::to_string(nt));
    if (!z && problems > 0)
        throw std::invalid_argument(
            "mimo_gpu: measure_evm: no equalised symbols (null z)");
    std::vector<double> error(size_t(nt), 0.0), power(size_t(nt), 0.0);
    std::vector<uint8_t> bits(size_t(c.bits_per_symbol()));
    evm_measurement m;
    for (size_t p = 0; p < problems; ++p)
        for (int u = 0; u < nt; ++u) {
            const size_t k = p * size_t(nt) + size_t(u);
            const cfloat zk = z[k];
            if (!std::isfinite(zk.real()) || !std::isfinite(zk.imag())) {
                ++m.left_out;
                continue;
            }
            const cfloat ref = x ? x[k] : nearest_point(zk, c, bits);
            const std::complex<double> e(double(zk.real()) - ref.real(),
                                         double(zk.imag()) - ref.imag());
            error[size_t(u)] += std::norm(e);
            power[size_t(u)] += std::norm(std::complex<double>(ref.real(), ref.imag()));
            ++m.measured;
        }
    double all_error = 0, all_power = 0;
    for (int u = 0; u < nt; ++u) {
        m.per_stream.push_back(ratio(error[size_t(u)], power[size_t(u)]));
        all_error += error[size_t(u)];
        all_power += power[size_t(u)];
    }
    m.overall = ratio(all_error, all_power);
    return m;
}

} // namespace mimo_gpu
