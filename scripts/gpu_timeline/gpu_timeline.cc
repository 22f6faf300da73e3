// gpu_timeline: a development aid with no part in the module. Preloaded into a
// CUDA program (LD_PRELOAD), it records every kernel, copy and memset the GPU
// runs, with its stream, start and end (CUPTI's activity API, which adds no
// serialisation), and writes them as CSV to $GPU_TIMELINE when the program
// exits. scripts/gpu_timeline/summary.py turns that into where the GPU's time
// went: busy time, overlap, idle gaps, per kernel and per stream. There is no
// Nsight Systems on the device machine; this answers the same questions.
//
// Build (needs CUDA's CUPTI headers and library):
//   g++ -O2 -shared -fPIC -o libgpu_timeline.so gpu_timeline.cc \
//       -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcupti
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr size_t k_buffer_bytes = 8 << 20;

struct record {
    char kind; // K kernel, H/D/d/P copy (to host, to device, device to device, other),
               // S memset, R runtime API call (stream: the thread id)
    uint32_t stream;
    uint64_t start, end, bytes;
    std::string name;
};

// Never destroyed: the records must outlive every other static at exit.
std::mutex& g_mutex = *new std::mutex;
std::vector<record>& g_records = *new std::vector<record>;
void write_out();

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records)
{
    // Registered here, after the CUDA runtime's own exit handler, so that it runs
    // first: the records are flushed while the context still exists.
    static const bool registered = (std::atexit(write_out), true);
    (void)registered;
    *buffer = static_cast<uint8_t*>(aligned_alloc(8, k_buffer_bytes));
    *size = k_buffer_bytes;
    *max_records = 0;
}

char copy_kind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return 'D';
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return 'H';
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return 'd';
    default:
        return 'P';
    }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid)
{
    CUpti_Activity* a = nullptr;
    std::vector<record> got;
    while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
        if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
            got.push_back({ 'K', k->streamId, k->start, k->end, 0, k->name ? k->name : "?" });
        } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
            got.push_back({ copy_kind(m->copyKind), m->streamId, m->start, m->end, m->bytes, "" });
        } else if (a->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
            const auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(a);
            const char* name = nullptr;
            cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, r->cbid, &name);
            got.push_back({ 'R', r->threadId, r->start, r->end, 0, name ? name : "?" });
        } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
            got.push_back({ 'S', m->streamId, m->start, m->end, m->bytes, "" });
        }
    }
    free(buffer);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.insert(g_records.end(), got.begin(), got.end());
}

void write_out()
{
    cuptiActivityFlushAll(1);
    const char* path = std::getenv("GPU_TIMELINE");
    std::lock_guard<std::mutex> lock(g_mutex);
    FILE* f = std::fopen(path ? path : "gpu_timeline.csv", "w");
    if (!f)
        return;
    std::fprintf(f, "kind,stream,start_ns,end_ns,bytes,name\n");
    for (const auto& r : g_records)
        std::fprintf(f,
                     "%c,%u,%llu,%llu,%llu,%s\n",
                     r.kind,
                     r.stream,
                     (unsigned long long)r.start,
                     (unsigned long long)r.end,
                     (unsigned long long)r.bytes,
                     r.name.substr(0, 400).c_str());
    std::fclose(f);
    std::fprintf(stderr, "gpu_timeline: %zu records\n", g_records.size());
}

__attribute__((constructor)) void start_recording()
{
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
        return;
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (std::getenv("GPU_TIMELINE_API"))
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
}

} // namespace
