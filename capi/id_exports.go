package main

// #include "strata.h"
import "C"

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/limits"
)

// idsArg reads n ids: the uint64 values at p when strs is NULL (integer
// ids only, as before string ids), else one id per kind in strs (see
// strata_id_strings in strata.h). The engine checks the values.
func idsArg(p *C.uint64_t, n int64, strs *C.strata_id_strings, what string) ([]collection.ID, error) {
	ints, err := idList(p, n, what)
	if err != nil {
		return nil, err
	}
	if strs == nil {
		return collection.IntIDs(ints), nil
	}
	if n == 0 {
		return []collection.ID{}, nil
	}
	if strs.kinds == nil || strs.offsets == nil {
		return nil, invalidf("%s: strata_id_strings kinds or offsets pointer is NULL", what)
	}
	kinds, offsets := view[uint8](strs.kinds, int(n)), view[int64](strs.offsets, int(n)+1)
	if offsets[0] != 0 {
		return nil, invalidf("%s: offsets[0] must be 0, got %d", what, offsets[0])
	}
	total := offsets[n]
	if total < 0 || total > 1<<32 {
		return nil, invalidf("%s: offsets[%d] must be in [0, 4 GiB], got %d", what, n, total)
	}
	raw, err := bytesArg(strs.bytes, C.size_t(total), what+" bytes")
	if err != nil {
		return nil, err
	}
	out := make([]collection.ID, n)
	for i, kind := range kinds {
		start, end := offsets[i], offsets[i+1]
		if start > end || end > total {
			return nil, invalidf("%s: offsets[%d:%d] = %d, %d are not in order within [0, %d]", what, i, i+2, start, end, total)
		}
		switch kind {
		case C.STRATA_ID_INT:
			out[i] = collection.IntID(ints[i])
		case C.STRATA_ID_STRING:
			out[i] = collection.StringID(string(raw[start:end]))
		default:
			return nil, invalidf("%s: kinds[%d] is %d (0 = integer, 1 = string)", what, i, kind)
		}
	}
	return out, nil
}

// errStringIDs refuses to answer with a string id a caller that gave no
// buffer for them.
var errStringIDs = fmt.Errorf("%w: the answer holds string ids, and the call passed no out_id_json buffer for them", collection.ErrInvalid)

// hasString reports whether any of ids is a string id.
func hasString(ids []collection.ID) bool {
	for _, id := range ids {
		if id.IsString() {
			return true
		}
	}
	return false
}

// stringResults writes ids as a JSON array into js (numbers, strings,
// null for NoID) when one of them is a string, and reports whether it did;
// without js such an answer is errStringIDs.
func stringResults(ids []collection.ID, js *C.strata_buffer) (bool, error) {
	if js != nil {
		js.data, js.len = nil, 0
	}
	if !hasString(ids) {
		return false, nil
	}
	if js == nil {
		return false, errStringIDs
	}
	setBuffer(js, idsJSON(ids))
	return true, nil
}

// idsJSON encodes ids as a JSON array, null for NoID.
func idsJSON(ids []collection.ID) []byte {
	out := make([]byte, 0, 2+len(ids)*12)
	out = append(out, '[')
	for i, id := range ids {
		if i > 0 {
			out = append(out, ',')
		}
		switch {
		case id.IsNone():
			out = append(out, "null"...)
		case id.IsString():
			s, _ := json.Marshal(id.Str()) // a string id is valid UTF-8: no error
			out = append(out, s...)
		default:
			out = strconv.AppendUint(out, id.Int(), 10)
		}
	}
	return append(out, ']')
}

// intResults writes query results as int64 ids, -1 for none, unless the
// answer holds a string id: then they go to js as JSON (stringResults).
func intResults(ids []collection.ID, out []int64, js *C.strata_buffer) error {
	if done, err := stringResults(ids, js); done || err != nil {
		return err
	}
	for i, id := range ids {
		if id.IsNone() {
			out[i] = -1
		} else {
			out[i] = int64(id.Int())
		}
	}
	return nil
}

// uintResults is intResults for answers without padding (get, scan).
func uintResults(ids []collection.ID, out []uint64, js *C.strata_buffer) error {
	if done, err := stringResults(ids, js); done || err != nil {
		return err
	}
	for i, id := range ids {
		out[i] = id.Int()
	}
	return nil
}

//export strata_check_ids
func strata_check_ids(ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_check_ids", errBuf, errLen, func() error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		for i, id := range idv {
			if id.IsString() {
				err = limits.CheckStringID(id.Str())
			} else {
				err = limits.CheckIntID(id.Int())
			}
			if err != nil {
				return fmt.Errorf("%w: ids[%d]: %w", collection.ErrInvalid, i, err)
			}
		}
		return nil
	})
}
