// Attention with the elementwise power activation, without an N x N matrix:
//
//     out_i = r_i * sum_{j visible to i} (q_i . k_j)^p v_j
//
// r_i is the row scale (1/sqrt(N_i) or a constant c, times the score scale 1/sqrt(d)^p: the
// caller folds every scale into it).  Under a causal mask query i sees keys j <= i + offset.
// The loops run over query blocks and key blocks at or below the diagonal; each tile of
// scores is a matrix product into a buffer kept between calls (one per thread), the power
// and the mask are one pass over it, and the backward pass recomputes the tile:
//
//     dP = (r dO) V^T,  dS = dP * p S^(p-1),  dQ = dS K,  dK = dS^T Q,  dV = P^T (r dO)
//
// Masked entries of a tile are written as exact zeros (weights and dS), so masked keys get
// exactly zero weight and gradient.  Matrix products go to the BLAS sgemm that PyTorch
// links (MKL), and through at::mm_out when the library exports none.
#include <torch/extension.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                       const float* beta, float* c, const int* ldc) __attribute__((weak));

namespace {

// POLYATTN_ATEN_MM: build with the at::mm_out route only (to check it against the BLAS one)
#ifdef POLYATTN_ATEN_MM
bool blas_linked() { return false; }
#else
bool blas_linked() { return sgemm_ != nullptr; }
#endif

// Row-major C[m x n] = alpha * op(A) op(B) + beta * C; A is m x k (or k x m when trans_a).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (blas_linked()) {
    // row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
    const char ta = trans_b ? 'T' : 'N', tb = trans_a ? 'T' : 'N';
    const int mi = static_cast<int>(n), ni = static_cast<int>(m), ki = static_cast<int>(k);
    const int la = static_cast<int>(ldb), lb = static_cast<int>(lda), lc = static_cast<int>(ldc);
    sgemm_(&ta, &tb, &mi, &ni, &ki, &alpha, b, &la, a, &lb, &beta, c, &lc);
    return;
  }
  auto opts = at::TensorOptions().dtype(at::kFloat);
  at::Tensor ta = trans_a ? at::from_blob(const_cast<float*>(a), {k, m}, {lda, 1}, opts).t()
                          : at::from_blob(const_cast<float*>(a), {m, k}, {lda, 1}, opts);
  at::Tensor tb = trans_b ? at::from_blob(const_cast<float*>(b), {n, k}, {ldb, 1}, opts).t()
                          : at::from_blob(const_cast<float*>(b), {k, n}, {ldb, 1}, opts);
  at::Tensor tc = at::from_blob(c, {m, n}, {ldc, 1}, opts);
  if (k == 0) {
    if (beta == 0.f) tc.zero_(); else tc.mul_(beta);
  } else if (beta == 0.f) {
    at::mm_out(tc, ta, tb);
    if (alpha != 1.f) tc.mul_(alpha);
  } else {
    tc.addmm_(ta, tb, beta, alpha);
  }
}

// Scratch space of the calling thread, kept between calls: a fresh buffer per call would be
// mapped anew and page-fault on first touch.
float* scratch(size_t floats) {
  thread_local std::vector<float> buf;
  if (buf.size() < floats) buf.assign(floats, 0.f);
  return buf.data();
}

struct Plan {
  int64_t n_q, n_k, d, dv, offset, block_q, block_k, p;
  bool causal;
  // keys [0, key_end(i1)) are visible to some query of the block ending before row i1
  int64_t key_end(int64_t i1) const {
    return causal ? std::max<int64_t>(0, std::min(n_k, i1 + offset)) : n_k;
  }
  // keys [j0, j0 + visible(i, j0)) of the tile's columns are visible to query i
  int64_t visible(int64_t i, int64_t j0, int64_t cols) const {
    if (!causal) return cols;
    return std::max<int64_t>(0, std::min(cols, i + offset - j0 + 1));
  }
};

inline float power(float s, int64_t e) {
  float r = 1.f;
  for (int64_t t = 0; t < e; ++t) r *= s;
  return r;
}

