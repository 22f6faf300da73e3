// detector_pipeline: a worker thread per listed device, each with its slots
// (stream, detector, device buffers, pinned staging), frames dealt round-robin
// and collected in order. A slot's completion is signalled by a host function
// enqueued after its copy out. A stream whose context failed never runs that
// function, so a worker waiting on a slot also queries its stream now and then
// and delivers the error instead of waiting forever.
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_pipeline.h>
#include <mimo_gpu/detector_registry.h>

#ifdef MIMO_GPU_HAVE_CUDA
#include "../runtime/cuda_buffers.h"
#endif

#include <condition_variable>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace mimo_gpu {

namespace {

using clock_type = std::chrono::steady_clock;

struct frame_job {
    uint64_t frame;
    const cfloat* H;
    const cfloat* y;
    size_t channels;
    float n0;
    float* llr;
    clock_type::time_point submitted;
};

struct frame_outcome {
    frame_result result;
    std::exception_ptr error;
};

/// Where finished frames go, in any order; collect() takes them in order.
class result_board
{
public:
    void deliver(frame_outcome o)
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_done.emplace(o.result.frame, std::move(o));
        }
        m_cv.notify_all();
    }
    frame_outcome take(uint64_t frame)
    {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_cv.wait(lock, [&] { return m_done.count(frame) > 0; });
        frame_outcome o = std::move(m_done.at(frame));
        m_done.erase(frame);
        return o;
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::map<uint64_t, frame_outcome> m_done;
};

double since_ms(clock_type::time_point t)
{
    return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

/// One device's (or the CPU's) worker thread and its queue.
class pipeline_worker
{
public:
    virtual ~pipeline_worker() = default;
    void push(const frame_job& job)
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_queue.push_back(job);
        }
        m_cv.notify_one();
    }

protected:
    void start()
    {
        m_thread = std::thread([this] { run(); });
    }
    /// Stops after the queue and every frame in flight are done.
    void finish()
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_one();
        if (m_thread.joinable())
            m_thread.join();
    }
    virtual void run() = 0;

    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<frame_job> m_queue;
    bool m_stop = false;
    std::thread m_thread;
};

std::unique_ptr<detector> make_pipeline_detector(const pipeline_config& c, backend b)
{
    auto det = make_detector(c.detector, c.config, b);
    det->set_bad_problem_policy(bad_problem_policy::erase); // reported per frame
    return det;
}

/// Frames one after another through the detector's host path: the CPU, or a
/// family without a device path on CUDA (its host path runs its own stream).
class host_worker final : public pipeline_worker
{
public:
    host_worker(const pipeline_config& c, backend b, result_board& board)
        : m_config(c), m_board(board), m_detector(make_pipeline_detector(c, b))
    {
        start();
    }
    ~host_worker() override { finish(); }

private:
    void run() override
    {
        for (;;) {
            frame_job job;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_cv.wait(lock, [&] { return m_stop || !m_queue.empty(); });
                if (m_queue.empty())
                    return;
                job = m_queue.front();
                m_queue.pop_front();
            }
            frame_outcome o;
            o.result.frame = job.frame;
            try {
                detector_input in;
                in.H = job.H;
                in.y = job.y;
                in.channels = job.channels;
                in.symbols_per_channel = m_config.symbols_per_channel;
                in.n0 = job.n0;
                o.result.report = m_detector->detect(in, job.llr);
            } catch (...) {
                o.error = std::current_exception();
            }
            o.result.latency_ms = since_ms(job.submitted);
            m_board.deliver(std::move(o));
        }
    }

    pipeline_config m_config;
    result_board& m_board;
    std::unique_ptr<detector> m_detector;
};

#ifdef MIMO_GPU_HAVE_CUDA

