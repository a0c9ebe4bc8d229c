// ascendir CPU verification runtime: the helpers every generated `<name>_cpu.cpp` uses.
// Exact rational size arithmetic (the tiling expressions), 16-bit float storage computed in
// fp32, N-D strided maps over the vectorized region, and the UB bookkeeping of the checked
// build (slot bounds, 32-byte alignment, stale-slot detection).
#ifndef ASCENDIR_CPU_RT_H
#define ASCENDIR_CPU_RT_H

#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace ascendir_rt {

enum : int {
  OK = 0,
  ERR_SIZE = 1,       // a size expression failed (overflow, division by zero)
  ERR_UB = 2,         // an access outside the UB or containers larger than the UB
  ERR_ALIGN = 3,      // a tensor base not aligned
  ERR_SLOT = 4,       // an access outside the tensor's container slot
  ERR_STALE = 5,      // a read of a slot another tensor took since it was written
  ERR_UNWRITTEN = 6,  // a read of a tensor never written
  ERR_VECTORIZED = 7, // an extent > 1 along an axis that is not vectorized
  ERR_KEY = 8,        // no template for the tiling key
  ERR_OP = 9,         // an operation that cannot run (ArgMax across tiles, ...)
};

enum : uint32_t { FLAG_CHECK = 1u };

inline thread_local std::string last_error;

__attribute__((cold, noinline)) inline int fail(int code, const char *node,
                                                const std::string &what) {
  last_error = std::string("node '") + node + "': " + what;
  return code;
}

__attribute__((cold, noinline)) inline int fail(int code, const char *node, const char *what) {
  return fail(code, node, std::string(what));
}

// ---- exact rationals for the size expressions ---------------------------------------------

struct R {
  __int128 n;
  __int128 d;
};

inline thread_local bool size_error = false;

inline __int128 gcd128(__int128 a, __int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a == 0 ? 1 : a;
}

inline R mk(__int128 n, __int128 d) {
  if (d == 0) {
    size_error = true;
    return R{0, 1};
  }
  if (d < 0) {
    n = -n;
    d = -d;
  }
  __int128 g = gcd128(n, d);
  return R{n / g, d / g};
}

inline R ri(int64_t v) { return R{v, 1}; }

inline __int128 mul_chk(__int128 a, __int128 b) {
  __int128 r;
  if (__builtin_mul_overflow(a, b, &r)) {
    size_error = true;
    return 0;
  }
  return r;
}

inline __int128 add_chk(__int128 a, __int128 b) {
  __int128 r;
  if (__builtin_add_overflow(a, b, &r)) {
    size_error = true;
    return 0;
  }
  return r;
}

inline R operator+(R a, R b) {
  return mk(add_chk(mul_chk(a.n, b.d), mul_chk(b.n, a.d)), mul_chk(a.d, b.d));
}
inline R operator*(R a, R b) { return mk(mul_chk(a.n, b.n), mul_chk(a.d, b.d)); }
inline bool operator<(R a, R b) { return mul_chk(a.n, b.d) < mul_chk(b.n, a.d); }

inline R rpow(R b, R e) {
  if (e.d != 1) {
    size_error = true;
    return R{0, 1};
  }
  __int128 k = e.n;
  bool neg = k < 0;
  if (neg) k = -k;
  R acc{1, 1};
  R base = b;
  while (k > 0) {
    if (k & 1) acc = acc * base;
    k >>= 1;
    if (k > 0) base = base * base;
    if (size_error) return R{0, 1};
  }
  if (neg) return mk(acc.d, acc.n);
  return acc;
}

inline __int128 floor_div(__int128 n, __int128 d) {
  __int128 q = n / d;
  if ((n % d != 0) && ((n < 0) != (d < 0))) q -= 1;
  return q;
}

