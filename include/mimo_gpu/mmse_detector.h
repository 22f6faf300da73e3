// The massive-MIMO soft MMSE detector families ("mmse": Cholesky, exact;
// "mmse_cg": conjugate gradients, approximate), docs/detectors.md "Soft MMSE".
// They are made through the registry like every family; this header adds what
// only they have: the equalised symbols and SINRs behind their LLRs.
#pragma once

#include <mimo_gpu/detector.h>

namespace mimo_gpu {

class mmse_detector final : public detector
{
public:
    /// Made by the registry (make_detector("mmse" or "mmse_cg", ...)): config checked
    /// against `family`.
    mmse_detector(const detector_family& family,
                  const detector_config& config,
                  backend requested);

    /// Host memory. For problem p and user u: z[p*nt + u] = x_hat / lambda (the
    /// unbiased equalised symbol) and sinr[p*nt + u] = rho (its SINR, the inverse
    /// of its error variance); either may be null. Bad problems: 0 in both,
    /// reported and handled as detect() does.
    detection_report equalize(const detector_input& in, cfloat* z, float* sinr);
};

} // namespace mimo_gpu