// In place: s <- s^p on the visible part of each row, 0 elsewhere.
void weights_pass(float* s, int64_t rows, int64_t cols, int64_t i0, int64_t j0, const Plan& pl) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * cols;
    const int64_t vis = pl.visible(i0 + r, j0, cols);
    switch (pl.p) {
      case 1: break;
      case 2: for (int64_t c = 0; c < vis; ++c) row[c] = row[c] * row[c]; break;
      case 3: for (int64_t c = 0; c < vis; ++c) row[c] = row[c] * row[c] * row[c]; break;
      default: for (int64_t c = 0; c < vis; ++c) row[c] = power(row[c], pl.p);
    }
    std::fill(row + vis, row + cols, 0.f);
  }
}

// In place: s <- s^p and dp <- dp * s^(p-1) on the visible part of each row, both 0 elsewhere
// (the factor p is applied to dQ and dK at the end).
void weights_grad_pass(float* s, float* dp, int64_t rows, int64_t cols, int64_t i0, int64_t j0, const Plan& pl) {
  for (int64_t r = 0; r < rows; ++r) {
    float* srow = s + r * cols;
    float* drow = dp + r * cols;
    const int64_t vis = pl.visible(i0 + r, j0, cols);
    switch (pl.p) {
      case 1: break;
      case 2:
        for (int64_t c = 0; c < vis; ++c) { const float x = srow[c]; drow[c] *= x; srow[c] = x * x; }
        break;
      case 3:
        for (int64_t c = 0; c < vis; ++c) { const float x = srow[c], x2 = x * x; drow[c] *= x2; srow[c] = x2 * x; }
        break;
      default:
        for (int64_t c = 0; c < vis; ++c) {
          const float x = srow[c], xm = power(x, pl.p - 1);
          drow[c] *= xm;
          srow[c] = xm * x;
        }
    }
    std::fill(srow + vis, srow + cols, 0.f);
    std::fill(drow + vis, drow + cols, 0.f);
  }
}

void check_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& rs) {
  for (const at::Tensor* t : {&q, &k, &v, &rs}) {
    TORCH_CHECK(t->device().is_cpu() && t->scalar_type() == at::kFloat && t->is_contiguous(),
                "causal_poly: tensors must be contiguous float32 on the CPU");
  }
  TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3, "causal_poly: q, k, v must be [BH, N, d]");
  TORCH_CHECK(k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(2) == q.size(2) && v.size(1) == k.size(1),
              "causal_poly: q, k, v shapes do not match");
  TORCH_CHECK(rs.dim() == 2 && rs.size(1) == q.size(1) && (rs.size(0) == 1 || rs.size(0) == q.size(0)),
              "causal_poly: the row scale must be [1 or BH, Nq]");
}

void check_grad_out(const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& v, const char* name) {
  TORCH_CHECK(grad_out.sizes() == at::IntArrayRef({q.size(0), q.size(1), v.size(2)}) && grad_out.is_contiguous() &&
                  grad_out.scalar_type() == at::kFloat,
              name, ": grad_out must be a contiguous float32 [BH, Nq, dv]");
}

// dst[r, :] = r_r * src[r, :] for rows of width cols (dst == src scales in place).
void scale_rows(float* dst, const float* src, const float* r_scale, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float f = r_scale[r];
    for (int64_t e = 0; e < cols; ++e) dst[r * cols + e] = f * src[r * cols + e];
  }
}

Plan make_plan(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t p, bool causal,
               int64_t offset, int64_t block_q, int64_t block_k) {
  TORCH_CHECK(p >= 1, "causal_poly: p must be >= 1");
  TORCH_CHECK(block_q >= 1 && block_k >= 1, "causal_poly: block sizes must be positive");
  return Plan{q.size(1), k.size(1), q.size(2), v.size(2), offset,
              std::min(block_q, std::max<int64_t>(1, q.size(1))), std::min(block_k, std::max<int64_t>(1, k.size(1))),
              p, causal};
}

