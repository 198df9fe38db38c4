package main

/*
#include "strata.h"
*/
import "C"

import (
	"math"

	"github.com/strata-db/strata/go/collection"
)

// expiryArg reads the optional ttl / expires_at arrays of an expiring
// upsert (n_expiry values each, 1 or one per point); the engine checks
// them (collection.Expiry).
func expiryArg(ttl, expiresAt *C.double, nExpiry C.int64_t) (collection.Expiry, error) {
	if ttl == nil && expiresAt == nil {
		return collection.Expiry{}, nil
	}
	if nExpiry < 1 || nExpiry > maxFloats {
		return collection.Expiry{}, invalidf("n_expiry = %d: give 1 value or one per point", int64(nExpiry))
	}
	var e collection.Expiry
	if ttl != nil {
		e.TTL = append([]float64(nil), view[float64](ttl, int(nExpiry))...)
	}
	if expiresAt != nil {
		e.At = append([]float64(nil), view[float64](expiresAt, int(nExpiry))...)
	}
	return e, nil
}

//export strata_col_upsert_expiring
func strata_col_upsert_expiring(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, vectors *C.float,
	metaJSON *C.char, metaLen C.size_t, ttl, expiresAt *C.double, nExpiry C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return upsert("strata_col_upsert_expiring", h, ids, n, strs, vectors, metaJSON, metaLen, ttl, expiresAt, nExpiry, errBuf, errLen)
}

// upsert is strata_col_upsert and strata_col_upsert_expiring (ttl and
// expiresAt NULL: no point expires).
func upsert(op string, h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, vectors *C.float,
	metaJSON *C.char, metaLen C.size_t, ttl, expiresAt *C.double, nExpiry C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection(op, h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		vecs, err := floatRows(vectors, int64(n), c.Options().Dim, "vectors")
		if err != nil {
			return err
		}
		docs, err := documentsArg(metaJSON, metaLen, len(idv))
		if err != nil {
			return err
		}
		e, err := expiryArg(ttl, expiresAt, nExpiry)
		if err != nil {
			return err
		}
		return c.UpsertExpiring(idv, vecs, docs, e)
	})
}

//export strata_col_upsert_points_expiring
func strata_col_upsert_points_expiring(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings,
	fields *C.strata_field_values, nfields C.int64_t, metaJSON *C.char, metaLen C.size_t,
	ttl, expiresAt *C.double, nExpiry C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return upsertPoints("strata_col_upsert_points_expiring", h, ids, n, strs, fields, nfields, metaJSON, metaLen,
		ttl, expiresAt, nExpiry, errBuf, errLen)
}

// upsertPoints is strata_col_upsert_points and
// strata_col_upsert_points_expiring.
func upsertPoints(op string, h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings,
	fields *C.strata_field_values, nfields C.int64_t, metaJSON *C.char, metaLen C.size_t,
	ttl, expiresAt *C.double, nExpiry C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection(op, h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		values, err := fieldValuesArg(fields, int64(nfields), len(idv))
		if err != nil {
			return err
		}
		docs, err := documentsArg(metaJSON, metaLen, len(idv))
		if err != nil {
			return err
		}
		e, err := expiryArg(ttl, expiresAt, nExpiry)
		if err != nil {
			return err
		}
		return c.UpsertPointsExpiring(idv, values, docs, e)
	})
}

//export strata_col_expires_at
func strata_col_expires_at(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, out *C.double,
	errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_expires_at", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		if len(idv) > 0 && out == nil {
			return invalidf("out is NULL")
		}
		at, err := c.ExpiresAt(idv)
		if err != nil {
			return err
		}
		dst := view[float64](out, len(at))
		for i, ns := range at {
			dst[i] = math.NaN()
			if ns != 0 {
				dst[i] = float64(ns) / 1e9
			}
		}
		return nil
	})
}

//export strata_col_reap
func strata_col_reap(h C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_reap", h, errBuf, errLen, func(c *collection.Collection) error {
		return c.Reap()
	})
}
