// Package rabitq quantizes vectors with RaBitQ (Gao & Long, SIGMOD 2024)
// and its extension to several bits per dimension (extended RaBitQ, Gao et
// al., SIGMOD 2025): codes of 1 bit per dimension whose distance estimates
// are unbiased and come with an error bound, and codes of 2-8 bits per
// dimension for re-ranking the candidates the bound cannot rule out.
//
// # Rotation
//
// Vectors are zero-padded to D = PaddedDim(dim), dim rounded up to a
// multiple of 64 (at least 64), and rotated by an orthogonal P drawn from
// a PCG seeded by the caller (the same seed gives the same P on every run
// and machine, with or without assembly), computed in O(D log D) by
// kernels.FWHT:
//
//	D a power of two:  P = H·S₃·H·S₂·H·S₁, H the orthonormal Walsh-Hadamard
//	                   transform of size D, each Sᵢ a diagonal of random signs
//	otherwise:         the FHT-Kac walk of RaBitQ-Library's FhtKacRotator:
//	                   four rounds of Sᵢ, then H of size T (the largest power
//	                   of two below D) on the first T coordinates (rounds 1, 3)
//	                   or the last T (rounds 2, 4), then one Kac step, the
//	                   rotation by π/4 of every pair (xᵢ, xᵢ₊D/2)
//
// Both are orthogonal (inner products and norms are kept exactly, up to
// rounding). Neither is a uniformly random rotation: like the randomised
// Hadamard transform, the FHT-Kac walk is a fast Johnson-Lindenstrauss
// transform (RaBitQ-Library cites Ailon & Chazelle's FJLT and Kac's walk on
// the sphere mixing in O(n log n) steps, Pillai & Smith 2017) that spreads
// every vector's mass over all coordinates; the estimator's guarantees are
// checked empirically (rabitq_test.go, rotation_test.go). At d = 784 the
// 1-bit estimate's mean |error| is 1.10x the legacy 1,024-bit codes', the
// sqrt(1023/831) = 1.11x that the error's 1/sqrt(D − 1) predicts.
//
// Codes written before PaddedDim were padded to LegacyPaddedDim(dim), the
// power of two >= max(dim, 64). NewRotationPadded rebuilds either: the
// kind of P follows from D alone, so a file that records D (hnsw's RBQP
// section) recreates its codes' rotation, and dimensions whose PaddedDim
// is a power of two (512, 1,000 -> 1,024) have the rotation they always had.
//
// # Codes
//
// A quantizer holds centroids c₀, c₁, … and their rotations c'ⱼ = P·cⱼ: the
// mean of its training sample (New), or the k-means centroids of it
// (NewClustered, KMeans). A vector o is coded through its rotated residual
// r' = P·(o − c) from its nearest centroid c (its Cluster). Its B-bit code (B in [1, 8]) is one integer per dimension,
// uᵢ in [0, 2^B − 1], standing for the grid point xᵢ = uᵢ − (2^B − 1)/2, a
// half-integer of the sign of r'ᵢ:
//
//	B = 1:  uᵢ = [r'ᵢ > 0], so x = ±1/2 (the sign code of RaBitQ)
//	B > 1:  the top bit of uᵢ is [r'ᵢ > 0]; the magnitude |xᵢ| = mᵢ + 1/2 with
//	        mᵢ = min(⌊t·|r'ᵢ|⌋, 2^(B−1) − 1), for the scale t that maximises
//	        the cosine between x and r' (found by a grid search, exbits.go)
//
// Layout: a 1-bit code is D/64 uint64 words, dimension i at bit i%64 of word
// i/64. A B-bit code (B > 1) is D bytes, byte i = uᵢ (its top bit is the
// 1-bit code; packing B < 8 bits tighter is future work).
//
// # Estimator
//
// For a query q with rotated residual q' − c' (q' = P·q), both codes
// estimate the residual inner product by
//
//	⟨r, q − c⟩ ≈ ‖r‖² · ⟨x, q' − c'⟩ / ⟨x, r'⟩
//
// which is unbiased for B = 1 (RaBitQ, Theorem 3.2) and whose error is close
// to Gaussian with standard deviation
//
//	σ = ‖r‖ · ‖q − c‖ · sqrt((1 − γ²) / (γ² · (D − 1))),   γ = ⟨x, r'⟩ / (‖x‖·‖r'‖)
//
// so that the bound ε₀·σ holds with probability about P(|Z| <= ε₀): 94.3%
// for ε₀ = Epsilon0 = 1.9 (the constant RaBitQ-Library uses), 99.7% for 3.
// The same form bounds the B-bit estimate, whose γ is much closer to 1.
// From it:
//
//	L2:           ‖o − q‖² = ‖r‖² + ‖q − c‖² − 2⟨r, q − c⟩
//	inner product: 1 − ⟨o, q⟩ = 1 − ⟨c, q⟩ − ⟨r, c⟩ − ⟨r, q − c⟩
//
// Each code carries Factors so that a distance costs one integer sum:
//
//	dist ≈ Add + query.Add[Cluster] + Rescale · (lo·Sum + Δ·S − (2^B − 1)/2 · Σq'ᵢ)
//	bound = ε₀ · (Err · ‖q − c‖ + QErr · Δ)
//
// with Rescale = k·‖r‖²/⟨x, r'⟩ (k = −2 for L2, −1 for 1 − dot) and Add
// holding the code's own terms, ‖r‖² (L2) or −⟨r, c⟩ (inner product), minus
// Rescale·⟨x, c'⟩: that term of ⟨x, q' − c'⟩ is the code's, so one quantized
// query serves every centroid, and the query keeps per centroid only
// query.Add (‖q − c‖² or 1 − ⟨c, q⟩) and ‖q − c‖. The query's rotation
// q' = P·q is quantized to 8 bits, q'ᵢ ≈ lo + Δ·qᵢ
// with qᵢ in [0, 255] (round to nearest), S = Σ uᵢ·qᵢ is the integer the kernels
// compute (kernels.BitDotU8 for B = 1, kernels.DotU8 for B > 1), Sum = Σ uᵢ,
// and Σq'ᵢ is taken over the quantized query, so the estimate is that of
// the quantized query exactly. The 8-bit query's rounding adds an error of
// standard deviation QErr·Δ (rounding errors uniform in ±Δ/2), negligible
// for 1-bit codes but not for 8-bit ones, and added to the bound (a sum of
// the two deviations, not the root of their squares: no square root per
// estimate, and conservative).
//
// # FastScan
//
// To estimate 32 1-bit codes at once (kernels.FastScan32: 4-bit groups
// looked up in tables of 16 bytes with VPSHUFB), the query is quantized a
// second time, to 6 bits on the same range (q'ᵢ ≈ lo + Δ₆·q6ᵢ, Δ₆ = (hi −
// lo)/63), so that a group's table entry, the sum of up to four q6ᵢ, fits
// a byte (4·63 = 252) and the kernel's sums are exact integers; FAISS's
// fast scan instead rounds each table entry to a byte with a shared scale,
// whose error depends on the table rather than on one quantized query.
// EstimateFast is then Estimate1 with (lo, Δ₆, Σq'ᵢ of the 6-bit query),
// and the bound's query term is QErr·Δ₆ with the 1-bit QErr =
// |Rescale|·sqrt(D/48), four times the 8-bit query's term. Measured on
// pypi-use512: the mean |error| grows by 0.1% (0.02786 against 0.02782),
// the fraction of pairs outside the bound at ε₀ = 1.9 falls from 5.1% to
// 4.1% (the linear sum of the two deviations is conservative).
package rabitq
