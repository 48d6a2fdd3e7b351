// The emulated launch (cuda_emu.h): emu_main reads a launch that mltop's
// cuda/cudaemu wrote into a folder, runs the entry over the grid and
// writes the buffers back.
//
//   launch.txt  gx gy gz bx by bz dynamic_shared_bytes
//               nbufs nparams nsymbols
//               per parameter: kind(s: a scalar or pointer in an 8-byte
//                 slot, b: a struct's bytes) bytes nrelocs {offset buffer}…
//               per symbol: its linker name and bytes
//   params.bin  the parameters' bytes, one after another
//   bufI.bin    buffer I (read, then written back)
//   symI.bin    symbol I's bytes (a __constant__ or __device__ global)
//
// A reloc writes buffer B's address at an offset of a parameter: a
// pointer parameter, or a pointer field of a struct parameter.
#pragma once
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

// How the scheduler and a thread hand over: ucontext's swapcontext on
// Linux; on macOS (whose ucontext is deprecated, and not dependable on
// arm64) one OS thread per GPU thread, of which one runs at a time, handing
// a baton through semaphores: the same order, slower switches.
#if defined(__APPLE__) || defined(EMU_THREAD_FIBERS)
#define EMU_THREAD_FIBERS 1
#include <pthread.h>
#include <semaphore>
struct emu_context {
  std::binary_semaphore go{0};
  bool started = false;
};
inline std::binary_semaphore emu_back{0};
#else
#include <ucontext.h>
struct emu_context {
  ucontext_t uc;
};
inline ucontext_t emu_sched;  // the scheduler's context
#endif

// A thread of the block being run: its context, stack and state.
struct emu_fiber {
  emu_context ctx;
  unsigned char* stack = nullptr;
  emu_state state = emu_ready;
  uint3 tid{};
  int lane = 0;
  emu_warp* warp = nullptr;
};
// Each thread's stack: 1 MiB of address space (pages are taken as used),
// with a page below it that faults on an overflow.
constexpr size_t emu_stack_bytes = 1 << 20;
inline std::vector<emu_fiber*> emu_ready_q;  // ready threads, FIFO
inline size_t emu_ready_at = 0;
inline void (*emu_body)() = nullptr;         // runs the entry for the current thread

inline void emu_fiber_main();

#if defined(EMU_THREAD_FIBERS)
inline void emu_to_scheduler(emu_fiber* me) {
  emu_back.release();
  me->ctx.go.acquire();
}
inline void emu_run(emu_fiber* f) {
  f->ctx.go.release();
  emu_back.acquire();
}
inline void* emu_thread_main(void*) {
  for (;;) {
    // emu_cur is the fiber the scheduler released (set before its release)
    emu_fiber_main();
  }
  return nullptr;
}
inline void* emu_thread_start(void* p) {
  static_cast<emu_fiber*>(p)->ctx.go.acquire();
  return emu_thread_main(p);
}
// emu_start makes f run emu_fiber_main from its start at its next emu_run:
// its thread, made on its first block, waits there between blocks.
inline void emu_start(emu_fiber* f) {
  if (f->ctx.started) return;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, emu_stack_bytes);
  pthread_t th;
  if (pthread_create(&th, &a, emu_thread_start, f) != 0) {
    std::fprintf(stderr, "cannot start a thread for the emulation\n");
    std::_Exit(2);
  }
  pthread_detach(th);
  f->ctx.started = true;
}
// the end of a thread's block: back to the scheduler, and wait there for
// the next block
inline void emu_finish(emu_fiber* me) { emu_to_scheduler(me); }
#else
inline void emu_to_scheduler(emu_fiber* me) { swapcontext(&me->ctx.uc, &emu_sched); }
inline void emu_run(emu_fiber* f) { swapcontext(&emu_sched, &f->ctx.uc); }
inline void emu_start(emu_fiber* f) {
  getcontext(&f->ctx.uc);
  f->ctx.uc.uc_stack.ss_sp = f->stack;
  f->ctx.uc.uc_stack.ss_size = emu_stack_bytes;
  f->ctx.uc.uc_link = nullptr;
  makecontext(&f->ctx.uc, emu_fiber_main, 0);
}
inline void emu_finish(emu_fiber* me) { swapcontext(&me->ctx.uc, &emu_sched); }  // never resumed
#endif

inline void emu_wait(emu_state s) {
  emu_fiber* me = emu_cur;
  me->state = s;
  emu_to_scheduler(me);
}

inline void emu_make_ready(emu_fiber* f) {
  f->state = emu_ready;
  emu_ready_q.push_back(f);
}

inline void emu_release(emu_state s) {
  if (s == emu_at_warp) {  // the lanes of the running thread's warp
    const size_t first = size_t(emu_w->id) * 32;
    for (size_t i = first; i < (first + 32 < emu_fibers.size() ? first + 32 : emu_fibers.size()); i++)
      if (emu_fibers[i]->state == s) emu_make_ready(emu_fibers[i]);
    return;
  }
  for (emu_fiber* f : emu_fibers)
    if (f->state == s) emu_make_ready(f);
}

