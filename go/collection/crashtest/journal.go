package crashtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kinds of journaled operations.
const (
	KindUpsert      byte = 'u'
	KindSetMeta     byte = 'm'
	KindDelete      byte = 'd'
	KindDeleteWhere byte = 'w' // delete the worker's ids whose document has g < Arg
	KindCheckpoint  byte = 'c'
	// The multi-field workload's partial writes (Workload.Fields): an
	// UpdateVectors of existing ids (Arg: bit 1 the field "", bit 2
	// ExtraField, bit 4 SparseField, any of them) and a DeleteVectors
	// (Arg: 0 ExtraField, 1 SparseField).
	KindUpdateVectors byte = 'v'
	KindDeleteVectors byte = 'x'
)

// Op is one write the workload attempted.
type Op struct {
	ID     uint64 // unique across a chain; seeds the vectors and documents written
	Worker int    // -1 for checkpoints
	Kind   byte
	Arg    int
	IDs    []uint64
}

// Event is one journal line: an attempt (Op set) or an acknowledgement.
type Event struct {
	Attempt *Op
	Acked   uint64 // op id, when Attempt is nil
	At      time.Time
}

// Journal is the side channel: every op is recorded as attempted before it
// is submitted and as acknowledged after it returned without error. With a
// file, each line is written (and fsynced when SyncFile) before the op
// goes on, so a SIGKILL cannot make the journal claim less than happened.
type Journal struct {
	mu       sync.Mutex
	events   []Event
	file     *os.File
	syncFile bool
	buf      []byte
}

// NewJournal journals in memory and, if path is not empty, appends to path.
func NewJournal(path string, syncFile bool) (*Journal, error) {
	j := &Journal{syncFile: syncFile}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("crashtest: journal: %w", err)
		}
		j.file = f
	}
	return j, nil
}

// Attempt records op before it is submitted.
func (j *Journal) Attempt(op Op) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, Event{Attempt: &op, At: time.Now()})
	if j.file == nil {
		return nil
	}
	b := fmt.Appendf(j.buf[:0], "a %d %d %c %d ", op.ID, op.Worker, op.Kind, op.Arg)
	for i, id := range op.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, id, 10)
	}
	j.buf = append(b, '\n')
	return j.write()
}

// Ack records that op id returned without error.
func (j *Journal) Ack(id uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, Event{Acked: id, At: time.Now()})
	if j.file == nil {
		return nil
	}
	j.buf = fmt.Appendf(j.buf[:0], "k %d\n", id)
	return j.write()
}

func (j *Journal) write() error {
	if _, err := j.file.Write(j.buf); err != nil {
		return fmt.Errorf("crashtest: journal: %w", err)
	}
	if j.syncFile {
		if err := j.file.Sync(); err != nil {
			return fmt.Errorf("crashtest: journal: %w", err)
		}
	}
	return nil
}

// Events returns the events so far (a copy of the list, sharing ops).
func (j *Journal) Events() []Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events...)
}

// Close closes the journal file.
func (j *Journal) Close() error {
	if j.file == nil {
		return nil
	}
	return j.file.Close()
}

// ReadJournal parses a journal file. A last line without its newline (cut
// by the kill) is ignored: the op it would have recorded had not started.
func ReadJournal(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournal, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 != len(data) {
		data = data[:i+1]
	}
	var events []Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		ev, err := parseEvent(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrJournal, path, line, err)
		}
		events = append(events, ev)
	}
	return events, sc.Err()
}

func parseEvent(s string) (Event, error) {
	f := strings.Fields(s)
	switch {
	case len(f) == 2 && f[0] == "k":
		id, err := strconv.ParseUint(f[1], 10, 64)
		return Event{Acked: id}, err
	case (len(f) == 5 || len(f) == 6) && f[0] == "a" && len(f[3]) == 1:
		var op Op
		var err [3]error
		op.ID, err[0] = strconv.ParseUint(f[1], 10, 64)
		op.Worker, err[1] = strconv.Atoi(f[2])
		op.Kind = f[3][0]
		op.Arg, err[2] = strconv.Atoi(f[4])
		for _, e := range err {
			if e != nil {
				return Event{}, e
			}
		}
		if len(f) == 6 {
			for _, s := range strings.Split(f[5], ",") {
				id, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return Event{}, err
				}
				op.IDs = append(op.IDs, id)
			}
		}
		return Event{Attempt: &op}, nil
	}
	return Event{}, fmt.Errorf("cannot parse %q", s)
}
