package collection

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
)

// Full-text search over metadata fields (see package text).
//
// A text index is derived from the documents, so nothing of it reaches
// disk but its definition: the manifest lists the indexed fields and
// their analyzers, Open rebuilds each index from the snapshot's documents,
// and replay maintains it through the same apply path as live writes. A
// text index made on an open collection is a log record (op 4), so it is
// as durable as any write and replay builds it at the same point of the
// history.
//
// A text field's value must be a string (or null, or missing: no text).
// Writes are checked before they are logged; a write validated before a
// concurrent CreateTextIndex may still land with another value, which is
// indexed as no text, the same way live and in replay.

// MaxTextFields bounds the text indexes of one collection.
const MaxTextFields = 16

// HybridDepth is how many candidates each side of a hybrid query fetches
// at least (k if larger) before fusion.
const HybridDepth = 50

var nan32 = float32(math.NaN())

// textIndexes holds the collection's text indexes.
type textIndexes struct {
	mu     sync.RWMutex // guards fields; each index has its own lock
	fields []textField
}

type textField struct {
	name  string
	index *text.Index
}

// TextField describes one text index.
type TextField struct {
	Field    string
	Analyzer string
	Docs     int // documents with at least one term
	Terms    int
}

// TextFields lists the collection's text indexes.
func (c *Collection) TextFields() []TextField {
	c.text.mu.RLock()
	defer c.text.mu.RUnlock()
	out := make([]TextField, len(c.text.fields))
	for i, f := range c.text.fields {
		st := f.index.Stats()
		out[i] = TextField{Field: f.name, Analyzer: f.index.Analyzer().Name(), Docs: st.Docs, Terms: st.Terms}
	}
	return out
}

func (t *textIndexes) lookup(name string) *text.Index {
	for _, f := range t.fields {
		if f.name == name {
			return f.index
		}
	}
	return nil
}

// manifest returns the fields and analyzers for a snapshot's manifest.
func (t *textIndexes) manifest() (fields, analyzers []string) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, f := range t.fields {
		fields = append(fields, f.name)
		analyzers = append(analyzers, f.index.Analyzer().Name())
	}
	return fields, analyzers
}

// checkTextSpec validates a text index definition.
func checkTextSpec(field, analyzer string) (text.Analyzer, error) {
	if err := meta.CheckPath(field); err != nil {
		return text.Analyzer{}, fmt.Errorf("%w: text field: %w", ErrInvalid, err)
	}
	a, err := text.ParseAnalyzer(analyzer)
	if err != nil {
		return text.Analyzer{}, fmt.Errorf("collection: %w", err)
	}
	return a, nil
}

// initText sets up empty indexes for Options.TextFields at Create.
func (c *Collection) initText(fields []string, analyzer string) error {
	if len(fields) > MaxTextFields {
		return fmt.Errorf("%w: %d text fields, more than the limit of %d", ErrInvalid, len(fields), MaxTextFields)
	}
	for _, field := range fields {
		a, err := checkTextSpec(field, analyzer)
		if err != nil {
			return err
		}
		if c.text.lookup(field) != nil {
			return fmt.Errorf("%w: text field %q listed twice", ErrInvalid, field)
		}
		c.text.fields = append(c.text.fields, textField{field, text.NewIndex(a)})
	}
	return nil
}

// rebuildText builds the manifest's text indexes from a snapshot's
// documents (canonical JSON, already checked by meta.Import).
func (c *Collection) rebuildText(m snapshot.Manifest, md snapshot.Metadata) error {
	if len(m.TextAnalyzers) != 0 && len(m.TextAnalyzers) != len(m.TextFields) {
		return fmt.Errorf("%w: manifest lists %d text fields and %d analyzers", ErrCorrupt, len(m.TextFields), len(m.TextAnalyzers))
	}
	for i, field := range m.TextFields {
		analyzer := text.AnalyzerEnglish
		if len(m.TextAnalyzers) != 0 {
			analyzer = m.TextAnalyzers[i]
		}
		a, err := checkTextSpec(field, analyzer)
		if err != nil || c.text.lookup(field) != nil {
			return fmt.Errorf("%w: manifest text field %q (analyzer %q): %v", ErrCorrupt, field, analyzer, err)
		}
		c.text.fields = append(c.text.fields, textField{field, text.NewIndex(a)})
	}
	if len(c.text.fields) == 0 {
		return nil
	}
	texts := make([][]string, len(c.text.fields))
	for i := range md.IDs {
		d, err := meta.ReadDocument(md.Data[md.Offsets[i]:md.Offsets[i+1]])
		if err != nil {
			return fmt.Errorf("%w: snapshot document of id %d: %v", ErrCorrupt, md.IDs[i], err)
		}
		for f, tf := range c.text.fields {
			s, _ := d.Text(tf.name) // a non-string is no text, as in apply
			texts[f] = append(texts[f], s)
		}
	}
	for f, tf := range c.text.fields {
		tf.index.PutBatch(md.IDs, texts[f])
	}
	return nil
}