inline R rfloor(R a) { return R{floor_div(a.n, a.d), 1}; }
inline R rceil(R a) { return R{-floor_div(-a.n, a.d), 1}; }
inline R rabs(R a) { return R{a.n < 0 ? -a.n : a.n, a.d}; }
inline R rmod(R a, R b) {
  if (b.n == 0) {
    size_error = true;
    return R{0, 1};
  }
  // a - b * floor(a / b)
  R q = rfloor(mk(mul_chk(a.n, b.d), mul_chk(a.d, b.n)));
  R nb = R{-b.n, b.d};
  return a + nb * q;
}
inline R rmax(R a, R b) { return a < b ? b : a; }
inline R rmin(R a, R b) { return a < b ? a : b; }

// The integer a size expression stands for (the ceiling of its exact value).
inline int64_t to_i(R a) {
  __int128 c = -floor_div(-a.n, a.d);
  if (c > INT64_MAX || c < INT64_MIN) {
    size_error = true;
    return 0;
  }
  return (int64_t)c;
}

// ---- element types --------------------------------------------------------------------------

struct f16 {
  uint16_t v;
};
struct bf16 {
  uint16_t v;
};

inline float f16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      // subnormal: normalise
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while ((man & 0x400) == 0);
      man &= 0x3ff;
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | (man << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
  }
  if (absx >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    return (uint16_t)(sign | 0x7c00);
  }
  if (absx < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (absx < 0x33000000u) return (uint16_t)sign;  // < 2^-25 rounds to zero
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e;  // 14 + (113 - e)
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = absx - 0x38000000u;  // rebias the exponent
  uint32_t low = r & 0x1fff;
  r >>= 13;
  if (low > 0x1000 || (low == 0x1000 && (r & 1))) r++;
  return (uint16_t)(sign | r);
}

inline float bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;
  return (uint16_t)(x >> 16);
}

template <class T>
struct Tr {
  using C = T;
  static C ld(T v) { return v; }
  static T st(C v) { return v; }
};
template <>
struct Tr<f16> {
  using C = float;
  static float ld(f16 v) { return f16_to_float(v.v); }
  static f16 st(float v) { return f16{float_to_f16(v)}; }
};
template <>
struct Tr<bf16> {
  using C = float;
  static float ld(bf16 v) { return bf16_to_float(v.v); }
  static bf16 st(float v) { return bf16{float_to_bf16(v)}; }
};
template <>
struct Tr<bool> {
  using C = bool;
  static bool ld(bool v) { return v; }
  static bool st(bool v) { return v; }
};

// A value of any compute type stored as T (numpy's astype: truncation for float → int).
template <class T, class V>
inline T store_as(V v) {
  return Tr<T>::st(static_cast<typename Tr<T>::C>(v));
}

// ---- N-D strided maps -----------------------------------------------------------------------

constexpr int MAXD = 8;

// Iterate the index space `len[0..nd)` (row-major); `body(offsets...)` receives, per operand,
// the element offset. The innermost axis is a tight loop.
template <int NOPS, class F>
inline void nd_for(int nd, const int64_t *len, const int64_t *const *strides, F body) {
  for (int k = 0; k < nd; ++k)
    if (len[k] <= 0) return;
  int64_t idx[MAXD] = {0};
  int64_t off[NOPS] = {0};
  const int inner = nd - 1;
  const int64_t n_in = nd > 0 ? len[inner] : 1;
  int64_t s_in[NOPS];
  for (int o = 0; o < NOPS; ++o) s_in[o] = nd > 0 ? strides[o][inner] : 0;
  for (;;) {
    body(off, n_in, s_in);
    int k = inner - 1;
    for (; k >= 0; --k) {
      idx[k]++;
      for (int o = 0; o < NOPS; ++o) off[o] += strides[o][k];
      if (idx[k] < len[k]) break;
      for (int o = 0; o < NOPS; ++o) off[o] -= strides[o][k] * len[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

template <class TO, class TA, class F>
inline void map1(int nd, const int64_t *len, TO *o, const int64_t *os, const TA *a,
                 const int64_t *as, F f) {
  const int64_t *st[2] = {os, as};
  nd_for<2>(nd, len, st, [&](const int64_t *off, int64_t n, const int64_t *s) {
    TO *po = o + off[0];
    const TA *pa = a + off[1];
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t j = 0; j < n; ++j) po[j] = store_as<TO>(f(Tr<TA>::ld(pa[j])));
    } else {
      for (int64_t j = 0; j < n; ++j) po[j * s[0]] = store_as<TO>(f(Tr<TA>::ld(pa[j * s[1]])));
    }
  });
}

template <class TO, class TA, class TB, class F>
inline void map2(int nd, const int64_t *len, TO *o, const int64_t *os, const TA *a,
                 const int64_t *as, const TB *b, const int64_t *bs, F f) {
  const int64_t *st[3] = {os, as, bs};
  nd_for<3>(nd, len, st, [&](const int64_t *off, int64_t n, const int64_t *s) {
    TO *po = o + off[0];
    const TA *pa = a + off[1];
    const TB *pb = b + off[2];
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t j = 0; j < n; ++j)
        po[j] = store_as<TO>(f(Tr<TA>::ld(pa[j]), Tr<TB>::ld(pb[j])));
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const auto bv = Tr<TB>::ld(pb[0]);
      for (int64_t j = 0; j < n; ++j) po[j] = store_as<TO>(f(Tr<TA>::ld(pa[j]), bv));
    } else {
      for (int64_t j = 0; j < n; ++j)
        po[j * s[0]] = store_as<TO>(f(Tr<TA>::ld(pa[j * s[1]]), Tr<TB>::ld(pb[j * s[2]])));
    }
  });
}

