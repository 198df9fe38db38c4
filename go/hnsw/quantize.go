package hnsw

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/sq8"
)

// Train learns the SQ8 ranges from a sample of vectors (rows of Dim). It
// must run before the first Add; without it the first Add's batch is the
// sample. Training an index that is not quantized, or one that already
// holds vectors, is an error.
func (x *Index) Train(sample []float32) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	if x.cfg.Quantization != QuantSQ8 {
		return fmt.Errorf("%w: train needs a quantized index", ErrInvalidArgument)
	}
	n, err := batch.Rows(sample, x.cfg.Dim, "sample")
	if err != nil {
		return fmt.Errorf("hnsw: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: empty training sample", ErrInvalidArgument)
	}
	if err := batch.CheckFinite(sample, x.cfg.Dim, "sample"); err != nil {
		return fmt.Errorf("hnsw: %w", err)
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if g := x.graph.Load(); g.count > 0 {
		return fmt.Errorf("%w: train must come before the first add (index holds %d vectors)", ErrInvalidArgument, g.count)
	}
	return x.trainLocked(sample)
}

// Quantizer returns the SQ8 quantizer the index codes its vectors with,
// nil before training and for a float index: whoever computes distances
// beside the index (the collection's mutable tail) uses it to compute the
// same ones.
func (x *Index) Quantizer() *sq8.Quantizer { return x.graph.Load().sq }

// Trained reports whether the index has its quantizer (always true for a
// float index).
func (x *Index) Trained() bool {
	return x.cfg.Quantization == QuantNone || x.graph.Load().sq != nil
}

// trainLocked fits the quantizer to sample (normalising each row for cosine)
// and installs it in a new graph generation. Callers hold writeMu.
func (x *Index) trainLocked(sample []float32) error {
	dim := x.cfg.Dim
	var t sq8.Trainer
	row := make([]float32, dim)
	for off := 0; off < len(sample); off += dim {
		copy(row, sample[off:off+dim])
		if x.cfg.Metric.NeedsNormalize() {
			metric.Normalize(row)
		}
		t.Observe(row)
	}
	q := t.Quantizer()
	if q == nil {
		return fmt.Errorf("%w: empty training sample", ErrInvalidArgument)
	}
	g := x.graph.Load()
	x.graph.Store(g.regrown(g.count, 0, q))
	return nil
}

// SetQuantizer installs q, the quantizer of another index of the same
// parameters, in place of training: the segments of one collection field
// share one set of SQ8 ranges, so that their code distances compare. It
// must come before the first Add, on a quantized index of q's dimension.
func (x *Index) SetQuantizer(q *sq8.Quantizer) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	switch {
	case x.cfg.Quantization != QuantSQ8:
		return fmt.Errorf("%w: set quantizer needs a quantized index", ErrInvalidArgument)
	case q == nil || len(q.Lo) != x.cfg.Dim:
		return fmt.Errorf("%w: set quantizer: a quantizer of dim %d is needed", ErrInvalidArgument, x.cfg.Dim)
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if g := x.graph.Load(); g.count > 0 {
		return fmt.Errorf("%w: set quantizer must come before the first add (index holds %d vectors)", ErrInvalidArgument, g.count)
	}
	g := x.graph.Load()
	x.graph.Store(g.regrown(g.count, 0, q))
	return nil
}
