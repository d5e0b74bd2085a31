// tflm_main.cc: the host program of heliac's TFLM runtime tests
// (driver/tflmruntime_test.go). It fills subgraph 0's inputs exactly as
// ../shared/tools/src/tflm_run.cc does (FillInput, InputStreamState) and
// prints each output's FNV-1a-64 digest in tflm_run's format:
//   output.<k>.<i>=<hex> bytes=<n>
// Built with -DPREFIX=<prefix> -DUPREFIX=<PREFIX> -DMODULE_HEADER="<prefix>.h".
//   tflm_main SEED INVOKES
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include MODULE_HEADER

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define F(x) CAT(PREFIX, x)
#define M(x) CAT(UPREFIX, x)

extern "C" void DebugLog(const char* format, va_list args) {
  vfprintf(stderr, format, args);
}
extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format,
                              va_list args) {
  return vsnprintf(buf, n, format, args);
}

// NO_HYDRATE: staged constant arenas are left as they are (the tests'
// broken plan).
#ifdef NO_HYDRATE
extern "C" void F(hydrate)(F(arena_t), void*, const void*, size_t) {}
#endif

namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};
uint64_t Mix(uint64_t x) {
  SplitMix64 g{x};
  return g.Next();
}
uint64_t InputStreamState(uint64_t seed, uint64_t k, uint64_t i) {
  return Mix(Mix(Mix(seed) ^ k) ^ i);
}
void FillRandomBytes(SplitMix64& g, uint8_t* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = g.Next();
    memcpy(p + i, &v, 8);
  }
  if (i < n) {
    uint64_t v = g.Next();
    for (int b = 0; i < n; ++i, ++b) p[i] = static_cast<uint8_t>(v >> (8 * b));
  }
}
float UniformF32(SplitMix64& g) {
  return static_cast<float>(static_cast<int32_t>(g.Next() >> 40)) *
             (1.0f / 8388608.0f) -
         1.0f;
}
double UniformF64(SplitMix64& g) {
  return static_cast<double>(g.Next() >> 11) * (1.0 / 4503599627370496.0) -
         1.0;
}

// Fill is tflm_run's FillInput on the module's tensor row (types numbered
// as TFLite's TensorType).
void Fill(int type, uint8_t* p, size_t n, SplitMix64& g) {
  if (p == nullptr || n == 0) return;
  switch (type) {
    case M(TYPE_FLOAT32):
    case M(TYPE_COMPLEX64):
      for (size_t i = 0; i + 4 <= n; i += 4) {
        float v = UniformF32(g);
        memcpy(p + i, &v, 4);
      }
      return;
    case M(TYPE_FLOAT64):
    case M(TYPE_COMPLEX128):
      for (size_t i = 0; i + 8 <= n; i += 8) {
        double v = UniformF64(g);
        memcpy(p + i, &v, 8);
      }
      return;
    case M(TYPE_FLOAT16):
    case M(TYPE_BFLOAT16): {
      const uint16_t exp_mask = type == M(TYPE_FLOAT16) ? 0x7C00 : 0x7F80;
      for (size_t i = 0; i + 2 <= n; i += 2) {
        uint16_t h = static_cast<uint16_t>(g.Next());
        if ((h & exp_mask) == exp_mask) h &= 0xBFFF;
        memcpy(p + i, &h, 2);
      }
      return;
    }
    case M(TYPE_BOOL):
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(g.Next() & 1);
      return;
    case M(TYPE_STRING):
    case M(TYPE_RESOURCE):
    case M(TYPE_VARIANT):
      return;
    default:
      FillRandomBytes(g, p, n);
  }
}

uint64_t Fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ull;
  }
  return h;
}

// Run initializes the module and runs it invokes times, printing each
// output's digest after label.
int Run(uint64_t seed, int invokes, const char* label) {
  int st = F(init)();
  if (st != M(OK)) {
    printf("init=%d\nerror=%s\n", st, F(status_message)());
    return 1;
  }
  const F(subgraph_t)& sg = F(subgraphs)[0];
  for (int k = 0; k < invokes; ++k) {
    for (unsigned i = 0; i < sg.input_count; ++i) {
      unsigned row = F(operands)[sg.inputs + i];
      if (row == M(NO_TENSOR)) continue;
      SplitMix64 g{InputStreamState(seed, static_cast<uint64_t>(k), i)};
      Fill(F(tensors)[row].type, F(tensor_mutable_data)(row), F(tensors)[row].size, g);
    }
    st = F(invoke)();
    if (st != M(OK)) {
      printf("invoke.%d=%d\nerror=%s\n", k, st, F(status_message)());
      return 1;
    }
    for (unsigned i = 0; i < sg.output_count; ++i) {
      unsigned row = F(operands)[sg.outputs + i];
      const uint8_t* p = nullptr;
      size_t n = 0;
      if (row != M(NO_TENSOR)) {
        p = F(tensor_data)(row);
        n = F(tensors)[row].size;
      }
      printf("%soutput.%d.%u=%016llx bytes=%lu\n", label, k, i,
             static_cast<unsigned long long>(Fnv1a64(p, n)),
             static_cast<unsigned long>(n));
    }
  }
  return 0;
}

}  // namespace

// tflm_main SEED INVOKES [again]: with "again", initializes the module a
// second time and runs it again (lines "again.output...."): init resets
// the model's state.
int main(int argc, char** argv) {
#ifdef FIXED_RUN  // a target without a command line: -DFIXED_RUN='"SEED", "INVOKES"'
  const char* fixed[] = {"tflm_main", FIXED_RUN};
  argc = 3;
  argv = const_cast<char**>(fixed);
#endif
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: tflm_main SEED INVOKES [again]\n");
    return 2;
  }
  const uint64_t seed = strtoull(argv[1], nullptr, 10);
  const int invokes = atoi(argv[2]);
  if (int st = Run(seed, invokes, ""); st != 0) {
    return st;
  }
  if (argc == 4) {
    return Run(seed, invokes, "again.");
  }
  return 0;
}
