// Package demo fills the playground's demo collections (make serve,
// strata-server --demo): a pypi-demo directory, or generated points.
//
// A pypi-demo directory holds docs.jsonl (one JSON document per line, line
// i describing row i) and vectors.f16.npy (a float16 [n, d] array, read by
// package npy); it is loaded into the collection "pypi", point i holding
// row i, with a BM25 text index on "summary". Generated data goes into
// "demo": 20,000 clustered 64-d points whose documents have a "text"
// field, text-indexed. A demo collection made before it had its text index
// gets it at the next Load.
package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/npy"
	"github.com/strata-db/strata/go/vfs"
)

// Generated, given to Load, asks for generated data.
const Generated = "generated"

const (
	pypiName      = "pypi"
	generatedName = "demo"
	// The fields the playground searches by words (BM25).
	pypiTextField      = "summary"
	generatedTextField = "text"
)

// ensureTextIndex gives c a text index on field unless it has one.
func ensureTextIndex(c *collection.Collection, field string) error {
	for _, f := range c.TextFields() {
		if f.Field == field {
			return nil
		}
	}
	return c.CreateTextIndex(field, "")
}

// Collections are where the demo goes: package server's Server.
type Collections interface {
	Collection(name string) (*collection.Collection, error)
	CreateCollection(name string, opts collection.Options) (*collection.Collection, error)
}

// Load makes sure a demo collection exists and returns its name and how
// many points it loaded (0 when the collection was already there). source
// is a pypi-demo directory or Generated.
func Load(to Collections, source string) (name string, loaded int, err error) {
	name = pypiName
	if source == Generated {
		name = generatedName
	}
	textField := pypiTextField
	if source == Generated {
		textField = generatedTextField
	}
	if c, err := to.Collection(name); err == nil {
		if err := ensureTextIndex(c, textField); err != nil {
			return "", 0, fmt.Errorf("demo %s: %w", name, err)
		}
		return name, 0, nil
	}
	var ids []uint64
	var vectors []float32
	var docs []meta.Document
	var dim int
	if source == Generated {
		ids, vectors, docs, dim = generate(20_000, 64, 50)
	} else if ids, vectors, docs, dim, err = readPyPI(source); err != nil {
		return "", 0, err
	}
	c, err := to.CreateCollection(name, collection.Options{Dim: dim, Metric: metric.Cosine, Seed: 1,
		Fsync: collection.FsyncBatch, TextFields: []string{textField}})
	if err != nil {
		return "", 0, err
	}
	const batchSize = 2000
	for at := 0; at < len(ids); at += batchSize {
		end := min(at+batchSize, len(ids))
		if err := c.Upsert(collection.IntIDs(ids[at:end]), vectors[at*dim:end*dim], docs[at:end]); err != nil {
			return "", 0, fmt.Errorf("demo %s: %w", name, err)
		}
	}
	if err := c.Checkpoint(); err != nil {
		return "", 0, fmt.Errorf("demo %s: %w", name, err)
	}
	return name, len(ids), nil
}

func readPyPI(dir string) (ids []uint64, vectors []float32, docs []meta.Document, dim int, err error) {
	path := filepath.Join(dir, "vectors.f16.npy")
	raw, err := vfs.ReadFile(vfs.Default, path)
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("demo: %w", err)
	}
	vectors, n, dim, err := npy.ReadFloat16(raw)
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("demo: %s: %w", path, err)
	}
	lines, err := vfs.ReadFile(vfs.Default, filepath.Join(dir, "docs.jsonl"))
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("demo: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(lines))
	sc.Buffer(make([]byte, 1<<20), meta.MaxDocumentBytes)
	for sc.Scan() {
		var doc map[string]any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			return nil, nil, nil, 0, fmt.Errorf("demo: docs.jsonl line %d: %w", len(docs)+1, err)
		}
		delete(doc, "id") // line i is row i; the id is the point's id
		raw, _ := json.Marshal(doc)
		d, err := meta.ParseDocument(raw)
		if err != nil {
			return nil, nil, nil, 0, fmt.Errorf("demo: docs.jsonl line %d: %w", len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, 0, fmt.Errorf("demo: docs.jsonl: %w", err)
	}
	if len(docs) != n {
		return nil, nil, nil, 0, fmt.Errorf("demo: %d documents for %d vectors", len(docs), n)
	}
	ids = make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	return ids, vectors, docs, dim, nil
}

var words = []string{"fast", "vector", "search", "graph", "index", "storage", "query", "cluster",
	"stream", "cache", "parser", "network", "image", "audio", "text", "model"}

// generate makes n points around clusters Gaussian centres, with
// documents {"text", "cluster", "year", "tags"}. Deterministic.
func generate(n, dim, clusters int) ([]uint64, []float32, []meta.Document, int) {
	rng := rand.New(rand.NewPCG(1, 2))
	centres := make([]float32, clusters*dim)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	ids := make([]uint64, n)
	vectors := make([]float32, n*dim)
	docs := make([]meta.Document, n)
	for i := range n {
		c := rng.IntN(clusters)
		for j := range dim {
			vectors[i*dim+j] = centres[c*dim+j] + 0.4*float32(rng.NormFloat64())
		}
		w1, w2 := words[rng.IntN(len(words))], words[rng.IntN(len(words))]
		raw, _ := json.Marshal(map[string]any{
			"text":    fmt.Sprintf("%s %s toolkit number %d (cluster %d)", w1, w2, i, c),
			"cluster": c, "year": 2000 + rng.IntN(26), "tags": []string{w1, w2},
		})
		docs[i], _ = meta.ParseDocument(raw)
		ids[i] = uint64(i)
	}
	return ids, vectors, docs, dim
}
