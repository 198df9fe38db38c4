package snapshot

import "fmt"

// MergeStateRuns folds a snapshot's state runs, oldest first, into the
// whole state they describe: for each key its entry in the newest run
// that has it (a deleted entry: the key holds no point). It checks what
// no single run can: the counters (Next) never go back, and no string
// id belongs to two live keys. With no runs the state is empty.
func MergeStateRuns(runs []StateRun) (Metadata, IDTable, Expiries, error) {
	md := Metadata{Offsets: []uint64{0}}
	table := IDTable{Next: FirstStringKey}
	var exp Expiries
	total := 0
	for i := range runs {
		if i > 0 && runs[i].Next < runs[i-1].Next {
			return md, table, exp, fmt.Errorf("%w: state run %d: next key %d below the previous run's %d",
				ErrCorrupt, i, runs[i].Next, runs[i-1].Next)
		}
		table.Next = runs[i].Next
		total += runs[i].Len()
	}
	data := 0
	for i := range runs {
		data += len(runs[i].Data)
	}
	md.IDs = make([]uint64, 0, total)
	md.Offsets = make([]uint64, 1, total+1)
	md.Data = make([]byte, 0, data) // an upper bound: entries of older runs are superseded
	seen := map[string]struct{}{}
	err := eachNewest(runs, func(win int, key uint64, at int) error {
		run := &runs[win]
		if run.Deleted[at] != 0 {
			return nil
		}
		md.IDs = append(md.IDs, key)
		md.Data = append(md.Data, run.Data[run.Offsets[at]:run.Offsets[at+1]]...)
		md.Offsets = append(md.Offsets, uint64(len(md.Data)))
		if s := run.Strings[at]; s != "" {
			if _, dup := seen[s]; dup {
				return fmt.Errorf("%w: state run %d: string id %q held by two keys", ErrCorrupt, win, s)
			}
			seen[s] = struct{}{}
			table.Keys = append(table.Keys, key)
			table.Strings = append(table.Strings, s)
		}
		if e := run.Expires[at]; e > 0 {
			exp.Keys = append(exp.Keys, key)
			exp.At = append(exp.At, e)
		}
		return nil
	})
	return md, table, exp, err
}

// eachNewest calls fn, in ascending key order, with each key of the runs
// (oldest first), the newest run holding it and its entry there, until fn
// fails.
func eachNewest(runs []StateRun, fn func(run int, key uint64, at int) error) error {
	heads := make([]int, len(runs))
	for {
		// The smallest key at the heads; the newest run holding it wins.
		win := -1
		var key uint64
		for r := range runs {
			if heads[r] < runs[r].Len() {
				if k := runs[r].Keys[heads[r]]; win < 0 || k <= key {
					win, key = r, k
				}
			}
		}
		if win < 0 {
			return nil
		}
		at := heads[win]
		for r := range runs {
			if heads[r] < runs[r].Len() && runs[r].Keys[heads[r]] == key {
				heads[r]++
			}
		}
		if err := fn(win, key, at); err != nil {
			return err
		}
	}
}

// FoldStateRuns folds state runs, oldest first, into one run: for each
// key the entry of the newest run that has it, and Next of the newest
// run. A fold that reaches a snapshot's oldest run passes live, and the
// deleted entries are left out (nothing older is left for them to hide).
func FoldStateRuns(runs []StateRun, live bool) StateRun {
	var out StateRun
	total, data := 0, 0
	for i := range runs {
		total += runs[i].Len()
		data += len(runs[i].Data)
		out.Next = runs[i].Next
	}
	out.Keys = make([]uint64, 0, total)
	out.Deleted = make([]byte, 0, total)
	out.Offsets = make([]uint64, 1, total+1)
	out.Data = make([]byte, 0, data) // an upper bound, as in MergeStateRuns
	out.Strings = make([]string, 0, total)
	out.Expires = make([]int64, 0, total)
	eachNewest(runs, func(win int, key uint64, at int) error {
		run := &runs[win]
		if live && run.Deleted[at] != 0 {
			return nil
		}
		out.Keys = append(out.Keys, key)
		out.Deleted = append(out.Deleted, run.Deleted[at])
		out.Data = append(out.Data, run.Data[run.Offsets[at]:run.Offsets[at+1]]...)
		out.Offsets = append(out.Offsets, uint64(len(out.Data)))
		out.Strings = append(out.Strings, run.Strings[at])
		out.Expires = append(out.Expires, run.Expires[at])
		return nil
	})
	return out
}
