package collection

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/wal"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/vfs"
)

// Restore makes a new collection at dir from an archive that Export
// wrote (archive.go), and returns the archive's snapshot sequence number;
// Open the collection to use it. dir must not exist (ErrExists). Every
// entry is checked before its bytes are written and the snapshot is
// loaded whole (every CRC) before the temporary directory it was written
// to is renamed to dir; a bad archive fails with an error matching
// ErrArchive (and ErrCorrupt when a file in it is damaged) and leaves
// nothing behind. tuning.FS is the file system (default vfs.Default).
func Restore(src io.Reader, dir string, tuning Tuning) (uint64, error) {
	tuning.setDefaults()
	fsys := tuning.FS
	if _, err := fsys.Stat(dir); err == nil {
		return 0, fmt.Errorf("%w: restore: %s exists", ErrExists, dir)
	} else if !errors.Is(err, iofs.ErrNotExist) {
		return 0, fmt.Errorf("collection: restore to %s: %w", dir, err)
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	tmp := dir + ".restoring-" + hex.EncodeToString(suffix[:])
	seq, err := restoreInto(src, fsys, tmp)
	if err == nil {
		if _, serr := fsys.Stat(dir); serr == nil {
			err = fmt.Errorf("%w: restore: %s was created meanwhile", ErrExists, dir)
		}
	}
	if err == nil {
		err = fsys.Rename(tmp, dir)
		if err == nil {
			if err = fsys.SyncDir(filepath.Dir(dir)); err != nil {
				// Not known to be durable: a failed restore leaves nothing.
				_ = fsys.RemoveAll(dir)
			}
		}
		if err != nil {
			err = fmt.Errorf("collection: restore to %s: %w", dir, err)
		}
	}
	if err != nil {
		_ = fsys.RemoveAll(tmp)
		if errors.Is(err, ErrArchive) {
			err = archiveError{err: err, tmp: tmp}
		}
		return 0, err
	}
	return seq, nil
}

// archiveError is a bad archive's error without the temporary directory
// it was restored into: its files are named as the archive names them
// (segments/…). Where the archive lives and where it is unpacked is the
// restoring side's business: a server sends this message to whoever
// uploaded the archive. errors.Is and errkind see the error it wraps.
type archiveError struct {
	err error
	tmp string
}

func (e archiveError) Error() string {
	msg := strings.ReplaceAll(e.err.Error(), e.tmp+string(filepath.Separator), "")
	return strings.ReplaceAll(msg, e.tmp, ".")
}

func (e archiveError) Unwrap() error { return e.err }

// restoreInto writes the collection of the archive into tmp (created) and
// checks it; the caller renames or removes tmp.
func restoreInto(src io.Reader, fsys vfs.FS, tmp string) (uint64, error) {
	if err := vfs.MkdirAllDurable(fsys, tmp); err != nil {
		return 0, fmt.Errorf("collection: restore: %w", err)
	}
	lock, err := takeLock(fsys, tmp)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	seq, err := readArchive(src, fsys, tmp)
	if err != nil {
		return 0, err
	}
	// The log starts empty after the snapshot, with the HEAD that the
	// manifest (wal_head) says it keeps.
	log, err := wal.NewWriter(fsys, filepath.Join(tmp, walDir), seq+1, wal.WriterOptions{})
	if err != nil {
		return 0, fmt.Errorf("collection: restore: %w", err)
	}
	if err := log.Close(); err != nil {
		return 0, fmt.Errorf("collection: restore: %w", err)
	}
	snap, err := loadSnapshot(fsys, tmp, seq, false)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrArchive, err)
	}
	closeFields(snap.fields.fields)
	// CURRENT last: until it exists the directory is a leftover, never a
	// collection (IsLeftover).
	if err := snapshot.WriteCurrent(fsys, tmp, seq); err != nil {
		return 0, fmt.Errorf("collection: restore: %w", err)
	}
	return seq, nil
}

