package collection

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// The schema of a collection's vectors.
//
// A collection holds vector fields, each named (the unnamed default is the
// name "", Qdrant's {"": ...}) and each with its own dimension, metric,
// graph parameters and index. A point may have any subset of the fields
// (Qdrant's optional vectors). A collection created with Options.Dim and
// no Options.Vectors has the schema of one dense field "", and keeps
// writing exactly the log records and snapshot files of before fields
// existed.
//
// A multivector field (Multivector: MaxSim) holds for each point a list of
// 1..limits.MaxMultivectors vectors of its dimension, scored by MAX_SIM
// (ColBERT's late interaction, Qdrant's multivector_config with the
// max_sim comparator): see maxsim.go.

// Comparator is how a multivector field compares a query's vectors with a
// point's. The values are part of the log format: do not change them.
type Comparator uint8

const (
	// SingleVector marks a dense field: one vector per point.
	SingleVector Comparator = 0
	// MaxSim marks a multivector field scored by MAX_SIM: the sum over
	// the query's vectors of the best similarity among the point's.
	MaxSim Comparator = 1
)

func (m Comparator) String() string {
	switch m {
	case SingleVector:
		return "none"
	case MaxSim:
		return "max_sim"
	}
	return fmt.Sprintf("Comparator(%d)", m)
}

// ParseComparator parses "none" (or "") and "max_sim".
func ParseComparator(s string) (Comparator, error) {
	switch s {
	case "", "none":
		return SingleVector, nil
	case "max_sim":
		return MaxSim, nil
	}
	return 0, fmt.Errorf("%w: multivector comparator must be \"max_sim\", got %q", ErrInvalid, s)
}

// VectorField is one field of a collection's vector schema.
type VectorField struct {
	Name           string // "" is the unnamed default field
	Dim            int
	Metric         metric.Metric
	M              int // default 16
	EfConstruction int // default 200
	Quantization   hnsw.Quantization
	// Multivector is SingleVector for a dense field, MaxSim for a field
	// whose value is a list of vectors.
	Multivector Comparator
	// Memory is where its sealed segments keep their float vectors
	// (memory.go): MemoryRAM (default) or MemoryMmap.
	Memory Memory
	// CodesOnly, with QuantSQ8, keeps no float vectors: searches rank by
	// SQ8 code distances alone, in about a quarter of the vector memory.
	// Without it (the default) an SQ8 field keeps its float vectors
	// beside the codes, placed by Memory, and re-scores every search's
	// candidates with them (memory.go): Qdrant's scalar quantization
	// with its original vectors. The SQ8 fields of the builds before
	// rescoring are codes-only (their files hold no floats).
	CodesOnly bool
}

