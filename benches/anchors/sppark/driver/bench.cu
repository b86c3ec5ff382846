// sppark MSM anchor benchmark: BLS12-381 G1, random scalars.
//
// Mirrors sppark's poc/msm-cuda/cuda/pippenger.cu for the type set-up
// (jacobian_t result, xyzz_t buckets, Affine_t bases, fr_t scalars, mont=false
// i.e. canonical little-endian scalars like blst_scalar), then times
//
//   points-per-call : sppark's mult_pippenger<bucket_t>(out, points, n,
//                     scalars, false) -- exactly what the poc's extern "C"
//                     mult_pippenger does: a fresh msm_t{nullptr, n} per call,
//                     points AND scalars copied host->device every call (from
//                     pinned host memory here).
//   resident-points : msm_t<...> msm{points, n} built once (bases copied to
//                     the device once, untimed), then each timed call is
//                     msm.invoke(out, (const affine_t*)nullptr, n, scalars,
//                     false): only the scalars (pinned host) are copied.
//
// Output: one JSON line per measurement on stdout; progress on stderr.

#include <cuda.h>

#include <ff/bls12-381.hpp>

#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>

#ifndef __CUDA_ARCH__

#include <util/all_gpus.cpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef SPPARK_COMMIT
# define SPPARK_COMMIT "unknown"
#endif

extern "C" {
void gen_scalars(void* out, size_t n, uint64_t seed, int nthreads);
int  gen_points(void* out, size_t n, uint64_t seed, int nthreads);
void cpu_msm(void* out, const void* points, const void* scalars, size_t n);
int  p1_equal(const void* a, const void* b);
int  p1_on_curve(const void* a);
void p1_hex(char* out, const void* p);
}

static_assert(sizeof(affine_t) == 96, "affine_t must match blst_p1_affine");
static_assert(sizeof(point_t) == 144, "point_t must match blst_p1");
static_assert(sizeof(scalar_t) == 32, "scalar_t must be 32 bytes");

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, \
            cudaGetErrorString(e_)); exit(2); } } while (0)

typedef std::chrono::steady_clock clk;
static double ms_since(clk::time_point t0)
{   return std::chrono::duration<double, std::milli>(clk::now() - t0).count();   }

static std::vector<int> parse_list(const char* s)
{
    std::vector<int> v;
    std::string str(s);
    size_t pos = 0;
    while (pos < str.size()) {
        size_t c = str.find(',', pos);
        if (c == std::string::npos) c = str.size();
        if (c > pos) v.push_back(atoi(str.substr(pos, c - pos).c_str()));
        pos = c + 1;
    }
    return v;
}

struct stats_t {
    double median, min;
    std::vector<double> all;
};

static stats_t summarize(std::vector<double> t)
{
    stats_t s;
    s.all = t;
    std::sort(t.begin(), t.end());
    size_t n = t.size();
    s.min = t[0];
    s.median = (n & 1) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    return s;
}

static std::string device_name;

static void emit(const char* mode, int lg, const stats_t& s, const char* extra)
{
    printf("{\"anchor\":\"sppark\",\"commit\":\"%s\",\"mode\":\"%s\","
           "\"op\":\"msm-g1\",\"size\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f,"
           "\"runs\":%zu,\"device\":\"%s\"",
           SPPARK_COMMIT, mode, lg, s.median, s.min, s.all.size(),
           device_name.c_str());
    printf(",\"times_ms\":[");
    for (size_t i = 0; i < s.all.size(); i++)
        printf("%s%.4f", i ? "," : "", s.all[i]);
    printf("]%s}\n", extra);
    fflush(stdout);
}

static void fail_rust(const char* what, const RustError& e)
{
    fprintf(stderr, "%s failed: code %d (%s) %s\n", what, e.code,
            cudaGetErrorString((cudaError_t)e.code),
            e.message ? e.message : "");
    printf("{\"anchor\":\"sppark\",\"error\":\"%s failed: code %d %s\"}\n",
           what, e.code, cudaGetErrorString((cudaError_t)e.code));
    fflush(stdout);
    exit(3);
}

