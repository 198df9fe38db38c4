package crashtest

import "errors"

var (
	// ErrLost marks an acknowledged write missing (or wrong) after recovery.
	ErrLost = errors.New("crashtest: acknowledged write lost")
	// ErrPhantom marks state that no attempted write can explain: an id
	// never written, a vector or document from nowhere, half of a batch.
	ErrPhantom = errors.New("crashtest: state no attempted write explains")
	// ErrRecall marks an index whose answers fall short of a fresh build.
	ErrRecall = errors.New("crashtest: recall below a fresh build")
	// ErrWorkload marks a workload process that failed instead of dying
	// by SIGKILL (an error from the collection, or recovery refusing).
	ErrWorkload = errors.New("crashtest: workload failed")
	// ErrJournal marks an unreadable side-channel journal.
	ErrJournal = errors.New("crashtest: bad journal")
)
