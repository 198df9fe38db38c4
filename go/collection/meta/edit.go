package meta

import (
	"fmt"
	"slices"
	"strings"
)

// This file edits documents as Qdrant's payload operations do (their
// meaning is qdrant-client local mode's, Qdrant's reference): Merge is
// set_payload, SetAt set_payload with a key, DeleteAt delete_payload of a
// key. Each returns a new Document, checked by the document rules; the
// receiver is not changed.

// Merge returns d with src's keys set, a null in src removing the key.
func (d Document) Merge(src Document) (Document, error) {
	return finish(value{kind: kindObject, fields: mergeFields(d.fields, src.fields)})
}

// SetAt returns d with src merged (as Merge) into the object at p, an
// explicit path whose first step is a key:
//   - a key step enters the object's value there, {} if missing; a value
//     that is not an object where a key step or the merge applies is
//     replaced by an object;
//   - At(i) enters element i of a list (none past its end: nothing is
//     set); Elements() enters each element; a value that is not a list
//     where either applies is replaced by [].
func (d Document) SetAt(p Path, src Document) (Document, error) {
	if len(p.steps) == 0 || p.steps[0].kind != stepKey {
		return Document{}, fmt.Errorf("%w: a payload key must start with a key, got %q", ErrInvalidDocument, p.String())
	}
	return finish(setAt(value{kind: kindObject, fields: d.fields}, p.steps, src.fields))
}

// DeleteAt returns d without the value at p: a last key step removes the
// key from its object, a last Elements() empties the list; a last At(i)
// deletes nothing (as in Qdrant, deleting by position is not idempotent),
// nor does a path that reaches nothing.
func (d Document) DeleteAt(p Path) (Document, error) {
	return finish(deleteAt(value{kind: kindObject, fields: d.fields}, p.steps))
}

func finish(v value) (Document, error) {
	doc, err := ParseDocument(appendValue(nil, v))
	if err != nil {
		return Document{}, err
	}
	return doc, nil
}

// mergeFields returns dest with src's fields set (null removes).
func mergeFields(dest, src []field) []field {
	out := slices.Clone(dest)
	for _, f := range src {
		i, found := slices.BinarySearchFunc(out, f.key, func(e field, k string) int { return strings.Compare(e.key, k) })
		switch {
		case f.val.kind == kindNull && found:
			out = slices.Delete(out, i, i+1)
		case f.val.kind == kindNull:
		case found:
			out[i].val = f.val
		default:
			out = slices.Insert(out, i, f)
		}
	}
	return out
}

// mergeInto merges src into v if v is an object, else replaces v by src
// (nulls dropped).
func mergeInto(v value, src []field) value {
	if v.kind != kindObject {
		return value{kind: kindObject, fields: mergeFields(nil, src)}
	}
	return value{kind: kindObject, fields: mergeFields(v.fields, src)}
}

func setAt(v value, steps []step, src []field) value {
	st, rest := steps[0], steps[1:]
	enter := func(child value) value {
		if len(rest) == 0 {
			return mergeInto(child, src)
		}
		return setAt(child, rest, src)
	}
	switch st.kind {
	case stepKey:
		var fields []field
		if v.kind == kindObject {
			fields = v.fields
		}
		child, ok := fieldOf(value{kind: kindObject, fields: fields}, st.key)
		if !ok {
			child = value{kind: kindObject}
		}
		return value{kind: kindObject, fields: setField(fields, st.key, enter(child))}
	case stepIndex:
		if v.kind != kindList {
			return value{kind: kindList}
		}
		if st.index >= len(v.list) {
			return v
		}
		list := slices.Clone(v.list)
		list[st.index] = enter(list[st.index])
		return value{kind: kindList, list: list}
	default: // stepEach
		if v.kind != kindList {
			return value{kind: kindList}
		}
		list := slices.Clone(v.list)
		for i := range list {
			list[i] = enter(list[i])
		}
		return value{kind: kindList, list: list}
	}
}

// setField sets key to v (v may be null: it is kept).
func setField(fields []field, key string, v value) []field {
	out := slices.Clone(fields)
	i, found := slices.BinarySearchFunc(out, key, func(e field, k string) int { return strings.Compare(e.key, k) })
	if found {
		out[i].val = v
		return out
	}
	return slices.Insert(out, i, field{key: key, val: v})
}

func deleteAt(v value, steps []step) value {
	st, rest := steps[0], steps[1:]
	if len(rest) == 0 {
		switch {
		case st.kind == stepKey && v.kind == kindObject:
			i, found := slices.BinarySearchFunc(v.fields, st.key, func(e field, k string) int { return strings.Compare(e.key, k) })
			if found {
				return value{kind: kindObject, fields: slices.Delete(slices.Clone(v.fields), i, i+1)}
			}
		case st.kind == stepEach && v.kind == kindList:
			return value{kind: kindList}
		}
		return v
	}
	switch {
	case st.kind == stepKey && v.kind == kindObject:
		if child, ok := fieldOf(v, st.key); ok {
			return value{kind: kindObject, fields: setField(v.fields, st.key, deleteAt(child, rest))}
		}
	case st.kind == stepIndex && v.kind == kindList && st.index < len(v.list):
		list := slices.Clone(v.list)
		list[st.index] = deleteAt(list[st.index], rest)
		return value{kind: kindList, list: list}
	case st.kind == stepEach && v.kind == kindList:
		list := slices.Clone(v.list)
		for i := range list {
			list[i] = deleteAt(list[i], rest)
		}
		return value{kind: kindList, list: list}
	}
	return v
}
