package crashtest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
)

// Tally adds up what a series of crashes verified.
type Tally struct {
	Kills    int
	Acked    int // acknowledged writes verified present
	InFlight int // writes in flight at a kill
	Survived int // of those, found applied
	Failures []string
}

func (t *Tally) add(rep Report) {
	t.Kills++
	t.Acked += rep.Acked
	t.InFlight += rep.InFlight
	t.Survived += rep.Survived
}

// Merge adds o into t.
func (t *Tally) Merge(o Tally) {
	t.Kills += o.Kills
	t.Acked += o.Acked
	t.InFlight += o.InFlight
	t.Survived += o.Survived
	t.Failures = append(t.Failures, o.Failures...)
}

func (t Tally) String() string {
	return fmt.Sprintf("%d kills, %d acknowledged writes verified, %d in flight (%d survived), %d failures",
		t.Kills, t.Acked, t.InFlight, t.Survived, len(t.Failures))
}

// Series runs n independent cases of mode ("" mixes them), seeds seed ..
// seed+n-1, each in a fresh directory under root. A failure is recorded
// with its one-line replay command and the series goes on.
func (d *Driver) Series(root string, n int, seed uint64, mode string, fsync collection.Fsync, quant hnsw.Quantization, log io.Writer) Tally {
	var t Tally
	for i := range n {
		cs := RandomCase(seed+uint64(i), mode, fsync, quant)
		cs.Fields = d.Fields
		d.runCase(filepath.Join(root, fmt.Sprintf("case-%d", cs.Seed)), cs, &t, log)
	}
	return t
}

// runCase crashes cs in a fresh dir and adds what it verified to t; a
// failure is recorded with its one-line replay command and its directory
// kept for a look, a pass's directory removed.
func (d *Driver) runCase(dir string, cs Case, t *Tally, log io.Writer) {
	_, rep, err := d.Crash(dir, cs, Model{})
	if err != nil {
		msg := fmt.Sprintf("%v\n  replay: go run ./go/cmd/crashtest run %s", err, cs)
		t.Failures = append(t.Failures, msg)
		fmt.Fprintln(log, "FAIL", msg)
		return
	}
	t.add(rep)
	os.RemoveAll(dir)
	os.Remove(dir + ".journal")
}

// mergeKillSteps and mergeKillBytes bound MergeSeries' kill points.
const mergeKillSteps, mergeKillBytes = 20, 1000

// MergeSeries runs n cases (seeds seed ..) whose workload, after its
// writes, waits for the idle collection to merge segments and persist
// the merge (Workload.Merge), with the kill point counted from the end
// of the writes: a step or a byte of the checkpoint files (at most
// mergeKillSteps, mergeKillBytes)
// lands inside the merge's manifest switch or the cleanup after it.
func (d *Driver) MergeSeries(root string, n int, seed uint64, fsync collection.Fsync, quant hnsw.Quantization, log io.Writer) Tally {
	var t Tally
	for i := range n {
		s := seed + uint64(i)
		cs := RandomCase(s, ModeStep, fsync, quant)
		cs.Fields, cs.Merge, cs.Ops = d.Fields, true, 15 // 15 ops a writer, three rounds
		rng := rand.New(rand.NewPCG(s, 0x3e76e))
		if i%2 == 0 {
			cs.N = 1 + rng.Int64N(mergeKillSteps)
		} else {
			cs.Mode, cs.Pattern, cs.N = ModeByte, PatternSnapshot, 1+rng.Int64N(mergeKillBytes)
		}
		d.runCase(filepath.Join(root, fmt.Sprintf("merge-%d", cs.Seed)), cs, &t, log)
	}
	return t
}

// Chain crashes one directory n times with cases drawn from seed+step:
// later kills land in recoveries and checkpoints of earlier crashes'
// leftovers. It stops at the first failure.
func (d *Driver) Chain(dir string, n int, seed uint64, fsync collection.Fsync, quant hnsw.Quantization, log io.Writer) Tally {
	var t Tally
	base := Model{}
	next := uint64(1)
	for step := range n {
		cs := RandomCase(seed+uint64(step), "", fsync, quant)
		cs.FirstOp, cs.Fields = next, d.Fields
		// Small step numbers land in the recovery of the last crash.
		if step%4 == 3 {
			cs.Mode, cs.N, cs.Pattern = ModeStep, int64(1+step%7), ""
		}
		model, rep, err := d.Crash(dir, cs, base)
		if err != nil {
			msg := fmt.Sprintf("chain step %d: %v\n  replay: go run ./go/cmd/crashtest chain -seed %d -steps %d -fsync %s -quant %s",
				step, err, seed, step+1, fsync, quant)
			if d.Fields {
				msg += " -fields"
			}
			t.Failures = append(t.Failures, msg)
			fmt.Fprintln(log, "FAIL", msg)
			return t
		}
		t.add(rep)
		base = model
		events, _ := ReadJournal(dir + ".journal")
		for _, ev := range events {
			if ev.Attempt != nil && ev.Attempt.ID >= next {
				next = ev.Attempt.ID + 1
			}
		}
	}
	return t
}
