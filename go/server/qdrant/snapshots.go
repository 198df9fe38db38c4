package qdrant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	iofs "io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/registry"
	"github.com/strata-db/strata/go/vfs"
)

// Snapshots.
//
// A collection's snapshots are archives of package collection's format
// (collection.Export: the live snapshot's files, checked whole on
// restore), one file each in <snapshots>/<collection>/ (Config.SnapshotsDir,
// default <data>/qdrant.snapshots, a door's state directory of package
// registry's layout), named as Qdrant names them,
// <collection>-<seq>-<YYYY-MM-DD-HH-MM-SS>.snapshot, with the SHA-256 of
// its bytes beside it in <name>.checksum (hex), as Qdrant keeps it.
// Creation writes <name>.tmp, fsyncs and renames it; the checksum file is
// written after, so a snapshot listed without one lost it in a crash
// (its checksum is then null). Recovery restores the archive under a
// temporary name and replaces the collection only once every file of it
// passed its checks (registry.Registry.Restore): a bad archive is a 400
// and the collection stays as it was; a replaced collection's name is
// never free meanwhile (the registry sets the old one aside and puts it
// back if the switch fails). The door's own state of a collection (its
// state files in the collection's directory: payload_schema,
// update_collection's settings and metadata, the vectors {"": ...} form)
// is in the archive as its door entries (format version 2) and comes back
// with it: the recovered collection's state is read from its directory
// when first asked for, as after a restart.

// snapshotSuffix and checksumSuffix name a snapshot's files (do not change).
const (
	snapshotSuffix = ".snapshot"
	checksumSuffix = ".checksum"
)

