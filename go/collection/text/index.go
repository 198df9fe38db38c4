package text

import (
	"sync"
)

// Index is a BM25 inverted index over one text per id. It is safe for
// concurrent use: writers are exclusive, searches share.
type Index struct {
	analyzer Analyzer

	mu       sync.RWMutex
	slots    map[uint64]uint32 // id -> slot, live documents with terms only
	ids      []uint64          // slot -> id
	lengths  []uint32          // slot -> |d|; 0 marks a dead slot
	docTerms [][]uint32        // slot -> its distinct term numbers, for deletes
	terms    map[string]uint32 // term -> term number
	postings []postingList     // term number -> postings
	live     int               // N
	dead     int               // dead slots awaiting compaction
	totalLen uint64            // Σ|d| over live documents

	// Writer scratch, reused so that indexing a document allocates only
	// for new terms and its own term list.
	tokenBuf []byte
	freq     map[uint32]uint32
	order    []uint32
}

// postingList holds one term's postings: slots[i] has the term freqs[i]
// times. Entries of dead slots stay until compaction; df counts live ones.
type postingList struct {
	slots []uint32
	freqs []uint32
	df    uint32
}

// NewIndex returns an empty index that analyzes with a.
func NewIndex(a Analyzer) *Index {
	return &Index{analyzer: a, slots: map[uint64]uint32{}, terms: map[string]uint32{}, freq: map[uint32]uint32{}}
}

// Analyzer returns the analyzer the index was made with.
func (x *Index) Analyzer() Analyzer { return x.analyzer }

// Put indexes text under id, replacing what id had. Text without terms
// removes id.
func (x *Index) Put(id uint64, text string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.put(id, text)
}

// PutBatch puts texts[i] under ids[i], in order, under one lock.
func (x *Index) PutBatch(ids []uint64, texts []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, id := range ids {
		x.put(id, texts[i])
	}
}

// Delete removes ids (unknown ones are ignored) and returns how many were
// indexed.
func (x *Index) Delete(ids []uint64) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, id := range ids {
		if x.remove(id) {
			n++
		}
	}
	x.maybeCompact()
	return n
}

// Len returns N: the number of documents with at least one term.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Stats describes the index's size.
type Stats struct {
	Docs, Terms, Postings, DeadSlots int
	TotalTerms                       uint64 // Σ|d|
}

// Stats returns the index's size.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := Stats{Docs: x.live, Terms: len(x.terms), DeadSlots: x.dead, TotalTerms: x.totalLen}
	for i := range x.postings {
		s.Postings += len(x.postings[i].slots)
	}
	return s
}

func (x *Index) put(id uint64, text string) {
	x.remove(id)
	x.order = x.order[:0]
	clear(x.freq)
	length := uint32(0)
	x.tokenBuf = x.analyzer.each(text, x.tokenBuf, func(term []byte) {
		t, ok := x.terms[string(term)]
		if !ok {
			t = uint32(len(x.postings))
			x.terms[string(term)] = t
			x.postings = append(x.postings, postingList{})
		}
		if x.freq[t] == 0 {
			x.order = append(x.order, t)
		}
		x.freq[t]++
		length++
	})
	if length == 0 {
		x.maybeCompact()
		return
	}
	if len(x.ids) == 1<<32-1 {
		x.compact()
	}
	slot := uint32(len(x.ids))
	x.ids = append(x.ids, id)
	x.lengths = append(x.lengths, length)
	x.docTerms = append(x.docTerms, append([]uint32(nil), x.order...))
	for _, t := range x.order {
		p := &x.postings[t]
		p.slots = append(p.slots, slot)
		p.freqs = append(p.freqs, x.freq[t])
		p.df++
	}
	x.slots[id] = slot
	x.live++
	x.totalLen += uint64(length)
	x.maybeCompact()
}

// remove marks id's slot dead; its postings go at the next compaction.
func (x *Index) remove(id uint64) bool {
	slot, ok := x.slots[id]
	if !ok {
		return false
	}
	delete(x.slots, id)
	for _, t := range x.docTerms[slot] {
		x.postings[t].df--
	}
	x.totalLen -= uint64(x.lengths[slot])
	x.lengths[slot] = 0
	x.docTerms[slot] = nil
	x.live--
	x.dead++
	return true
}

// compactMinDead keeps small indexes from compacting on every delete.
const compactMinDead = 1024

func (x *Index) maybeCompact() {
	if x.dead >= compactMinDead && x.dead > x.live {
		x.compact()
	}
}

// compact drops dead slots and the postings pointing at them, renumbers
// live slots densely (keeping their order) and forgets terms no live
// document has.
func (x *Index) compact() {
	const gone = ^uint32(0)
	newSlot := make([]uint32, len(x.ids))
	n := uint32(0)
	for s, length := range x.lengths {
		if length == 0 {
			newSlot[s] = gone
			continue
		}
		newSlot[s] = n
		x.ids[n], x.lengths[n], x.docTerms[n] = x.ids[s], length, x.docTerms[s]
		x.slots[x.ids[n]] = n
		n++
	}
	clear(x.docTerms[n:])
	x.ids, x.lengths, x.docTerms = x.ids[:n], x.lengths[:n], x.docTerms[:n]

	newTerm := make([]uint32, len(x.postings))
	kept := 0
	for t := range x.postings {
		p := x.postings[t]
		if p.df == 0 {
			newTerm[t] = gone
			continue
		}
		slots, freqs := make([]uint32, 0, p.df), make([]uint32, 0, p.df)
		for i, s := range p.slots {
			if ns := newSlot[s]; ns != gone {
				slots, freqs = append(slots, ns), append(freqs, p.freqs[i])
			}
		}
		newTerm[t] = uint32(kept)
		x.postings[kept] = postingList{slots: slots, freqs: freqs, df: p.df}
		kept++
	}
	clear(x.postings[kept:])
	x.postings = x.postings[:kept]
	for term, t := range x.terms {
		if newTerm[t] == gone {
			delete(x.terms, term)
		} else {
			x.terms[term] = newTerm[t]
		}
	}
	for _, terms := range x.docTerms {
		for i, t := range terms {
			terms[i] = newTerm[t]
		}
	}
	x.dead = 0
}