template <class TO, class TA, class TB, class TC, class F>
inline void map3(int nd, const int64_t *len, TO *o, const int64_t *os, const TA *a,
                 const int64_t *as, const TB *b, const int64_t *bs, const TC *c,
                 const int64_t *cs, F f) {
  const int64_t *st[4] = {os, as, bs, cs};
  nd_for<4>(nd, len, st, [&](const int64_t *off, int64_t n, const int64_t *s) {
    for (int64_t j = 0; j < n; ++j)
      o[off[0] + j * s[0]] =
          store_as<TO>(f(Tr<TA>::ld(a[off[1] + j * s[1]]), Tr<TB>::ld(b[off[2] + j * s[2]]),
                         Tr<TC>::ld(c[off[3] + j * s[3]])));
  });
}

// Gather: o[i] = p[i + index * gstride], the index read from x[i] (negative ones counted from
// `count` when `negative`); an index outside [0, count) fails the kernel.
template <class TO, class TP, class TI>
inline int gather(int nd, const int64_t *len, TO *o, const int64_t *os, const TP *p,
                  const int64_t *ps, const TI *x, const int64_t *xs, int64_t count,
                  int64_t gstride, bool negative, const char *node) {
  int status = OK;
  const int64_t *st[3] = {os, ps, xs};
  nd_for<3>(nd, len, st, [&](const int64_t *off, int64_t n, const int64_t *s) {
    if (status != OK) return;
    for (int64_t j = 0; j < n; ++j) {
      int64_t i = static_cast<int64_t>(x[off[2] + j * s[2]]);
      if (negative && i < 0) i += count;
      if (i < 0 || i >= count) {
        status = fail(ERR_OP, node, "index " + std::to_string(i) + " outside [0, " +
                                        std::to_string(count) + ")");
        return;
      }
      o[off[0] + j * s[0]] = store_as<TO>(Tr<TP>::ld(p[off[1] + j * s[1] + i * gstride]));
    }
  });
  return status;
}

// Atomic store: combine with what GM holds.
template <class TO, class TA, class F>
inline void combine1(int nd, const int64_t *len, TO *o, const int64_t *os, const TA *a,
                     const int64_t *as, F f) {
  const int64_t *st[2] = {os, as};
  nd_for<2>(nd, len, st, [&](const int64_t *off, int64_t n, const int64_t *s) {
    for (int64_t j = 0; j < n; ++j) {
      TO &dst = o[off[0] + j * s[0]];
      dst = store_as<TO>(f(Tr<TO>::ld(dst), Tr<TO>::ld(store_as<TO>(Tr<TA>::ld(a[off[1] + j * s[1]])))));
    }
  });
}

