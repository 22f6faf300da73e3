// The one interface every MIMO detector family implements (docs/detectors.md, "The
// interface"). Families are created by name through the registry (detector_registry.h);
// the blocks, the Python API and the programs reach detectors only that way.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/erasures.h>
#include <mimo_gpu/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

struct detector_family; // detector_registry.h
namespace detail {
class detector_engine; // lib/core/detect/engine/
}

/// What a detector family can do; checked when a detector is made.
struct detector_capabilities {
    int max_nr = k_max_antennas; ///< receive antennas 1..max_nr
    int max_nt = k_max_antennas; ///< streams 1..max_nt (and nt <= nr)
    std::vector<modulation> modulations;
    bool soft_output = true;    ///< false: hard decisions, delivered as +-llr_clip LLRs
    bool exact_max_log = false; ///< true: the LLRs are those of exhaustive max-log ML
    bool accepts_priors =
        false; ///< takes a-priori LLRs (iterative detection and decoding)
    /// Per-channel preprocessing runs once for the S symbols that share a channel;
    /// false: the detector works per symbol, the S symbols of a channel simply share H.
    bool reuses_channels = false;
    /// A rank-deficient H is erased (cause singular_channel). false: the family
    /// gives its regularised result instead (MMSE: users that H does not
    /// separate get LLRs near 0) and erases only what float cannot factor.
    bool erases_rank_deficient = true;
    /// CPU and CUDA run the same float operations and agree to the bit. false:
    /// they agree to rounding (reductions run in another order on the GPU).
    bool bit_identical_backends = true;
    /// The CUDA backend detects from device memory (detect_device). false: CUDA
    /// runs from host memory only (detect), as SUMIS does.
    bool device_path = true;

    bool supports(modulation m) const;
    /// Throws std::invalid_argument naming `family` unless the shape and modulation fit.
    void check(const std::string& family, const mimo_shape& shape, modulation m) const;
};

/// One numeric parameter of a family ("passes", "llr_clip", ...).
struct parameter_spec {
    std::string name;
    double default_value = 0;
    double min = 0,
           max =
               0; ///< allowed range, inclusive; max may depend on the shape (see family)
    bool integer = false;
    bool settable = false; ///< may change after construction (set_parameter)
    std::string help;
    /// Throws std::invalid_argument naming `family` unless value is in range (and whole,
    /// if integer).
    void check(const std::string& family, double value) const;
};

/// Parameter values by name; a family fills in the defaults of those not given.
using detector_parameters = std::map<std::string, double>;

struct detector_config {
    mimo_shape shape;
    modulation mod = modulation::qam16;
    detector_parameters parameters;
};

/// A batch: C channel matrices and, for each, S consecutive received vectors
/// sharing it (S = 1: one H per resource element). Problem p = c*S + s uses
/// H[c] and y[p]. Pointers are host memory for detect(), device memory for
/// detect_device().
struct detector_input {
    const cfloat* H = nullptr;   ///< C * nr * nt, row-major per matrix
    const cfloat* y = nullptr;   ///< C * S * nr
    size_t channels = 0;         ///< C
    int symbols_per_channel = 1; ///< S >= 1
    const float* priors =
        nullptr;  ///< optional a-priori LLRs, the output's layout (C * S * nt * Q)
    float n0 = 0; ///< noise variance per complex receive sample, finite and > 0
    size_t problems() const { return channels * size_t(symbols_per_channel); }
};

/// LLR magnitude of a bit whose hypothesis or counter-hypothesis no candidate
/// of a list detector reached, when clipping is off (with clipping: the clip value).
constexpr float k_unreached_llr = 1000.0f;

/// Default LLR clip of the list detectors (N-way, OT): LLRs are clipped to
/// [-8, 8] and a bit whose counter-hypothesis no candidate reached gets +-8, a
/// bounded magnitude the turbo decoder downstream does well with (docs/detectors.md).
constexpr float k_default_llr_clip = 8.0f;

/// int8 LLRs: q = clamp(round(L * scale), -127, 127); L = q / scale.
constexpr float k_default_int8_scale = 8.0f;

/// LLRs of every family follow the data conventions: nt*Q per problem, stream
/// t's bits at [t*Q, t*Q+Q) in 3GPP label order, L = ln P(b=0)/P(b=1).
class detector
{
public:
    virtual ~detector();
    detector(const detector&) = delete;
    detector& operator=(const detector&) = delete;

