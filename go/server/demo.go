package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// Demo collections for the playground (make serve).
const (
	// DemoGenerated, given to LoadDemo, asks for generated data.
	DemoGenerated = "generated"
	pypiName      = "pypi"
	generatedName = "demo"
)

// LoadDemo makes sure a demo collection exists and returns its name and how
// many points it loaded (0 when the collection was already there). source
// is a pypi-demo directory (docs.jsonl: one JSON document per line, line i
// describing row i of vectors.f16.npy, a float16 [n, 512] array), loaded
// into "pypi"; or DemoGenerated, which fills "demo" with 20,000 clustered
// 64-d points whose documents have a "text" field.
func (s *Server) LoadDemo(source string) (name string, loaded int, err error) {
	name = pypiName
	if source == DemoGenerated {
		name = generatedName
	}
	if _, err := s.reg.Get(name); err == nil {
		return name, 0, nil
	}
	var ids []uint64
	var vectors []float32
	var docs []meta.Document
	var dim int
	if source == DemoGenerated {
		ids, vectors, docs, dim = generateDemo(20_000, 64, 50)
	} else if ids, vectors, docs, dim, err = readPyPIDemo(source); err != nil {
		return "", 0, err
	}
	c, err := s.reg.Create(name, collection.Options{Dim: dim, Metric: metric.Cosine, Seed: 1,
		Fsync: collection.FsyncBatch})
	if err != nil {
		return "", 0, err
	}
	const batchSize = 2000
	for at := 0; at < len(ids); at += batchSize {
		end := min(at+batchSize, len(ids))
		if err := c.Upsert(ids[at:end], vectors[at*dim:end*dim], docs[at:end]); err != nil {
			return "", 0, fmt.Errorf("server: demo %s: %w", name, err)
		}
	}
	if err := c.Checkpoint(); err != nil {
		return "", 0, fmt.Errorf("server: demo %s: %w", name, err)
	}
	return name, len(ids), nil
}

func readPyPIDemo(dir string) (ids []uint64, vectors []float32, docs []meta.Document, dim int, err error) {
	vectors, n, dim, err := readNpyFloat16(filepath.Join(dir, "vectors.f16.npy"))
	if err != nil {
		return nil, nil, nil, 0, err
	}
	f, err := os.Open(filepath.Join(dir, "docs.jsonl"))
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("server: demo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), meta.MaxDocumentBytes)
	for sc.Scan() {
		var doc map[string]any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			return nil, nil, nil, 0, fmt.Errorf("server: demo docs.jsonl line %d: %w", len(docs)+1, err)
		}
		delete(doc, "id") // line i is row i; the id is the point's id
		raw, _ := json.Marshal(doc)
		d, err := meta.ParseDocument(raw)
		if err != nil {
			return nil, nil, nil, 0, fmt.Errorf("server: demo docs.jsonl line %d: %w", len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, 0, fmt.Errorf("server: demo docs.jsonl: %w", err)
	}
	if len(docs) != n {
		return nil, nil, nil, 0, fmt.Errorf("server: demo: %d documents for %d vectors", len(docs), n)
	}
	ids = make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	return ids, vectors, docs, dim, nil
}

var npyHeader = regexp.MustCompile(`'descr':\s*'<f2',\s*'fortran_order':\s*False,\s*'shape':\s*\((\d+),\s*(\d+)\)`)

// readNpyFloat16 reads a little-endian float16 [n, d] NumPy array file
// (format versions 1-3) into float32.
func readNpyFloat16(path string) ([]float32, int, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("server: demo: %w", err)
	}
	if len(data) < 10 || !bytes.Equal(data[:6], []byte("\x93NUMPY")) {
		return nil, 0, 0, fmt.Errorf("server: demo: %s is not a .npy file", path)
	}
	var headerLen, start int
	if data[6] == 1 {
		headerLen, start = int(binary.LittleEndian.Uint16(data[8:10])), 10
	} else if len(data) >= 12 {
		headerLen, start = int(binary.LittleEndian.Uint32(data[8:12])), 12
	}
	if start == 0 || start+headerLen > len(data) {
		return nil, 0, 0, fmt.Errorf("server: demo: %s: truncated header", path)
	}
	m := npyHeader.FindSubmatch(data[start : start+headerLen])
	if m == nil {
		return nil, 0, 0, fmt.Errorf("server: demo: %s is not a C-order float16 matrix", path)
	}
	n, _ := strconv.Atoi(string(m[1]))
	dim, _ := strconv.Atoi(string(m[2]))
	body := data[start+headerLen:]
	if n <= 0 || dim <= 0 || len(body) != 2*n*dim {
		return nil, 0, 0, fmt.Errorf("server: demo: %s: %d bytes of data for shape (%d, %d)", path, len(body), n, dim)
	}
	out := make([]float32, n*dim)
	for i := range out {
		out[i] = halfToFloat(binary.LittleEndian.Uint16(body[2*i:]))
	}
	return out, n, dim, nil
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = frac · 2^-24
		f := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

var demoWords = []string{"fast", "vector", "search", "graph", "index", "storage", "query", "cluster",
	"stream", "cache", "parser", "network", "image", "audio", "text", "model"}

// generateDemo makes n points around clusters Gaussian centres, with
// documents {"text", "cluster", "year", "tags"}. Deterministic.
func generateDemo(n, dim, clusters int) ([]uint64, []float32, []meta.Document, int) {
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
		w1, w2 := demoWords[rng.IntN(len(demoWords))], demoWords[rng.IntN(len(demoWords))]
		raw, _ := json.Marshal(map[string]any{
			"text":    fmt.Sprintf("%s %s toolkit number %d (cluster %d)", w1, w2, i, c),
			"cluster": c, "year": 2000 + rng.IntN(26), "tags": []string{w1, w2},
		})
		docs[i], _ = meta.ParseDocument(raw)
		ids[i] = uint64(i)
	}
	return ids, vectors, docs, dim
}
