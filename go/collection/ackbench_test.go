package collection

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/go/metric"
	"golang.org/x/sys/unix"
)

// The ack path (issue 24): what a durable write (fsync "always") costs
// between Upsert and its return, 512-d. Each benchmark runs twice: with
// the builder stopped (build=off: the ack path alone, the tail grows
// without backpressure) and with it running as it does in use (build=on:
// the graph work shares the cores and the tail bound applies). Reported:
// rows/s (wall), cpu-us/row (the process's user+system CPU time per row
// acknowledged, every goroutine counted), fsyncs/ack (log fsyncs per
// Upsert call: group commit makes it < 1 with concurrent writers),
// fsync-us (the log's mean fdatasync time: how the shared disk behaved
// during the run) and, for single rows, p50-us, p90-us and p99-us
// (latency of one Upsert), vcsw/ack and ivcsw/ack (the process's
// voluntary and involuntary context switches per row). At a load average of 10-60 wall rates say
// little; CPU time per row and fsyncs per ack are the figures to compare,
// and, for single rows, off-disk-p50-us and off-disk-p90-us: the latency
// of an Upsert less the time the log's fsyncs took while it waited (the
// disk is shared with other work and its fsyncs ranged from 0.15 to 2.5
// ms within one run; what is left is the ack path's own queueing, CPU
// time and scheduling, which the builder's yields and the logger's
// handoffs change).

const ackDim = 512

func ackData(rows int) []float32 {
	rng := rand.New(rand.NewPCG(7, 7))
	v := make([]float32, rows*ackDim)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

func ackCollection(b *testing.B, build bool) *Collection {
	return ackCollectionTuned(b, build, Tuning{CheckpointBytes: -1})
}

func ackCollectionTuned(b *testing.B, build bool, t Tuning) *Collection {
	b.Helper()
	c, err := Create(filepath.Join(b.TempDir(), "c"), Options{Dim: ackDim, Metric: metric.L2, Seed: 1}, t)
	if err != nil {
		b.Fatal(err)
	}
	if !build {
		c.stopBuilder()
	}
	return c
}

// fsyncMicros is the mean time of the log's fsyncs since syncs0 and nanos0.
func fsyncMicros(c *Collection, syncs0, nanos0 int64) float64 {
	n := c.stats.Syncs.Load() - syncs0
	if n == 0 {
		return 0
	}
	return float64(c.stats.SyncNanos.Load()-nanos0) / float64(n) / 1e3
}

// fsyncSpans is an Observer that keeps the wall-time span of every log
// fsync, so that an ack's latency can be split into the disk's part and
// the rest.
type fsyncSpans struct {
	mu    sync.Mutex
	spans [][2]int64 // [start, end) in UnixNano, in order (one logger)
}

func (o *fsyncSpans) Fsync(d time.Duration) {
	end := time.Now().UnixNano()
	o.mu.Lock()
	o.spans = append(o.spans, [2]int64{end - int64(d), end})
	o.mu.Unlock()
}
func (o *fsyncSpans) Group(int)                {}
func (o *fsyncSpans) Checkpoint(time.Duration) {}

// offDisk returns, for each [t0, t1) span, its length less the time fsyncs
// ran inside it.
func (o *fsyncSpans) offDisk(acks [][2]int64) []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]time.Duration, len(acks))
	for i, a := range acks {
		d := a[1] - a[0]
		j, _ := slices.BinarySearchFunc(o.spans, a[0], func(s [2]int64, t int64) int {
			return cmp.Compare(s[1], t)
		})
		for ; j < len(o.spans) && o.spans[j][0] < a[1]; j++ {
			d -= min(a[1], o.spans[j][1]) - max(a[0], o.spans[j][0])
		}
		out[i] = time.Duration(d)
	}
	return out
}

// processCPU is the process's user + system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// contextSwitches is the process's voluntary context switches (a thread
// blocked: a futex wait of an idle M, an fsync) and involuntary ones (the
// kernel took the CPU away), every thread counted. On a loaded machine
// each voluntary switch on the ack path is a thread that must wait for a
// CPU again before the write can go on.
func contextSwitches() (voluntary, involuntary int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Nvcsw, ru.Nivcsw
}