bool page_locked(const void* p)
{
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

/// Restores the calling thread's current device.
class device_scope
{
public:
    explicit device_scope(int device)
    {
        MIMO_CUDA_CHECK(cudaGetDevice(&m_previous));
        MIMO_CUDA_CHECK(cudaSetDevice(device));
    }
    ~device_scope() { cudaSetDevice(m_previous); } // never throws: used in destructors

private:
    int m_previous = 0;
};

class cuda_worker final : public pipeline_worker
{
public:
    cuda_worker(const pipeline_config& c, int device, result_board& board)
        : m_config(c), m_device(device), m_board(board)
    {
        const device_scope scope(device);
        const size_t B = c.config.shape.nr, U = c.config.shape.nt,
                     S = size_t(c.symbols_per_channel);
        for (int k = 0; k < c.slots_per_device; ++k) {
            auto s = std::make_unique<slot>();
            s->owner = this;
            s->det = make_pipeline_detector(c, backend::cuda);
            const size_t llrs = size_t(s->det->llrs_per_problem());
            s->dH.reserve(c.max_channels * B * U);
            s->dy.reserve(c.max_channels * S * B);
            s->dllr.reserve(c.max_channels * S * llrs);
            m_slots.push_back(std::move(s));
        }
        start();
    }
    ~cuda_worker() override
    {
        finish();
        // The slots' streams and buffers live on m_device; a frame that failed
        // may leave work queued, so every stream is drained before it is freed.
        int previous = 0;
        const bool switched = cudaGetDevice(&previous) == cudaSuccess &&
                              cudaSetDevice(m_device) == cudaSuccess;
        for (auto& s : m_slots)
            cudaStreamSynchronize(s->stream.get());
        m_slots.clear();
        cudaGetLastError();
        if (switched)
            cudaSetDevice(previous);
    }

private:
    struct slot {
        cuda_worker* owner = nullptr;
        detail::cuda_stream stream; // declared first: outlives the detector using it
        std::unique_ptr<detector> det;
        detail::device_array<cfloat> dH, dy;
        detail::device_array<float> dllr;
        detail::pinned_buffer<cfloat> hH, hy; // staging for pageable frames
        detail::pinned_buffer<float> hllr;
        frame_job job{};
        bool staged_out = false;
        bool done = false; // set by the host function after the copy out
    };

    static void CUDART_CB slot_done(void* p)
    {
        slot* s = static_cast<slot*>(p);
        // Notified under the lock: the worker may destroy the slot (and with
        // it the condition variable's owner) as soon as it sees done.
        std::lock_guard<std::mutex> lock(s->owner->m_mutex);
        s->done = true;
        s->owner->m_cv.notify_one();
    }

    void run() override
    {
        try {
            MIMO_CUDA_CHECK(cudaSetDevice(m_device));
        } catch (...) {
            fail_all(std::current_exception());
            return;
        }
        size_t next = 0, oldest = 0, in_flight = 0;
        const size_t K = m_slots.size();
        for (;;) {
            frame_job job;
            bool have_job = false, finalize = false;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                const auto ready = [&] {
                    return (in_flight > 0 && m_slots[oldest]->done) ||
                           (!m_queue.empty() && in_flight < K) ||
                           (m_stop && m_queue.empty() && in_flight == 0);
                };
                while (!m_cv.wait_for(lock, k_stream_poll, ready))
                    if (in_flight > 0 && stream_failed(*m_slots[oldest]))
                        m_slots[oldest]->done = true; // its host function will never run
                if (in_flight > 0 && m_slots[oldest]->done)
                    finalize = true;
                else if (!m_queue.empty() && in_flight < K) {
                    job = m_queue.front();
                    m_queue.pop_front();
                    have_job = true;
                } else
                    return;
            }
            if (finalize) {
                complete(*m_slots[oldest]);
                oldest = (oldest + 1) % K;
                --in_flight;
            } else if (have_job) {
                if (enqueue(*m_slots[next], job)) {
                    next = (next + 1) % K;
                    ++in_flight;
                }
            }
        }
    }

    /// Copies in, detection, copies out and the completion signal, on the slot's stream.
    bool enqueue(slot& s, const frame_job& job)
    {
        try {
            const size_t B = m_config.config.shape.nr, U = m_config.config.shape.nt,
                         S = size_t(m_config.symbols_per_channel), C = job.channels;
            const size_t hn = C * B * U, yn = C * S * B,
                         ln = C * S * size_t(s.det->llrs_per_problem());
            const cudaStream_t st = s.stream.get();
            const cfloat* H = job.H;
            const cfloat* y = job.y;
            if (!page_locked(H)) {
                std::memcpy(s.hH.reserve(hn), H, hn * sizeof(cfloat));
                H = s.hH.data();
            }
            if (!page_locked(y)) {
                std::memcpy(s.hy.reserve(yn), y, yn * sizeof(cfloat));
                y = s.hy.data();
            }
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                s.dH.data(), H, hn * sizeof(cfloat), cudaMemcpyHostToDevice, st));
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                s.dy.data(), y, yn * sizeof(cfloat), cudaMemcpyHostToDevice, st));
            detector_input in;
            in.H = s.dH.data();
            in.y = s.dy.data();
            in.channels = C;
            in.symbols_per_channel = int(S);
            in.n0 = job.n0;
            s.det->detect_device(in, s.dllr.data(), reinterpret_cast<cuda_stream_t>(st));
            s.staged_out = !page_locked(job.llr);
            float* out = s.staged_out ? s.hllr.reserve(ln) : job.llr;
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                out, s.dllr.data(), ln * sizeof(float), cudaMemcpyDeviceToHost, st));
            s.job = job;
            s.done = false;
            MIMO_CUDA_CHECK(cudaLaunchHostFunc(st, slot_done, &s));
            return true;
        } catch (...) {
            // The slot's stream may hold part of the frame: wait for it, clear
            // the detector's fault bookkeeping of the partial call, then report.
            cudaStreamSynchronize(s.stream.get());
            try {
                s.det->check_device_status(
                    reinterpret_cast<cuda_stream_t>(s.stream.get()));
            } catch (...) {
            }
            frame_outcome o;
            o.result.frame = job.frame;
            o.result.device = m_device;
            o.error = std::current_exception();
            m_board.deliver(std::move(o));
            return false;
        }
    }

    /// A stream in an error state (not merely busy or idle).
    static bool stream_failed(slot& s)
    {
        const cudaError_t e = cudaStreamQuery(s.stream.get());
        return e != cudaSuccess && e != cudaErrorNotReady;
    }
    static constexpr std::chrono::milliseconds k_stream_poll{ 50 };

    void complete(slot& s)
    {
        frame_outcome o;
        o.result.frame = s.job.frame;
        o.result.device = m_device;
        try {
            o.result.report = s.det->check_device_status(
                reinterpret_cast<cuda_stream_t>(s.stream.get()));
            if (s.staged_out)
                std::memcpy(s.job.llr,
                            s.hllr.data(),
                            s.job.channels * size_t(m_config.symbols_per_channel) *
                                size_t(s.det->llrs_per_problem()) * sizeof(float));
        } catch (...) {
            o.error = std::current_exception();
        }
        o.result.latency_ms = since_ms(s.job.submitted);
        m_board.deliver(std::move(o));
    }

    void fail_all(std::exception_ptr e)
    {
        for (;;) {
            frame_job job;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_cv.wait(lock, [&] { return m_stop || !m_queue.empty(); });
                if (m_queue.empty())
                    return;
                job = m_queue.front();
                m_queue.pop_front();
            }
            frame_outcome o;
            o.result.frame = job.frame;
            o.error = e;
            m_board.deliver(std::move(o));
        }
    }

    pipeline_config m_config;
    int m_device;
    result_board& m_board;
    std::vector<std::unique_ptr<slot>> m_slots;
};