// The last offset (in elements) a view of `len` with `stride` reaches, plus one.
inline int64_t span(int nd, const int64_t *len, const int64_t *stride) {
  int64_t m = 0;
  for (int k = 0; k < nd; ++k) {
    if (len[k] <= 0) return 0;
    int64_t s = stride[k] < 0 ? -stride[k] : stride[k];
    m += (len[k] - 1) * s;
  }
  return m + 1;
}

// Strides of an operand over the result's index space: 0 where it has extent 1 (broadcast).
inline int bcast(int nd, const int64_t *ln, const int64_t *us, const int64_t *space,
                 int64_t *out, const char *node) {
  for (int k = 0; k < nd; ++k) {
    if (ln[k] != 1 && ln[k] != space[k])
      return fail(ERR_OP, node, "operand extent " + std::to_string(ln[k]) + " differs from the "
                  "result's " + std::to_string(space[k]) + " on base axis " + std::to_string(k));
    out[k] = ln[k] == 1 ? 0 : us[k];
  }
  return OK;
}

inline void out_strides(int nd, const int64_t *ln, const int64_t *us, int64_t *out) {
  for (int k = 0; k < nd; ++k) out[k] = ln[k] == 1 ? 0 : us[k];
}

inline int64_t dot(int nd, const int64_t *a, const int64_t *b) {
  int64_t s = 0;
  for (int k = 0; k < nd; ++k) s += a[k] * b[k];
  return s;
}

// ---- math in numpy's terms ----------------------------------------------------------------

template <class T>
inline T np_max(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}
template <class T>
inline T np_min(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
}
template <class T>
inline T floor_div_v(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return floor(a / b);
  } else {
    if (b == 0) return 0;
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  }
}
template <class T>
inline T true_div_int(T a, T b) {
  return floor_div_v(a, b);
}
template <class T>
inline T remainder_v(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    T r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    if (b == 0) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
template <class T>
inline T pow_v(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return pow(a, b);
  } else {
    if (b < 0) return 0;
    T r = 1;
    T base = a;
    auto e = b;
    while (e > 0) {
      if (e & 1) r = (T)(r * base);
      e >>= 1;
      base = (T)(base * base);
    }
    return r;
  }
}
template <class T>
inline T sign_v(T x) {
  if (x != x) return x;
  return (T)((x > 0) - (x < 0));
}

inline double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// ---- op functors ----------------------------------------------------------------------------

template <class T>
using fl_t = typename std::conditional<std::is_floating_point<T>::value, T, double>::type;

struct OpId {
  template <class T> T operator()(T x) const { return x; }
};
struct OpAbs {
  template <class T> T operator()(T x) const {
    if constexpr (std::is_floating_point<T>::value) return std::fabs(x);
    else if constexpr (std::is_same<T, bool>::value) return x;
    else return x < 0 ? (T)-x : x;
  }
};
struct OpNeg {
  template <class T> auto operator()(T x) const { return -x; }
};
struct OpExp {
  template <class T> auto operator()(T x) const { return std::exp((fl_t<T>)x); }
};
struct OpLn {
  template <class T> auto operator()(T x) const { return std::log((fl_t<T>)x); }
};
struct OpSqrt {
  template <class T> auto operator()(T x) const { return std::sqrt((fl_t<T>)x); }
};
struct OpRsqrt {
  template <class T> auto operator()(T x) const {
    return (fl_t<T>)1 / std::sqrt((fl_t<T>)x);
  }
};
struct OpReciprocal {
  template <class T> auto operator()(T x) const { return (fl_t<T>)1 / (fl_t<T>)x; }
};
struct OpRelu {
  template <class T> T operator()(T x) const { return np_max(x, (T)0); }
};
struct OpSigmoid {
  template <class T> auto operator()(T x) const {
    using F = fl_t<T>;
    return (F)1 / ((F)1 + std::exp(-(F)x));
  }
};
struct OpTanh {
  template <class T> auto operator()(T x) const { return std::tanh((fl_t<T>)x); }
};
struct OpSign {
  template <class T> T operator()(T x) const { return sign_v(x); }
};
struct OpLogicalNot {
  template <class T> bool operator()(T x) const { return !x; }
};
struct OpIsnan {
  template <class T> bool operator()(T x) const { return x != x; }
};
struct OpIsFinite {
  template <class T> bool operator()(T x) const {
    if constexpr (std::is_floating_point<T>::value) return std::isfinite(x);
    else return true;
  }
};
struct OpErf {
  template <class T> double operator()(T x) const { return std::erf((double)x); }
};
struct OpGelu {
  template <class T> double operator()(T x) const { return gelu_tanh((double)x); }
};
struct OpLeakyRelu {
  double alpha;
  template <class T> auto operator()(T x) const {
    using F = fl_t<T>;
    return x > 0 ? (F)x : (F)x * (F)alpha;
  }
};