at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& rs,
                   int64_t p, bool causal, int64_t offset, int64_t block_q, int64_t block_k) {
  check_inputs(q, k, v, rs);
  const Plan pl = make_plan(q, k, v, p, causal, offset, block_q, block_k);
  const int64_t bh = q.size(0);
  at::Tensor out = at::empty({bh, pl.n_q, pl.dv}, q.options());
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  const float* rp = rs.data_ptr<float>();
  const int64_t rs_stride = rs.size(0) == 1 ? 0 : pl.n_q;
  float* op = out.data_ptr<float>();
  const int64_t n_blocks = (pl.n_q + pl.block_q - 1) / pl.block_q;
  at::parallel_for(0, bh * n_blocks, 1, [&](int64_t begin, int64_t end) {
    float* s = scratch(static_cast<size_t>(pl.block_q * pl.block_k));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / n_blocks, i0 = (t % n_blocks) * pl.block_q;
      const int64_t rows = std::min(pl.block_q, pl.n_q - i0), k_end = pl.key_end(i0 + rows);
      const float* qb = qp + (b * pl.n_q + i0) * pl.d;
      float* ob = op + (b * pl.n_q + i0) * pl.dv;
      if (k_end == 0) {
        std::fill(ob, ob + rows * pl.dv, 0.f);
        continue;
      }
      for (int64_t j0 = 0; j0 < k_end; j0 += pl.block_k) {
        const int64_t cols = std::min(pl.block_k, k_end - j0);
        gemm(false, true, rows, cols, pl.d, 1.f, qb, pl.d, kp + (b * pl.n_k + j0) * pl.d, pl.d, 0.f, s, cols);
        weights_pass(s, rows, cols, i0, j0, pl);
        gemm(false, false, rows, pl.dv, cols, 1.f, s, cols, vp + (b * pl.n_k + j0) * pl.dv, pl.dv,
             j0 == 0 ? 0.f : 1.f, ob, pl.dv);
      }
      scale_rows(ob, ob, rp + b * rs_stride + i0, rows, pl.dv);
    }
  });
  return out;
}

std::vector<at::Tensor> backward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& rs,
                                 const at::Tensor& grad_out, int64_t p, bool causal, int64_t offset, int64_t block_q,
                                 int64_t block_k, bool need_qk, bool need_v) {
  check_inputs(q, k, v, rs);
  check_grad_out(grad_out, q, v, "causal_poly");
  const Plan pl = make_plan(q, k, v, p, causal, offset, block_q, block_k);
  const int64_t bh = q.size(0);
  at::Tensor dq = need_qk ? at::zeros_like(q) : at::Tensor();
  at::Tensor dk = need_qk ? at::zeros_like(k) : at::Tensor();
  at::Tensor dv = need_v ? at::zeros_like(v) : at::Tensor();
  if (!need_qk && !need_v) return {dq, dk, dv};
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  const float *rp = rs.data_ptr<float>(), *gp = grad_out.data_ptr<float>();
  const int64_t rs_stride = rs.size(0) == 1 ? 0 : pl.n_q;
  float* dqp = need_qk ? dq.data_ptr<float>() : nullptr;
  float* dkp = need_qk ? dk.data_ptr<float>() : nullptr;
  float* dvp = need_v ? dv.data_ptr<float>() : nullptr;
  // one head per task: dK and dV of a head gather contributions from all its query blocks
  at::parallel_for(0, bh, 1, [&](int64_t begin, int64_t end) {
    const int64_t tile = pl.block_q * pl.block_k;
    float* s = scratch(static_cast<size_t>(2 * tile + pl.block_q * pl.dv));
    float* dp = s + tile;
    float* go = dp + tile;                                 // r dO of the query block
    for (int64_t b = begin; b < end; ++b) {
      const float* rb = rp + b * rs_stride;
      for (int64_t i0 = 0; i0 < pl.n_q; i0 += pl.block_q) {
        const int64_t rows = std::min(pl.block_q, pl.n_q - i0), k_end = pl.key_end(i0 + rows);
        if (k_end == 0) continue;
        const float* qb = qp + (b * pl.n_q + i0) * pl.d;
        scale_rows(go, gp + (b * pl.n_q + i0) * pl.dv, rb + i0, rows, pl.dv);
        for (int64_t j0 = 0; j0 < k_end; j0 += pl.block_k) {
          const int64_t cols = std::min(pl.block_k, k_end - j0);
          const float* kb = kp + (b * pl.n_k + j0) * pl.d;
          const float* vb = vp + (b * pl.n_k + j0) * pl.dv;
          gemm(false, true, rows, cols, pl.d, 1.f, qb, pl.d, kb, pl.d, 0.f, s, cols);
          if (need_qk) {
            gemm(false, true, rows, cols, pl.dv, 1.f, go, pl.dv, vb, pl.dv, 0.f, dp, cols);
            weights_grad_pass(s, dp, rows, cols, i0, j0, pl);
          } else {
            weights_pass(s, rows, cols, i0, j0, pl);
          }
          if (need_v) gemm(true, false, cols, pl.dv, rows, 1.f, s, cols, go, pl.dv, 1.f, dvp + (b * pl.n_k + j0) * pl.dv, pl.dv);
          if (need_qk) {
            gemm(false, false, rows, pl.d, cols, 1.f, dp, cols, kb, pl.d, 1.f, dqp + (b * pl.n_q + i0) * pl.d, pl.d);
            gemm(true, false, cols, pl.d, rows, 1.f, dp, cols, qb, pl.d, 1.f, dkp + (b * pl.n_k + j0) * pl.d, pl.d);
          }
        }
      }
    }
  });
  if (need_qk && p != 1) {
    dq.mul_(static_cast<double>(p));
    dk.mul_(static_cast<double>(p));
  }
  return {dq, dk, dv};
}

