package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"

	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/vfs"
)

// ManifestName is the manifest's file name inside a snapshot directory.
const ManifestName = "MANIFEST"

// manifestLimit bounds the manifest a reader accepts.
const manifestLimit = 1 << 16

// MaxManifestBytes is the largest manifest a reader accepts.
const MaxManifestBytes = manifestLimit

// Manifest describes one snapshot: the collection's parameters (fixed at
// creation) and what the snapshot holds.
type Manifest struct {
	Format         int      `json:"format"` // 1, 2 (WALHead may be set), 3 (Vectors), 4 (segments) or 5 (state runs)
	Seq            uint64   `json:"seq"`    // last WAL sequence number the snapshot contains
	Dim            int      `json:"dim"`
	Metric         string   `json:"metric"`
	M              int      `json:"M"`
	EfConstruction int      `json:"ef_construction"`
	Quantization   string   `json:"quantization"`
	Fsync          string   `json:"fsync"`                 // the policy the collection was created with
	TextFields     []string `json:"text_fields,omitempty"` // metadata fields with a full-text index
	// TextAnalyzers names the analyzer of each text field (package text);
	// absent in manifests that predate it, meaning "english".
	TextAnalyzers []string `json:"text_analyzers,omitempty"`
	Count         int      `json:"count"` // live ids
	Files         []File   `json:"files"`
	// WALHead (format 2) says the collection's log keeps a HEAD file
	// (package wal), so that Open can tell a removed or emptied log from
	// an empty one. Format 1 manifests lack it.
	WALHead bool `json:"wal_head,omitempty"`
	// IDs names the snapshot's id table file (IDTableName), present once
	// the collection has held a string id. Absent: no string ids, as in
	// every snapshot written before them; a build that predates the field
	// refuses the manifest rather than misread the collection.
	IDs string `json:"ids,omitempty"`
	// Expiry names the snapshot's expiry table (ExpiryName), present when
	// a point held then has a time to live. Absent: no point expires, as
	// in every snapshot written before expiring points; a build that
	// predates the field refuses the manifest (unknown field) rather than
	// bring expired points back.
	Expiry string `json:"expiry,omitempty"`
	// Vectors (format 3) is the collection's vector schema, sorted by
	// name; Dim, Metric, M, EfConstruction and Quantization are then
	// zero. Formats 1 and 2 have the one unnamed field those describe,
	// in index.hnsw.
	Vectors []VectorField `json:"vectors,omitempty"`
	// Sparse (format 3) is the collection's sparse vector fields, sorted
	// by name, their names distinct from Vectors'. Absent: none, as in
	// every snapshot written before them; a build that predates the field
	// refuses the manifest (unknown field) rather than lose the fields.
	Sparse []SparseField `json:"sparse,omitempty"`
	// State (format 5) lists the state runs, oldest first, that hold the
	// documents, string ids and expiry times instead of meta.idx, ids.idx
	// and expiry.idx (IDs and Expiry are then absent). None: no point
	// was ever written.
	State []StateFile `json:"state,omitempty"`
}

// StateFile is one state run of a format 5 manifest.
type StateFile struct {
	File    string `json:"file"`    // its name in SegmentsDir
	Size    int64  `json:"size"`    // its size in bytes
	Entries int    `json:"entries"` // the keys it holds, deleted ones included
}

// StateRunName is the file name, in SegmentsDir, of the state run the
// checkpoint of seq writes.
func StateRunName(seq uint64) string { return fmt.Sprintf("%016x.state", seq) }

