package meta

import "fmt"

// Bounds on one document, checked by ParseDocument and ParseDocuments.
const (
	// MaxDocumentBytes is the largest document accepted, counted on the
	// JSON text as given (whitespace included).
	MaxDocumentBytes = 1 << 20
	// MaxDocumentDepth is the deepest nesting accepted; the document's own
	// object is level 1, and each nested object or list adds one.
	MaxDocumentDepth = 32
)

// Document is one parsed and validated metadata document: the value and its
// canonical JSON encoding. The zero Document is the empty object {}.
// Documents are immutable and safe to share between goroutines.
type Document struct {
	fields []field // sorted by key
	json   []byte  // canonical encoding of fields
}

// JSON returns the document's canonical compact encoding (see the package
// comment). The slice is shared with the Document: do not modify it.
func (d Document) JSON() []byte {
	if d.json == nil {
		return []byte("{}")
	}
	return d.json
}

// ParseDocument validates one metadata document: a JSON object following
// the document rules of the package comment. Numbers become float64.
// Errors wrap ErrInvalidDocument and name the key path or byte offset.
func ParseDocument(data []byte) (Document, error) {
	return parseDocument(data, true)
}

// ReadDocument reads a document back from storage (a log record, a
// snapshot): ParseDocument, except that integers beyond ±2^53, which
// versions before the exactness rule stored (rounded), are read as the
// float64 they were stored as instead of refused. Input from users goes
// through ParseDocument.
func ReadDocument(data []byte) (Document, error) {
	return parseDocument(data, false)
}

func parseDocument(data []byte, exact bool) (Document, error) {
	if len(data) > MaxDocumentBytes {
		return Document{}, fmt.Errorf("%w: %d bytes, more than the limit of %d", ErrInvalidDocument, len(data), MaxDocumentBytes)
	}
	d := decoder{data: data, document: true, maxDepth: MaxDocumentDepth, exact: exact}
	d.skipSpace()
	if err := d.expectObject(); err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	v, err := d.decodeRoot()
	if err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	return newDocument(v.fields), nil
}

// expectObject checks that the value starting at the current position is
// an object, naming what it is otherwise.
func (d *decoder) expectObject() error {
	if d.pos < len(d.data) && d.data[d.pos] == '{' {
		return nil
	}
	what := d.describe()
	switch {
	case d.pos >= len(d.data):
		what = "empty input"
	case d.data[d.pos] == '[':
		what = "a list"
	case d.data[d.pos] == '"':
		what = "a string"
	case d.data[d.pos] == 'n':
		what = "null"
	case d.data[d.pos] == 't' || d.data[d.pos] == 'f':
		what = "a bool"
	case d.data[d.pos] == '-' || (d.data[d.pos] >= '0' && d.data[d.pos] <= '9'):
		what = "a number"
	}
	return fmt.Errorf("a document must be a JSON object, not %s", what)
}

func newDocument(fields []field) Document {
	if len(fields) == 0 {
		return Document{}
	}
	return Document{fields: fields, json: appendFields(make([]byte, 0, 64), fields)}
}

// ParseDocuments validates a JSON list of metadata documents, one per
// vector of a batch. A null entry means "no metadata" and becomes the empty
// document. Each entry is bounded as in ParseDocument; the list as a whole
// is not. Errors wrap ErrInvalidDocument and name the entry: "metadata[3]".
func ParseDocuments(data []byte) ([]Document, error) {
	d := decoder{data: data, document: true, maxDepth: MaxDocumentDepth, exact: true}
	fail := func(format string, args ...any) ([]Document, error) {
		return nil, fmt.Errorf("%w: %s", ErrInvalidDocument, fmt.Sprintf(format, args...))
	}
	d.skipSpace()
	if d.pos >= len(d.data) || d.data[d.pos] != '[' {
		return fail("metadata must be a JSON list of objects, found %s", d.describe())
	}
	docs := []Document{}
	for more := !d.open(']'); more; {
		i := len(docs)
		d.skipSpace()
		start := d.pos
		if d.pos < len(d.data) && d.data[d.pos] == 'n' {
			if err := d.literal("null"); err != nil {
				return fail("metadata[%d]: %v", i, err)
			}
			docs = append(docs, Document{})
		} else {
			if err := d.expectObject(); err != nil {
				return fail("metadata[%d]: %v", i, err)
			}
			d.path, d.at = d.path[:0], d.at[:0]
			v, err := d.value(1)
			if err != nil {
				return fail("metadata[%d]: %v", i, err)
			}
			if n := d.pos - start; n > MaxDocumentBytes {
				return fail("metadata[%d]: %d bytes, more than the limit of %d", i, n, MaxDocumentBytes)
			}
			docs = append(docs, newDocument(v.fields))
		}
		var err error
		if more, err = d.separator(']'); err != nil {
			return fail("metadata[%d]: %v", i, err)
		}
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return fail("%v", d.syntaxErrorf("unexpected %s after the list", d.describe()))
	}
	return docs, nil
}

// parseStored reads back a document this package encoded (the index keeps
// only the canonical JSON). It is the same strict reader: stored bytes are
// never trusted more than input.
func parseStored(data []byte) ([]field, error) {
	if data == nil {
		return nil, nil // the index stores {} as nil
	}
	d := decoder{data: data, document: true, maxDepth: MaxDocumentDepth}
	d.skipSpace()
	if err := d.expectObject(); err != nil {
		return nil, err
	}
	v, err := d.decodeRoot()
	return v.fields, err
}
