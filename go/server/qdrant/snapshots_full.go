package qdrant

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/strata-db/strata/go/vfs"
)

// Full-storage snapshots (create_full_snapshot, list_full_snapshots,
// delete_full_snapshot, and the download GET /snapshots/{name}).
//
// A full snapshot is one tar file (POSIX ustar, PAX only for an entry of
// 8 GiB or more) in the snapshot directory itself (<snapshots>/, beside
// the collections' directories), named as Qdrant names them,
// full-snapshot-<YYYY-MM-DD-HH-MM-SS>[-<n>].snapshot, with its SHA-256 in
// <name>.checksum as a collection's snapshot has. Its entries, in name
// order, are
//
//	"<collection>.snapshot"   that collection's archive (collection.Export's format)
//
// one per collection, each taken in turn (each holds every write
// acknowledged before its own export began; there is no single instant
// across collections, as there is none in Qdrant's), each with its door
// state (collection.Export's door entries). Aliases are not in it.
// Qdrant restores a full snapshot only when it starts
// (--storage-snapshot); strata has no such start-up path: unpack the
// file (tar) and recover each collection from its archive (upload or
// recover_snapshot). A collection that will not open fails the call
// rather than being left out silently.

// fullSnapshotPrefix starts every full snapshot's name (do not change).
const fullSnapshotPrefix = "full-snapshot-"

// createFullSnapshot is create_full_snapshot.
func (h *Handler) createFullSnapshot(_ context.Context, _ string, _ *struct{}) (snapshotDescription, error) {
	s := h.snapshots
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := vfs.MkdirAllDurable(s.fs, s.root); err != nil {
		return snapshotDescription{}, fmt.Errorf("qdrant: snapshot directory: %w", err)
	}
	names := h.cfg.Collections.Collections()
	slices.Sort(names)
	tmp := filepath.Join(s.root, ".creating-full-"+randomHex()+snapshotSuffix)
	sum := sha256.New()
	if err := h.writeFullSnapshot(tmp, names, sum); err != nil {
		_ = s.fs.Remove(tmp)
		return snapshotDescription{}, err
	}
	file, err := s.freeFullName(time.Now().UTC())
	if err == nil {
		err = s.fs.Rename(tmp, filepath.Join(s.root, file))
	}
	if err == nil {
		err = s.fs.SyncDir(s.root)
	}
	if err != nil {
		_ = s.fs.Remove(tmp)
		return snapshotDescription{}, fmt.Errorf("qdrant: full snapshot: %w", err)
	}
	checksum := hex.EncodeToString(sum.Sum(nil))
	if err := vfs.ReplaceFile(s.fs, filepath.Join(s.root, file+checksumSuffix), []byte(checksum+"\n")); err != nil {
		return snapshotDescription{}, fmt.Errorf("qdrant: full snapshot %s: %w", file, err)
	}
	return s.describe("", file)
}

// freeFullName is the name of a full snapshot taken at now: Qdrant's,
// with -2, -3, ... when one of that second exists.
func (s *snapshotStore) freeFullName(now time.Time) (string, error) {
	base := fullSnapshotPrefix + now.Format("2006-01-02-15-04-05")
	for n := 1; n < 1000; n++ {
		file := base + snapshotSuffix
		if n > 1 {
			file = fmt.Sprintf("%s-%d%s", base, n, snapshotSuffix)
		}
		if _, err := s.fs.Stat(filepath.Join(s.root, file)); errors.Is(err, iofs.ErrNotExist) {
			return file, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("qdrant: a thousand full snapshots named %s*", base)
}

// writeFullSnapshot writes the tar of the collections' archives to path,
// fsynced; every byte also goes to sum.
func (h *Handler) writeFullSnapshot(path string, names []string, sum hash.Hash) error {
	s := h.snapshots
	f, err := s.fs.Create(path)
	if err != nil {
		return fmt.Errorf("qdrant: full snapshot: %w", err)
	}
	tw := tar.NewWriter(hashingWriter{w: f, sum: sum})
	for _, name := range names {
		if err = h.addCollectionArchive(tw, name); err != nil {
			break
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// addCollectionArchive exports collection name to a part file of the
// snapshot directory (the tar header needs its size first) and copies it
// into tw as "<name>.snapshot".
func (h *Handler) addCollectionArchive(tw *tar.Writer, name string) error {
	c, err := h.cfg.Collections.Collection(name)
	if err != nil {
		return fmt.Errorf("qdrant: full snapshot: collection %q: %w", name, err)
	}
	s := h.snapshots
	part := filepath.Join(s.root, ".full-part-"+randomHex()+snapshotSuffix)
	defer func() { _ = s.fs.Remove(part) }()
	if _, err := c.ExportFile(part, nil); err != nil {
		return fmt.Errorf("qdrant: full snapshot: collection %q: %w", name, err)
	}
	in, err := s.fs.Open(part)
	if err != nil {
		return fmt.Errorf("qdrant: full snapshot: collection %q: %w", name, err)
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return fmt.Errorf("qdrant: full snapshot: collection %q: %w", name, err)
	}
	hdr := &tar.Header{Name: name + snapshotSuffix, Typeflag: tar.TypeReg, Mode: 0o644, Size: info.Size(),
		ModTime: time.Now().UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
	if info.Size() >= 8<<30 {
		hdr.Format = tar.FormatPAX
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("qdrant: full snapshot: collection %q: %w", name, err)
	}
	if _, err := io.Copy(tw, io.NewSectionReader(in, 0, info.Size())); err != nil {
		return fmt.Errorf("qdrant: full snapshot: collection %q: %w", name, err)
	}
	return nil
}

// listFullSnapshots is list_full_snapshots.
func (h *Handler) listFullSnapshots(_ context.Context, _ string, _ *struct{}) ([]snapshotDescription, error) {
	return h.snapshots.list("", func(file string) bool { return strings.HasPrefix(file, fullSnapshotPrefix) })
}

// fullSnapshotFile checks that file names a full snapshot.
func fullSnapshotFile(file string) error {
	if !strings.HasPrefix(file, fullSnapshotPrefix) {
		return badRequestf("%.80q is not a full snapshot name (%s<time>.snapshot)", file, fullSnapshotPrefix)
	}
	return nil
}

// deleteFullSnapshot is delete_full_snapshot.
func (h *Handler) deleteFullSnapshot(ctx context.Context, _ string, req *snapshotRef) (bool, error) {
	if err := fullSnapshotFile(req.Name); err != nil {
		return false, err
	}
	return h.deleteSnapshot(ctx, "", req)
}
