package qdrant

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/strata-db/strata/go/internal/jsonnum"
)

// decodeQueryRequest reads the usual query or search body into req
// without reflection: each known key once, spelled as its tag, its value
// of the field's type (lists and objects stay json.RawMessage, sub-slices
// of body, as the readers after it expect; params, a small object, goes
// through encoding/json). It returns false for anything else (an unknown
// or repeated key, a key in another case, a value of the wrong type, text
// that is not JSON), and decode then reads the body with encoding/json,
// whose answer and error message are the reference: req may be partly
// written by then, and decode starts from a zero request.
//
// encoding/json scanned a query body three times (its decoder's value
// reader, the validity check, the decode itself) and copied every
// RawMessage: a tenth of a served REST query.
func decodeQueryRequest(body []byte, req *queryRequest) bool {
	var seen uint32
	return eachField(body, func(key, value []byte) bool {
		var bit uint32
		var raw *json.RawMessage
		switch string(key) {
		case "query":
			bit, raw = 1<<0, &req.Query
		case "vector":
			bit, raw = 1<<1, &req.Vector
		case "prefetch":
			bit, raw = 1<<2, &req.Prefetch
		case "filter":
			bit, raw = 1<<3, &req.Filter
		case "with_vector":
			bit, raw = 1<<4, &req.WithVector
		case "with_payload":
			bit, raw = 1<<5, &req.WithPayload
		case "lookup_from":
			bit, raw = 1<<6, &req.LookupFrom
		case "shard_key":
			bit, raw = 1<<7, &req.ShardKey
		case "using":
			bit = 1 << 8
		case "params":
			bit = 1 << 9
		case "score_threshold":
			bit = 1 << 10
		case "limit":
			bit = 1 << 11
		case "offset":
			bit = 1 << 12
		default:
			return false
		}
		if seen&bit != 0 {
			return false // encoding/json merges a repeated object: leave it the case
		}
		seen |= bit
		if raw != nil {
			*raw = value
			return true
		}
		isNull := string(value) == "null"
		switch bit {
		case 1 << 8:
			if isNull {
				req.Using = nil
				return true
			}
			// encoding/json unescapes, and turns invalid UTF-8 into U+FFFD
			if value[0] != '"' || bytes.IndexByte(value, '\\') >= 0 || !utf8.Valid(value) {
				return false
			}
			s := string(value[1 : len(value)-1])
			req.Using = &s
		case 1 << 9:
			if isNull {
				req.Params = nil
				return true
			}
			if value[0] != '{' {
				return false
			}
			var p searchParams
			if strictUnmarshal(value, &p) != nil {
				return false
			}
			req.Params = &p
		case 1 << 10:
			if isNull {
				req.ScoreThreshold = nil
				return true
			}
			if _, _, fault := jsonnum.Number(value, 0); fault != jsonnum.OK {
				return false
			}
			f, err := strconv.ParseFloat(string(value), 64)
			if err != nil {
				return false
			}
			req.ScoreThreshold = &f
		default: // limit, offset
			dst := &req.Limit
			if bit == 1<<12 {
				dst = &req.Offset
			}
			if isNull {
				*dst = nil
				return true
			}
			if _, integer, fault := jsonnum.Number(value, 0); fault != jsonnum.OK || !integer {
				return false
			}
			n, err := strconv.Atoi(string(value))
			if err != nil {
				return false
			}
			*dst = &n
		}
		return true
	})
}