// checkText rejects documents whose text fields hold non-strings, before
// anything is logged.
func (c *Collection) checkText(docs []meta.Document) error {
	c.text.mu.RLock()
	defer c.text.mu.RUnlock()
	for _, f := range c.text.fields {
		for i, d := range docs {
			if _, err := d.Text(f.name); err != nil {
				return fmt.Errorf("%w: metadata[%d]: %w", ErrInvalid, i, err)
			}
		}
	}
	return nil
}

// putText indexes the documents of ids (called by apply, in log order).
func (c *Collection) putText(ids []uint64, docs []meta.Document) {
	c.text.mu.RLock()
	defer c.text.mu.RUnlock()
	for _, f := range c.text.fields {
		texts := make([]string, len(ids))
		for i, d := range docs {
			texts[i], _ = d.Text(f.name)
		}
		f.index.PutBatch(ids, texts)
	}
}

func (c *Collection) deleteText(ids []uint64) {
	c.text.mu.RLock()
	defer c.text.mu.RUnlock()
	for _, f := range c.text.fields {
		f.index.Delete(ids)
	}
}

// textSpec is the payload of a create-text-index log record.
type textSpec struct {
	Field    string `json:"field"`
	Analyzer string `json:"analyzer"`
}

// CreateTextIndex adds a full-text index over the metadata field (a dotted
// path) with the named analyzer ("" = "english") and indexes every
// existing document. It fails with ErrInvalid if the field is indexed
// already or an existing document holds a value that is not a string
// there. The index is durable once this returns (it is logged).
func (c *Collection) CreateTextIndex(field, analyzer string) error {
	if err := c.alive(); err != nil {
		return err
	}
	a, err := checkTextSpec(field, analyzer)
	if err != nil {
		return err
	}
	c.text.mu.RLock()
	exists, count := c.text.lookup(field) != nil, len(c.text.fields)
	c.text.mu.RUnlock()
	if exists {
		return fmt.Errorf("%w: field %q already has a text index", ErrInvalid, field)
	}
	if count >= MaxTextFields {
		return fmt.Errorf("%w: a collection has at most %d text indexes", ErrInvalid, MaxTextFields)
	}
	ids, offsets, data := c.meta.Export()
	for i, id := range ids {
		d, err := meta.ReadDocument(data[offsets[i]:offsets[i+1]])
		if err != nil {
			return fmt.Errorf("collection: document of id %s: %w", c.describeKey(id), err)
		}
		if _, err := d.Text(field); err != nil {
			return fmt.Errorf("%w: id %s: %w", ErrInvalid, c.describeKey(id), err)
		}
	}
	spec, err := json.Marshal(textSpec{Field: field, Analyzer: a.Name()})
	if err != nil {
		return fmt.Errorf("collection: %w", err)
	}
	_, err = c.submit(record{op: opTextIndex, docs: [][]byte{spec}}, nil)
	return err
}

// applyTextIndex builds the index a create-text-index record asks for from
// the documents as they are at this point of the log.
func (c *Collection) applyTextIndex(payload []byte) error {
	var spec textSpec
	if err := json.Unmarshal(payload, &spec); err != nil {
		return fmt.Errorf("%w: text index record: %v", ErrCorrupt, err)
	}
	a, err := checkTextSpec(spec.Field, spec.Analyzer)
	if err != nil {
		return fmt.Errorf("%w: text index record: %v", ErrCorrupt, err)
	}
	c.text.mu.Lock()
	defer c.text.mu.Unlock()
	if c.text.lookup(spec.Field) != nil {
		return nil // a concurrent CreateTextIndex of the same field won
	}
	index := text.NewIndex(a)
	ids, offsets, data := c.meta.Export()
	texts := make([]string, len(ids))
	for i := range ids {
		d, err := meta.ReadDocument(data[offsets[i]:offsets[i+1]])
		if err != nil {
			return fmt.Errorf("collection: document of id %s: %w", c.describeKey(ids[i]), err)
		}
		texts[i], _ = d.Text(spec.Field)
	}
	index.PutBatch(ids, texts)
	c.text.fields = append(c.text.fields, textField{spec.Field, index})
	return nil
}

// TextQuery is the text side of a query.
type TextQuery struct {
	Text  string
	Field string // "" picks the collection's only text field
	BM25  text.Params
}