#define ASCENDIR_BIN(NAME, EXPR)                                   \
  struct NAME {                                                    \
    template <class A, class B> auto operator()(A a0, B b0) const { \
      using T = typename std::common_type<A, B>::type;             \
      T a = (T)a0, b = (T)b0;                                      \
      return EXPR;                                                 \
    }                                                              \
  };
ASCENDIR_BIN(OpAdd, a + b)
ASCENDIR_BIN(OpSub, a - b)
ASCENDIR_BIN(OpMul, a * b)
ASCENDIR_BIN(OpMaximum, np_max(a, b))
ASCENDIR_BIN(OpMinimum, np_min(a, b))
ASCENDIR_BIN(OpFloorDiv, floor_div_v(a, b))
ASCENDIR_BIN(OpRemainder, remainder_v(a, b))
ASCENDIR_BIN(OpPow, pow_v(a, b))
ASCENDIR_BIN(OpEq, a == b)
ASCENDIR_BIN(OpNe, a != b)
ASCENDIR_BIN(OpGt, a > b)
ASCENDIR_BIN(OpGe, a >= b)
ASCENDIR_BIN(OpLt, a < b)
ASCENDIR_BIN(OpLe, a <= b)
ASCENDIR_BIN(OpLogicalAnd, (bool)a && (bool)b)
ASCENDIR_BIN(OpLogicalOr, (bool)a || (bool)b)
#undef ASCENDIR_BIN

struct OpDiv {
  template <class A, class B> auto operator()(A a0, B b0) const {
    using T = typename std::common_type<A, B>::type;
    if constexpr (std::is_floating_point<T>::value) return (T)a0 / (T)b0;
    else return floor_div_v((T)a0, (T)b0);
  }
};
struct OpTrueDiv {
  template <class A, class B> auto operator()(A a0, B b0) const {
    using T = fl_t<typename std::common_type<A, B>::type>;
    return (T)a0 / (T)b0;
  }
};
struct OpBitwiseAnd {
  template <class A, class B> auto operator()(A a0, B b0) const {
    using T = typename std::common_type<A, B>::type;
    if constexpr (std::is_floating_point<T>::value) return (T)0;
    else return (T)((T)a0 & (T)b0);
  }
};
struct OpAxpy {
  double alpha;
  template <class A, class B> auto operator()(A a0, B b0) const {
    using T = typename std::common_type<A, B>::type;
    return (T)a0 * (T)alpha + (T)b0;
  }
};
struct OpWhere {
  template <class C, class A, class B> auto operator()(C c, A a, B b) const {
    using T = typename std::common_type<A, B>::type;
    return c ? (T)a : (T)b;
  }
};
struct OpClip {
  template <class A, class B, class C> auto operator()(A x, B lo, C hi) const {
    using T = typename std::common_type<A, B, C>::type;
    return np_min(np_max((T)x, (T)lo), (T)hi);
  }
};

// ---- UB bookkeeping -----------------------------------------------------------------------

struct Cont {
  int64_t off;      // byte offset of slot 0
  int64_t slot;     // bytes per slot
  int64_t buf_num;  // slots
  bool queue;
  int64_t counter;  // allocations so far (queues rotate through their slots)
  int64_t rid;      // reuse family of the current round
  int64_t round;    // round number
  int64_t slot_base;  // index of slot 0 in the generation table
};