// A thread's life: the entry, then out of its warp and out of the block's
// __syncthreads (which then may complete for the threads waiting in it).
inline void emu_fiber_main() {
  emu_fiber* f = emu_cur;
  emu_body();
  f->state = emu_done;
  emu_live--;
  f->warp->alive &= ~(1u << f->lane);
  for (int i = 0; i < f->warp->ncoll; i++) emu_coll_complete(*f->warp, f->warp->coll[i]);
  if (emu_at_bar > 0 && emu_at_bar == emu_live) {
    emu_at_bar = 0;
    emu_r_true = emu_n_true, emu_r_false = emu_n_false;
    emu_n_true = emu_n_false = 0;
    emu_release(emu_at_sync);
  }
  emu_finish(f);
}

// emu_deadlock says why no thread can go on.
[[noreturn]] inline void emu_deadlock() {
  int sync = 0, warp = 0;
  const emu_warp* stuck = nullptr;
  for (emu_fiber* f : emu_fibers) {
    sync += f->state == emu_at_sync;
    if (f->state == emu_at_warp) {
      warp++;
      if (!stuck) stuck = f->warp;
    }
  }
  char msg[400];
  const emu_coll* c = nullptr;
  for (int i = 0; stuck && i < stuck->ncoll; i++)
    if (stuck->coll[i].arrived != 0 && !c) c = &stuck->coll[i];
  if (c)
    std::snprintf(msg, sizeof msg, "deadlock: %d threads wait in __syncthreads and %d in warp collectives; warp %d waits in one of mask %08x for lanes %08x, which wait elsewhere (a collective or __syncthreads that not every lane reaches?)",
                  sync, warp, stuck->id, c->mask, c->mask & stuck->alive & ~c->arrived);
  else
    std::snprintf(msg, sizeof msg, "deadlock: %d threads wait in a __syncthreads that the others never reach", sync);
  std::fprintf(stderr, "block (%u,%u,%u): %s\n", blockIdx.x, blockIdx.y, blockIdx.z, msg);
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(3);
}

// emu_run_block runs every thread of block b to its end.
inline void emu_run_block(uint3 b) {
  blockIdx = b;
  const size_t nt = emu_fibers.size();
  emu_live = int(nt);
  emu_at_bar = 0;
  emu_n_true = emu_n_false = 0;
  for (size_t w = 0; w < emu_warps.size(); w++) {
    emu_warp& wp = emu_warps[w];
    const unsigned lanes = unsigned(nt - 32 * w < 32 ? nt - 32 * w : 32);
    wp.alive = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    wp.ncoll = 0;
  }
  emu_ready_q.clear();
  emu_ready_at = 0;
  for (emu_fiber* f : emu_fibers) {
    emu_start(f);
    emu_make_ready(f);
  }
  size_t done = 0;
  while (done < nt) {
    if (emu_ready_at == emu_ready_q.size()) emu_deadlock();
    emu_fiber* f = emu_ready_q[emu_ready_at++];
    if (emu_ready_at > 4096 && emu_ready_at * 2 > emu_ready_q.size()) {  // drop the consumed front
      emu_ready_q.erase(emu_ready_q.begin(), emu_ready_q.begin() + emu_ready_at);
      emu_ready_at = 0;
    }
    emu_cur = f;
    threadIdx = f->tid;
    emu_lane = f->lane;
    emu_w = f->warp;
    emu_run(f);
    if (f->state == emu_done) done++;
  }
}

[[noreturn]] inline void emu_die(const char* fmt, const char* a = "", long b = 0, long c = 0) {
  std::fprintf(stderr, fmt, a, b, c);
  std::fputc('\n', stderr);
  std::exit(2);
}

inline std::vector<unsigned char> emu_read_file(const char* dir, const char* name, int i = -1) {
  char p[4200];
  if (i < 0) std::snprintf(p, sizeof p, "%s/%s", dir, name);
  else std::snprintf(p, sizeof p, "%s/%s%d.bin", dir, name, i);
  std::vector<unsigned char> v;
  FILE* f = std::fopen(p, "rb");
  if (!f) emu_die("cannot read %s", p);
  unsigned char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}

template <typename A>
inline A emu_param(const unsigned char* p) {
  using V = std::remove_cv_t<A>;
  alignas(V) unsigned char raw[sizeof(V)];
  std::memcpy(raw, p, sizeof(V));
  return *reinterpret_cast<V*>(raw);
}

template <typename... A, size_t... I>
inline std::tuple<std::remove_cv_t<A>...> emu_params(const std::vector<const unsigned char*>& at, std::index_sequence<I...>) {
  return std::tuple<std::remove_cv_t<A>...>(emu_param<A>(at[I])...);
}