    const std::string& name() const { return m_name; }
    const mimo_shape& shape() const { return m_config.shape; }
    modulation mod() const { return m_config.mod; }
    const detector_capabilities& capabilities() const { return m_capabilities; }
    /// All parameters, defaults filled in.
    const detector_parameters& parameters() const { return m_config.parameters; }
    double parameter(const std::string& name) const;
    /// Changes a settable parameter (e.g. llr_clip); throws std::invalid_argument
    /// for an unknown, fixed or out-of-range one.
    void set_parameter(const std::string& name, double value);

    backend active_backend() const;
    int bits_per_symbol() const { return m_bits_per_symbol; }
    int llrs_per_problem() const { return m_config.shape.nt * m_bits_per_symbol; }

    /// What a problem with non-finite input or a rank-deficient H does
    /// (erasures.h): its LLRs are 0 in either case; `stop` (the default of the
    /// core API) then throws std::invalid_argument naming the first one,
    /// `erase` (the default of the blocks and programs) only reports it.
    void set_bad_problem_policy(bad_problem_policy policy) { m_policy = policy; }
    bad_problem_policy bad_problems() const { return m_policy; }

    /// Host memory; llr holds in.problems() * llrs_per_problem() values.
    /// Bad arguments (n0, null pointers, priors to a detector that takes none)
    /// throw std::invalid_argument; bad problems follow the policy above.
    detection_report detect(const detector_input& in, float* llr);
    detection_report detect(const detector_input& in,
                            int8_t* llr,
                            float int8_scale = k_default_int8_scale);
    /// One H per problem (S = 1), no priors.
    detection_report
    detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error). Bad problems are erased on the device and reported by
    /// the next check_device_status. A detector's device scratch is its own:
    /// use one stream at a time per detector.
    void detect_device(const detector_input& in, float* d_llr, cuda_stream_t stream);
    void detect_device(const detector_input& in,
                       int8_t* d_llr,
                       float int8_scale,
                       cuda_stream_t stream);
    /// Waits for `stream`; the report of every detect_device since the last
    /// check (problem indices counted across those calls, every erased one listed).
    /// Throws for the first bad problem under the `stop` policy.
    detection_report check_device_status(cuda_stream_t stream);

    /// Largest number of problems handed to the family at once: a larger call
    /// is detected in parts, which bounds the scratch memory (docs/detectors.md).
    size_t max_problems_per_run() const;
    /// Peak scratch memory (host or device, beyond the caller's buffers and the
    /// family's fixed tables) of a call of `problems` problems with S symbols per
    /// channel.
    size_t scratch_bytes(size_t problems, int symbols_per_channel = 1) const;

protected:
    /// `config` has been checked against `family` (detector_registry does it);
    /// the name, capabilities and parameters are the family's.
    detector(const detector_family& family, detector_config config);

    /// Called once from the family's constructor: the engine that does the
    /// work (engine/detector_engine.h), chosen by backend.
    void use_engine(std::unique_ptr<detail::detector_engine> engine);
    detail::detector_engine& engine() const { return *m_engine; }
    /// The family's llr_clip parameter as currently set (0 for a family without one).
    float llr_clip() const;

private:
    void check(const detector_input& in, const void* llr, const char* call) const;
    detector_input expanded(const detector_input& in, bool device, cuda_stream_t stream);
    size_t scratch_per_problem(int symbols_per_channel) const;
    detection_report apply_policy(detection_report report) const;
    detection_report run(const detector_input& in, float* llr);
    void run_device(const detector_input& in, float* d_llr, cuda_stream_t stream);

    std::string m_name;
    detector_config m_config;
    detector_capabilities m_capabilities;
    std::vector<parameter_spec> m_specs;
    int m_bits_per_symbol;
    bad_problem_policy m_policy = bad_problem_policy::stop;
    struct scratch;
    std::unique_ptr<scratch> m_scratch; // repeated H, float LLRs of the int8 path
    std::unique_ptr<detail::detector_engine> m_engine;
};

/// Throws std::invalid_argument unless n0 is finite and > 0 (N0 is checked in float,
/// where it is used: 1e-50 or 1e300 given as double fail here).
void check_noise_variance(double n0);

/// Quantises LLRs as detector::detect(..., int8_t*) does.
void llrs_to_int8(const float* llr, size_t count, float scale, int8_t* out);

} // namespace mimo_gpu