// upsertBatches upserts n batches of batch rows with ids first,
// first+1, ...; data holds one or more batches' rows, used in turn.
func upsertBatches(b *testing.B, c *Collection, data []float32, batch int, first uint64, n int) {
	ids := make([]ID, batch)
	size := batch * ackDim
	for i := range n {
		for j := range ids {
			ids[j] = IntID(first + uint64(i*batch+j))
		}
		at := i % (len(data) / size) * size
		if err := c.Upsert(ids, data[at:at+size], nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAckBatch upserts batches of 1,000 rows of 512-d.
func BenchmarkAckBatch(b *testing.B) {
	const batch = 1000
	data := ackData(batch * 8)
	for _, build := range []bool{false, true} {
		b.Run(fmt.Sprintf("build=%s", onOff(build)), func(b *testing.B) {
			c := ackCollection(b, build)
			defer c.CloseForDrop()
			syncs0, nanos0, cpu0 := c.stats.Syncs.Load(), c.stats.SyncNanos.Load(), processCPU()
			b.ResetTimer()
			upsertBatches(b, c, data, batch, 0, b.N)
			b.StopTimer()
			rows := float64(b.N * batch)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/rows, "cpu-us/row")
			b.ReportMetric(float64(c.stats.Syncs.Load()-syncs0)/float64(b.N), "fsyncs/ack")
			b.ReportMetric(fsyncMicros(c, syncs0, nanos0), "fsync-us")
		})
	}
}

// BenchmarkAckSingle upserts one row per call from 1 and 8 goroutines,
// with the builder stopped (build=off), running (build=on: it builds the
// rows the writers add, a few at a time) and busy (build=busy: 8,000 rows
// upserted in batches before the timer starts, with the tail's bound out
// of the way, so that the builder is inside its long steps of 4,096 rows
// while the acks run; its cpu-us/row counts that work too).
func BenchmarkAckSingle(b *testing.B) {
	data := ackData(1024)
	batch := ackData(1000)
	for _, build := range []string{"off", "on", "busy"} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("build=%s/writers=%d", build, writers), func(b *testing.B) {
				spans := &fsyncSpans{}
				t := Tuning{CheckpointBytes: -1, Observer: spans}
				if build == "busy" {
					t.TailRows, t.TailBytes = 1<<30, 1<<40
				}
				c := ackCollectionTuned(b, build != "off", t)
				defer c.CloseForDrop()
				if build == "busy" {
					upsertBatches(b, c, batch, 1000, 1<<32, 8)
				}
				per := max(1, b.N/writers)
				lat := make([][]time.Duration, writers)
				at := make([][][2]int64, writers)
				syncs0, nanos0, cpu0 := c.stats.Syncs.Load(), c.stats.SyncNanos.Load(), processCPU()
				vol0, invol0 := contextSwitches()
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						lat[w] = make([]time.Duration, 0, per)
						at[w] = make([][2]int64, 0, per)
						ids := make([]ID, 1)
						for i := range per {
							ids[0] = IntID(uint64(w*per + i))
							row := (i % 1024) * ackDim
							t0 := time.Now()
							if err := c.Upsert(ids, data[row:row+ackDim], nil); err != nil {
								b.Error(err)
								return
							}
							t1 := time.Now()
							lat[w] = append(lat[w], t1.Sub(t0))
							at[w] = append(at[w], [2]int64{t0.UnixNano(), t1.UnixNano()})
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				rows := float64(per * writers)
				vol, invol := contextSwitches()
				b.ReportMetric(float64(vol-vol0)/rows, "vcsw/ack")
				b.ReportMetric(float64(invol-invol0)/rows, "ivcsw/ack")
				all := slices.Concat(lat...)
				slices.Sort(all)
				b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/rows, "cpu-us/row")
				b.ReportMetric(float64(c.stats.Syncs.Load()-syncs0)/rows, "fsyncs/ack")
				b.ReportMetric(fsyncMicros(c, syncs0, nanos0), "fsync-us")
				b.ReportMetric(float64(all[len(all)/2].Nanoseconds())/1e3, "p50-us")
				b.ReportMetric(float64(all[len(all)*9/10].Nanoseconds())/1e3, "p90-us")
				b.ReportMetric(float64(all[len(all)*99/100].Nanoseconds())/1e3, "p99-us")
				off := spans.offDisk(slices.Concat(at...))
				slices.Sort(off)
				b.ReportMetric(float64(off[len(off)/2].Nanoseconds())/1e3, "off-disk-p50-us")
				b.ReportMetric(float64(off[len(off)*9/10].Nanoseconds())/1e3, "off-disk-p90-us")
			})
		}
	}
}

