package qdrant

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/vfs"
)

// registerSnapshots adds the snapshot routes (snapshots.go) to h's mux.
func (h *Handler) registerSnapshots() {
	for pattern, fn := range map[string]route{
		"POST /collections/{name}/snapshots":          h.restCreateSnapshot,
		"GET /collections/{name}/snapshots":           h.restListSnapshots,
		"DELETE /collections/{name}/snapshots/{file}": h.restDeleteSnapshot,
		"PUT /collections/{name}/snapshots/recover":   h.restRecoverSnapshot,
		"POST /collections/{name}/snapshots/upload":   h.restUploadSnapshot,
	} {
		h.mux.Handle(pattern, fn)
	}
	h.mux.HandleFunc("GET /collections/{name}/snapshots/{file}", h.downloadSnapshot)
	for pattern, fn := range map[string]route{
		"POST /snapshots":          h.restCreateFullSnapshot,
		"GET /snapshots":           h.restListFullSnapshots,
		"DELETE /snapshots/{file}": h.restDeleteFullSnapshot,
	} {
		h.mux.Handle(pattern, fn)
	}
	h.mux.HandleFunc("GET /snapshots/{file}", func(w http.ResponseWriter, r *http.Request) {
		if err := fullSnapshotFile(r.PathValue("file")); err != nil {
			route(func(*http.Request) (any, error) { return nil, err }).ServeHTTP(w, r)
			return
		}
		h.downloadSnapshot(w, r) // {name} is empty here: the snapshot directory itself
	})
}

func (h *Handler) restCreateFullSnapshot(r *http.Request) (any, error) {
	if err := waitParam(r); err != nil {
		return nil, err
	}
	var req struct{}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	return h.createFullSnapshot(r.Context(), "", &req)
}

func (h *Handler) restListFullSnapshots(r *http.Request) (any, error) {
	return h.listFullSnapshots(r.Context(), "", &struct{}{})
}

func (h *Handler) restDeleteFullSnapshot(r *http.Request) (any, error) {
	if err := waitParam(r); err != nil {
		return nil, err
	}
	return h.deleteFullSnapshot(r.Context(), "", &snapshotRef{Name: r.PathValue("file")})
}

// waitParam checks the wait query parameter; strata always waits.
func waitParam(r *http.Request) error {
	switch w := r.URL.Query().Get("wait"); w {
	case "", "true", "false":
		return nil
	default:
		return badRequestf("wait must be true or false, got %.40q", w)
	}
}

func (h *Handler) restCreateSnapshot(r *http.Request) (any, error) {
	if err := waitParam(r); err != nil {
		return nil, err
	}
	var req struct{}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	return h.createSnapshot(r.Context(), r.PathValue("name"), &req)
}

func (h *Handler) restListSnapshots(r *http.Request) (any, error) {
	return h.listSnapshots(r.Context(), r.PathValue("name"), &struct{}{})
}

func (h *Handler) restDeleteSnapshot(r *http.Request) (any, error) {
	if err := waitParam(r); err != nil {
		return nil, err
	}
	return h.deleteSnapshot(r.Context(), r.PathValue("name"), &snapshotRef{Name: r.PathValue("file")})
}

// downloadSnapshot answers a snapshot's bytes (http.ServeContent: ranges
// and conditional requests too), or an error in Qdrant's shape.
func (h *Handler) downloadSnapshot(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) { route(func(*http.Request) (any, error) { return nil, err }).ServeHTTP(w, r) }
	coll := h.aliases.resolve(r.PathValue("name"))
	path, err := h.snapshots.path(coll, r.PathValue("file"))
	if err != nil {
		fail(err)
		return
	}
	d, err := h.snapshots.describe(coll, r.PathValue("file"))
	if err != nil {
		fail(err)
		return
	}
	f, err := h.snapshots.fs.Open(path)
	if err != nil {
		fail(fmt.Errorf("%w: snapshot %q", ErrNotFound, d.Name))
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", d.Name))
	http.ServeContent(w, r, d.Name, d.created, io.NewSectionReader(f, 0, d.Size))
}

// recoverRequest is Qdrant's SnapshotRecover.
type recoverRequest struct {
	Location string  `json:"location"`
	Priority *string `json:"priority"`
	Checksum *string `json:"checksum"`
	// APIKey is the key for fetching the location from another server;
	// this door fetches nothing, so it is never used.
	APIKey *string `json:"api_key"`
}

