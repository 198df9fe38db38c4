package segment

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sealedOfSizes returns Graphs whose sealed segments hold sizes live keys,
// oldest first, and an empty active graph.
func sealedOfSizes(t *testing.T, sizes ...int) *Graphs {
	t.Helper()
	g := testGraphs(t)
	rng := rand.New(rand.NewPCG(2, 2))
	key := uint64(0)
	for _, n := range sizes {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i], key = key, key+1
		}
		if err := g.Add(vecs(rng, n), keys, 1); err != nil {
			t.Fatal(err)
		}
		if err := g.SealActive(); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func sizesOf(segs []*Graph) []int {
	var out []int
	for _, s := range segs {
		out = append(out, s.index.Len())
	}
	return out
}

// TestIdleMergeRebuildsNoLargeSegmentForABurst: with no write coming,
// the policy merges segments of similar sizes only (each at most twice
// the others of the merge together), so a small burst beside large
// segments waits for others of its kind instead of rebuilding the
// second largest with it (the policy before merged all but the largest
// at every idle look), and it never proposes a merge of one segment.
func TestIdleMergeRebuildsNoLargeSegmentForABurst(t *testing.T) {
	// Sizes of distinct tiers (Factor 4), fewer than MaxSegments: only
	// the idle rule merges them.
	policy := MergePolicy{Factor: 4, MaxSegments: 8, TombstoneRatio: -1}
	for _, c := range []struct {
		sizes, merged, after []int
	}{
		{[]int{300, 5, 70}, nil, []int{300, 70, 5}},
		{[]int{300, 70, 5, 5, 5}, []int{5, 5, 5}, []int{300, 70, 15}},
		{[]int{300, 70, 260}, []int{260, 300}, []int{70, 560}},
		{[]int{300, 70}, nil, []int{300, 70}},
		{[]int{300}, nil, []int{300}},
	} {
		g := sealedOfSizes(t, c.sizes...)
		if srcs, _ := g.Plan(policy); srcs != nil {
			t.Fatalf("%v: not idle, the policy merges %v", c.sizes, sizesOf(srcs))
		}
		idle := policy
		idle.Idle = true
		srcs, rewrite := g.Plan(idle)
		if !slices.Equal(sizesOf(srcs), c.merged) || rewrite {
			t.Fatalf("%v: idle merge of %v (rewrite %v), want %v", c.sizes, sizesOf(srcs), rewrite, c.merged)
		}
		if srcs != nil {
			if err := g.Merge(srcs, 1); err != nil {
				t.Fatal(err)
			}
		}
		after := sizesOf(g.Sealed())
		slices.Sort(after)
		want := slices.Sorted(slices.Values(c.after))
		if !slices.Equal(after, want) {
			t.Fatalf("%v: after the merge %v, want %v", c.sizes, after, want)
		}
		if srcs, _ := g.Plan(idle); srcs != nil {
			t.Fatalf("%v: a second idle look merges %v again", c.sizes, sizesOf(srcs))
		}
		if g.Len() != sum(c.sizes) {
			t.Fatalf("%v: %d live keys after merging", c.sizes, g.Len())
		}
	}
}

// TestBurstsRewriteEachKeyLogarithmically: 40 bursts of 50 keys, each
// sealed and followed by idle looks that merge until the policy has
// nothing left, rewrite each key O(log) times (each merge makes its keys'
// segment 1.5 times larger or more) and keep the count small; the
// policy before rebuilt the second-largest segment after every burst
// (12,400 keys rewritten for these 2,000, at most 2 segments; this one
// 7,000, at most 4).
func TestBurstsRewriteEachKeyLogarithmically(t *testing.T) {
	policy := MergePolicy{Factor: 10, MaxSegments: 12, TombstoneRatio: -1, Idle: true}
	g := testGraphs(t)
	rng := rand.New(rand.NewPCG(4, 4))
	const bursts, burst = 40, 50
	rewritten, key, most := 0, uint64(0), 0
	for range bursts {
		keys := make([]uint64, burst)
		for i := range keys {
			keys[i], key = key, key+1
		}
		if err := g.Add(vecs(rng, burst), keys, 1); err != nil {
			t.Fatal(err)
		}
		if err := g.SealActive(); err != nil {
			t.Fatal(err)
		}
		for {
			srcs, _ := g.Plan(policy)
			if srcs == nil {
				break
			}
			rewritten += sum(sizesOf(srcs))
			if err := g.Merge(srcs, 1); err != nil {
				t.Fatal(err)
			}
		}
		most = max(most, len(g.Sealed()))
	}
	// log1.5(40) < 10 rewrites of each key.
	if rewritten > 10*bursts*burst || most > 8 || g.Len() != bursts*burst {
		t.Fatalf("%d keys rewritten for %d (at most %d), at most %d segments (8), %d live",
			rewritten, bursts*burst, 10*bursts*burst, most, g.Len())
	}
	t.Logf("%d keys rewritten for %d ingested, at most %d segments, %d at the end", rewritten, bursts*burst, most, len(g.Sealed()))
}

