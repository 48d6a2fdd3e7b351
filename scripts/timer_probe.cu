// timer_probe: the third reference for mltop's short-kernel timing against
// Nsight Compute (scripts/timer-probe-gpu.sh builds and runs it).
//
// For the RMS-norm kernel of examples/timer_probe, included here twice from
// the one source (PROBE=0 and PROBE=1), each launch is preceded by mltop's
// own cold flush (shaders/l2flush: a read of 3× the L2) and measured three
// ways at once:
//   event   cudaEvent elapsed time around the single launch;
//   probe   first block start → last block end on %globaltimer (PROBE=1);
//   gap     a 1-thread stamp kernel's %globaltimer just before the start
//           event → the first block's start: the launch-to-start gap;
//   MHz     the SM clock the blocks ran at (Σ clock64 / Σ globaltimer ns).
// PROBE=0 and PROBE=1 launches alternate, so the probe's own cost is the
// difference of their event times under the same clocks.
//
//   timer_probe resolution                        how %globaltimer ticks
//   timer_probe run [--reps N] [--flush read|write|none] ROWSxCOLS...
//   timer_probe ncu PROBE REPS ROWSxCOLS          launches for ncu to time
//
// Output lines start with "TP " and are key=value pairs (scripts/timer_probe.py
// reads them). Build: nvcc -O3 -std=c++17 -arch=native -o timer_probe timer_probe.cu

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "../shaders/l2flush/l2flush.cu" // mltop_l2_flush: mltop's cold flush, unchanged

namespace probe_off {
#undef PROBE
#define PROBE 0
#include "../examples/timer_probe/rmsnorm_probe.cu"
} // namespace probe_off

namespace probe_on {
#undef PROBE
#define PROBE 1
#include "../examples/timer_probe/rmsnorm_probe.cu"
} // namespace probe_on

typedef unsigned long long u64;

// Slots of u64 each launch owns in the probe array: [0..3] the kernel's
// (rmsnorm_probe.cu), [4] the stamp taken just before the launch.
static const int kSlot = 8;
static const float kEps = 1e-6f;

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t err_ = (call);                                                                   \
        if (err_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "timer_probe: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(err_), \
                    __FILE__, __LINE__);                                                             \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

__device__ __forceinline__ u64 tp_globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

__global__ void tp_stamp(u64* out) { *out = tp_globaltimer(); }

// Inputs in [-1, 1) from a hash of the index: any values do for timing.
__global__ void tp_fill(float* x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u;
        h ^= h >> 15;
        x[i] = (float)(h & 0xffffu) / 32768.0f - 1.0f;
    }
}

// One thread reads %globaltimer back to back and records each change:
// steps[k] is the k-th increment, counts = {reads, changes}.
__global__ void tp_timer_steps(u64* steps, int max_steps, u64* counts) {
    u64 prev = tp_globaltimer(), reads = 0;
    int n = 0;
    while (n < max_steps && reads < (1ull << 24)) {
        const u64 t = tp_globaltimer();
        ++reads;
        if (t != prev) {
            steps[n++] = t - prev;
            prev = t;
        }
    }
    counts[0] = reads;
    counts[1] = (u64)n;
}

struct Size {
    int rows, cols;
};

static Size parse_size(const char* s) {
    Size z{0, 0};
    int used = 0;
    if (sscanf(s, "%dx%d%n", &z.rows, &z.cols, &used) != 2 || s[used] != 0 || z.rows < 1 || z.cols < 1) {
        fprintf(stderr, "timer_probe: size %s is not ROWSxCOLS with both at least 1 (e.g. 4096x2048)\n", s);
        exit(2);
    }
    return z;
}

static double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / v.size();
}

