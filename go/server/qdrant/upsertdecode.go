package qdrant

import (
	"encoding/json"
)

// decodeUpsertRequest reads the usual upsert bodies into req without
// reflection, as decodeQueryRequest reads queries: {"points": [{"id",
// "vector", "payload"}, ...]} and {"batch": {"ids", "vectors",
// "payloads"}}, each key once and spelled as its tag, the values
// sub-slices of body. Anything else (another key or spelling, a repeated
// key, null where a list is, strata's expiry lists of a batch) returns
// false, and decode reads the body with encoding/json, whose answer and
// error are the reference.
//
// encoding/json's decode of an upsert of 100 points of 128 numbers, the
// vectors kept as json.RawMessage, was most of the door's own CPU for it:
// it scanned the whole body twice and copied every vector.
//
// The points and the batch are read where they stand in the body
// (fieldsAt, elementsAt): checking the whole "points" value first, then
// each point, then each point's fields scanned every vector three times
// before appendVector parsed it.
func decodeUpsertRequest(body []byte, req *upsertRequest) bool {
	var seen uint8
	read := func(key, data []byte, pos int) int {
		var end int
		var ok bool
		switch string(key) {
		case "points":
			req.Points = make([]pointStruct, 0, 16)
			end, ok = elementsAt(data, pos, func(at int) (int, bool) {
				req.Points = append(req.Points, pointStruct{})
				return pointAt(data, at, &req.Points[len(req.Points)-1])
			})
			if !ok {
				req.Points = nil
			}
		case "batch":
			req.Batch = new(upsertBatch)
			if end, ok = batchAt(data, pos, req.Batch); !ok {
				req.Batch = nil
			}
		}
		if !ok {
			return pos // checked by eachFieldRead, and refused below
		}
		return end
	}
	return eachFieldRead(body, read, func(key, value []byte) bool {
		var bit uint8
		switch string(key) {
		case "points":
			if bit = 1; req.Points == nil {
				return false
			}
		case "batch":
			if bit = 2; req.Batch == nil {
				return false
			}
		case "shard_key":
			bit, req.ShardKey = 4, value
		case "update_filter":
			bit, req.UpdateFilter = 8, value
		case "update_mode":
			bit = 16
			if !nullableString(value, &req.UpdateMode) {
				return false
			}
		default:
			return false
		}
		return newKey(&seen, bit)
	})
}

// pointAt reads the PointStruct object at data[at].
func pointAt(data []byte, at int, p *pointStruct) (int, bool) {
	var seen uint8
	return fieldsAt(data, at, nil, func(key, value []byte) bool {
		var bit uint8
		switch string(key) {
		case "id":
			bit, p.ID = 1, value
		case "vector":
			bit, p.Vector = 2, value
		case "payload":
			bit, p.Payload = 4, value
		case "strata_ttl":
			bit = 8
			if !nullableFloat(value, &p.StrataTTL) {
				return false
			}
		case "strata_expires_at":
			bit = 16
			if !nullableFloat(value, &p.StrataExpiresAt) {
				return false
			}
		default:
			return false
		}
		return newKey(&seen, bit)
	})
}

// batchAt reads the Batch object at data[at]: its ids, vectors and
// payloads.
func batchAt(data []byte, at int, b *upsertBatch) (int, bool) {
	var seen uint8
	return fieldsAt(data, at, nil, func(key, value []byte) bool {
		var bit uint8
		switch string(key) {
		case "ids":
			bit = 1
			if b.IDs = rawElements(value); b.IDs == nil {
				return false
			}
		case "vectors":
			bit, b.Vectors = 2, value
		case "payloads":
			bit = 4
			if b.Payloads = rawElements(value); b.Payloads == nil {
				return false
			}
		default:
			return false
		}
		return newKey(&seen, bit)
	})
}

// rawElements splits a list into its elements (non-nil, empty for []);
// nil for anything but a list.
func rawElements(value []byte) []json.RawMessage {
	if value[0] != '[' {
		return nil
	}
	out := make([]json.RawMessage, 0, 16)
	if !eachElement(value, func(v []byte) bool {
		out = append(out, v)
		return true
	}) {
		return nil
	}
	return out
}

// nullableString and nullableFloat store a value as queryFields does its
// pointer fields: nil for null.
func nullableString(value []byte, dst **string) bool {
	if string(value) == "null" {
		*dst = nil
		return true
	}
	s := new(string)
	*dst = s
	return plainString(value, s)
}

func nullableFloat(value []byte, dst **float64) bool {
	if string(value) == "null" {
		*dst = nil
		return true
	}
	f := new(float64)
	*dst = f
	return jsonFloat(value, f)
}
