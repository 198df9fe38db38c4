package hnsw

// Reserve makes room for nodes nodes in all, so that Adds up to that count
// copy no array. An index built in batches of a known total (a merge of
// segments) otherwise grows by half each time it fills, and every growth
// copies each array while the generation before waits for the collector:
// allocated at once, the two generations are up to 2.5 times the final
// arrays. Room no node uses yet is address space, not resident memory,
// until nodes arrive. A count at or below the capacity changes nothing.
func (x *Index) Reserve(nodes int) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	g := x.graph.Load()
	if err := x.refuseCodesOnly(g, "Reserve", "copy the graph"); err != nil {
		return err
	}
	if nodes <= g.capacity() {
		return nil
	}
	x.graph.Store(g.grown(nodes, 0))
	return nil
}