// The device buffers of one size.
struct Buffers {
    float *x = nullptr, *y = nullptr;
    u64* slots = nullptr; // kSlot u64 per launch
    int launches = 0;
    Buffers(Size z, int launches_) : launches(launches_) {
        const size_t n = (size_t)z.rows * z.cols;
        CHECK(cudaMalloc(&x, n * sizeof(float)));
        CHECK(cudaMalloc(&y, n * sizeof(float)));
        CHECK(cudaMalloc(&slots, (size_t)launches * kSlot * sizeof(u64)));
        CHECK(cudaMemset(slots, 0, (size_t)launches * kSlot * sizeof(u64)));
        tp_fill<<<1024, 256>>>(x, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
    }
    ~Buffers() {
        cudaFree(x);
        cudaFree(y);
        cudaFree(slots);
    }
    u64* slot(int launch) { return slots + (size_t)launch * kSlot; }
    std::vector<u64> download() {
        std::vector<u64> h((size_t)launches * kSlot);
        CHECK(cudaMemcpy(h.data(), slots, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
        return h;
    }
};

static void launch_rmsnorm(int probe, Size z, Buffers& b, int launch) {
    if (probe)
        probe_on::rmsnorm_rows<<<z.rows, WG>>>(b.x, b.y, b.slot(launch), z.cols, kEps);
    else
        probe_off::rmsnorm_rows<<<z.rows, WG>>>(b.x, b.y, b.slot(launch), z.cols, kEps);
}

// The span, start and clock of one PROBE=1 launch's slots; ok false when
// no block wrote them.
struct Span {
    bool ok;
    double span_ns, gap_ns, cycles, block_ns;
};

static Span span_of(const u64* s) {
    if (s[1] == 0) return Span{false, 0, 0, 0, 0};
    const u64 start = ~s[0];
    return Span{true, (double)(s[1] - start), s[4] ? (double)((long long)(start - s[4])) : 0, (double)s[2], (double)s[3]};
}

// The cache before each timed launch: mltop's cold (read), dirty (write) or hot.
struct Flush {
    std::string mode;
    void* buf = nullptr;
    size_t bytes = 0;
    int grid = 0;
    Flush(const std::string& m, int l2, int sms) : mode(m) {
        if (mode == "none") return;
        if (mode != "read" && mode != "write") {
            fprintf(stderr, "timer_probe: --flush %s: use read (mltop's cold), write (dirty) or none (hot)\n", m.c_str());
            exit(2);
        }
        bytes = (size_t)(mode == "read" ? 3 : 2) * l2; // as cuda/timing_linux.go
        CHECK(cudaMalloc(&buf, bytes));
        CHECK(cudaMemset(buf, 0, bytes));
        grid = sms * 4;
    }
    ~Flush() { cudaFree(buf); }
    void run(int i) {
        if (mode == "read")
            mltop_l2_flush<<<grid, 256>>>((const uint4*)buf, (u32)(bytes / 16), 1u);
        else if (mode == "write")
            CHECK(cudaMemsetAsync(buf, i & 0xff, bytes));
    }
};

static void print_device() {
    int dev = 0, l2 = 0, sms = 0, drv = 0, rt = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, dev));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDriverGetVersion(&drv));
    CHECK(cudaRuntimeGetVersion(&rt));
    std::string name(p.name);
    std::replace(name.begin(), name.end(), ' ', '_');
    printf("TP device name=%s sm=%d%d sms=%d l2_bytes=%d driver=%d runtime=%d\n", name.c_str(), p.major, p.minor, sms,
           l2, drv, rt);
}

// run: per size, warm-up then reps pairs of (PROBE=0, PROBE=1) launches, each
// as flush → stamp → event → kernel → event.
static void run_size(Size z, int reps, Flush& flush) {
    const int warm = 5, pairs = warm + reps, launches = 2 * pairs;
    Buffers b(z, launches);
    std::vector<cudaEvent_t> ev(2 * launches);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    for (int i = 0; i < pairs; ++i) {
        for (int probe = 0; probe < 2; ++probe) {
            const int l = 2 * i + probe;
            flush.run(l);
            tp_stamp<<<1, 1>>>(b.slot(l) + 4);
            CHECK(cudaEventRecord(ev[2 * l]));
            launch_rmsnorm(probe, z, b, l);
            CHECK(cudaEventRecord(ev[2 * l + 1]));
        }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const std::vector<u64> h = b.download();
    std::vector<double> event[2], span, gap;
    double cycles = 0, block_ns = 0;
    int missing = 0;
    for (int i = warm; i < pairs; ++i) {
        for (int probe = 0; probe < 2; ++probe) {
            const int l = 2 * i + probe;
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, ev[2 * l], ev[2 * l + 1]));
            event[probe].push_back(ms * 1e3);
        }
        const Span s = span_of(&h[(size_t)(2 * i + 1) * kSlot]);
        if (!s.ok) {
            ++missing;
            continue;
        }
        span.push_back(s.span_ns / 1e3);
        gap.push_back(s.gap_ns / 1e3);
        cycles += s.cycles;
        block_ns += s.block_ns;
    }
    for (auto& e : ev) CHECK(cudaEventDestroy(e));
    printf("TP size rows=%d cols=%d mb=%.1f reps=%d flush=%s event0_us=%.3f event1_us=%.3f span_us=%.3f "
           "span_mean_us=%.3f gap_us=%.3f probe_mhz=%.0f missing=%d\n",
           z.rows, z.cols, 2.0 * z.rows * z.cols * 4 / 1e6, reps, flush.mode.c_str(), median(event[0]),
           median(event[1]), median(span), mean(span), median(gap), block_ns > 0 ? cycles / block_ns * 1e3 : 0,
           missing);
    fflush(stdout);
}

