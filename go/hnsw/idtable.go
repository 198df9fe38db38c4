package hnsw

import "github.com/strata-db/strata/go/internal/idtable"

// idTable maps live ids to nodes (package idtable: a flat slice for the
// ids most callers use, 0..n-1, a map for the rest). A filtered search
// looks up thousands of ids per call; a sorted copy of the ids
// (filter_keys.go) is current while sets() and the graph are unchanged.
type idTable struct{ t idtable.Table }

func newIDTable() idTable { return idTable{t: idtable.New()} }

func (t *idTable) len() int                      { return t.t.Len() }
func (t *idTable) reserve(maxID uint64, n int)   { t.t.Reserve(maxID, n) }
func (t *idTable) get(id uint64) (uint32, bool)  { return t.t.Get(id) }
func (t *idTable) set(id uint64, node uint32)    { t.t.Set(id, node) }
func (t *idTable) del(id uint64) bool            { return t.t.Del(id) }
func (t *idTable) eachNode(fn func(node uint32)) { t.t.EachValue(fn) }
func (t *idTable) remap(newOf []uint32)          { t.t.Remap(newOf) }
func (t *idTable) sets() uint64                  { return t.t.Sets() }
func (t *idTable) dense() []uint32               { return t.t.Dense() }
