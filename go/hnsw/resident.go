package hnsw

// DropResident drops the pages of the sections mapped from the index's
// file from the process's resident set: the float vectors with
// LoadOptions.MmapVectors, and the vectors, links, ids and codes a load
// with DeferCRC maps; nothing for sections in memory. Searches go on: a page they read again
// faults back from the page cache. A collection's merge calls it on its
// mapped sources after each chunk it copies, so that the sources' pages
// the copy and the searches touched do not pile up in its RSS beside the
// new graph.
func (x *Index) DropResident() {
	if x.acquire() != nil {
		return
	}
	defer x.closeMu.RUnlock()
	if x.file != nil {
		x.file.DropResident()
	}
}