// TestMergeBudgetBoundsEveryMerge: with MaxMergedKeys, no merge produces
// more live keys than the bound (what a merge holds beside the segments
// it replaces), and segments of half the bound or more merge with
// nothing: ten seals of 200 under a bound of 1,000 settle at two of
// 1,000, each key rewritten once.
func TestMergeBudgetBoundsEveryMerge(t *testing.T) {
	policy := MergePolicy{Factor: 10, MaxSegments: 12, TombstoneRatio: -1, MaxMergedKeys: 1000, Idle: true}
	g := sealedOfSizes(t, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200)
	rewritten := 0
	for {
		srcs, _ := g.Plan(policy)
		if srcs == nil {
			break
		}
		if n := sum(sizesOf(srcs)); n > policy.MaxMergedKeys {
			t.Fatalf("a merge of %v: %d keys, bound %d", sizesOf(srcs), n, policy.MaxMergedKeys)
		}
		rewritten += sum(sizesOf(srcs))
		if err := g.Merge(srcs, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := sizesOf(g.Sealed()); !slices.Equal(got, []int{1000, 1000}) || rewritten != 2000 {
		t.Fatalf("settled at %v after rewriting %d keys, want [1000 1000] and 2000", got, rewritten)
	}
}

func sum(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// TestMergesWaitWhileWritesCome: while writes come (not idle) the policy
// merges nothing up to MaxSegments sealed segments, past it the lowest
// tier holding two (at most Factor of it); idle, Factor segments of one
// tier become one.
func TestMergesWaitWhileWritesCome(t *testing.T) {
	policy := MergePolicy{Factor: 4, MaxSegments: 5, TombstoneRatio: -1}
	g := sealedOfSizes(t, 100, 100, 100, 100, 100)
	if srcs, _ := g.Plan(policy); srcs != nil {
		t.Fatalf("5 segments, bound 5: merges %v while writes come", sizesOf(srcs))
	}
	idle := policy
	idle.Idle = true
	if srcs, _ := g.Plan(idle); !slices.Equal(sizesOf(srcs), []int{100, 100, 100, 100}) {
		t.Fatalf("idle: merges %v, want 4 of the one tier", sizesOf(srcs))
	}
	g = sealedOfSizes(t, 300, 20, 100, 100, 21, 100)
	srcs, _ := g.Plan(policy)
	if !slices.Equal(sizesOf(srcs), []int{20, 21}) {
		t.Fatalf("6 segments, bound 5: merges %v, want the lowest tier's two [20 21]", sizesOf(srcs))
	}
	if err := g.Merge(srcs, 1); err != nil {
		t.Fatal(err)
	}
	if g.Len() != 641 || len(g.Sealed()) != 5 {
		t.Fatalf("after the merge: %d keys in %d segments, want 641 in 5", g.Len(), len(g.Sealed()))
	}
	if srcs, _ := g.Plan(policy); srcs != nil {
		t.Fatalf("back at the bound: merges %v", sizesOf(srcs))
	}
}

// TestMergeRewritesOnceOverABuild: an ingest of 10 equal seals under the
// collection's policy (Factor 10, MaxSegments 12) merges nothing while it
// runs and then, idle, rewrites each key once into one segment: the
// write amplification arithmetic of the package doc ("Merging").
func TestMergeRewritesOnceOverABuild(t *testing.T) {
	policy := MergePolicy{Factor: 10, MaxSegments: 12, TombstoneRatio: -1}
	g := testGraphs(t)
	rng := rand.New(rand.NewPCG(3, 3))
	rewritten, key := 0, uint64(0)
	for range 10 {
		keys := make([]uint64, 200)
		for i := range keys {
			keys[i], key = key, key+1
		}
		if err := g.Add(vecs(rng, len(keys)), keys, 1); err != nil {
			t.Fatal(err)
		}
		if err := g.SealActive(); err != nil {
			t.Fatal(err)
		}
		if srcs, _ := g.Plan(policy); srcs != nil {
			t.Fatalf("while writes come: merges %v", sizesOf(srcs))
		}
	}
	idle := policy
	idle.Idle = true
	for {
		srcs, _ := g.Plan(idle)
		if srcs == nil {
			break
		}
		rewritten += sum(sizesOf(srcs))
		if err := g.Merge(srcs, 1); err != nil {
			t.Fatal(err)
		}
	}
	if len(g.Sealed()) != 1 || rewritten != 2000 || g.Len() != 2000 {
		t.Fatalf("idle: %d segments, %d keys rewritten, %d live; want 1, 2000, 2000", len(g.Sealed()), rewritten, g.Len())
	}
}