// BenchmarkAckBuild is the builder's own rate, which a yield on its part
// must not halve: b.N batches of 1,000 rows upserted with the tail's bound
// out of the way (so no write waits for the builder), then the time until
// the builder has moved every row into the graph. Reported: build-rows/s
// (rows over the wall time from the first upsert to the last row built)
// and cpu-us/row (the whole process's CPU time, acks included).
func BenchmarkAckBuild(b *testing.B) {
	const batch = 1000
	data := ackData(batch * 8)
	c := ackCollectionTuned(b, true, Tuning{CheckpointBytes: -1, TailRows: 1 << 30, TailBytes: 1 << 40})
	defer c.CloseForDrop()
	cpu0 := processCPU()
	b.ResetTimer()
	upsertBatches(b, c, data, batch, 0, b.N)
	c.waitBuilt()
	b.StopTimer()
	rows := float64(b.N * batch)
	b.ReportMetric(rows/b.Elapsed().Seconds(), "build-rows/s")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/rows, "cpu-us/row")
}

// BenchmarkFsync is the disk's floor for a durable write, in the
// directory the other benchmarks write to: write 2 KiB (one 512-d row)
// and sync. An ack with fsync "always" cannot be faster than this;
// concurrent writers are only faster per row by sharing it. The modes are
// the ways a log file can be laid out (issue 24's preallocated log):
//
//   - append/fsync, append/fdatasync: the file grows with every write
//     (log format 1), so every sync commits a size change to the journal.
//   - fallocate/fdatasync: the whole file allocated up front with
//     fallocate(2); ext4 marks the extents unwritten, and the first write
//     into each converts it, a metadata change the sync must commit.
//   - zeroed/fdatasync: the whole file written with zeros and synced up
//     front: every later write overwrites written blocks, and fdatasync has
//     no metadata to commit.
//   - zerofill/fdatasync: what the log does (format 2): zeros written 1 MiB
//     ahead of the records (not synced on their own: the next fdatasync
//     carries them), so a sync commits metadata once per MiB;
//     fallocate+zerofill the same in a file allocated up front.
func BenchmarkFsync(b *testing.B) {
	const zeroChunk = 1 << 20
	for _, mode := range []string{"append/fsync", "append/fdatasync", "fallocate/fdatasync", "zeroed/fdatasync", "zerofill/fdatasync", "fallocate+zerofill/fdatasync"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "f"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4*ackDim)
			total := int64(len(buf) * b.N)
			switch mode {
			case "fallocate/fdatasync", "fallocate+zerofill/fdatasync":
				err = unix.Fallocate(int(f.Fd()), 0, 0, total)
			case "zeroed/fdatasync":
				if _, err = f.Write(make([]byte, total)); err == nil {
					_, err = f.Seek(0, 0)
				}
			}
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				b.Fatal(err)
			}
			zeros := make([]byte, zeroChunk)
			var off, filled int64
			lat := make([]time.Duration, 0, b.N)
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if strings.HasSuffix(mode, "zerofill/fdatasync") && off+int64(len(buf)) > filled {
					if _, err := f.WriteAt(zeros, filled); err != nil {
						b.Fatal(err)
					}
					filled += zeroChunk
				}
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
				off += int64(len(buf))
				if mode == "append/fsync" {
					err = f.Sync()
				} else {
					err = unix.Fdatasync(int(f.Fd()))
				}
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-us")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
