package crashtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/vfs"
)

// Kill modes of a Case.
const (
	ModeTime = "time" // the driver SIGKILLs the workload N µs after starting it
	ModeByte = "byte" // the workload tears the write crossing byte N of files matching Pattern and dies
	ModeStep = "step" // the workload dies before its Nth step (see KillFS)
	ModeEnd  = "end"  // the workload dies once it has made all its ops
)

// Case is one crash: a workload run in a child process, killed at a point.
type Case struct {
	Workload
	Mode    string
	N       int64
	Pattern string // ModeByte: regexp of the file paths whose bytes count
}

// String is the case as crashtest flags, for replay commands.
func (cs Case) String() string {
	s := fmt.Sprintf("-seed %d -mode %s -n %d -pattern '%s' -fsync %s -quant %s -workers %d -ops %d -first-op %d",
		cs.Seed, cs.Mode, cs.N, cs.Pattern, cs.Fsync, cs.Quant, cs.Workers, cs.Ops, cs.FirstOp)
	if cs.Fields {
		s += " -fields"
	}
	if cs.Merge {
		s += " -merge"
	}
	return s
}

// Patterns for ModeByte.
const (
	PatternWAL = `\.wal$`
	// PatternSnapshot counts the bytes of checkpoints: the snapshot
	// directories and the segment files (package segment), so that byte
	// kills land inside seals' segment writes, deletes files and manifests.
	PatternSnapshot = `/(snapshots|segments)/`
)

// RandomCase draws a case of the given mode ("" draws one) from seed.
func RandomCase(seed uint64, mode string, fsync collection.Fsync, quant hnsw.Quantization) Case {
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	if mode == "" {
		mode = []string{ModeTime, ModeByte, ModeStep, ModeByte, ModeTime}[rng.IntN(5)]
	}
	cs := Case{Workload: Workload{Seed: seed, Workers: 4, Ops: 40, Dim: 8, Quant: quant, Fsync: fsync,
		CheckpointEvery: time.Duration(5+rng.IntN(30)) * time.Millisecond, CheckpointBytes: 16 << 10,
		SegmentBytes: 8 << 10, Readers: 1}, Mode: mode}
	switch mode {
	case ModeTime:
		cs.N = 1 + rng.Int64N(250_000)
	case ModeByte:
		cs.Pattern, cs.N = PatternWAL, 1+rng.Int64N(50_000)
		if rng.IntN(3) == 0 {
			cs.Pattern, cs.N = PatternSnapshot, 1+rng.Int64N(150_000)
		}
	case ModeStep:
		cs.N = 1 + rng.Int64N(80)
	}
	return cs
}

// childEnv carries a child's orders: a childOrders in JSON.
const childEnv = "STRATA_CRASHTEST_CHILD"

type childOrders struct {
	Case    Case
	Dir     string
	Journal string
}

// RunChildIfAsked runs the workload and never returns if this process is
// a workload child (the environment says so); otherwise it returns at
// once. Call it first thing in main or TestMain.
func RunChildIfAsked() {
	raw := os.Getenv(childEnv)
	if raw == "" {
		return
	}
	var o childOrders
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintf(os.Stderr, "crashtest child: bad orders: %v\n", err)
		os.Exit(2)
	}
	if err := runChild(o); err != nil {
		fmt.Fprintf(os.Stderr, "crashtest child: %v\n", err)
		os.Exit(3)
	}
	die() // ModeEnd, or a kill point never reached: crash all the same
}

func runChild(o childOrders) error {
	var pattern *regexp.Regexp
	if o.Case.Pattern != "" {
		var err error
		if pattern, err = regexp.Compile(o.Case.Pattern); err != nil {
			return err
		}
	}
	var atByte, atStep int64
	switch o.Case.Mode {
	case ModeByte:
		atByte = o.Case.N
	case ModeStep:
		atStep = o.Case.N
	}
	fsys := NewKillFS(vfs.Default, pattern, atByte, atStep)
	if o.Case.Merge {
		// The kill point counts from the end of the writes: it lands in
		// the idle merge's checkpoint (or the end, if it writes less).
		fsys.Disarm()
		o.Case.idle = fsys.Arm
	}
	j, err := NewJournal(o.Journal, true)
	if err != nil {
		return err
	}
	c, err := o.Case.OpenOrCreate(fsys, o.Dir)
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	return o.Case.Run(c, j)
}

// Driver runs cases in child processes: Command re-executed with the
// child environment (a test binary, or the crashtest command).
type Driver struct {
	Command []string
	// Fields makes Series and Chain run the two-field workload
	// (Workload.Fields).
	Fields bool
}

// Crash runs cs against dir (created if empty) in a child, which dies by
// SIGKILL, then checks a copy of what it left against base. The directory
// itself is left as the crash left it, so a chain can go on crashing it.
func (d *Driver) Crash(dir string, cs Case, base Model) (Model, Report, error) {
	journal := dir + ".journal"
	os.Remove(journal)
	orders, err := json.Marshal(childOrders{Case: cs, Dir: dir, Journal: journal})
	if err != nil {
		return nil, Report{}, err
	}
	cmd := exec.Command(d.Command[0], d.Command[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+string(orders))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, Report{}, err
	}
	if cs.Mode == ModeTime {
		timer := time.AfterFunc(time.Duration(cs.N)*time.Microsecond, func() { cmd.Process.Kill() })
		defer timer.Stop()
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return nil, Report{}, fmt.Errorf("%w: exited without being killed (%v): %s", ErrWorkload, err, lastLines(stderr.String()))
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return nil, Report{}, fmt.Errorf("%w: %v: %s", ErrWorkload, err, lastLines(stderr.String()))
	}
	events, err := ReadJournal(journal)
	if err != nil {
		return nil, Report{}, err
	}
	if !collection.Exists(nil, dir) {
		// Killed before Create wrote CURRENT: nothing may have been acked.
		if len(events) != 0 {
			return nil, Report{}, fmt.Errorf("%w: %d journal events but no collection", ErrLost, len(events))
		}
		return base, Report{}, nil
	}
	cut := Cut{Acked: len(events), Attempted: len(events)}
	state, rep, err := CheckCopy(dir, base, events, cut)
	if err == nil {
		err = CheckFallback(dir, base, events, cut)
	}
	return state, rep, err
}

// CheckCopy opens a copy of dir (recovering it), verifies it, and removes
// the copy.
func CheckCopy(dir string, base Model, events []Event, cut Cut) (Model, Report, error) {
	check := dir + ".check"
	os.RemoveAll(check)
	defer os.RemoveAll(check)
	if err := copyTree(dir, check); err != nil {
		return nil, Report{}, err
	}
	c, err := collection.Open(check, collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		return nil, Report{}, fmt.Errorf("recovery: %w", err)
	}
	defer c.Close()
	return Verify(c, base, events, cut)
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if d.Name() == "LOCK" {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