template <typename... A>
inline int emu_main(int argc, char** argv, void (*entry)(A...)) {
  if (argc != 2) emu_die("usage: %s launch-folder", argv[0]);
  const char* dir = argv[1];
  char path[4200];
  std::snprintf(path, sizeof path, "%s/launch.txt", dir);
  FILE* lf = std::fopen(path, "r");
  if (!lf) emu_die("cannot read %s", path);
  struct {
    dim3 grid, block;
  } L;
  unsigned long dynb = 0;
  int nbufs = 0, nparams = 0, nsyms = 0;
  if (std::fscanf(lf, "%u %u %u %u %u %u %lu %d %d %d", &L.grid.x, &L.grid.y, &L.grid.z, &L.block.x, &L.block.y, &L.block.z,
                  &dynb, &nbufs, &nparams, &nsyms) != 10)
    emu_die("launch.txt: a bad header%s");
  std::vector<std::vector<unsigned char>> bufs(nbufs);
  for (int i = 0; i < nbufs; i++) bufs[i] = emu_read_file(dir, "buf", i);
  std::vector<unsigned char> params = emu_read_file(dir, "params.bin");
  std::vector<const unsigned char*> at;
  constexpr size_t want[] = {sizeof(A)..., 0};
  size_t off = 0;
  for (int i = 0; i < nparams; i++) {
    char kind;
    unsigned long n;
    int nrel;
    if (std::fscanf(lf, " %c %lu %d", &kind, &n, &nrel) != 3 || off + n > params.size())
      emu_die("launch.txt: a bad parameter%s %ld", "", i);
    for (int r = 0; r < nrel; r++) {
      unsigned long o;
      int b;
      if (std::fscanf(lf, "%lu %d", &o, &b) != 2 || o + 8 > n || b < 0 || b >= nbufs) emu_die("launch.txt: a bad reloc%s of parameter %ld", "", i);
      unsigned char* addr = bufs[b].data();
      std::memcpy(&params[off + o], &addr, sizeof addr);
    }
    if (i < int(sizeof...(A))) {
      if (kind == 'b' && want[i] != n)
        emu_die("parameter %s%ld of the kernel has %ld bytes, but the struct mltop passes there has a different size", "", i + 1, long(want[i]));
      if (kind == 's' && want[i] > n)
        emu_die("parameter %s%ld of the kernel has %ld bytes, more than the 8 of a scalar or pointer: pass it as a struct", "", i + 1, long(want[i]));
    }
    at.push_back(&params[off]);
    off += n;
  }
  if (nparams != int(sizeof...(A)))
    emu_die("the kernel takes %s%ld parameters, and the dispatch passes %ld (its buffers and scalars, in its args: order)", "", long(sizeof...(A)), nparams);
  for (int i = 0; i < nsyms; i++) {
    char name[4096];
    unsigned long n;
    if (std::fscanf(lf, " %4095s %lu", name, &n) != 2) emu_die("launch.txt: a bad symbol%s");
    void* p = dlsym(RTLD_DEFAULT, name);
    if (!p) emu_die("symbol %s: the program has no global of that name (is it static, or in an anonymous namespace?)", name);
    std::vector<unsigned char> v = emu_read_file(dir, "sym", i);
    if (v.size() != n) emu_die("symbol %s: its file has a wrong size", name);
    std::memcpy(p, v.data(), n);
  }
  std::fclose(lf);
  const auto args = emu_params<A...>(at, std::index_sequence_for<A...>{});

  blockDim = L.block;
  gridDim = L.grid;
  const unsigned nt = L.block.x * L.block.y * L.block.z;
  const unsigned long long total = (unsigned long long)L.grid.x * L.grid.y * L.grid.z;
  if (dynb > sizeof emu_dyn_smem) emu_die("%s%ld B of dynamic shared memory, more than the %ld B a block may have", "", long(dynb), long(sizeof emu_dyn_smem));
  emu_dyn_bytes = dynb;
  emu_warps = std::vector<emu_warp>((nt + 31) / 32);
  for (size_t w = 0; w < emu_warps.size(); w++) emu_warps[w].id = int(w);
  static const auto* the_args = &args;
  static void (*the_entry)(A...) = entry;
  emu_body = [] { std::apply(the_entry, *the_args); };
#if !defined(EMU_THREAD_FIBERS)
  const long page = sysconf(_SC_PAGESIZE);
#endif
  for (unsigned t = 0; t < nt; t++) {
    auto* f = new emu_fiber;
#if !defined(EMU_THREAD_FIBERS)
    void* m = mmap(nullptr, emu_stack_bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) emu_die("cannot map a stack for thread %s%ld", "", long(t));
    mprotect(m, page, PROT_NONE);
    f->stack = static_cast<unsigned char*>(m) + page;
#endif
    f->tid = uint3{t % L.block.x, t / L.block.x % L.block.y, t / L.block.x / L.block.y};
    f->lane = int(t % 32);
    f->warp = &emu_warps[t / 32];
    emu_fibers.push_back(f);
  }
  for (unsigned long long b = 0; b < total; b++)
    emu_run_block(uint3{unsigned(b % L.grid.x), unsigned(b / L.grid.x % L.grid.y), unsigned(b / L.grid.x / L.grid.y)});
  for (int i = 0; i < nbufs; i++) {
    std::snprintf(path, sizeof path, "%s/buf%d.bin", dir, i);
    FILE* f = std::fopen(path, "wb");
    if (!f || std::fwrite(bufs[i].data(), 1, bufs[i].size(), f) != bufs[i].size()) emu_die("cannot write %s", path);
    std::fclose(f);
  }
  return 0;
}