// ValidStateRunName reports whether name is a state run file name this
// package writes: 16 lowercase hex digits and ".state".
func ValidStateRunName(name string) bool {
	if len(name) != 16+len(".state") || name[16:] != ".state" {
		return false
	}
	for _, c := range name[:16] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SparseField is one sparse vector field of a format 3 manifest.
type SparseField struct {
	Name     string `json:"name"`
	Modifier string `json:"modifier"` // "none" or "idf"
	// File is the field's inverted index (package sparse's snapshot
	// file), one of Files.
	File string `json:"file"`
}

// VectorField is one vector field of a format 3 manifest.
type VectorField struct {
	Name           string `json:"name"`
	Dim            int    `json:"dim"`
	Metric         string `json:"metric"`
	M              int    `json:"M"`
	EfConstruction int    `json:"ef_construction"`
	Quantization   string `json:"quantization"`
	// Multivector is "max_sim" for a multivector field, absent otherwise.
	Multivector string `json:"multivector,omitempty"`
	// Memory is "mmap" for a field whose segments' float vectors are
	// memory-mapped, absent for "ram" (every manifest before it); a
	// build that predates it refuses the manifest (unknown field).
	Memory string `json:"memory,omitempty"`
	// Rescore is true for an SQ8 field whose segments keep float vectors
	// beside the codes (hnsw Config.Rerank), absent otherwise (every SQ8
	// field before it: codes only); a build that predates it refuses the
	// manifest (unknown field).
	Rescore bool `json:"rescore,omitempty"`
	// IndexFile (format 3) is the field's HNSW index, one of Files.
	IndexFile string `json:"index_file,omitempty"`
	// Segments (format 4) are the field's sealed graph segments, oldest
	// first, each a file of SegmentsDir; DeletesFile (one of Files, ""
	// if no segment has any) holds the keys deleted from each since it
	// was written.
	Segments    []Segment `json:"segments,omitempty"`
	DeletesFile string    `json:"deletes_file,omitempty"`
	// MapFile, for a multivector field, maps the index's nodes to points
	// (format below), one of Files.
	MapFile string `json:"map_file,omitempty"`
}

// Segment is one sealed graph segment of a format 4 manifest.
type Segment struct {
	File    string `json:"file"`    // its name in SegmentsDir
	Size    int64  `json:"size"`    // its size in bytes
	Live    int    `json:"live"`    // the live keys it holds once Deleted are removed
	Deleted int    `json:"deleted"` // its keys in the field's DeletesFile
}

// SegmentsDir is the directory of the collection that holds every
// segment file (the package doc).
const SegmentsDir = "segments"

// ValidSegmentName reports whether name is a segment file name this
// package writes: 16 lowercase hex digits, '-', 4 of them, ".hnsw".
func ValidSegmentName(name string) bool {
	if len(name) != 16+1+4+len(".hnsw") || name[16] != '-' || name[21:] != ".hnsw" {
		return false
	}
	for i, c := range name[:21] {
		if i != 16 && !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// File is one file of a snapshot.
type File struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// EncodeManifest returns the manifest file's bytes.
func EncodeManifest(m Manifest) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("snapshot: encode manifest: %w", err)
	}
	return fmt.Appendf(body, "\ncrc32c:%08x\n", crc32.Checksum(body, castagnoli)), nil
}

// DecodeManifest parses and checks a manifest file.
func DecodeManifest(data []byte) (Manifest, error) {
	var m Manifest
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || len(data) != nl+1+len("crc32c:")+8+1 || string(data[nl+1:nl+8]) != "crc32c:" || data[len(data)-1] != '\n' {
		return m, fmt.Errorf("%w: manifest framing", ErrCorrupt)
	}
	body := data[:nl]
	crc, err := parseHex(data[nl+8 : len(data)-1])
	if err != nil || uint32(crc) != crc32.Checksum(body, castagnoli) {
		return m, fmt.Errorf("%w: manifest checksum mismatch", ErrCorrupt)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%w: manifest: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return m, fmt.Errorf("%w: manifest: data after the object", ErrCorrupt)
	}
	if err := m.validate(); err != nil {
		return m, err
	}
	return m, nil
}

func (m *Manifest) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: manifest: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if m.Format == 3 || m.Format == 4 || m.Format == 5 {
		return m.validateFields()
	}
	switch {
	case m.Format != 1 && m.Format != 2:
		return bad("format %d (this build reads 1 to 5)", m.Format)
	case m.Format == 1 && m.WALHead:
		return bad("wal_head in a format 1 manifest")
	case len(m.Vectors) != 0 || len(m.Sparse) != 0:
		return bad("vectors in a format %d manifest", m.Format)
	case limits.CheckDim(m.Dim) != nil:
		return bad("dim %d", m.Dim)
	case limits.CheckM(m.M) != nil:
		return bad("M %d", m.M)
	case m.EfConstruction < 1 || m.EfConstruction > math.MaxUint32:
		// Not limits.MaxEfConstruction: collections created before it
		// was enforced hold larger values, and the index file holds any
		// uint32.
		return bad("ef_construction %d", m.EfConstruction)
	case m.Count < 0:
		return bad("count %d", m.Count)
	}
	return m.validateFiles()
}

