package collection

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/vfs"
)

// Snapshot archives.
//
// Export writes a collection's live snapshot as one archive that Restore
// turns into a new collection directory: a backup, or a collection moved
// to another machine (the Qdrant door's snapshots). The archive is a tar
// stream (POSIX ustar, PAX records only for a file of 8 GiB or more) of
// regular files, in exactly this order:
//
//	"strata-snapshot"   the header: "strata-snapshot 1 " seq(16 lowercase hex) "\n", 35 bytes
//	"MANIFEST"          the snapshot's MANIFEST as written (package snapshot; CRC'd)
//	"snapshot/<name>"   each file of the manifest's "files", in the manifest's order
//	"segments/<name>"   each segment of each vector field, fields and segments in the manifest's order,
//	                    then each state run (manifest format 5), in the manifest's order
//	"door/<door>.<what>"  version 2: each door state file of the collection directory, by name
//
// and nothing after the last of them. seq is the snapshot's (and the
// manifest's) sequence number; 2 is the archive format's version, and a
// build reads 1 and 2 (do not change: a new layout is a new version,
// which a build that does not know it refuses). Version 1 has no door
// entries. Each file is byte for byte the one in the collection
// directory, so each keeps the CRCs its own format has; the sizes are the
// manifest's. The log is not in the archive: the snapshot is the state
// through seq, taken by a checkpoint at the start of the export.
//
// Door state files are what a door keeps beside a collection in its
// directory, named <door>.<what> (doorStateName; the Qdrant door's
// qdrant.payload-schema, qdrant.settings), written by their doors outside
// the collection's log and snapshot, each replaced whole: the archive
// holds each as it was when the export read it, and Restore writes it
// back beside the restored collection (a name of that shape, a regular
// file within the archive's file size limit, each name once, in order).
//
// Restore reads the entries in that order and refuses (ErrArchive) any
// other entry, type, name or size, a second copy, a missing file, bytes
// after the last file, a header of another version and a manifest that
// fails its checks, before writing the entry's bytes; then it loads the
// snapshot it wrote as Open does (every section's CRC). It writes into a
// temporary directory beside the target (<dir>.restoring-<hex>), fsyncs
// every file and directory, and renames it into place only when all of
// that passed: a bad archive, or a crash, never leaves a half collection
// at dir (a crash leaves the temporary directory, no CURRENT in it).

// Archive entry names and the header (do not change).
const (
	archiveHeaderName  = "strata-snapshot"
	archiveManifest    = "MANIFEST"
	archiveSnapshotDir = "snapshot/"
	archiveSegmentsDir = "segments/"
	archiveDoorDir     = "door/"
	archiveVersion     = 2
	archiveHeaderLen   = len("strata-snapshot 2 ") + 16 + 1
)

