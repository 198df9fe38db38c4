package main

// #include "strata.h"
import "C"

import (
	"encoding/json"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/text"
)

// textFieldsJSON is the "text_fields" entry of strata_col_info.
// optString copies an optional NUL-terminated argument ("" for NULL).
func optString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

//export strata_col_create_text_index
func strata_col_create_text_index(h C.strata_handle, field *C.char, analyzer *C.char, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_create_text_index", h, errBuf, errLen, func(c *collection.Collection) error {
		name, err := goString(field, "field")
		if err != nil {
			return err
		}
		return c.CreateTextIndex(name, optString(analyzer))
	})
}

//export strata_col_query_text
func strata_col_query_text(h C.strata_handle, vector *C.float, textArg *C.char, textLen C.size_t, field *C.char,
	k C.int64_t, ef C.int64_t, numThreads C.int, where *C.char, whereLen C.size_t, fusion C.int, alpha C.double,
	k1 C.double, b C.double, outIDs *C.int64_t, outIDJSON *C.strata_buffer, outScores *C.float, outDists *C.float, outSources *C.uint8_t,
	outN *C.int64_t, outMeta *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_query_text", h, errBuf, errLen, func(c *collection.Collection) error {
		if outIDs == nil || outScores == nil || outDists == nil || outSources == nil || outN == nil {
			return invalidf("output pointer is NULL")
		}
		raw, err := bytesArg(textArg, textLen, "text")
		if err != nil {
			return err
		}
		var vec []float32
		if vector != nil {
			vec = view[float32](vector, c.Options().Dim)
		}
		var fu text.Fusion
		switch fusion {
		case C.STRATA_FUSION_RRF:
		case C.STRATA_FUSION_WEIGHTED:
			fu = text.Fusion{Weighted: true, Alpha: float64(alpha)}
		default:
			return invalidf("unknown fusion %d (0 = rrf, 1 = weighted)", fusion)
		}
		var params text.Params // zero: Lucene's defaults
		if k1 >= 0 {
			params.K1, params.HasK1 = float64(k1), true
		}
		if b >= 0 {
			params.B, params.HasB = float64(b), true
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		hits, err := c.QueryText(vec, collection.TextQuery{Text: string(raw), Field: optString(field), BM25: params},
			int(k), int(ef), f, int(numThreads), fu)
		if err != nil {
			return err
		}
		ids, scores := make([]collection.ID, len(hits)), view[float32](outScores, len(hits))
		dists, sources := view[float32](outDists, len(hits)), view[uint8](outSources, len(hits))
		for i, hit := range hits {
			ids[i], scores[i], dists[i], sources[i] = hit.ID, hit.Score, hit.Distance, uint8(hit.Sources)
		}
		if err := intResults(ids, view[int64](outIDs, len(hits)), outIDJSON); err != nil {
			return err
		}
		*outN = C.int64_t(len(hits))
		if outMeta != nil {
			docs, err := c.Documents(ids)
			if err != nil {
				return err
			}
			setBuffer(outMeta, documentsJSON(docs))
		}
		return nil
	})
}

//export strata_text_analyze
func strata_text_analyze(analyzer *C.char, textArg *C.char, textLen C.size_t, out *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_text_analyze", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output pointer is NULL")
		}
		a, err := text.ParseAnalyzer(optString(analyzer))
		if err != nil {
			return err
		}
		raw, err := bytesArg(textArg, textLen, "text")
		if err != nil {
			return err
		}
		terms := a.Terms(string(raw))
		if terms == nil {
			terms = []string{}
		}
		data, err := json.Marshal(terms)
		if err != nil {
			return err
		}
		setBuffer(out, data)
		return nil
	})
}