// readArchive reads an archive's entries into dir (snapshots/<seq>/ and
// segments/), each file fsynced and then each directory, checking every
// entry against the format (archive.go) before writing its bytes. It
// returns the snapshot's sequence number.
func readArchive(src io.Reader, fsys vfs.FS, dir string) (uint64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrArchive, fmt.Sprintf(format, args...))
	}
	tr := tar.NewReader(src)
	next := func(want string, maxSize int64) (*tar.Header, error) {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, bad("the archive ends before %q", want)
		}
		if err != nil {
			return nil, bad("reading the entry %q: %v", want, err)
		}
		if h.Name != want {
			return nil, bad("entry %.80q where %q belongs", h.Name, want)
		}
		if h.Typeflag != tar.TypeReg {
			return nil, bad("entry %q is of type %q, not a regular file", want, h.Typeflag)
		}
		if h.Size < 0 || h.Size > maxSize {
			return nil, bad("entry %q is %d bytes, more than %d", want, h.Size, maxSize)
		}
		return h, nil
	}
	readSmall := func(want string, maxSize int64) ([]byte, error) {
		h, err := next(want, maxSize)
		if err != nil {
			return nil, err
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, bad("entry %q: %v", want, err)
		}
		return data, nil
	}

	header, err := readSmall(archiveHeaderName, int64(archiveHeaderLen))
	if err != nil {
		return 0, err
	}
	seq, version, err := decodeArchiveHeader(header)
	if err != nil {
		return 0, err
	}
	rawManifest, err := readSmall(archiveManifest, snapshot.MaxManifestBytes)
	if err != nil {
		return 0, err
	}
	m, err := snapshot.DecodeManifest(rawManifest)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrArchive, err)
	}
	if m.Seq != seq {
		return 0, bad("the header names snapshot %d, the manifest %d", seq, m.Seq)
	}

	snapDir := snapshotPath(dir, seq)
	segDir := filepath.Join(dir, snapshot.SegmentsDir)
	for _, d := range []string{snapDir, segDir} {
		if err := vfs.MkdirAllDurable(fsys, d); err != nil {
			return 0, fmt.Errorf("collection: restore: %w", err)
		}
	}
	if err := writeSynced(fsys, filepath.Join(snapDir, snapshot.ManifestName), bytes.NewReader(rawManifest), int64(len(rawManifest))); err != nil {
		return 0, err
	}
	copyEntry := func(name, path string, size int64) error {
		if err := limits.CheckArchiveFileBytes(name, size); err != nil {
			return fmt.Errorf("%w: %w", ErrArchive, err)
		}
		if _, err := next(name, size); err != nil {
			return err
		}
		if err := writeSynced(fsys, path, tr, size); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return bad("entry %q: %v", name, err)
			}
			return err
		}
		return nil
	}
	for _, f := range m.Files {
		if err := copyEntry(archiveSnapshotDir+f.Name, filepath.Join(snapDir, f.Name), f.Size); err != nil {
			return 0, err
		}
	}
	for _, s := range archiveSegments(m) {
		if err := copyEntry(archiveSegmentsDir+s.File, filepath.Join(segDir, s.File), s.Size); err != nil {
			return 0, err
		}
	}
	last := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, bad("after the last file: %v", err)
		}
		name, isDoor := strings.CutPrefix(h.Name, archiveDoorDir)
		if version < 2 || !isDoor {
			return 0, bad("entry %.80q after the last file", h.Name)
		}
		if !doorStateName.MatchString(name) || name <= last {
			return 0, bad("entry %.80q: not a door state file's name, or not after %q", h.Name, last)
		}
		if h.Typeflag != tar.TypeReg {
			return 0, bad("entry %q is of type %q, not a regular file", h.Name, h.Typeflag)
		}
		if err := limits.CheckArchiveFileBytes(h.Name, h.Size); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrArchive, err)
		}
		if err := writeSynced(fsys, filepath.Join(dir, name), tr, h.Size); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return 0, bad("entry %q: %v", h.Name, err)
			}
			return 0, err
		}
		last = name
	}
	for _, d := range []string{snapDir, filepath.Dir(snapDir), segDir, dir} {
		if err := fsys.SyncDir(d); err != nil {
			return 0, fmt.Errorf("collection: restore: %w", err)
		}
	}
	return seq, nil
}

// decodeArchiveHeader parses the header entry and returns its sequence
// number and format version (1 or 2).
func decodeArchiveHeader(b []byte) (seq uint64, version int, err error) {
	rest, ok := bytes.CutPrefix(b, []byte("strata-snapshot "))
	if !ok {
		return 0, 0, fmt.Errorf("%w: no strata-snapshot header", ErrArchive)
	}
	v, hexSeq, _ := bytes.Cut(rest, []byte(" "))
	switch string(v) {
	case "1":
		version = 1
	case strconv.Itoa(archiveVersion):
		version = archiveVersion
	default:
		return 0, 0, fmt.Errorf("%w: archive format version %.20q (this build reads versions 1 to %d)", ErrArchive, v, archiveVersion)
	}
	if len(b) != archiveHeaderLen || b[len(b)-1] != '\n' {
		return 0, 0, fmt.Errorf("%w: header %q", ErrArchive, b)
	}
	hexSeq = hexSeq[:len(hexSeq)-1]
	for _, c := range hexSeq {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, 0, fmt.Errorf("%w: header %q", ErrArchive, b)
		}
	}
	seq, err = strconv.ParseUint(string(hexSeq), 16, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: header %q", ErrArchive, b)
	}
	return seq, version, nil
}

// writeSynced creates path with the size bytes read from src, fsynced.
func writeSynced(fsys vfs.FS, path string, src io.Reader, size int64) error {
	f, err := fsys.Create(path)
	if err != nil {
		return fmt.Errorf("collection: restore: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(src, size))
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("collection: restore %s: %w", path, err)
	}
	return nil
}
