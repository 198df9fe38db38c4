package collection

import (
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
// Upsert call: group commit makes it < 1 with concurrent writers) and,
// for single rows, p50-us (latency of one Upsert). At a load average of
// 10-60 wall rates say little; CPU time per row and fsyncs per ack are
// the figures to compare.

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
	b.Helper()
	c, err := Create(filepath.Join(b.TempDir(), "c"), Options{Dim: ackDim, Metric: metric.L2, Seed: 1}, Tuning{CheckpointBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	if !build {
		c.stopBuilder()
	}
	return c
}

// processCPU is the process's user + system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAckBatch upserts batches of 1,000 rows of 512-d.
func BenchmarkAckBatch(b *testing.B) {
	const batch = 1000
	data := ackData(batch * 8)
	for _, build := range []bool{false, true} {
		b.Run(fmt.Sprintf("build=%s", onOff(build)), func(b *testing.B) {
			c := ackCollection(b, build)
			defer c.CloseForDrop()
			ids := make([]ID, batch)
			syncs0, cpu0 := c.stats.Syncs.Load(), processCPU()
			b.ResetTimer()
			for i := range b.N {
				for j := range ids {
					ids[j] = IntID(uint64(i*batch + j))
				}
				at := (i % 8) * batch * ackDim
				if err := c.Upsert(ids, data[at:at+batch*ackDim], nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			rows := float64(b.N * batch)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/rows, "cpu-us/row")
			b.ReportMetric(float64(c.stats.Syncs.Load()-syncs0)/float64(b.N), "fsyncs/ack")
		})
	}
}

// BenchmarkAckSingle upserts one row per call from 1 and 8 goroutines.
func BenchmarkAckSingle(b *testing.B) {
	data := ackData(1024)
	for _, build := range []bool{false, true} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("build=%s/writers=%d", onOff(build), writers), func(b *testing.B) {
				c := ackCollection(b, build)
				defer c.CloseForDrop()
				per := max(1, b.N/writers)
				lat := make([][]time.Duration, writers)
				syncs0, cpu0 := c.stats.Syncs.Load(), processCPU()
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						lat[w] = make([]time.Duration, 0, per)
						ids := make([]ID, 1)
						for i := range per {
							ids[0] = IntID(uint64(w*per + i))
							row := (i % 1024) * ackDim
							t0 := time.Now()
							if err := c.Upsert(ids, data[row:row+ackDim], nil); err != nil {
								b.Error(err)
								return
							}
							lat[w] = append(lat[w], time.Since(t0))
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				rows := float64(per * writers)
				all := slices.Concat(lat...)
				slices.Sort(all)
				b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/rows, "cpu-us/row")
				b.ReportMetric(float64(c.stats.Syncs.Load()-syncs0)/rows, "fsyncs/ack")
				b.ReportMetric(float64(all[len(all)/2].Nanoseconds())/1e3, "p50-us")
			})
		}
	}
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
