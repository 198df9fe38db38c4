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
// A plain nearest query, "query": {"nearest": [numbers]} (what
// qdrant-client sends for query_points(query=[...])) or "query":
// [numbers], is read into req.nearest in the pass that checks it, and
// Query is left nil, as the gRPC door does (search1 reads nearest; every
// other reader gets Query back from jsonQuery): the numbers were scanned
// once to check the body and again to parse them, and the query split
// again by orderByOf and needsHybrid. With lookup_from the query stays in
// Query, for planQuery.
//
// encoding/json scanned a query body three times (its decoder's value
// reader, the validity check, the decode itself) and copied every
// RawMessage: a tenth of a served REST query.
func decodeQueryRequest(body []byte, req *queryRequest) bool {
	var seen uint32
	var nearest []float32
	read := func(key, data []byte, pos int) int {
		if string(key) != "query" {
			return pos
		}
		var end int
		nearest, end = nearestVector(data, pos)
		return end
	}
	ok := eachFieldRead(body, read, func(key, value []byte) bool {
		for i := range queryFields {
			f := &queryFields[i]
			if f.key != string(key) {
				continue
			}
			return newKey(&seen, 1<<i) && f.set(req, value)
		}
		return false
	})
	if ok && nearest != nil && !present(req.LookupFrom) {
		req.Query, req.nearest = nil, nearest
	}
	return ok
}

// nearestVector reads the value at data[pos] when it is a plain nearest
// query, {"nearest": [numbers]} or [numbers] with at least one number,
// each within float32's range (whitespace as JSON allows, the key without
// escapes): the numbers as strconv.ParseFloat(s, 32) rounds them, and end
// past the value. For anything else it answers nil and pos, and the value
// is checked (and read later) as any other.
//
// The vector is allocated once: its length is at most one more than the
// commas in the rest of the body (bytes.Count, which is vectorised).
func nearestVector(data []byte, pos int) (vec []float32, end int) {
	if pos >= len(data) { // "query": at the end of the body
		return nil, pos
	}
	i := pos
	object := data[i] == '{'
	if object {
		i = jsonnum.SkipSpace(data, i+1)
		if !bytes.HasPrefix(data[i:], nearestKey) {
			return nil, pos
		}
		i = jsonnum.SkipSpace(data, i+len(nearestKey))
		if i >= len(data) || data[i] != ':' {
			return nil, pos
		}
		i = jsonnum.SkipSpace(data, i+1)
	}
	if i >= len(data) || data[i] != '[' {
		return nil, pos
	}
	i = jsonnum.SkipSpace(data, i+1)
	vec = make([]float32, 0, bytes.Count(data[i:], comma)+1)
	for {
		f, next, ok := jsonnum.Float32(data, i)
		if !ok {
			return nil, pos
		}
		vec = append(vec, f)
		i = jsonnum.SkipSpace(data, next)
		if i >= len(data) {
			return nil, pos
		}
		if data[i] == ']' {
			i++
			break
		}
		if data[i] != ',' {
			return nil, pos
		}
		i = jsonnum.SkipSpace(data, i+1)
	}
	if object {
		i = jsonnum.SkipSpace(data, i)
		if i >= len(data) || data[i] != '}' {
			return nil, pos
		}
		i++
	}
	return vec, i
}

var nearestKey, comma = []byte(`"nearest"`), []byte(",")

// queryFields are the keys decodeQueryRequest reads, each with how its
// value is stored: as it is (json.RawMessage), or parsed into a pointer
// field that null leaves nil, as encoding/json does.
var queryFields = [...]struct {
	key string
	set func(req *queryRequest, value []byte) bool
}{
	{"query", rawField(func(r *queryRequest) *json.RawMessage { return &r.Query })},
	{"vector", rawField(func(r *queryRequest) *json.RawMessage { return &r.Vector })},
	{"prefetch", rawField(func(r *queryRequest) *json.RawMessage { return &r.Prefetch })},
	{"filter", rawField(func(r *queryRequest) *json.RawMessage { return &r.Filter })},
	{"with_vector", rawField(func(r *queryRequest) *json.RawMessage { return &r.WithVector })},
	{"with_payload", rawField(func(r *queryRequest) *json.RawMessage { return &r.WithPayload })},
	{"lookup_from", rawField(func(r *queryRequest) *json.RawMessage { return &r.LookupFrom })},
	{"shard_key", rawField(func(r *queryRequest) *json.RawMessage { return &r.ShardKey })},
	{"using", nullable(func(r *queryRequest) **string { return &r.Using }, plainString)},
	{"params", nullable(func(r *queryRequest) **searchParams { return &r.Params }, paramsObject)},
	{"score_threshold", nullable(func(r *queryRequest) **float64 { return &r.ScoreThreshold }, jsonFloat)},
	{"limit", nullable(func(r *queryRequest) **int { return &r.Limit }, jsonInt)},
	{"offset", nullable(func(r *queryRequest) **int { return &r.Offset }, jsonInt)},
}

func rawField(field func(*queryRequest) *json.RawMessage) func(*queryRequest, []byte) bool {
	return func(req *queryRequest, value []byte) bool {
		*field(req) = value
		return true
	}
}

// nullable parses value into a new T for a pointer field, nil for null.
func nullable[T any](field func(*queryRequest) **T, parse func([]byte, *T) bool) func(*queryRequest, []byte) bool {
	return func(req *queryRequest, value []byte) bool {
		dst := field(req)
		if string(value) == "null" {
			*dst = nil
			return true
		}
		v := new(T)
		if !parse(value, v) {
			return false
		}
		*dst = v
		return true
	}
}

// plainString is a string without escapes: encoding/json unescapes, and
// turns invalid UTF-8 into U+FFFD.
func plainString(value []byte, dst *string) bool {
	if value[0] != '"' || bytes.IndexByte(value, '\\') >= 0 || !utf8.Valid(value) {
		return false
	}
	*dst = string(value[1 : len(value)-1])
	return true
}

// paramsObject reads search params: the usual keys once each, spelled as
// their tags, without reflection ({"hnsw_ef": 64} is every
// qdrant-client query's); anything else through encoding/json, from a
// zero value.
func paramsObject(value []byte, dst *searchParams) bool {
	if value[0] != '{' {
		return false
	}
	var seen uint8
	plain := eachField(value, func(key, v []byte) bool {
		var bit uint8
		switch string(key) {
		case "hnsw_ef":
			bit, dst.HnswEf = 1, nil
			if string(v) != "null" {
				dst.HnswEf = new(int)
				if !jsonInt(v, dst.HnswEf) {
					return false
				}
			}
		case "exact":
			bit = 2
			switch string(v) {
			case "true", "false":
				dst.Exact = string(v) == "true"
			default:
				return false
			}
		case "quantization":
			bit, dst.Quantization = 4, v
		case "indexed_only":
			bit, dst.IndexedOnly = 8, v
		case "acorn":
			bit, dst.Acorn = 16, v
		default:
			return false
		}
		return newKey(&seen, bit)
	})
	if plain {
		return true
	}
	*dst = searchParams{}
	return strictUnmarshal(value, dst) == nil
}

func jsonFloat(value []byte, dst *float64) bool {
	if _, _, fault := jsonnum.Number(value, 0); fault != jsonnum.OK {
		return false
	}
	f, err := strconv.ParseFloat(string(value), 64)
	*dst = f
	return err == nil
}

func jsonInt(value []byte, dst *int) bool {
	if _, integer, fault := jsonnum.Number(value, 0); fault != jsonnum.OK || !integer {
		return false
	}
	n, err := strconv.Atoi(string(value))
	*dst = n
	return err == nil
}