// ncu: launches of one variant only, no flush of ours (ncu's
// --cache-control all flushes before each), then the probe's spans as
// the GPU saw them under ncu.
static void run_ncu(int probe, int reps, Size z) {
    Buffers b(z, reps);
    for (int l = 0; l < reps; ++l) launch_rmsnorm(probe, z, b, l);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    if (!probe) return;
    const std::vector<u64> h = b.download();
    std::vector<double> span;
    double cycles = 0, block_ns = 0;
    for (int l = 2; l < reps; ++l) { // as ncu --launch-skip 2
        const Span s = span_of(&h[(size_t)l * kSlot]);
        if (!s.ok) continue;
        span.push_back(s.span_ns / 1e3);
        cycles += s.cycles;
        block_ns += s.block_ns;
    }
    printf("TP ncuprobe rows=%d cols=%d n=%zu span_us=%.3f span_mean_us=%.3f probe_mhz=%.0f\n", z.rows, z.cols,
           span.size(), median(span), mean(span), block_ns > 0 ? cycles / block_ns * 1e3 : 0);
}

static void run_resolution() {
    const int max_steps = 4096;
    u64 *steps = nullptr, *counts = nullptr;
    CHECK(cudaMalloc(&steps, max_steps * sizeof(u64)));
    CHECK(cudaMalloc(&counts, 2 * sizeof(u64)));
    tp_timer_steps<<<1, 1>>>(steps, max_steps, counts); // warm-up
    tp_timer_steps<<<1, 1>>>(steps, max_steps, counts);
    CHECK(cudaGetLastError());
    std::vector<u64> h(max_steps), c(2);
    CHECK(cudaMemcpy(c.data(), counts, 2 * sizeof(u64), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h.data(), steps, max_steps * sizeof(u64), cudaMemcpyDeviceToHost));
    cudaFree(steps);
    cudaFree(counts);
    const int n = (int)c[1];
    std::vector<double> v(h.begin(), h.begin() + n);
    if (n < 2) {
        printf("TP timer steps=%d reads=%llu note=globaltimer_did_not_advance\n", n, c[0]);
        return;
    }
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    printf("TP timer steps=%d reads=%llu step_min_ns=%.0f step_median_ns=%.0f step_max_ns=%.0f reads_per_step=%.1f\n", n,
           c[0], lo, median(v), hi, (double)c[0] / n);
}

static int usage() {
    fprintf(stderr, "usage: timer_probe resolution\n"
                    "       timer_probe run [--reps N] [--flush read|write|none] ROWSxCOLS...\n"
                    "       timer_probe ncu PROBE(0|1) REPS ROWSxCOLS\n");
    return 2;
}

static int positive(const char* what, const char* s) {
    char* end = nullptr;
    const long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < 1 || v > 1000000) {
        fprintf(stderr, "timer_probe: %s %s: give a whole number from 1 to 1000000\n", what, s);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string cmd = argv[1];
    if (cmd == "resolution") {
        print_device();
        run_resolution();
        return 0;
    }
    if (cmd == "ncu") {
        if (argc != 5) return usage();
        const std::string p = argv[2];
        if (p != "0" && p != "1") {
            fprintf(stderr, "timer_probe: ncu PROBE %s: give 0 or 1\n", argv[2]);
            return 2;
        }
        run_ncu(p == "1", positive("REPS", argv[3]), parse_size(argv[4]));
        return 0;
    }
    if (cmd != "run") return usage();
    int reps = 50;
    std::string mode = "read";
    std::vector<Size> sizes;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--reps" || a == "--flush") && i + 1 < argc) {
            if (a == "--reps")
                reps = positive("--reps", argv[++i]);
            else
                mode = argv[++i];
        } else {
            sizes.push_back(parse_size(argv[i]));
        }
    }
    if (sizes.empty()) return usage();
    print_device();
    int dev = 0, l2 = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    Flush flush(mode, l2, sms);
    for (const Size& z : sizes) run_size(z, reps, flush);
    return 0;
}
