// Command crashtest crashes go/collection workloads and checks that no
// acknowledged write is lost (see package crashtest).
//
//	crashtest run   -seed S -mode time|byte|step|end -n N [-pattern RE] [-fsync F] [-quant Q] ...
//	crashtest chain -seed S -steps K [-fsync F] [-quant Q]
//	(-fields: the two-field workload, with partial writes)
//	crashtest soak  -kills K   (mixed modes across fsync policies and quantizations)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/crashtest"
	"github.com/strata-db/strata/go/hnsw"
)

func main() {
	crashtest.RunChildIfAsked()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crashtest run|chain|soak [flags]")
		os.Exit(2)
	}
	fl := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	seed := fl.Uint64("seed", 1, "case seed")
	mode := fl.String("mode", "", "kill mode: time, byte, step, end (run)")
	n := fl.Int64("n", 0, "kill point: µs (time), byte offset (byte), step (step)")
	pattern := fl.String("pattern", crashtest.PatternWAL, "byte mode: regexp of counted file paths")
	fsyncName := fl.String("fsync", "always", "fsync policy")
	quantName := fl.String("quant", "none", "quantization: none or sq8")
	workers := fl.Int("workers", 4, "writer goroutines")
	ops := fl.Int("ops", 40, "ops per writer")
	firstOp := fl.Uint64("first-op", 1, "first op id")
	steps := fl.Int("steps", 50, "chain length")
	kills := fl.Int("kills", 10000, "soak: total kills")
	dir := fl.String("dir", "", "scratch directory (default: a new temporary one)")
	fields := fl.Bool("fields", false, "the two-field workload (a dense and a multivector field, partial writes)")
	merge := fl.Bool("merge", false, "run: after the writes, wait for the idle merge; the kill point counts from there")
	fl.Parse(os.Args[2:])
	fsync, err := collection.ParseFsync(*fsyncName)
	if err != nil {
		fatal(err)
	}
	quant := hnsw.QuantNone
	if *quantName == "sq8" {
		quant = hnsw.QuantSQ8
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "crashtest-"); err != nil {
			fatal(err)
		}
		defer os.RemoveAll(*dir)
	}
	exe, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	d := &crashtest.Driver{Command: []string{exe}, Fields: *fields}
	var t crashtest.Tally
	switch os.Args[1] {
	case "run":
		cs := crashtest.RandomCase(*seed, *mode, fsync, quant)
		cs.Workers, cs.Ops, cs.FirstOp, cs.Fields, cs.Merge = *workers, *ops, *firstOp, *fields, *merge
		if *n != 0 {
			cs.N = *n
		}
		if cs.Mode == crashtest.ModeByte {
			cs.Pattern = *pattern
		}
		_, rep, err := d.Crash(filepath.Join(*dir, "case"), cs, crashtest.Model{})
		if err != nil {
			fatal(fmt.Errorf("%v\n  case: %s", err, cs))
		}
		fmt.Printf("ok: %d acknowledged writes verified, %d in flight, %d survived; recall %.3f (fresh %.3f)\n",
			rep.Acked, rep.InFlight, rep.Survived, rep.Recall, rep.Fresh)
		return
	case "chain":
		t = d.Chain(filepath.Join(*dir, "chain"), *steps, *seed, fsync, quant, os.Stderr)
	case "soak":
		t = soak(d, *dir, *kills, *seed)
	default:
		fatal(fmt.Errorf("unknown subcommand %q", os.Args[1]))
	}
	fmt.Println(t)
	if len(t.Failures) > 0 {
		os.Exit(1)
	}
}

// soak spreads kills over every fsync policy and both quantizations, a
// tenth of them in chains of 50.
func soak(d *crashtest.Driver, dir string, kills int, seed uint64) crashtest.Tally {
	var t crashtest.Tally
	configs := []struct {
		fsync collection.Fsync
		quant hnsw.Quantization
	}{{collection.FsyncAlways, hnsw.QuantNone}, {collection.FsyncBatch, hnsw.QuantNone},
		{collection.FsyncNever, hnsw.QuantNone}, {collection.FsyncAlways, hnsw.QuantSQ8}}
	for round := 0; t.Kills+len(t.Failures) < kills; round++ {
		cfg := configs[round%len(configs)]
		s := seed + uint64(round)*1_000_000
		t.Merge(d.Series(dir, 90, s, "", cfg.fsync, cfg.quant, os.Stderr))
		t.Merge(d.Chain(filepath.Join(dir, fmt.Sprintf("chain-%d", round)), 10, s+500_000, cfg.fsync, cfg.quant, os.Stderr))
		fmt.Fprintf(os.Stderr, "round %d (%s, %s): %s\n", round, cfg.fsync, cfg.quant, t)
	}
	return t
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "crashtest:", err)
	os.Exit(1)
}