// validSnapshotName is the only shape of a snapshot's file name a request
// may give: one plain file name of the collection's snapshot directory.
var validSnapshotName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}\.snapshot$`)

// Restorer is what recovering a snapshot needs of Config.Collections
// (server.Server has it): the collection replaced by the archive's, only
// once the archive was checked whole.
type Restorer interface {
	RestoreCollection(name string, src io.Reader) (*collection.Collection, error)
}

// snapshotStore is the door's snapshot directory.
type snapshotStore struct {
	fs   vfs.FS
	root string
	mu   sync.Mutex // one creation at a time: two would share a .tmp name
}

// snapshotDescription is Qdrant's SnapshotDescription.
type snapshotDescription struct {
	Name         string  `json:"name"`
	CreationTime string  `json:"creation_time"`
	Size         int64   `json:"size"`
	Checksum     *string `json:"checksum"`
	created      time.Time
}

// qdrantTime is Qdrant's creation_time: UTC, no zone, whole seconds.
const qdrantTime = "2006-01-02T15:04:05"

// dir is collection name's snapshot directory; the root itself (the full
// snapshots', snapshots_full.go) for name "".
func (s *snapshotStore) dir(name string) string { return filepath.Join(s.root, name) }

// snapshotOwner names whose snapshots dir(name) holds, for messages.
func snapshotOwner(name string) string {
	if name == "" {
		return "the storage (full snapshots)"
	}
	return fmt.Sprintf("collection %q", name)
}

// path is the file of snapshot file in collection name's directory; the
// file name must be one this door could have written.
func (s *snapshotStore) path(name, file string) (string, error) {
	if !validSnapshotName.MatchString(file) || strings.Contains(file, "..") {
		return "", badRequestf("%.80q is not a snapshot name (<collection>-<seq>-<time>.snapshot)", file)
	}
	return filepath.Join(s.dir(name), file), nil
}

// createSnapshot is create_snapshot: the collection's state now, written
// whole before it answers (wait is always met).
func (h *Handler) createSnapshot(_ context.Context, name string, _ *struct{}) (snapshotDescription, error) {
	coll := h.aliases.resolve(name)
	c, err := h.cfg.Collections.Collection(coll)
	if err != nil {
		return snapshotDescription{}, err
	}
	s := h.snapshots
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := vfs.MkdirAllDurable(s.fs, s.dir(coll)); err != nil {
		return snapshotDescription{}, fmt.Errorf("qdrant: snapshot directory: %w", err)
	}
	sum := sha256.New()
	// The sequence number in the name is the one the archive will hold:
	// the export checkpoints first, and no checkpoint runs between.
	tmp := filepath.Join(s.dir(coll), ".creating-"+randomHex()+snapshotSuffix)
	seq, err := c.ExportFile(tmp, sum)
	if err != nil {
		return snapshotDescription{}, err
	}
	now := time.Now().UTC()
	file := fmt.Sprintf("%s-%d-%s%s", coll, seq, now.Format("2006-01-02-15-04-05"), snapshotSuffix)
	path := filepath.Join(s.dir(coll), file)
	if err := s.fs.Rename(tmp, path); err != nil {
		_ = s.fs.Remove(tmp)
		return snapshotDescription{}, fmt.Errorf("qdrant: snapshot %s: %w", file, err)
	}
	checksum := hex.EncodeToString(sum.Sum(nil))
	if err := vfs.ReplaceFile(s.fs, path+checksumSuffix, []byte(checksum+"\n")); err != nil {
		return snapshotDescription{}, fmt.Errorf("qdrant: snapshot %s: %w", file, err)
	}
	return s.describe(coll, file)
}

// describe is the description of one snapshot file.
func (s *snapshotStore) describe(name, file string) (snapshotDescription, error) {
	path := filepath.Join(s.dir(name), file)
	info, err := s.fs.Stat(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return snapshotDescription{}, fmt.Errorf("%w: snapshot %q of %s", ErrNotFound, file, snapshotOwner(name))
	}
	if err != nil {
		return snapshotDescription{}, fmt.Errorf("qdrant: snapshot %s: %w", file, err)
	}
	d := snapshotDescription{Name: file, Size: info.Size(), created: info.ModTime().UTC()}
	d.CreationTime = d.created.Format(qdrantTime)
	if raw, err := vfs.ReadFile(s.fs, path+checksumSuffix); err == nil {
		if sum := strings.TrimSpace(string(raw)); len(sum) == 2*sha256.Size {
			d.Checksum = &sum
		}
	}
	return d, nil
}

// listSnapshots is list_snapshots: the collection's snapshots by name.
func (h *Handler) listSnapshots(_ context.Context, name string, _ *struct{}) ([]snapshotDescription, error) {
	coll := h.aliases.resolve(name)
	if _, err := h.cfg.Collections.Collection(coll); err != nil && !errors.Is(err, registry.ErrUnavailable) {
		return nil, err
	}
	return h.snapshots.list(coll, func(string) bool { return true })
}

// list describes the snapshots in dir(coll) whose names keep takes, by
// name; none when the directory does not exist.
func (s *snapshotStore) list(coll string, keep func(file string) bool) ([]snapshotDescription, error) {
	names, err := s.fs.ReadDir(s.dir(coll))
	if errors.Is(err, iofs.ErrNotExist) {
		return []snapshotDescription{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("qdrant: snapshots of %s: %w", snapshotOwner(coll), err)
	}
	out := []snapshotDescription{}
	for _, file := range names {
		if !validSnapshotName.MatchString(file) || strings.HasPrefix(file, ".") || !keep(file) {
			continue
		}
		d, err := s.describe(coll, file)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// snapshotRef names one snapshot of the collection of the call.
type snapshotRef struct {
	Name string
}

// deleteSnapshot is delete_snapshot.
func (h *Handler) deleteSnapshot(_ context.Context, name string, req *snapshotRef) (bool, error) {
	coll := h.aliases.resolve(name)
	s := h.snapshots
	path, err := s.path(coll, req.Name)
	if err != nil {
		return false, err
	}
	if err := s.fs.Remove(path); errors.Is(err, iofs.ErrNotExist) {
		return false, fmt.Errorf("%w: snapshot %q of %s", ErrNotFound, req.Name, snapshotOwner(coll))
	} else if err != nil {
		return false, fmt.Errorf("qdrant: delete snapshot %s: %w", req.Name, err)
	}
	if err := s.fs.Remove(path + checksumSuffix); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return false, fmt.Errorf("qdrant: delete snapshot %s: %w", req.Name, err)
	}
	if err := s.fs.SyncDir(s.dir(coll)); err != nil {
		return false, fmt.Errorf("qdrant: delete snapshot %s: %w", req.Name, err)
	}
	return true, nil
}

// recoverFrom replaces (or creates) collection name with the archive at
// path, a file of the snapshot directory, called shown in messages (its
// file name, or "the upload": a client never sees the server's paths);
// checksum, if not empty, is the SHA-256 (hex) the file must have.
func (h *Handler) recoverFrom(name, path, shown, checksum string) error {
	restorer, ok := h.cfg.Collections.(Restorer)
	if !ok {
		return unsupportedf("recovering a snapshot (this server's collections cannot be restored)")
	}
	name = h.aliases.resolve(name) // an alias recovers the collection it names
	if err := registry.CheckName(name); err != nil {
		return err
	}
	f, err := h.snapshots.fs.Open(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: snapshot file %s", ErrNotFound, shown)
	}
	if err != nil {
		return fmt.Errorf("qdrant: recover from %s: %w", shown, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("qdrant: recover from %s: %w", shown, err)
	}
	if checksum != "" {
		sum := sha256.New()
		if _, err := io.Copy(sum, io.NewSectionReader(f, 0, info.Size())); err != nil {
			return fmt.Errorf("qdrant: recover from %s: %w", shown, err)
		}
		if got := hex.EncodeToString(sum.Sum(nil)); !strings.EqualFold(got, checksum) {
			return badRequestf("the snapshot's SHA-256 is %s, the request says %.80s", got, checksum)
		}
	}
	old, err := h.cfg.Collections.Collection(name)
	if _, rerr := restorer.RestoreCollection(name, io.NewSectionReader(f, 0, info.Size())); rerr != nil {
		return rerr
	}
	if err == nil {
		h.indexes.forget(old)
		h.settings.forget(old)
	}
	return nil
}

// hashingWriter counts and hashes what passes through it.
type hashingWriter struct {
	w   io.Writer
	sum hash.Hash
}

func (hw hashingWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.sum.Write(p[:n])
	return n, err
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