// doorStateName is the shape of a door state file's name in a collection
// directory: <door>.<what>; no file the collection writes has a dot.
var doorStateName = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}\.[a-z][a-z0-9-]{0,63}$`)

// encodeArchiveHeader is the header entry's content.
func encodeArchiveHeader(seq uint64) []byte {
	return fmt.Appendf(nil, "strata-snapshot %d %016x\n", archiveVersion, seq)
}

// Export writes the collection's state as an archive (the format above)
// to w. It checkpoints first, so the archive holds every write
// acknowledged before Export was called; writes and queries go on while
// it copies (checkpoints wait: they would delete the files being copied).
// It returns the archive's snapshot sequence number.
func (c *Collection) Export(w io.Writer) (uint64, error) {
	c.closeMu.RLock()
	defer c.closeMu.RUnlock()
	if c.closed {
		return 0, ErrClosed
	}
	if err := c.checkpoint(); err != nil {
		return 0, fmt.Errorf("collection: export: %w", err)
	}
	c.checkpointMu.Lock()
	defer c.checkpointMu.Unlock()
	seq := c.lastCheckpoint.Load()
	if err := c.exportSnapshot(w, seq); err != nil {
		return 0, fmt.Errorf("collection: export of %s at snapshot %d: %w", c.dir, seq, err)
	}
	return seq, nil
}

// exportSnapshot writes snapshot seq as an archive; the caller holds
// checkpointMu, so that its files stay.
func (c *Collection) exportSnapshot(w io.Writer, seq uint64) error {
	snapDir := snapshotPath(c.dir, seq)
	rawManifest, err := vfs.ReadFile(c.fs, filepath.Join(snapDir, snapshot.ManifestName))
	if err != nil {
		return err
	}
	m, err := snapshot.DecodeManifest(rawManifest)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := writeArchiveEntry(tw, archiveHeaderName, encodeArchiveHeader(seq)); err != nil {
		return err
	}
	if err := writeArchiveEntry(tw, archiveManifest, rawManifest); err != nil {
		return err
	}
	for _, f := range m.Files {
		if err := copyArchiveEntry(tw, c.fs, archiveSnapshotDir+f.Name, filepath.Join(snapDir, f.Name), f.Size); err != nil {
			return err
		}
	}
	segDir := filepath.Join(c.dir, snapshot.SegmentsDir)
	for _, s := range archiveSegments(m) {
		if err := copyArchiveEntry(tw, c.fs, archiveSegmentsDir+s.File, filepath.Join(segDir, s.File), s.Size); err != nil {
			return err
		}
	}
	if err := c.exportDoorState(tw); err != nil {
		return err
	}
	return tw.Close()
}

// exportDoorState adds the door state files of the collection directory,
// by name, each as it is when opened (its door replaces it whole).
func (c *Collection) exportDoorState(tw *tar.Writer) error {
	names, err := c.fs.ReadDir(c.dir)
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, name := range names {
		if !doorStateName.MatchString(name) {
			continue
		}
		path := filepath.Join(c.dir, name)
		info, err := c.fs.Stat(path)
		if errors.Is(err, iofs.ErrNotExist) {
			continue // replaced or removed meanwhile
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		f, err := c.fs.Open(path)
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		info, err = f.Stat()
		if err == nil {
			if err = tw.WriteHeader(entryHeader(archiveDoorDir+name, info.Size())); err == nil {
				_, err = io.Copy(tw, io.NewSectionReader(f, 0, info.Size()))
			}
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// archiveFile is one file of the segments directory in an archive.
type archiveFile struct {
	File string
	Size int64
}

// archiveSegments lists the files of the segments directory that the
// manifest names, in archive order: each vector field's segments, then
// the state runs (format 5), oldest first.
func archiveSegments(m snapshot.Manifest) []archiveFile {
	var out []archiveFile
	for _, v := range m.Vectors {
		for _, s := range v.Segments {
			out = append(out, archiveFile{s.File, s.Size})
		}
	}
	for _, s := range m.State {
		out = append(out, archiveFile{s.File, s.Size})
	}
	return out
}

// archiveTime is every entry's modification time: an archive of one
// snapshot (with the same door state files) is the same bytes whenever it
// is exported.
var archiveTime = time.Unix(0, 0)

func entryHeader(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: archiveTime}
}

func writeArchiveEntry(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(entryHeader(name, int64(len(data)))); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// copyArchiveEntry copies the file at path, which the manifest says is
// size bytes, into the archive as name.
func copyArchiveEntry(tw *tar.Writer, fsys vfs.FS, name, path string, size int64) error {
	f, err := fsys.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() != size {
		return fmt.Errorf("%w: %s is %d bytes, the manifest says %d", ErrCorrupt, path, info.Size(), size)
	}
	if err := tw.WriteHeader(entryHeader(name, size)); err != nil {
		return err
	}
	_, err = io.Copy(tw, io.NewSectionReader(f, 0, size))
	return err
}

// ExportFile writes the archive to path, durably: a temporary file
// (path + ".tmp") fsynced and renamed over path, then its directory
// fsynced; a failed export leaves no file at path. tee, if not nil, is
// given every byte written (a checksum). It returns the archive's
// snapshot sequence number.
func (c *Collection) ExportFile(path string, tee io.Writer) (uint64, error) {
	tmp := path + ".tmp"
	if err := c.fs.Remove(tmp); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return 0, fmt.Errorf("collection: export to %s: %w", path, err)
	}
	f, err := c.fs.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("collection: export to %s: %w", path, err)
	}
	var w io.Writer = f
	if tee != nil {
		w = io.MultiWriter(f, tee)
	}
	seq, err := c.Export(w)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.fs.Rename(tmp, path)
	}
	if err == nil {
		err = c.fs.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = c.fs.Remove(tmp)
		return 0, fmt.Errorf("collection: export to %s: %w", path, err)
	}
	return seq, nil
}
