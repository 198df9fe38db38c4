package indexfile

// DropResident drops the pages of the file's mapped sections from the
// process's resident set (madvise MADV_DONTNEED; nothing without mmap).
// Their contents are unchanged: the next read of a page faults it back
// from the page cache, or the file. A reader that has swept a mapped
// section once (a merge copying a segment's vectors) so keeps the pages
// it is done with from counting as its memory. Not safe concurrently with
// Close.
func (f *File) DropResident() {
	for _, m := range f.mappings {
		dontNeed(m)
	}
}
