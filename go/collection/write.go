package collection

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
)

// maxBatchBytes bounds one write's log record.
const maxBatchBytes = 256 << 20

// Upsert inserts or replaces len(ids) entries: vectors holds len(ids)·Dim
// floats of the dense field "" (see UpsertPoints for the other fields,
// which the points written lose), docs one document per id (nil: every document is {}). Input
// is validated whole before anything is written; on error nothing changed.
// It returns once the write is durable per the fsync policy and visible to
// queries.
func (c *Collection) Upsert(ids []ID, vectors []float32, docs []meta.Document) error {
	return c.UpsertExpiring(ids, vectors, docs, Expiry{})
}

// UpsertExpiring is Upsert with a time to live for the points written
// (expiry.go; the zero Expiry: none expires). A point written without one
// does not expire, even if its previous version did.
func (c *Collection) UpsertExpiring(ids []ID, vectors []float32, docs []meta.Document, expiry Expiry) error {
	if err := c.alive(); err != nil {
		return err
	}
	def, err := c.defaultField()
	if err != nil {
		return err
	}
	n, err := batch.CheckAdd(vectors, def.Dim, nil, nil)
	if err != nil {
		return fmt.Errorf("collection: %w", err)
	}
	if len(ids) != n {
		return fmt.Errorf("%w: %d ids for %d vectors", ErrInvalid, len(ids), n)
	}
	if _, err := checkIDs(ids, true); err != nil {
		return err
	}
	parsed, canonical, err := prepareDocs(docs, n)
	if err != nil {
		return err
	}
	if err := c.checkText(parsed); err != nil {
		return err
	}
	expires, err := c.expiries(n, expiry)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	rec := record{op: opUpsert, ids: ids, dim: def.Dim, vectors: vectors, docs: canonical, expires: expires}
	if err := checkSize(rec); err != nil {
		return err
	}
	_, err = c.submit(rec, parsed)
	return err
}

// UpdateMetadata replaces the documents of existing ids, leaving their
// vectors alone. An id that does not exist fails the call with ErrNotFound
// before anything is written.
func (c *Collection) UpdateMetadata(ids []ID, docs []meta.Document) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	if _, err := checkIDs(ids, true); err != nil {
		return 0, err
	}
	if len(docs) != len(ids) {
		return 0, fmt.Errorf("%w: %d documents for %d ids", ErrInvalid, len(docs), len(ids))
	}
	parsed, canonical, err := prepareDocs(docs, len(ids))
	if err != nil {
		return 0, err
	}
	if err := c.checkText(parsed); err != nil {
		return 0, err
	}
	exp := c.expiredNow()
	for i, id := range ids {
		if _, ok := c.liveKeyOf(id, exp); !ok {
			return 0, fmt.Errorf("%w: ids[%d] = %s", ErrNotFound, i, id)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	rec := record{op: opSetMeta, ids: ids, docs: canonical}
	if err := checkSize(rec); err != nil {
		return 0, err
	}
	return c.submit(rec, parsed)
}

// Delete removes ids (unknown ids are ignored) and returns how many
// existed.
func (c *Collection) Delete(ids []ID) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	if _, err := checkIDs(ids, false); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	rec := record{op: opDelete, ids: ids}
	if err := checkSize(rec); err != nil {
		return 0, err
	}
	return c.submit(rec, nil)
}

// DeleteWhere removes every entry whose document matches f and returns
// how many it removed. The matching ids are resolved first and logged as
// ids, so replaying the log needs no filter.
func (c *Collection) DeleteWhere(f *meta.Filter) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	if f == nil {
		return 0, fmt.Errorf("%w: DeleteWhere needs a filter", ErrInvalid)
	}
	bound, err := c.bindVectors(c.resolve(f))
	if err != nil {
		return 0, err
	}
	keys := c.expiredNow().without(c.meta.Select(bound)) // the reaper deletes the expired ones
	ids := make([]ID, 0, len(keys))
	for _, k := range keys {
		if id, ok := c.idOf(k); ok { // a string deleted meanwhile is gone already
			ids = append(ids, id)
		}
	}
	return c.Delete(ids)
}

// prepareDocs pairs documents with their canonical JSON; nil means n
// empty documents.
func prepareDocs(docs []meta.Document, n int) ([]meta.Document, [][]byte, error) {
	if docs == nil {
		docs = make([]meta.Document, n) // the zero Document is {}
	}
	if len(docs) != n {
		return nil, nil, fmt.Errorf("%w: %d documents for %d ids", ErrInvalid, len(docs), n)
	}
	canonical := make([][]byte, n)
	for i, d := range docs {
		canonical[i] = d.JSON()
	}
	return docs, canonical, nil
}

func checkSize(rec record) error {
	if size := rec.size(); size > maxBatchBytes || len(rec.ids) > math.MaxUint32 {
		return fmt.Errorf("%w: one write of %d bytes exceeds the limit of %d; split the batch", ErrInvalid, size, maxBatchBytes)
	}
	return nil
}

// defaultField returns the dense field "", which the calls of before
// fields existed (Upsert, Query, Get) read and write.
func (c *Collection) defaultField() (*vectorField, error) {
	def := c.fields.Load().def
	if def == nil {
		return nil, fmt.Errorf("%w: the collection has no unnamed vector field \"\": name one", ErrInvalid)
	}
	if def.multi != nil {
		return nil, fmt.Errorf("%w: the unnamed vector field \"\" is a multivector field: use UpsertPoints and QueryField", ErrInvalid)
	}
	return def, nil
}