struct TSt {
  int cont;
  int64_t rid;
  int64_t fam;   // offset inside the slot (reuse family)
  int64_t loc;   // byte offset of the last write, -1 before
  int64_t slot;
  uint64_t gen;  // generation of the slot when written
  int64_t round = -1;
};

struct Ctx {
  uint8_t *ub;
  int64_t ub_size;
  uint32_t flags;
  Cont *c;
  TSt *t;
  uint64_t *gens;
  int *occ;
  int err;
  const char *graph;
  const char *const *tnames;

  bool checked() const { return (flags & FLAG_CHECK) != 0; }

  int vect(const int64_t *ln, const int64_t *us, int nd, const char *node) {
    for (int k = 0; k < nd; ++k)
      if (ln[k] > 1 && us[k] == 0)
        return err = fail(ERR_VECTORIZED, node,
                          "base axis " + std::to_string(k) + " has extent " +
                              std::to_string(ln[k]) + " but is not vectorized");
    return OK;
  }

  int bounds(int tk, int64_t base, int64_t bytes, bool write, const char *node) {
    const TSt &s = t[tk];
    const Cont &ct = c[s.cont];
    const char *what = write ? "writes" : "reads";
    if (base < 0 || base + bytes > ub_size)
      return err = fail(ERR_UB, node,
                        std::string(what) + " [" + std::to_string(base) + ", " +
                            std::to_string(base + bytes) + ") beyond the UB (" +
                            std::to_string(ub_size) + ")");
    if (!checked()) return OK;
    if (base % 32 != 0)
      return err = fail(ERR_ALIGN, node,
                        std::string("tensor '") + tnames[tk] + "' base " + std::to_string(base) +
                            " is not 32-byte aligned");
    int64_t start = ct.off + s.slot * ct.slot;
    if (base < start || base + bytes > start + ct.slot)
      return err = fail(ERR_SLOT, node,
                        std::string(what) + " tensor '" + tnames[tk] + "' at [" +
                            std::to_string(base) + ", " + std::to_string(base + bytes) +
                            ") outside its slot [" + std::to_string(start) + ", " +
                            std::to_string(start + ct.slot) + ")");
    return OK;
  }

  void *read(int tk, const int64_t *ln, const int64_t *us, int nd, int64_t isz,
             const char *node) {
    const TSt &s = t[tk];
    if (s.loc < 0) {
      err = fail(ERR_UNWRITTEN, node,
                 std::string("reads tensor '") + tnames[tk] + "' that was never written");
      return nullptr;
    }
    if (bounds(tk, s.loc, span(nd, ln, us) * isz, false, node)) return nullptr;
    if (checked()) {
      const Cont &ct = c[s.cont];
      int64_t gi = ct.slot_base + s.slot;
      if (gens[gi] != s.gen) {
        int o = occ[gi];
        err = fail(ERR_STALE, node,
                   std::string("reads tensor '") + tnames[tk] + "' whose slot now holds '" +
                       (o >= 0 ? tnames[o] : "?") + "'");
        return nullptr;
      }
    }
    return ub + s.loc;
  }

