package main

import (
	"math/bits"
	"time"
)

// latencies counts request latencies in logarithmic buckets, so that a
// worker records each one with an add and no allocation: every power of
// two of nanoseconds is split into 64 buckets, so a percentile read from
// the bucket's midpoint is within 1/128 (0.8 %) of the true value.
type latencies struct {
	counts [64 << subBucketBits]uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

const subBucketBits = 6

func bucketOf(ns uint64) int {
	if ns < 1<<subBucketBits {
		return int(ns)
	}
	shift := bits.Len64(ns) - subBucketBits - 1
	return (shift+1)<<subBucketBits + int(ns>>shift) - 1<<subBucketBits
}

// bucketMid is the middle of bucket i's range of nanoseconds.
func bucketMid(i int) time.Duration {
	if i < 1<<subBucketBits {
		return time.Duration(i)
	}
	shift := i>>subBucketBits - 1
	low := uint64(i&(1<<subBucketBits-1)+1<<subBucketBits) << shift
	return time.Duration(low + (uint64(1)<<shift-1)/2)
}

func (l *latencies) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	l.counts[bucketOf(uint64(d))]++
	l.n++
	l.sum += d
	l.max = max(l.max, d)
}

func (l *latencies) merge(o *latencies) {
	for i, c := range o.counts {
		l.counts[i] += c
	}
	l.n += o.n
	l.sum += o.sum
	l.max = max(l.max, o.max)
}

// quantile is the latency of rank floor(q*(n-1)) in sorted order (0 if
// nothing was recorded).
func (l *latencies) quantile(q float64) time.Duration {
	if l.n == 0 {
		return 0
	}
	rank := uint64(q * float64(l.n-1))
	var seen uint64
	for i, c := range l.counts {
		seen += c
		if seen > rank {
			return min(bucketMid(i), l.max)
		}
	}
	return l.max
}

func (l *latencies) mean() time.Duration {
	if l.n == 0 {
		return 0
	}
	return l.sum / time.Duration(l.n)
}