func (h *Handler) restRecoverSnapshot(r *http.Request) (any, error) {
	if err := waitParam(r); err != nil {
		return nil, err
	}
	var req recoverRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if err := checkPriority(req.Priority); err != nil {
		return nil, err
	}
	path, err := h.snapshotLocation(r, req.Location)
	if err != nil {
		return nil, err
	}
	checksum := ""
	if req.Checksum != nil {
		checksum = *req.Checksum
	}
	if err := h.recoverFrom(r.PathValue("name"), path, filepath.Base(path), checksum); err != nil {
		return nil, err
	}
	return true, nil
}

// checkPriority accepts Qdrant's recovery priorities: with one replica
// of each collection there is nothing to prefer, so each restores the
// snapshot as it is.
func checkPriority(p *string) error {
	if p == nil {
		return nil
	}
	switch *p {
	case "replica", "snapshot", "no_sync":
		return nil
	}
	return badRequestf("priority must be replica, snapshot or no_sync, got %.40q", *p)
}

// snapshotLocation turns a recover request's location into a file of the
// snapshot directory: a file:// URL inside it, or a URL of this server's
// own download route (its Host). This door fetches nothing from
// elsewhere: any other location is a 400.
func (h *Handler) snapshotLocation(r *http.Request, location string) (string, error) {
	u, err := url.Parse(location)
	if err != nil || location == "" {
		return "", badRequestf("location %.200q is not a URL", location)
	}
	switch u.Scheme {
	case "file":
		root, err := filepath.Abs(h.snapshots.root)
		if err != nil {
			return "", fmt.Errorf("qdrant: snapshot directory: %w", err)
		}
		path := filepath.Clean(u.Path)
		rel, err := filepath.Rel(root, path)
		if u.Host != "" || !filepath.IsAbs(path) || err != nil || rel == "." || rel == ".." ||
			strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", badRequestf("location %.200q is outside this server's snapshot directory %s "+
				"(recover from a file there, or from a URL of this server's own snapshots)", location, root)
		}
		return path, nil
	case "http", "https":
		parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
		if !strings.EqualFold(u.Host, r.Host) || len(parts) != 4 || parts[0] != "collections" || parts[2] != "snapshots" {
			return "", badRequestf("location %.200q is not a snapshot of this server "+
				"(http://%s/collections/<name>/snapshots/<file>): strata fetches nothing from other servers; "+
				"upload the file with POST /collections/{name}/snapshots/upload instead", location, r.Host)
		}
		return h.snapshots.path(h.aliases.resolve(parts[1]), parts[3])
	}
	return "", badRequestf("location %.200q: only file:// and this server's own http(s) URLs are served", location)
}

// restUploadSnapshot is recover_snapshot from an uploaded file: the
// multipart part "snapshot" is streamed to a temporary file of the
// snapshot directory (bounded by the body limit, --max-body-bytes),
// restored, and removed.
func (h *Handler) restUploadSnapshot(r *http.Request) (any, error) {
	if err := waitParam(r); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	if p := q.Get("priority"); p != "" {
		if err := checkPriority(&p); err != nil {
			return nil, err
		}
	}
	name := r.PathValue("name")
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badRequestf("the upload must be multipart/form-data with a part \"snapshot\": %v", err)
	}
	s := h.snapshots
	if err := vfs.MkdirAllDurable(s.fs, s.root); err != nil {
		return nil, fmt.Errorf("qdrant: snapshot directory: %w", err)
	}
	tmp := filepath.Join(s.root, ".upload-"+randomHex()+snapshotSuffix)
	defer func() { _ = s.fs.Remove(tmp) }()
	var checksum string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, badRequestf("the upload has no part \"snapshot\"")
		}
		if err != nil {
			return nil, badRequestf("reading the upload: %v", guard.AsBodyLimit(err))
		}
		if part.FormName() != "snapshot" {
			part.Close()
			continue
		}
		checksum, err = h.saveUpload(tmp, part)
		if err != nil {
			return nil, err
		}
		break
	}
	if want := q.Get("checksum"); want != "" && !strings.EqualFold(want, checksum) {
		return nil, badRequestf("the upload's SHA-256 is %s, the request says %.80s", checksum, want)
	}
	if err := h.recoverFrom(name, tmp, "the upload", ""); err != nil {
		return nil, err
	}
	return true, nil
}

// saveUpload writes the part to path and returns its SHA-256 (hex).
func (h *Handler) saveUpload(path string, part io.Reader) (string, error) {
	f, err := h.snapshots.fs.Create(path)
	if err != nil {
		return "", fmt.Errorf("qdrant: upload: %w", err)
	}
	sum := sha256.New()
	_, err = io.Copy(hashingWriter{w: f, sum: sum}, part)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return "", guard.AsBodyLimit(err)
		}
		return "", fmt.Errorf("qdrant: upload: %w", err)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}