  void *write(int tk, bool fresh, const int64_t *ln, const int64_t *us, int nd, int64_t isz,
              const int *in_keys, int n_in, const char *node) {
    TSt &s = t[tk];
    Cont &ct = c[s.cont];
    if (fresh || s.loc < 0) {
      int64_t slot = 0;
      bool newgen = true;
      if (ct.queue) {
        if (ct.rid == s.rid && s.rid >= 0 && s.round != ct.round) {
          newgen = false;
        } else {
          ct.counter++;
          ct.rid = s.rid;
          ct.round++;
        }
        s.round = ct.round;
        slot = ct.counter % (ct.buf_num > 0 ? ct.buf_num : 1);
      }
      int64_t gi = ct.slot_base + slot;
      if (newgen) {
        gens[gi]++;
        bool in_place = false;
        for (int k = 0; k < n_in; ++k)
          if (in_keys[k] == occ[gi]) in_place = true;
        int64_t start = ct.off + slot * ct.slot;
        if (checked() && !in_place && start >= 0 && start + ct.slot <= ub_size)
          memset(ub + start, 0xFF, (size_t)ct.slot);
        occ[gi] = tk;
      }
      s.slot = slot;
      s.gen = gens[gi];
      s.loc = ct.off + slot * ct.slot + s.fam;
    } else if (checked() && gens[ct.slot_base + s.slot] != s.gen) {
      int o = occ[ct.slot_base + s.slot];
      err = fail(ERR_STALE, node,
                 std::string("accumulates into tensor '") + tnames[tk] +
                     "' whose slot now holds '" + (o >= 0 ? tnames[o] : "?") + "'");
      return nullptr;
    }
    if (s.loc % isz != 0) {
      err = fail(ERR_ALIGN, node,
                 "UB offset " + std::to_string(s.loc) + " not aligned to " + std::to_string(isz));
      return nullptr;
    }
    if (bounds(tk, s.loc, span(nd, ln, us) * isz, true, node)) return nullptr;
    return ub + s.loc;
  }
};

// ---- reductions ---------------------------------------------------------------------------

enum RedKind { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_PROD, RED_ALL, RED_ANY, RED_ARGMAX };

template <class TO, class TI>
inline int reduce(RedKind kind, int nd, const int64_t *a_ln, const TI *a, const int64_t *a_us,
                  const int64_t *o_ln, TO *o, const int64_t *o_s, bool first, double total,
                  const char *node) {
  using CI = typename Tr<TI>::C;
  using A = typename std::conditional<std::is_floating_point<CI>::value, double, int64_t>::type;
  int64_t count = 1;
  int64_t row[MAXD];
  for (int k = nd - 1; k >= 0; --k) {
    row[k] = o_ln[k] == 1 ? 0 : count;
    count *= o_ln[k];
  }
  if (count <= 0) return OK;
  int red_axis = -1, n_red = 0;
  for (int k = 0; k < nd; ++k)
    if (a_ln[k] > 1 && o_ln[k] == 1) {
      red_axis = k;
      n_red++;
    }
  std::vector<A> acc((size_t)count);
  std::vector<int64_t> arg;
  A init = 0;
  switch (kind) {
    case RED_PROD: case RED_ALL: init = 1; break;
    case RED_MAX: case RED_ARGMAX:
      init = std::is_floating_point<A>::value ? (A)-INFINITY : (A)INT64_MIN; break;
    case RED_MIN:
      init = std::is_floating_point<A>::value ? (A)INFINITY : (A)INT64_MAX; break;
    default: break;
  }
  for (auto &x : acc) x = init;
  if (kind == RED_ARGMAX) {
    if (n_red > 1) return fail(ERR_OP, node, "ArgMax reduces one axis, not " + std::to_string(n_red));
    if (!first) return fail(ERR_OP, node, "ArgMax cannot accumulate across tiles");
    arg.assign((size_t)count, 0);
  }
  int64_t a_s[MAXD], r_s[MAXD];
  for (int k = 0; k < nd; ++k) {
    a_s[k] = a_ln[k] == 1 ? 0 : a_us[k];
    r_s[k] = row[k];
  }
  const int64_t *st[2] = {a_s, r_s};
  A *pacc = acc.data();
  int64_t *parg = arg.data();
  // The index along the reduced axis (ArgMax): counted per scratch cell.
  std::vector<int64_t> seen(kind == RED_ARGMAX ? (size_t)count : 0, 0);
  nd_for<2>(nd, a_ln, st, [&](const int64_t *off, int64_t n, const int64_t *s) {
    for (int64_t j = 0; j < n; ++j) {
      A x = (A)Tr<TI>::ld(a[off[0] + j * s[0]]);
      A &d = pacc[off[1] + j * s[1]];
      switch (kind) {
        case RED_SUM: case RED_MEAN: d += x; break;
        case RED_PROD: d *= x; break;
        case RED_MAX: d = np_max(d, x); break;
        case RED_MIN: d = np_min(d, x); break;
        case RED_ALL: d = (d != 0) && (x != 0); break;
        case RED_ANY: d = (d != 0) || (x != 0); break;
        case RED_ARGMAX: {
          int64_t cell = off[1] + j * s[1];
          int64_t i = seen[(size_t)cell]++;
          if (x > d || (x != x && d == d)) {
            d = x;
            parg[cell] = i;
          }
          break;
        }
      }
    }
  });
  (void)red_axis;
  const int64_t *wt[2] = {o_s, row};
  nd_for<2>(nd, o_ln, wt, [&](const int64_t *off, int64_t n, const int64_t *s) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t cell = off[1] + j * s[1];
      TO part;
      if (kind == RED_ARGMAX) part = store_as<TO>(parg[cell]);
      else if (kind == RED_MEAN) part = store_as<TO>((double)pacc[cell] / (total > 0 ? total : 1));
      else part = store_as<TO>(pacc[cell]);
      TO &dst = o[off[0] + j * s[0]];
      if (first) {
        dst = part;
        continue;
      }
      auto p = Tr<TO>::ld(part);
      auto q = Tr<TO>::ld(dst);
      switch (kind) {
        case RED_SUM: case RED_MEAN: dst = store_as<TO>(q + p); break;
        case RED_PROD: dst = store_as<TO>(q * p); break;
        case RED_MAX: dst = store_as<TO>(np_max(q, p)); break;
        case RED_MIN: dst = store_as<TO>(np_min(q, p)); break;
        case RED_ALL: dst = store_as<TO>((q != 0) && (p != 0)); break;
        case RED_ANY: dst = store_as<TO>((q != 0) || (p != 0)); break;
        default: break;
      }
    }
  });
  return OK;
}