// validateFields checks a format 3 manifest: the schema's bounds, and that
// every field's files are listed once.
func (m *Manifest) validateFields() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: manifest: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	switch {
	case !m.WALHead:
		return bad("format %d without wal_head", m.Format)
	case m.Dim != 0 || m.Metric != "" || m.M != 0 || m.EfConstruction != 0 || m.Quantization != "":
		return bad("format %d with the parameters of a single vector (dim %d)", m.Format, m.Dim)
	case limits.CheckVectorFields(len(m.Vectors)+len(m.Sparse)) != nil:
		return bad("%d vector fields", len(m.Vectors)+len(m.Sparse))
	case m.Count < 0:
		return bad("count %d", m.Count)
	}
	if err := m.validateFiles(); err != nil {
		return err
	}
	if err := m.validateState(); err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		listed[f.Name] = true
	}
	used := map[string]bool{}
	segs := map[string]bool{}
	for i, v := range m.Vectors {
		switch {
		case limits.CheckFieldName(v.Name) != nil:
			return bad("vector field %d: name of %d bytes", i, len(v.Name))
		case i > 0 && v.Name <= m.Vectors[i-1].Name:
			return bad("vector fields not sorted by name at %q", v.Name)
		case limits.CheckDim(v.Dim) != nil:
			return bad("vector field %q: dim %d", v.Name, v.Dim)
		case limits.CheckM(v.M) != nil:
			return bad("vector field %q: M %d", v.Name, v.M)
		case v.EfConstruction < 1 || v.EfConstruction > math.MaxUint32:
			return bad("vector field %q: ef_construction %d", v.Name, v.EfConstruction)
		case v.Multivector != "" && v.Multivector != "max_sim":
			return bad("vector field %q: multivector %q", v.Name, v.Multivector)
		case (v.Multivector != "") != (v.MapFile != ""):
			return bad("vector field %q: map_file %q for multivector %q", v.Name, v.MapFile, v.Multivector)
		}
		if err := m.validateSegments(v, segs); err != nil {
			return err
		}
		var files []string
		if m.Format == 3 {
			files = append(files, v.IndexFile)
		}
		if v.DeletesFile != "" {
			files = append(files, v.DeletesFile)
		}
		if v.MapFile != "" {
			files = append(files, v.MapFile)
		}
		for _, name := range files {
			if !listed[name] || used[name] || name == m.IDs || name == m.Expiry {
				return bad("vector field %q: file %q not listed, or used twice", v.Name, name)
			}
			used[name] = true
		}
	}
	dense := map[string]bool{}
	for _, v := range m.Vectors {
		dense[v.Name] = true
	}
	for i, v := range m.Sparse {
		switch {
		case limits.CheckFieldName(v.Name) != nil:
			return bad("sparse field %d: name of %d bytes", i, len(v.Name))
		case i > 0 && v.Name <= m.Sparse[i-1].Name:
			return bad("sparse fields not sorted by name at %q", v.Name)
		case dense[v.Name]:
			return bad("sparse field %q: also a dense field", v.Name)
		case v.Modifier != "none" && v.Modifier != "idf":
			return bad("sparse field %q: modifier %q", v.Name, v.Modifier)
		case !listed[v.File] || used[v.File] || v.File == m.IDs || v.File == m.Expiry:
			return bad("sparse field %q: file %q not listed, or used twice", v.Name, v.File)
		}
		used[v.File] = true
	}
	return nil
}