// withDefaults fills in M and EfConstruction and checks the field.
func (f VectorField) withDefaults() (VectorField, error) {
	if f.M == 0 {
		f.M = hnsw.DefaultM
	}
	if f.EfConstruction == 0 {
		f.EfConstruction = hnsw.DefaultEfConstruction
	}
	if err := limits.CheckFieldName(f.Name); err != nil {
		return f, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if f.Multivector > MaxSim {
		return f, fmt.Errorf("%w: vector field %q: unknown multivector comparator %d", ErrInvalid, f.Name, f.Multivector)
	}
	if f.Memory > MemoryMmap {
		return f, fmt.Errorf("%w: vector field %q: unknown memory placement %d", ErrInvalid, f.Name, f.Memory)
	}
	if f.CodesOnly && f.Quantization != hnsw.QuantSQ8 {
		return f, fmt.Errorf("%w: vector field %q: rescore off (codes only) needs quantization \"sq8\", the field is %s", ErrInvalid, f.Name, f.Quantization)
	}
	// hnsw.New checks dim, metric, M, ef_construction and quantization
	// against package limits; checking here gives the error the field's
	// name.
	if _, err := hnsw.New(f.hnswConfig(0)); err != nil {
		return f, fmt.Errorf("%w: vector field %q: %w", ErrInvalid, f.Name, err)
	}
	return f, nil
}

// hnswConfig is the field's index configuration. Keys: a dense field's
// nodes are labelled with the points' keys, which string ids take from
// 2^63 up (ids.go); a multivector field's labels are its own, from 0.
func (f VectorField) hnswConfig(seed uint64) hnsw.Config {
	return hnsw.Config{Dim: f.Dim, Metric: f.Metric, M: f.M, EfConstruction: f.EfConstruction,
		Seed: seed, Quantization: f.Quantization, Rerank: f.rescores(), Keys: true}
}

// rescores reports whether the field keeps float vectors beside SQ8
// codes and re-scores its searches with them.
func (f VectorField) rescores() bool { return f.Quantization == hnsw.QuantSQ8 && !f.CodesOnly }

// schemaOf returns the collection's vector fields from its options: the
// one field "" of Dim, Metric, M, EfConstruction and Quantization when
// Vectors is nil, else Vectors (whose "" field, if any, also fills in
// those options, which Options() reports), sorted by name, defaults filled
// in and checked.
func (o *Options) schemaOf() ([]VectorField, error) {
	if o.Vectors == nil && o.Dim == 0 && len(o.Sparse) > 0 {
		o.Vectors = []VectorField{} // sparse fields alone
	}
	if o.Vectors == nil {
		// The errors of before fields existed.
		cfg := hnsw.Config{Dim: o.Dim, Metric: o.Metric, M: o.M, EfConstruction: o.EfConstruction, Quantization: o.Quantization}
		if _, err := hnsw.New(cfg); err != nil {
			return nil, fmt.Errorf("collection: %w", err)
		}
		f, err := VectorField{Dim: o.Dim, Metric: o.Metric, M: o.M, EfConstruction: o.EfConstruction,
			Quantization: o.Quantization, Memory: o.Memory, CodesOnly: o.CodesOnly}.withDefaults()
		if err != nil {
			return nil, err
		}
		o.M, o.EfConstruction = f.M, f.EfConstruction
		return []VectorField{f}, nil
	}
	if err := limits.CheckVectorFields(len(o.Vectors)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if o.Dim != 0 {
		return nil, fmt.Errorf("%w: give the vectors either as Dim (one unnamed field) or as Vectors, not both", ErrInvalid)
	}
	if o.Memory != MemoryRAM {
		return nil, fmt.Errorf("%w: with Vectors, give each field its Memory, not Options.Memory", ErrInvalid)
	}
	if o.CodesOnly {
		return nil, fmt.Errorf("%w: with Vectors, give each field its CodesOnly, not Options.CodesOnly", ErrInvalid)
	}
	schema := make([]VectorField, len(o.Vectors))
	for i, f := range o.Vectors {
		checked, err := f.withDefaults()
		if err != nil {
			return nil, err
		}
		schema[i] = checked
	}
	slices.SortFunc(schema, func(a, b VectorField) int { return compareNames(a.Name, b.Name) })
	for i := 1; i < len(schema); i++ {
		if schema[i].Name == schema[i-1].Name {
			return nil, fmt.Errorf("%w: vector field %q given twice", ErrInvalid, schema[i].Name)
		}
	}
	if len(schema) > 0 && schema[0].Name == "" {
		d := schema[0]
		o.Dim, o.Metric, o.M, o.EfConstruction, o.Quantization = d.Dim, d.Metric, d.M, d.EfConstruction, d.Quantization
	}
	o.Vectors = schema
	return schema, nil
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fieldSpec is the JSON of an add-field log record (op 8) and of a field in
// a manifest (snapshot.VectorField without the file names).
type fieldSpec struct {
	Name           string `json:"name"`
	Dim            int    `json:"dim"`
	Metric         string `json:"metric"`
	M              int    `json:"M"`
	EfConstruction int    `json:"ef_construction"`
	Quantization   string `json:"quantization"`
	Multivector    string `json:"multivector,omitempty"`
	// Memory is absent for MemoryRAM, so a collection that never asked
	// for mmap writes the records and manifests of before.
	Memory string `json:"memory,omitempty"`
	// Rescore is true for an SQ8 field that keeps float vectors and
	// re-scores with them, absent otherwise: the SQ8 fields of the
	// records and manifests written before it are codes-only, as they
	// were.
	Rescore bool `json:"rescore,omitempty"`
}

func specOf(f VectorField) fieldSpec {
	s := fieldSpec{Name: f.Name, Dim: f.Dim, Metric: f.Metric.String(), M: f.M, EfConstruction: f.EfConstruction,
		Quantization: f.Quantization.String()}
	if f.Multivector != SingleVector {
		s.Multivector = f.Multivector.String()
	}
	if f.Memory != MemoryRAM {
		s.Memory = f.Memory.String()
	}
	s.Rescore = f.rescores()
	return s
}

// field parses a spec read from the log or a manifest; errors wrap
// ErrCorrupt, since a spec that was written was checked.
func (s fieldSpec) field() (VectorField, error) {
	mtr, err := metric.Parse(s.Metric)
	if err != nil {
		return VectorField{}, fmt.Errorf("%w: vector field %q: metric %q", ErrCorrupt, s.Name, s.Metric)
	}
	q, err := parseQuantization(s.Quantization)
	if err != nil {
		return VectorField{}, fmt.Errorf("%w: vector field %q: quantization %q", ErrCorrupt, s.Name, s.Quantization)
	}
	mv, err := ParseComparator(s.Multivector)
	if err != nil {
		return VectorField{}, fmt.Errorf("%w: vector field %q: multivector %q", ErrCorrupt, s.Name, s.Multivector)
	}
	mem, err := ParseMemory(s.Memory)
	if err != nil {
		return VectorField{}, fmt.Errorf("%w: vector field %q: memory %q", ErrCorrupt, s.Name, s.Memory)
	}
	if s.Rescore && q != hnsw.QuantSQ8 {
		return VectorField{}, fmt.Errorf("%w: vector field %q: rescore in a field of quantization %q", ErrCorrupt, s.Name, s.Quantization)
	}
	f := VectorField{Name: s.Name, Dim: s.Dim, Metric: mtr, M: s.M, EfConstruction: s.EfConstruction,
		Quantization: q, Multivector: mv, Memory: mem, CodesOnly: q == hnsw.QuantSQ8 && !s.Rescore}
	if s.M == 0 || s.EfConstruction == 0 {
		return VectorField{}, fmt.Errorf("%w: vector field %q without M or ef_construction", ErrCorrupt, s.Name)
	}
	checked, err := f.withDefaults()
	if err != nil {
		return VectorField{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return checked, nil
}

func parseQuantization(s string) (hnsw.Quantization, error) {
	switch s {
	case "none":
		return hnsw.QuantNone, nil
	case "sq8":
		return hnsw.QuantSQ8, nil
	}
	return 0, fmt.Errorf("%w: quantization must be \"none\" or \"sq8\", got %q", ErrInvalid, s)
}

func encodeSpec(f VectorField) []byte {
	b, err := json.Marshal(specOf(f))
	if err != nil {
		panic(fmt.Sprintf("collection: encoding a field spec: %v", err)) // plain strings and ints
	}
	return b
}

func decodeSpec(b []byte) (VectorField, error) {
	var s fieldSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return VectorField{}, fmt.Errorf("%w: vector field record: %v", ErrCorrupt, err)
	}
	return s.field()
}

// schemaFromManifest reads the vector schema of a manifest: its Vectors
// (format 3), or the one field "" of its Dim, Metric, ... (formats 1, 2).
func schemaFromManifest(m snapshot.Manifest) ([]VectorField, error) {
	if m.Format < 3 {
		opts, err := optionsFromManifest(m)
		if err != nil {
			return nil, err
		}
		return opts.schemaOf()
	}
	schema := make([]VectorField, len(m.Vectors))
	for i, v := range m.Vectors {
		f, err := fieldSpec{Name: v.Name, Dim: v.Dim, Metric: v.Metric, M: v.M, EfConstruction: v.EfConstruction,
			Quantization: v.Quantization, Multivector: v.Multivector, Memory: v.Memory, Rescore: v.Rescore}.field()
		if err != nil {
			return nil, err
		}
		schema[i] = f
	}
	return schema, nil
}