// ---- the block driver --------------------------------------------------------------------

typedef int (*KernelFn)(const void *, void *const *, void *const *, void *, uint32_t, uint8_t *,
                        uint32_t, uint32_t);

// Blocks 0 .. block_dim, each on a 64-byte-aligned UB of its thread: serially, or on `threads`
// threads (block b on thread b mod threads). Kernels with atomic stores always run serially
// (their GM combines would race). The error reported is the lowest failing block's.
inline int run_blocks(KernelFn f, const void *tiling, void *const *in, void *const *out,
                      void *ws, uint32_t block_dim, uint32_t ub_size, uint32_t flags,
                      uint32_t threads, bool atomic) {
  auto ub_of = [ub_size](std::vector<uint64_t> &store) {
    store.assign(((size_t)ub_size + 63) / 8 + 8, 0);
    return (uint8_t *)(((uintptr_t)store.data() + 63) & ~(uintptr_t)63);
  };
  if (atomic || threads <= 1 || block_dim <= 1) {
    std::vector<uint64_t> store;
    uint8_t *ub = ub_of(store);
    for (uint32_t b = 0; b < block_dim; ++b) {
      int r = f(tiling, in, out, ws, b, ub, ub_size, flags);
      if (r) return r;
    }
    return OK;
  }
  if (threads > block_dim) threads = block_dim;
  std::vector<int> codes(block_dim, OK);
  std::vector<std::string> msgs(block_dim);
  std::vector<std::thread> pool;
  for (uint32_t w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      std::vector<uint64_t> store;
      uint8_t *ub = ub_of(store);
      for (uint32_t b = w; b < block_dim; b += threads) {
        int r = f(tiling, in, out, ws, b, ub, ub_size, flags);
        if (r) {
          codes[b] = r;
          msgs[b] = last_error;
          return;
        }
      }
    });
  }
  for (auto &t : pool) t.join();
  for (uint32_t b = 0; b < block_dim; ++b) {
    if (codes[b]) {
      last_error = msgs[b];
      return codes[b];
    }
  }
  return OK;
}

}  // namespace ascendir_rt

#endif  // ASCENDIR_CPU_RT_H
