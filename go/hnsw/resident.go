package hnsw

// DropResident drops the pages of the float vectors mapped from the
// index's file (LoadOptions.MmapVectors) from the process's resident set;
// nothing for vectors in memory. Searches go on: a page they read again
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