#endif

} // namespace

struct detector_pipeline::impl {
    pipeline_config config;
    backend chosen = backend::cpu;
    result_board board;
    std::vector<std::unique_ptr<pipeline_worker>> workers;
    bool host_path = false; // one host_worker (CPU, or a family without a device path)
    uint64_t submitted = 0, collected = 0;
    size_t llrs_per_problem = 0;
};

detector_pipeline::detector_pipeline(const pipeline_config& config)
    : m_impl(std::make_unique<impl>())
{
    impl& p = *m_impl;
    p.config = config;
    if (p.config.devices.empty())
        p.config.devices = { 0 };
    if (config.slots_per_device < 1 || config.slots_per_device > 64)
        throw std::invalid_argument(
            "mimo_gpu: detector_pipeline: slots_per_device must be in 1..64, got " +
            std::to_string(config.slots_per_device));
    if (config.max_channels == 0)
        throw std::invalid_argument(
            "mimo_gpu: detector_pipeline: max_channels must be > 0");
    if (config.symbols_per_channel < 1)
        throw std::invalid_argument(
            "mimo_gpu: detector_pipeline: symbols_per_channel must be >= 1");
    // The configuration checked once, with the family's own errors, before any worker
    // starts.
    const detector_family& family = find_detector_family(config.detector);
    p.config.config = family.checked(config.config);
    p.chosen = resolve_backend(config.requested);
    if (p.chosen == backend::cpu || !family.capabilities.device_path) {
        // One worker through the host path; devices beyond the first are not used.
        p.host_path = true;
        p.workers.push_back(std::make_unique<host_worker>(p.config, p.chosen, p.board));
    } else {
#ifdef MIMO_GPU_HAVE_CUDA
        int count = 0;
        MIMO_CUDA_CHECK(cudaGetDeviceCount(&count));
        for (int d : p.config.devices)
            if (d < 0 || d >= count)
                throw std::invalid_argument(
                    "mimo_gpu: detector_pipeline: no CUDA device " + std::to_string(d) +
                    " (this machine has " + std::to_string(count) + ": 0.." +
                    std::to_string(count - 1) + ")");
        for (int d : p.config.devices)
            p.workers.push_back(std::make_unique<cuda_worker>(p.config, d, p.board));
#endif
    }
    p.llrs_per_problem = size_t(config.config.shape.nt) *
                         constellation(config.config.mod).bits_per_symbol();
}

