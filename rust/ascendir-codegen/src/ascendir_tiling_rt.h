// ascendir_tiling_rt.h: the tiling search of the generated host tiling functions.
//
// Shipped next to every <kernel>_tiling_func.cpp. It implements the contract of ascendir's
// tiling solver (ascendir.asc.compile_tiling) on the per-template models the generated file
// prints as C++: exact rational size expressions, tile variables in priority order set to the
// aligned sizes that use the most UB without exceeding it, block variables set to the smallest
// value with block_dim <= cores, and the template of lowest cost (ties: higher UB use).
// C++17, no dependencies beyond the standard library; needs __int128 (GCC, Clang).
#ifndef ASCENDIR_TILING_RT_H
#define ASCENDIR_TILING_RT_H

#include <stdint.h>

#include <vector>

namespace ascendir_rt {

typedef __int128 i128;

// Thrown on arithmetic overflow or division by zero; reported as status kModel.
struct Overflow {};

enum Status : int64_t { kOk = 0, kUb = 1, kCores = 2, kModel = 3 };

// An exact rational n / d with d > 0, in lowest terms.
struct Q {
  i128 n;
  i128 d;
};

inline i128 abs128(i128 a) { return a < 0 ? -a : a; }

inline i128 gcd128(i128 a, i128 b) {
  a = abs128(a);
  b = abs128(b);
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

inline Q norm(i128 n, i128 d) {
  if (d == 0) throw Overflow();
  if (d < 0) {
    n = -n;
    d = -d;
  }
  i128 g = gcd128(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
  return Q{n, d};
}

inline i128 mul128(i128 a, i128 b) {
  i128 r;
  if (__builtin_mul_overflow(a, b, &r)) throw Overflow();
  return r;
}

inline i128 add128(i128 a, i128 b) {
  i128 r;
  if (__builtin_add_overflow(a, b, &r)) throw Overflow();
  return r;
}

inline Q qc(int64_t n, int64_t d) { return norm(n, d); }
inline Q qv(int64_t v) { return Q{v, 1}; }

inline Q qadd(Q a, Q b) {
  if (a.d == b.d) return norm(add128(a.n, b.n), a.d);
  return norm(add128(mul128(a.n, b.d), mul128(b.n, a.d)), mul128(a.d, b.d));
}

inline Q qmul(Q a, Q b) { return norm(mul128(a.n, b.n), mul128(a.d, b.d)); }

inline Q qpow(Q a, int64_t e) {
  if (e < 0) {
    if (a.n == 0) throw Overflow();
    a = norm(a.d, a.n);
    e = -e;
  }
  Q r{1, 1};
  for (int64_t k = 0; k < e; ++k) r = qmul(r, a);
  return r;
}

inline i128 floor_div(i128 n, i128 d) {
  i128 q = n / d;
  if ((n % d != 0) && ((n < 0) != (d < 0))) q -= 1;
  return q;
}

inline Q qfloor(Q a) { return Q{floor_div(a.n, a.d), 1}; }
inline Q qceil(Q a) {
  i128 q = floor_div(a.n, a.d);
  return Q{a.n - q * a.d == 0 ? q : add128(q, 1), 1};
}
inline Q qabs(Q a) { return Q{abs128(a.n), a.d}; }
inline bool qlt(Q a, Q b) { return mul128(a.n, b.d) < mul128(b.n, a.d); }
inline Q qmax(Q a, Q b) { return qlt(a, b) ? b : a; }
inline Q qmin(Q a, Q b) { return qlt(b, a) ? b : a; }
// Floor modulo: a - b * floor(a / b), the sign of the divisor.
inline Q qmod(Q a, Q b) {
  if (b.n == 0) throw Overflow();
  Q q = qfloor(qmul(a, norm(b.d, b.n)));
  return qadd(a, qmul(Q{-1, 1}, qmul(b, q)));
}
inline Q qeq(Q a, Q b) { return Q{(a.n == b.n && a.d == b.d) ? 1 : 0, 1}; }
inline Q qne(Q a, Q b) { return Q{(a.n == b.n && a.d == b.d) ? 0 : 1, 1}; }
inline Q qrlt(Q a, Q b) { return Q{qlt(a, b) ? 1 : 0, 1}; }
inline Q qrle(Q a, Q b) { return Q{qlt(b, a) ? 0 : 1, 1}; }

// The value rounded up to an integer, as int64.
inline int64_t qint(Q a) {
  i128 v = qceil(a).n;
  if (v > (i128)INT64_MAX || v < (i128)INT64_MIN) throw Overflow();
  return (int64_t)v;
}

// One template's tiling model. Slots: the variables (priority order), then the shape symbols.
struct Problem {
  int64_t tiling_key;
  int nv;
  int nslots;
  const int *is_tile;     // per variable: 1 tile, 0 block
  const int64_t *align;   // per variable, in elements
  int64_t (*ub)(const int64_t *v);
  int64_t (*upper)(int k, const int64_t *v);
  int64_t (*block_dim)(const int64_t *v);
  int64_t (*iters)(const int64_t *v);
  int ncont;
  int64_t (*cont)(int c, const int64_t *v);
};

struct Result {
  int64_t status;
  int64_t tiling_key;
  int index;  // template position
  std::vector<int64_t> vals;
  std::vector<int64_t> cont;
  int64_t block_dim;
  int64_t ub_used;
  int64_t cost;
};

class Solver {
 public:
  Solver(const Problem &p, int64_t ub_size, int64_t cores) : p_(p), ub_size_(ub_size), cores_(cores) {}

  Result Solve(const int64_t *shape) {
    Result r{kOk, p_.tiling_key, 0, {}, {}, 0, 0, 0};
    try {
      r.status = Run(shape, &r);
    } catch (const Overflow &) {
      r.status = kModel;
    }
    return r;
  }

 private:
  struct Best {
    int64_t ub;
    std::vector<int64_t> vals;
  };

  const Problem &p_;
  int64_t ub_size_;
  int64_t cores_;

  int64_t Usage(const std::vector<int64_t> &v) const { return p_.ub(v.data()); }
  int64_t Upper(int k, const std::vector<int64_t> &v) const { return p_.upper(k, v.data()); }
  int64_t TileUpper(int k, const std::vector<int64_t> &v) const {
    int64_t u = Upper(k, v);
    return u < 1 ? 1 : u;
  }
  int64_t Align(int k) const { return p_.align[k] < 1 ? 1 : p_.align[k]; }
  int64_t TileMin(int k, const std::vector<int64_t> &v) const {
    int64_t a = Align(k), u = TileUpper(k, v);
    return a < u ? a : u;
  }
  bool TileNext(int k, int64_t x, const std::vector<int64_t> &v, int64_t *out) const {
    int64_t up = TileUpper(k, v), a = Align(k);
    if (x >= up) return false;
    int64_t n = (x / a + 1) * a;
    *out = n < up ? n : up;
    return true;
  }
  bool TilePrev(int k, int64_t x, const std::vector<int64_t> &v, int64_t *out) const {
    int64_t a = Align(k);
    int64_t prev = (x % a == 0) ? x - a : x / a * a;
    if (prev >= TileMin(k, v) && prev >= 1) {
      *out = prev;
      return true;
    }
    return false;
  }

  struct Fit {
    int64_t value;
    int64_t usage;
    int64_t at_upper;
  };

  // The largest fitting candidate of tile variable k, the others fixed (exact: the usage is
  // monotone in each variable): the bound, a linear guess, galloping, bisection.
  bool FitMax(int k, std::vector<int64_t> &v, Fit *f) const {
    int64_t up = TileUpper(k, v), a = Align(k);
    v[k] = up;
    int64_t u_up = Usage(v);
    if (u_up <= ub_size_) {
      *f = Fit{up, u_up, u_up};
      return true;
    }
    int64_t hi_k = up / a;
    v[k] = TileMin(k, v);
    if (hi_k < 1) return false;
    int64_t u_lo = Usage(v);
    if (u_lo > ub_size_) return false;
    auto fits = [&](int64_t kk, int64_t *u) {
      v[k] = kk * a;
      *u = Usage(v);
      return *u <= ub_size_;
    };
    i128 span = (u_up - u_lo) < 1 ? 1 : (i128)(u_up - u_lo);
    i128 num = (i128)(ub_size_ - u_lo < 0 ? 0 : ub_size_ - u_lo) * (i128)(up - a < 0 ? 0 : up - a);
    int64_t guess = 1 + (int64_t)(num / (span * (i128)a));
    int64_t k0 = guess < 1 ? 1 : (guess > hi_k ? hi_k : guess);
    int64_t lo, lo_u, hi, u;
    if (fits(k0, &u)) {
      lo = k0;
      lo_u = u;
      hi = hi_k + 1;
      int64_t step = 1;
      while (lo + step <= hi_k) {
        if (fits(lo + step, &u)) {
          lo += step;
          lo_u = u;
          step *= 2;
        } else {
          hi = lo + step;
          break;
        }
      }
    } else {
      hi = k0;
      lo = 1;
      lo_u = u_lo;
      int64_t step = 1;
      while (hi - step > 1) {
        if (fits(hi - step, &u)) {
          lo = hi - step;
          lo_u = u;
          break;
        }
        hi -= step;
        step *= 2;
      }
    }
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      if (fits(mid, &u)) {
        lo = mid;
        lo_u = u;
      } else {
        hi = mid;
      }
    }
    v[k] = lo * a;
    *f = Fit{lo * a, lo_u, u_up};
    return true;
  }

  void SetMin(const int *tiles, int n, std::vector<int64_t> &v) const {
    for (int i = 0; i < n; ++i) v[tiles[i]] = TileMin(tiles[i], v);
  }

  int64_t UsageAtBounds(const int *tiles, int n, const std::vector<int64_t> &v) const {
    std::vector<int64_t> w = v;
    for (int i = 0; i < n; ++i) w[tiles[i]] = TileUpper(tiles[i], w);
    return Usage(w);
  }

  void Record(const std::vector<int64_t> &v, int64_t u, Best &best) const {
    if (u <= ub_size_ && u > best.ub) {
      best.ub = u;
      best.vals = v;
    }
  }

  // The tile sizes (variables `tiles`, priority order) that use the most UB; ties keep the
  // first found, giving the higher-priority variables the larger values.
  void Search(const int *tiles, int n, std::vector<int64_t> &v, Best &best) const {
    if (n == 0) {
      Record(v, Usage(v), best);
      return;
    }
    if (n == 1) {
      Fit f;
      if (FitMax(tiles[0], v, &f)) Record(v, f.usage, best);
      return;
    }
    if (n == 2) {
      int x = tiles[0], y = tiles[1];
      v[y] = TileMin(y, v);
      Fit f;
      if (!FitMax(x, v, &f)) return;
      int64_t xv = f.value;
      for (;;) {
        v[x] = xv;
        Fit yf;
        if (!FitMax(y, v, &yf)) break;
        Record(v, yf.usage, best);
        if (best.ub >= ub_size_) break;
        int64_t ny;
        if (!TileNext(y, yf.value, v, &ny)) break;
        if (yf.at_upper <= best.ub) break;
        v[y] = ny;
        Fit xf;
        if (!FitMax(x, v, &xf)) break;
        xv = xf.value;
      }
      return;
    }
    int k = tiles[0];
    const int *rest = tiles + 1;
    SetMin(rest, n - 1, v);
    Fit f;
    if (!FitMax(k, v, &f)) return;
    int64_t x = f.value;
    for (;;) {
      v[k] = x;
      if (UsageAtBounds(rest, n - 1, v) <= best.ub) break;
      SetMin(rest, n - 1, v);
      Search(rest, n - 1, v, best);
      if (best.ub >= ub_size_) break;
      if (!TilePrev(k, x, v, &x)) break;
    }
  }

  int64_t Run(const int64_t *shape, Result *r) {
    const int nv = p_.nv;
    std::vector<int64_t> v(p_.nslots, 1);
    for (int s = nv; s < p_.nslots; ++s) v[s] = shape[s - nv];
    bool empty = false;
    for (int k = 0; k < nv; ++k) {
      if (!p_.is_tile[k]) continue;
      int64_t up = Upper(k, v);
      if (up <= 0) empty = true;
      int64_t a = p_.align[k] < up ? p_.align[k] : up;
      v[k] = a < 1 ? 1 : a;
    }
    if (!empty) {
      if (Usage(v) > ub_size_) return kUb;
      std::vector<int> tiles;
      for (int k = 0; k < nv; ++k)
        if (p_.is_tile[k]) tiles.push_back(k);
      Best best{-1, v};
      Search(tiles.data(), (int)tiles.size(), v, best);
      v = best.vals;
    }
    for (int k = 0; k < nv; ++k) {
      if (p_.is_tile[k]) continue;
      int64_t up = Upper(k, v);
      if (up < 1) up = 1;
      int64_t b = (up + cores_ - 1) / cores_;
      if (b < 1) b = 1;
      v[k] = b;
      while (b < up) {
        v[k] = b;
        if (p_.block_dim(v.data()) <= cores_) break;
        b += 1;
      }
      int64_t c = b < up ? b : up;
      v[k] = c < 1 ? 1 : c;
    }
    r->block_dim = p_.block_dim(v.data());
    if (r->block_dim > cores_) return kCores;
    r->ub_used = Usage(v);
    int64_t total = 0;
    for (int c = 0; c < p_.ncont; ++c) {
      int64_t bytes = p_.cont(c, v.data());
      r->cont.push_back(bytes);
      total += bytes;
    }
    int64_t iters = p_.iters(v.data());
    int64_t per_iter = 64 + total / 32;
    int64_t cost;
    if (__builtin_mul_overflow(iters, per_iter, &cost)) cost = (iters < 0) != (per_iter < 0) ? INT64_MIN : INT64_MAX;
    if (__builtin_add_overflow(cost, (int64_t)1000, &cost)) cost = INT64_MAX;
    r->cost = cost;
    r->vals = v;
    return kOk;
  }
};

// Solve every template and pick the lowest cost (ties: higher UB use); when none fits, the
// first template's error.
inline Result SolveBest(const Problem *const *problems, int n, const int64_t *const *shapes, int64_t ub_size,
                        int64_t cores) {
  Result best{kModel, -1, -1, {}, {}, 0, 0, 0};
  bool have = false;
  int64_t first_err = -1;
  for (int i = 0; i < n; ++i) {
    Solver s(*problems[i], ub_size, cores);
    Result r = s.Solve(shapes[i]);
    r.index = i;
    if (r.status != kOk) {
      if (first_err < 0) first_err = r.status;
      continue;
    }
    if (!have || r.cost < best.cost || (r.cost == best.cost && r.ub_used > best.ub_used)) {
      best = r;
      have = true;
    }
  }
  if (!have) best.status = first_err < 0 ? kModel : first_err;
  return best;
}

}  // namespace ascendir_rt

#endif  // ASCENDIR_TILING_RT_H