// ---------------------------------------------------------------------------------------------
// The causal linear form of p = 1, chunk by chunk:
//
//     out_i = r_i * ( q_i S_c + sum_{j in the chunk's diagonal tile, j <= i + offset} (q_i . k_j) v_j )
//
// where S_c = sum of k_j v_j^T over the keys every query of chunk c sees (j < P(c), with
// P(c) = i0 + offset clipped to [0, Nk]), carried from chunk to chunk, and the diagonal tile
// holds the keys [P(c), E(c)), E(c) = i1 + offset clipped, masked per row.  The backward pass
// recomputes S_c forward for dQ and carries R = sum over later chunks of Q_c^T (r dO_c)
// backward for the prefix keys' dK and dV.  Same products as the chunked PyTorch form; no
// cumulative sums, concatenations or temporaries of size N.

int64_t clip(int64_t x, int64_t hi) { return std::max<int64_t>(0, std::min(hi, x)); }

at::Tensor linear_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& rs,
                          int64_t offset, int64_t chunk) {
  check_inputs(q, k, v, rs);
  const Plan pl = make_plan(q, k, v, 1, true, offset, chunk, chunk);
  const int64_t bh = q.size(0), c = pl.block_q;
  at::Tensor out = at::empty({bh, pl.n_q, pl.dv}, q.options());
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  const float* rp = rs.data_ptr<float>();
  const int64_t rs_stride = rs.size(0) == 1 ? 0 : pl.n_q;
  float* op = out.data_ptr<float>();
  at::parallel_for(0, bh, 1, [&](int64_t begin, int64_t end) {
    float* state = scratch(static_cast<size_t>(pl.d * pl.dv + c * c));
    float* s = state + pl.d * pl.dv;
    for (int64_t b = begin; b < end; ++b) {
      const float* kb = kp + b * pl.n_k * pl.d;
      const float* vb = vp + b * pl.n_k * pl.dv;
      int64_t seen = 0;                                     // keys folded into the state
      std::fill(state, state + pl.d * pl.dv, 0.f);
      for (int64_t i0 = 0; i0 < pl.n_q; i0 += c) {
        const int64_t rows = std::min(c, pl.n_q - i0);
        const int64_t pre = clip(i0 + offset, pl.n_k), end_k = clip(i0 + rows + offset, pl.n_k);
        if (pre > seen) {
          gemm(true, false, pl.d, pl.dv, pre - seen, 1.f, kb + seen * pl.d, pl.d, vb + seen * pl.dv, pl.dv, 1.f,
               state, pl.dv);
          seen = pre;
        }
        const float* qb = qp + (b * pl.n_q + i0) * pl.d;
        float* ob = op + (b * pl.n_q + i0) * pl.dv;
        gemm(false, false, rows, pl.dv, pl.d, 1.f, qb, pl.d, state, pl.dv, 0.f, ob, pl.dv);
        const int64_t cols = end_k - pre;
        if (cols > 0) {
          gemm(false, true, rows, cols, pl.d, 1.f, qb, pl.d, kb + pre * pl.d, pl.d, 0.f, s, cols);
          weights_pass(s, rows, cols, i0, pre, pl);
          gemm(false, false, rows, pl.dv, cols, 1.f, s, cols, vb + pre * pl.dv, pl.dv, 1.f, ob, pl.dv);
        }
        scale_rows(ob, ob, rp + b * rs_stride + i0, rows, pl.dv);
      }
    }
  });
  return out;
}