detector_pipeline::~detector_pipeline()
{
    m_impl->workers.clear(); // each drains its queue and frames in flight
}

uint64_t detector_pipeline::submit(
    const cfloat* H, const cfloat* y, size_t channels, float n0, float* llr)
{
    impl& p = *m_impl;
    if (channels == 0 || channels > p.config.max_channels)
        throw std::invalid_argument("mimo_gpu: detector_pipeline: a frame has 1.." +
                                    std::to_string(p.config.max_channels) +
                                    " channels, got " + std::to_string(channels));
    if (!H || !y || !llr)
        throw std::invalid_argument("mimo_gpu: detector_pipeline: null buffer");
    check_noise_variance(n0);
    const frame_job job{ p.submitted, H, y, channels, n0, llr, clock_type::now() };
    p.workers[p.submitted % p.workers.size()]->push(job);
    return p.submitted++;
}

frame_result detector_pipeline::collect()
{
    impl& p = *m_impl;
    if (p.collected == p.submitted)
        throw std::logic_error("mimo_gpu: detector_pipeline: no frame to collect");
    frame_outcome o = p.board.take(p.collected++);
    if (o.error)
        std::rethrow_exception(o.error);
    return o.result;
}

size_t detector_pipeline::pending() const
{
    return size_t(m_impl->submitted - m_impl->collected);
}
size_t detector_pipeline::slots() const
{
    return m_impl->host_path
               ? 1
               : m_impl->workers.size() * size_t(m_impl->config.slots_per_device);
}
backend detector_pipeline::active_backend() const { return m_impl->chosen; }
const pipeline_config& detector_pipeline::config() const { return m_impl->config; }

} // namespace mimo_gpu
