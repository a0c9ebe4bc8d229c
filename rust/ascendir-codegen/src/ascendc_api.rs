//! The helper text every `<name>_op_kernel.cpp` carries after its includes (GE injects its
//! `codegen/api_call/**` utilities the same way): size helpers in `KernelUtils`, GE's size
//! functions (`Floor`, `Ceiling`, `Mod`, `Rational`, `Pow`) for printed size expressions, the
//! data-copy wrappers `DataCopyPadExtend` (GM ⇄ UB, strides in elements) and `DataCopyExtend`
//! (UB → UB), and the scalar fallbacks the printer uses where no vector API fits (padding
//! removal, reductions accumulated across a reduce-outer loop).

/// The helper text (guarded, so several kernels can share a translation unit).
pub const HELPERS: &str = r#"#ifndef __ASCENDIR_KERNEL_HELPERS_H__
#define __ASCENDIR_KERNEL_HELPERS_H__

namespace KernelUtils {
template <typename T>
constexpr inline __aicore__ T Max(const T a) {
  return a;
}

template <typename T, typename... Ts>
constexpr inline __aicore__ T Max(const T a, const Ts... rest) {
  const T b = Max(rest...);
  return a > b ? a : b;
}

template <typename T>
constexpr inline __aicore__ T Min(const T a) {
  return a;
}

template <typename T, typename... Ts>
constexpr inline __aicore__ T Min(const T a, const Ts... rest) {
  const T b = Min(rest...);
  return a < b ? a : b;
}

template <typename T, typename... Ts>
constexpr inline __aicore__ T Sum(const T a, const Ts... rest) {
  return (a + ... + rest);
}

// Elements of type T rounded up to whole 32-byte blocks.
template <typename T>
constexpr inline __aicore__ uint32_t BlkAlign(uint32_t count) {
  const uint32_t bytes = count * sizeof(T);
  return (bytes + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE / sizeof(T);
}
}  // namespace KernelUtils

// Size functions of printed size expressions (integer operands).
constexpr inline __aicore__ int64_t Floor(int64_t v) {
  return v;
}

constexpr inline __aicore__ int64_t Floor(float v) {
  const int64_t i = static_cast<int64_t>(v);
  return (static_cast<float>(i) > v) ? i - 1 : i;
}

constexpr inline __aicore__ int64_t Ceiling(int64_t v) {
  return v;
}

constexpr inline __aicore__ int64_t Ceiling(float v) {
  const int64_t i = static_cast<int64_t>(v);
  return (static_cast<float>(i) < v) ? i + 1 : i;
}

constexpr inline __aicore__ float Rational(float a, float b) {
  return a / b;
}

template <typename A, typename B>
constexpr inline __aicore__ int64_t Mod(A a, B b) {
  const int64_t x = static_cast<int64_t>(a);
  const int64_t y = static_cast<int64_t>(b);
  return y == 0 ? 0 : ((x % y) + y) % y;
}

constexpr inline __aicore__ int64_t Pow(int64_t base, int64_t exponent) {
  int64_t r = 1;
  for (int64_t i = 0; i < exponent; ++i) {
    r *= base;
  }
  return r;
}

// GM -> UB: block_count rows of block_len elements; src_stride is the GM gap between rows
// (elements), dst_stride the UB gap after each 32-byte padded row (elements).
template <typename T>
inline __aicore__ void DataCopyPadExtend(const AscendC::LocalTensor<T> &dst,
                                         const AscendC::GlobalTensor<T> &src, uint32_t block_count,
                                         uint32_t block_len, uint32_t src_stride,
                                         uint32_t dst_stride) {
  AscendC::DataCopyExtParams p;
  p.blockCount = block_count;
  p.blockLen = block_len * sizeof(T);
  p.srcStride = src_stride * sizeof(T);
  p.dstStride = dst_stride / (ONE_BLK_SIZE / sizeof(T));
  AscendC::DataCopyPadExtParams<T> pad = {true, 0, 0, 0};
  AscendC::DataCopyPad(dst, src, p, pad);
}

// UB -> GM: src_stride is the UB gap after each padded row, dst_stride the GM gap (elements).
template <typename T>
inline __aicore__ void DataCopyPadExtend(const AscendC::GlobalTensor<T> &dst,
                                         const AscendC::LocalTensor<T> &src, uint32_t block_count,
                                         uint32_t block_len, uint32_t src_stride,
                                         uint32_t dst_stride) {
  AscendC::DataCopyExtParams p;
  p.blockCount = block_count;
  p.blockLen = block_len * sizeof(T);
  p.srcStride = src_stride / (ONE_BLK_SIZE / sizeof(T));
  p.dstStride = dst_stride * sizeof(T);
  AscendC::DataCopyPad(dst, src, p);
}

// UB -> UB (size a whole number of 32-byte blocks).
template <typename T>
inline __aicore__ void DataCopyExtend(const AscendC::LocalTensor<T> &dst,
                                      const AscendC::LocalTensor<T> &src, const uint32_t size) {
  AscendC::DataCopy(dst, src, size);
}

// Rows of `cols` elements at `src_stride` packed densely at `dst_stride` (scalar copy).
template <typename T>
inline __aicore__ void RemovePadExtend(const AscendC::LocalTensor<T> &dst,
                                       const AscendC::LocalTensor<T> &src, uint32_t rows,
                                       uint32_t cols, uint32_t src_stride, uint32_t dst_stride) {
  AscendC::PipeBarrier<PIPE_ALL>();
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      dst.SetValue(r * dst_stride + c, src.GetValue(r * src_stride + c));
    }
  }
  AscendC::PipeBarrier<PIPE_ALL>();
}

// Combine a tile into a running reduction: dst[i * dst_stride] op= reduce(src row or column)
// (scalar; `inner` says whether the reduced axis is the inner one; OP 0 sum, 1 max, 2 min,
// 3 product).
template <typename T, int OP>
inline __aicore__ void ReduceAccumulate(const AscendC::LocalTensor<T> &dst,
                                        const AscendC::LocalTensor<T> &src, uint32_t rows,
                                        uint32_t cols, uint32_t src_stride, uint32_t dst_stride,
                                        bool inner) {
  AscendC::PipeBarrier<PIPE_ALL>();
  const uint32_t outs = inner ? rows : cols;
  const uint32_t len = inner ? cols : rows;
  for (uint32_t i = 0; i < outs; ++i) {
    float acc = static_cast<float>(dst.GetValue(i * dst_stride));
    for (uint32_t j = 0; j < len; ++j) {
      const uint32_t at = inner ? i * src_stride + j : j * src_stride + i;
      const float v = static_cast<float>(src.GetValue(at));
      if (OP == 0) {
        acc += v;
      } else if (OP == 1) {
        acc = v > acc ? v : acc;
      } else if (OP == 2) {
        acc = v < acc ? v : acc;
      } else {
        acc *= v;
      }
    }
    dst.SetValue(i * dst_stride, static_cast<T>(acc));
  }
  AscendC::PipeBarrier<PIPE_ALL>();
}

#endif  // __ASCENDIR_KERNEL_HELPERS_H__
"#;
