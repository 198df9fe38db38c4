package collection

import (
	"time"

	"github.com/strata-db/strata/go/collection/wal"
)

// Describe returns Info (and the text indexes) in the shape both doors
// show users: the keys of the Python Collection.info() and of the server's
// GET /collections/{name}. Each door adds how it names the collection
// ("path" or "name"). "dim", "metric", "M", "ef_construction" and
// "quantization" are the field ""'s (zero without one); "vectors" lists
// every vector field.
func (c *Collection) Describe() map[string]any {
	in := c.Info()
	var checkpointTime any
	if !in.CheckpointTime.IsZero() {
		checkpointTime = in.CheckpointTime.UTC().Format(time.RFC3339Nano)
	}
	fields := c.TextFields()
	text := make([]map[string]any, len(fields))
	for i, f := range fields {
		text[i] = map[string]any{"field": f.Field, "analyzer": f.Analyzer, "docs": f.Docs, "terms": f.Terms}
	}
	r := in.Recovery
	set := c.fields.Load()
	vectors := make([]map[string]any, len(set.fields))
	for i, f := range set.fields {
		vectors[i] = map[string]any{"name": f.Name, "dim": f.Dim, "metric": f.Metric.String(), "M": f.M,
			"ef_construction": f.EfConstruction, "quantization": f.Quantization.String(),
			"multivector": f.Multivector.String(), "memory": f.Memory.String(), "rescore": f.rescores(), "mapped_segments": f.index.Mapped(),
			"points": f.count(), "tombstones": f.index.Tombstones(),
			"tail_rows": f.tail.Len(), "built_rows": f.tail.Built(), "segments": f.index.Segments()}
	}
	sparseFields := make([]map[string]any, len(set.sparse))
	for i, f := range set.sparse {
		sparseFields[i] = map[string]any{"name": f.Name, "modifier": f.Modifier.String(), "points": f.index.Len()}
	}
	return map[string]any{
		"sparse_vectors": sparseFields,
		"count":          in.Count, "dim": in.Dim, "metric": in.Metric, "M": in.M,
		"ef_construction": in.EfConstruction, "quantization": in.Quantization, "fsync": in.Fsync,
		"seq": in.Seq, "last_checkpoint_seq": in.LastCheckpoint, "last_checkpoint_time": checkpointTime,
		"wal_bytes": in.WALBytes, "snapshot_bytes": in.SnapshotBytes, "tombstones": in.Tombstones,
		"group_commits": in.Groups, "writes_logged": in.Records, "fsyncs": in.Syncs,
		"fsync_seconds": in.SyncSeconds, "checkpoints": in.Checkpoints,
		"checkpoint_seconds": in.CheckpointSecs, "vacuums": in.Vacuums, "vacuum_seconds": in.VacuumSeconds,
		"renumbers": in.Renumbers, "tail_rows": in.TailRows, "built_rows": in.Built, "segments": in.Segments,
		"merging": in.Merging,
		"failed":  in.Failed, "text_fields": text, "vectors": vectors,
		"verification": map[string]any{"state": in.Verification, "error": in.VerifyError, "unverified_bytes": in.Unverified},
		"recovery": map[string]any{
			"snapshot_seq": r.SnapshotSeq, "replayed_records": r.Replayed, "seconds": r.Duration.Seconds(),
			"fallback":  describeFallback(r.Fallback),
			"torn_tail": map[string]any{"file": r.TornFile, "offset": r.TornOffset, "bytes": r.TornBytes, "reason": r.TornReason},
			"repaired": map[string]any{"dropped_records": r.Dropped, "file": r.DroppedFile, "offset": r.DroppedOffset,
				"error": r.Corruption, "lost_seqs": lostSeqs(r.Lost), "salvaged_records": r.Salvaged, "broken_files": brokenFiles(r.Broken)},
		},
	}
}

// lostSeqs shows lost sequence numbers as [from, through] pairs, through
// null where the count is unknown (the log ended in damage).
func lostSeqs(lost []wal.SeqRange) []any {
	out := make([]any, len(lost))
	for i, r := range lost {
		var through any
		if r.Through != 0 {
			through = r.Through
		}
		out[i] = []any{r.From, through}
	}
	return out
}

func brokenFiles(files []string) []string {
	if files == nil {
		return []string{}
	}
	return files
}

// describeFallback shows which snapshot Open fell back from, or nil.
func describeFallback(fb *Fallback) any {
	if fb == nil {
		return nil
	}
	return map[string]any{"from_snapshot_seq": fb.From, "to_snapshot_seq": fb.To, "current_broken": fb.CurrentBroken, "reason": fb.Reason}
}