// validateState checks a manifest's state runs: only in format 5, which
// has no id or expiry table file, each a state run file name used once.
func (m *Manifest) validateState() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: manifest: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if m.Format != 5 {
		if len(m.State) != 0 {
			return bad("state runs in a format %d manifest", m.Format)
		}
		return nil
	}
	if m.IDs != "" || m.Expiry != "" {
		return bad("format 5 with an id table %q or expiry table %q", m.IDs, m.Expiry)
	}
	seen := map[string]bool{}
	for _, s := range m.State {
		if !ValidStateRunName(s.File) || seen[s.File] || s.Size < 0 || s.Entries < 0 {
			return bad("state run %+v", s)
		}
		seen[s.File] = true
	}
	return nil
}

// validateSegments checks a field's index entries: an index file in
// format 3, segments in format 4, each a segment file name used once in
// the manifest (segs), with a deletes file if and only if some segment
// has deletions.
func (m *Manifest) validateSegments(v VectorField, segs map[string]bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: manifest: vector field %q: %s", ErrCorrupt, v.Name, fmt.Sprintf(format, args...))
	}
	if m.Format == 3 {
		if len(v.Segments) != 0 || v.DeletesFile != "" {
			return bad("segments in a format 3 manifest")
		}
		return nil
	}
	if v.IndexFile != "" {
		return bad("index_file in a format 4 manifest")
	}
	deleted := 0
	for _, s := range v.Segments {
		if !ValidSegmentName(s.File) || segs[s.File] || s.Size < 0 || s.Live < 0 || s.Deleted < 0 {
			return bad("segment %+v", s)
		}
		segs[s.File] = true
		deleted += s.Deleted
	}
	if (deleted > 0) != (v.DeletesFile != "") {
		return bad("deletes_file %q for %d deleted keys", v.DeletesFile, deleted)
	}
	return nil
}

// validateFiles checks the file list and the id table's entry in it.
func (m *Manifest) validateFiles() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: manifest: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if m.IDs != "" && m.IDs != IDTableName {
		return bad("id table %q (this build writes %q)", m.IDs, IDTableName)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || f.Name == "." || f.Name == ".." || seen[f.Name] || f.Size < 0 {
			return bad("file entry %+v", f)
		}
		seen[f.Name] = true
	}
	if m.IDs != "" && !seen[m.IDs] {
		return bad("id table %q is not among the files", m.IDs)
	}
	if m.Expiry != "" && (m.Expiry != ExpiryName || !seen[m.Expiry]) {
		return bad("expiry table %q (this build writes %q) is not among the files", m.Expiry, ExpiryName)
	}
	return nil
}

// WriteManifest writes dir/MANIFEST and fsyncs it (the caller fsyncs dir).
func WriteManifest(fs vfs.FS, dir string, m Manifest) error {
	data, err := EncodeManifest(m)
	if err != nil {
		return err
	}
	return replaceFile(fs, dir, ManifestName, data)
}

// ReadManifest reads dir/MANIFEST and checks that every file it lists
// exists with the listed size.
func ReadManifest(fs vfs.FS, dir string) (Manifest, error) {
	data, err := readSmall(fs, filepath.Join(dir, ManifestName), manifestLimit)
	if err != nil {
		return Manifest{}, err
	}
	m, err := DecodeManifest(data)
	if err != nil {
		return m, fmt.Errorf("%w (in %s)", err, dir)
	}
	for _, f := range m.Files {
		info, err := fs.Stat(filepath.Join(dir, f.Name))
		if err != nil {
			return m, fmt.Errorf("%w: %s: listed file %s: %v", ErrCorrupt, dir, f.Name, err)
		}
		if info.Size() != f.Size {
			return m, fmt.Errorf("%w: %s: file %s is %d bytes, manifest says %d", ErrCorrupt, dir, f.Name, info.Size(), f.Size)
		}
	}
	return m, nil
}