// Hit is one result of QueryText: the fused score (BM25 for a text-only
// query), the vector distance (NaN where the vector side did not find
// the hit), the BM25 score (0 where the text side did not) and which
// side(s) found it.
type Hit struct {
	ID       ID
	Score    float32
	Distance float32
	BM25     float32
	Sources  text.Sources
}

// hitsOf names the hits' ids, dropping a string id deleted since the
// search found it (see idsOfResults).
func (c *Collection) hitsOf(fused []text.Fused) []Hit {
	hits := make([]Hit, 0, len(fused))
	for _, h := range fused {
		if id, ok := c.idOf(h.ID); ok {
			hits = append(hits, Hit{ID: id, Score: h.Score, Distance: h.Distance, BM25: h.BM25, Sources: h.Sources})
		}
	}
	return hits
}

// QueryText runs a full-text query (vector nil) or a hybrid one (vector
// of Dim floats) and returns up to k hits, best first. f (nil: none)
// restricts both sides. A text without indexed terms finds nothing, so a
// hybrid query then returns the vector side's ranking.
func (c *Collection) QueryText(vector []float32, q TextQuery, k, ef int, f *meta.Filter, threads int,
	fusion text.Fusion) ([]Hit, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	if err := limits.CheckK(k); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := limits.CheckEf(ef); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var def *vectorField
	if vector != nil {
		var err error
		if def, err = c.defaultField(); err != nil {
			return nil, err
		}
		if len(vector) != def.Dim {
			return nil, fmt.Errorf("%w: query vector of %d floats for dimension %d", ErrInvalid, len(vector), def.Dim)
		}
	}
	if err := fusion.Check(); err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	if err := text.CheckQuery(q.Text); err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	index, err := c.textIndex(q.Field)
	if err != nil {
		return nil, err
	}
	sc, err := c.scope(f, nil)
	if err != nil {
		return nil, err
	}
	depth := k
	if vector != nil {
		depth = max(k, HybridDepth)
	}
	textHits, err := c.searchTextIndex(index, q.Text, depth, q.BM25, sc)
	if err != nil {
		return nil, err
	}
	if vector == nil {
		fused := make([]text.Fused, len(textHits))
		for i, h := range textHits {
			fused[i] = text.Fused{ID: h.ID, Score: h.Score, BM25: h.Score, Distance: nan32, Sources: text.FromText}
		}
		return c.hitsOf(fused), nil
	}
	if ef <= 0 {
		ef = max(depth, hnsw.DefaultEfSearch)
	}
	ids, dists := make([]int64, depth), make([]float32, depth)
	if _, err := def.search(vector, depth, max(ef, depth), threads, sc.allow, sc.expired, ids, dists); err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	neighbors := make([]text.Neighbor, 0, depth)
	for i, id := range ids {
		if id != -1 { // string keys are negative as int64
			neighbors = append(neighbors, text.Neighbor{ID: uint64(id), Distance: dists[i]})
		}
	}
	return c.hitsOf(text.Fuse(neighbors, textHits, k, fusion)), nil
}

// searchTextIndex is the k best BM25 hits of query in index among the
// points sc admits (readScope: the index is asked for the expired keys'
// number more, which are dropped).
func (c *Collection) searchTextIndex(index *text.Index, query string, k int, p text.Params, sc readScope) ([]text.Hit, error) {
	allow, extra := c.indexAllow(sc)
	hits, err := index.Search(query, min(k+extra, limits.MaxK), p, allow)
	if err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	out := hits[:0]
	for _, h := range hits {
		if len(out) < k && !sc.expired.has(h.ID) {
			out = append(out, h)
		}
	}
	return out, nil
}

func (c *Collection) textIndex(field string) (*text.Index, error) {
	c.text.mu.RLock()
	defer c.text.mu.RUnlock()
	if len(c.text.fields) == 0 {
		return nil, fmt.Errorf("%w: the collection has no text index (create one with text_fields or CreateTextIndex)", ErrInvalid)
	}
	if field == "" {
		if len(c.text.fields) > 1 {
			names := make([]string, len(c.text.fields))
			for i, f := range c.text.fields {
				names[i] = f.name
			}
			return nil, fmt.Errorf("%w: the collection has text indexes on %q: name the field to search", ErrInvalid, names)
		}
		return c.text.fields[0].index, nil
	}
	if x := c.text.lookup(field); x != nil {
		return x, nil
	}
	names := []string{}
	for _, f := range c.text.fields {
		names = append(names, f.name)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("%w: field %q has no text index (indexed: %q)", ErrInvalid, field, names)
}
