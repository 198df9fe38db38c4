package main

// #include "strata.h"
import "C"

import (
	"os"

	"github.com/strata-db/strata/go/collection"
)

//export strata_col_export
func strata_col_export(h C.strata_handle, path *C.char, outSeq *C.uint64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_export", h, errBuf, errLen, func(c *collection.Collection) error {
		file, err := goString(path, "path")
		if err != nil {
			return err
		}
		seq, err := c.ExportFile(file, nil)
		if err != nil {
			return err
		}
		if outSeq != nil {
			*outSeq = C.uint64_t(seq)
		}
		return nil
	})
}

//export strata_col_restore
func strata_col_restore(archive *C.char, path *C.char, outSeq *C.uint64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_restore", errBuf, errLen, func() error {
		src, err := goString(archive, "archive")
		if err != nil {
			return err
		}
		dir, err := goString(path, "path")
		if err != nil {
			return err
		}
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		seq, err := collection.Restore(f, dir, collection.Tuning{})
		if err != nil {
			return err
		}
		if outSeq != nil {
			*outSeq = C.uint64_t(seq)
		}
		return nil
	})
}