// Times `call` warmup + runs times, the warm-up calls untimed; `what` names a failure.
template <class F>
static std::vector<double> time_runs(int warmup, int runs, const char* what, F call)
{
    std::vector<double> t;
    for (int i = 0; i < warmup + runs; i++) {
        auto s = clk::now();
        RustError e = call();
        double dt = ms_since(s);
        if (e.code != cudaSuccess) fail_rust(what, e);
        if (i >= warmup) t.push_back(dt);
    }
    return t;
}

static int bench_main(int argc, char* argv[]);

int main(int argc, char* argv[])
{
    try {
        return bench_main(argc, argv);
    } catch (const std::exception& e) {
        fprintf(stderr, "fatal: %s\n", e.what());
        printf("{\"anchor\":\"sppark\",\"error\":\"fatal exception (see stderr)\"}\n");
        return 5;
    }
}

static int bench_main(int argc, char* argv[])
{
    std::vector<int> sizes = {16, 18, 20, 22, 24};
    std::vector<int> checks = {16};
    bool do_ppc = true, do_res = true;
    int runs = 7, runs_big = 5, big_from = 24, warmup = 2;
    int nthreads = (int)std::thread::hardware_concurrency();
    uint64_t seed = 20240601;
    bool pool_retain = false;

    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) { fprintf(stderr, "missing value for %s\n", a.c_str()); exit(1); }
            return argv[++i];
        };
        if (a == "--sizes") sizes = parse_list(next());
        else if (a == "--check") checks = parse_list(next());
        else if (a == "--runs") runs = atoi(next());
        else if (a == "--runs-big") runs_big = atoi(next());
        else if (a == "--big-from") big_from = atoi(next());
        else if (a == "--warmup") warmup = atoi(next());
        else if (a == "--threads") nthreads = atoi(next());
        else if (a == "--seed") seed = strtoull(next(), nullptr, 0);
        else if (a == "--pool-retain") pool_retain = true;
        else if (a == "--modes") {
            std::string m = next();
            do_ppc = m.find("points-per-call") != std::string::npos || m == "all";
            do_res = m.find("resident-points") != std::string::npos || m == "all";
        } else {
            fprintf(stderr,
                "usage: %s [--sizes 16,18,...] [--modes points-per-call,resident-points]\n"
                "          [--runs 7] [--runs-big 5] [--big-from 24] [--warmup 2]\n"
                "          [--check 16,18 (0 = none)] [--threads N] [--seed S]\n"
                "          [--pool-retain (raise the default CUDA mempool's release\n"
                "           threshold so sppark's per-call cudaMallocAsync reuses memory)]\n",
                argv[0]);
            return 1;
        }
    }
    if (sizes.empty()) return 1;
    std::sort(sizes.begin(), sizes.end());
    int maxlg = sizes.back();
    size_t NMAX = (size_t)1 << maxlg;

    // Device (sppark's own GPU registry picks device 0).
    const gpu_t& gpu = select_gpu(0);
    device_name = gpu.props().name;
    fprintf(stderr, "device: %s, %d SMs, sppark %s, host threads %d\n",
            device_name.c_str(), gpu.sm_count(), SPPARK_COMMIT, nthreads);
    if (pool_retain) {
        // Process-level CUDA setting, sppark untouched: keep freed stream-ordered
        // allocations in the pool instead of returning them at each sync.
        cudaMemPool_t mp;
        CK(cudaDeviceGetDefaultMemPool(&mp, gpu.cid()));
        uint64_t thr = UINT64_MAX;
        CK(cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &thr));
        fprintf(stderr, "default mempool release threshold set to UINT64_MAX\n");
    }

    // Pinned host inputs.
    affine_t* points = nullptr;
    scalar_t* scalars = nullptr;
    auto t0 = clk::now();
    CK(cudaHostAlloc((void**)&points, NMAX * sizeof(affine_t), cudaHostAllocDefault));
    CK(cudaHostAlloc((void**)&scalars, NMAX * sizeof(scalar_t), cudaHostAllocDefault));
    double alloc_ms = ms_since(t0);

    t0 = clk::now();
    if (gen_points(points, NMAX, seed, nthreads) != 0) {
        fprintf(stderr, "generated points failed the on-curve/in-G1 spot check\n");
        printf("{\"anchor\":\"sppark\",\"error\":\"bad generated points\"}\n");
        return 4;
    }
    double genp_ms = ms_since(t0);
    t0 = clk::now();
    gen_scalars(scalars, NMAX, seed + 1, nthreads);
    double gens_ms = ms_since(t0);
    fprintf(stderr, "host: pinned alloc %.0f ms, %zu distinct points %.0f ms, "
                    "scalars %.0f ms\n", alloc_ms, NMAX, genp_ms, gens_ms);

    char extra[256];
    snprintf(extra, sizeof(extra), ",\"bases\":\"distinct ((a_t+i*b)*G)\","
             "\"mempool\":\"%s\"", pool_retain ? "retain" : "default");

    for (int lg : sizes) {
        size_t n = (size_t)1 << lg;
        int R = lg >= big_from ? runs_big : runs;
        point_t r_ppc, r_res;
        bool have_ppc = false, have_res = false;

        if (do_ppc) {
            std::vector<double> t = time_runs(warmup, R, "mult_pippenger", [&] {
                return mult_pippenger<bucket_t>(&r_ppc, points, n, scalars, false);
            });
            have_ppc = true;
            char ex[512];
            snprintf(ex, sizeof(ex), "%s,\"inputs\":\"pinned host points+scalars, "
                     "both copied HtoD every call\"", extra);
            emit("points-per-call", lg, summarize(t), ex);
            fprintf(stderr, "points-per-call 2^%d done\n", lg);
        }

        if (do_res) {
            try {
                auto s0 = clk::now();
                msm_t<bucket_t, point_t, affine_t, scalar_t> msm{points, n};
                CK(cudaDeviceSynchronize());   // msm_t's HtoD of the bases is async
                double setup_ms = ms_since(s0);

                std::vector<double> t = time_runs(warmup, R, "msm_t::invoke", [&] {
                    return msm.invoke(r_res, (const affine_t*)nullptr, n, (const scalar_t*)scalars, false);
                });
                have_res = true;
                char ex[512];
                snprintf(ex, sizeof(ex), "%s,\"inputs\":\"bases resident on device "
                         "(msm_t ctor), pinned host scalars copied HtoD every call\","
                         "\"setup_ms\":%.3f", extra, setup_ms);
                emit("resident-points", lg, summarize(t), ex);
                fprintf(stderr, "resident-points 2^%d done\n", lg);
            } catch (const cuda_error& e) {
                fprintf(stderr, "msm_t: %s\n", e.what());
                printf("{\"anchor\":\"sppark\",\"error\":\"msm_t at 2^%d: %s\"}\n",
                       lg, e.what());
                return 3;
            }
        }

        if (have_ppc && have_res) {
            bool eq = p1_equal(&r_ppc, &r_res);
            printf("{\"crosscheck\":\"%s\",\"size\":%d,\"what\":\"points-per-call "
                   "result == resident-points result\"}\n", eq ? "ok" : "mismatch", lg);
            fflush(stdout);
        }

        if (std::find(checks.begin(), checks.end(), lg) != checks.end()) {
            point_t ref;
            auto s = clk::now();
            cpu_msm(&ref, points, scalars, n);
            double cpu_ms = ms_since(s);
            char hx[200];
            p1_hex(hx, &ref);
            fprintf(stderr, "cpu blst_p1s_mult_pippenger 2^%d: %.0f ms\n", lg, cpu_ms);
            const char* names[2] = {"points-per-call", "resident-points"};
            point_t* res[2] = {have_ppc ? &r_ppc : nullptr, have_res ? &r_res : nullptr};
            for (int k = 0; k < 2; k++) {
                if (!res[k]) continue;
                bool eq = p1_equal(res[k], &ref) && p1_on_curve(res[k]);
                if (eq) {
                    printf("{\"check\":\"ok\",\"size\":%d,\"mode\":\"%s\",\"ref\":"
                           "\"blst_p1s_mult_pippenger\"}\n", lg, names[k]);
                } else {
                    char hg[200];
                    p1_hex(hg, res[k]);
                    printf("{\"check\":\"mismatch\",\"size\":%d,\"mode\":\"%s\","
                           "\"ref\":\"blst_p1s_mult_pippenger\",\"cpu\":\"%s\","
                           "\"gpu\":\"%s\"}\n", lg, names[k], hx, hg);
                }
                fflush(stdout);
            }
        }
    }

    cudaFreeHost(points);
    cudaFreeHost(scalars);
    return 0;
}

#endif