std::vector<at::Tensor> linear_backward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        const at::Tensor& rs, const at::Tensor& grad_out, int64_t offset,
                                        int64_t chunk, bool need_q, bool need_k, bool need_v) {
  check_inputs(q, k, v, rs);
  check_grad_out(grad_out, q, v, "causal_linear");
  const Plan pl = make_plan(q, k, v, 1, true, offset, chunk, chunk);
  const int64_t bh = q.size(0), c = pl.block_q, n_chunks = (pl.n_q + c - 1) / c;
  at::Tensor dq = need_q ? at::zeros_like(q) : at::Tensor();
  at::Tensor dk = need_k ? at::zeros_like(k) : at::Tensor();
  at::Tensor dv = need_v ? at::zeros_like(v) : at::Tensor();
  if (!need_q && !need_k && !need_v) return {dq, dk, dv};
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  const float *rp = rs.data_ptr<float>(), *gp = grad_out.data_ptr<float>();
  const int64_t rs_stride = rs.size(0) == 1 ? 0 : pl.n_q;
  float* dqp = need_q ? dq.data_ptr<float>() : nullptr;
  float* dkp = need_k ? dk.data_ptr<float>() : nullptr;
  float* dvp = need_v ? dv.data_ptr<float>() : nullptr;
  const bool need_kv = need_k || need_v;
  at::parallel_for(0, bh, 1, [&](int64_t begin, int64_t end) {
    const int64_t dd = pl.d * pl.dv;
    float* state = scratch(static_cast<size_t>(dd + 2 * c * c + c * pl.dv));
    float* s = state + dd;                                  // also R in the backward sweep
    float* dp = s + c * c;
    float* go = dp + c * c;                                 // r dO of the chunk
    for (int64_t b = begin; b < end; ++b) {
      const float* kb = kp + b * pl.n_k * pl.d;
      const float* vb = vp + b * pl.n_k * pl.dv;
      const float* rb = rp + b * rs_stride;
      auto scaled_grad = [&](int64_t i0, int64_t rows) {
        scale_rows(go, gp + (b * pl.n_q + i0) * pl.dv, rb + i0, rows, pl.dv);
      };
      // forward sweep: dQ_c = G_c S_c^T + (G_c V_t^T, masked) K_t; the diagonal tiles' dK, dV
      int64_t seen = 0;
      std::fill(state, state + dd, 0.f);
      for (int64_t i0 = 0; i0 < pl.n_q; i0 += c) {
        const int64_t rows = std::min(c, pl.n_q - i0);
        const int64_t pre = clip(i0 + offset, pl.n_k), end_k = clip(i0 + rows + offset, pl.n_k), cols = end_k - pre;
        if (need_q && pre > seen) {
          gemm(true, false, pl.d, pl.dv, pre - seen, 1.f, kb + seen * pl.d, pl.d, vb + seen * pl.dv, pl.dv, 1.f,
               state, pl.dv);
          seen = pre;
        }
        scaled_grad(i0, rows);
        const float* qb = qp + (b * pl.n_q + i0) * pl.d;
        if (need_q) gemm(false, true, rows, pl.d, pl.dv, 1.f, go, pl.dv, state, pl.dv, 0.f, dqp + (b * pl.n_q + i0) * pl.d, pl.d);
        if (cols <= 0) continue;
        const float* kt = kb + pre * pl.d;
        const float* vt = vb + pre * pl.dv;
        gemm(false, true, rows, cols, pl.dv, 1.f, go, pl.dv, vt, pl.dv, 0.f, dp, cols);
        if (need_v) gemm(false, true, rows, cols, pl.d, 1.f, qb, pl.d, kt, pl.d, 0.f, s, cols);
        weights_grad_pass(s, dp, rows, cols, i0, pre, pl);   // p = 1: masks both (s is unused without need_v)
        if (need_q) gemm(false, false, rows, pl.d, cols, 1.f, dp, cols, kt, pl.d, 1.f, dqp + (b * pl.n_q + i0) * pl.d, pl.d);
        if (need_k) gemm(true, false, cols, pl.d, rows, 1.f, dp, cols, qb, pl.d, 1.f, dkp + (b * pl.n_k + pre) * pl.d, pl.d);
        if (need_v) gemm(true, false, cols, pl.dv, rows, 1.f, s, cols, go, pl.dv, 1.f, dvp + (b * pl.n_k + pre) * pl.dv, pl.dv);
      }
      if (!need_kv) continue;
      // backward sweep: keys [P(c), P(c + 1)) are prefix keys of the chunks after c, whose
      // Q^T G sum is R: dK += V R^T, dV += K R
      float* r_sum = state;
      std::fill(r_sum, r_sum + dd, 0.f);
      for (int64_t ci = n_chunks - 1; ci >= 0; --ci) {
        const int64_t i0 = ci * c, rows = std::min(c, pl.n_q - i0);
        const int64_t pre = clip(i0 + offset, pl.n_k);
        const int64_t seg_end = ci == n_chunks - 1 ? pre : clip(i0 + c + offset, pl.n_k);
        if (seg_end > pre) {
          if (need_k) gemm(false, true, seg_end - pre, pl.d, pl.dv, 1.f, vb + pre * pl.dv, pl.dv, r_sum, pl.dv, 1.f,
                           dkp + (b * pl.n_k + pre) * pl.d, pl.d);
          if (need_v) gemm(false, false, seg_end - pre, pl.dv, pl.d, 1.f, kb + pre * pl.d, pl.d, r_sum, pl.dv, 1.f,
                           dvp + (b * pl.n_k + pre) * pl.dv, pl.dv);
        }
        scaled_grad(i0, rows);
        gemm(true, false, pl.d, pl.dv, rows, 1.f, qp + (b * pl.n_q + i0) * pl.d, pl.d, go, pl.dv, 1.f, r_sum, pl.dv);
      }
      const int64_t first = clip(offset, pl.n_k);             // keys every query sees
      if (first > 0) {
        if (need_k) gemm(false, true, first, pl.d, pl.dv, 1.f, vb, pl.dv, r_sum, pl.dv, 1.f, dkp + b * pl.n_k * pl.d, pl.d);
        if (need_v) gemm(false, false, first, pl.dv, pl.d, 1.f, kb, pl.d, r_sum, pl.dv, 1.f, dvp + b * pl.n_k * pl.dv, pl.dv);
      }
    }
  });
  return {dq, dk, dv};
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Attention with the power activation (q.k)^p under a causal mask, tile by tile";
  m.def("forward", &forward, "out = r * (masked (Q K^T)^p) V");
  m.def("backward", &backward, "dQ, dK, dV of forward");
  m.def("linear_forward", &linear_forward, "causal out = r * (masked Q K^T) V, chunk by chunk, linear in N");
  m.def("linear_backward", &linear_backward, "dQ, dK, dV of linear_forward");
  m.def("blas_linked", &blas_linked, "whether the products go to the sgemm PyTorch links");
}
