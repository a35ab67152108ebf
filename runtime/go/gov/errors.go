// The errors of the package: one sentinel per kind of the C ABI's gov_status, for errors.Is.

package gov

/*
#include <gov/gov.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
)

// The kinds of error a call returns, one per gov_status of the C ABI (and gov::ErrorCode of the
// C++ API). Test with errors.Is(err, gov.ErrNotFound); errors.As(err, &e) with e *gov.Error
// gives the operation and the library's message.
var (
	// ErrInvalidArgument: a malformed argument (a trace or state that does not read, bad
	// options, loading a state into an engine that has tasks).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: no such file, store, policy, version or task.
	ErrNotFound = errors.New("not found")
	// ErrPolicy: the policy has errors; the message holds the rendered diagnostics.
	ErrPolicy = errors.New("policy error")
	// ErrStore: the store failed (corrupt, busy, newer schema, bad signature, ...).
	ErrStore = errors.New("store error")
	// ErrIO: a file could not be read.
	ErrIO = errors.New("i/o error")
	// ErrOutOfMemory: the library ran out of memory; the message says doing what.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrInternal: a bug in gov.
	ErrInternal = errors.New("internal error")
	// ErrReentrant: a call from the engine's own step callback (the package makes none).
	ErrReentrant = errors.New("reentrant call")
	// ErrLimit: a documented bound was reached (Options.MaxTasks live tasks); nothing changed.
	ErrLimit = errors.New("limit reached")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("engine closed")
)

// Error is what a failing call returns: the operation, the kind (one of the Err* values, which
// errors.Is matches) and the library's message.
type Error struct {
	Op      string // the method: "Open", "Submit", "LoadState", ...
	Kind    error  // ErrInvalidArgument, ErrNotFound, ...
	Message string // the library's message (lower-case, one line, or a policy's diagnostics)
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("gov: %s: %v", e.Op, e.Kind)
	}
	return fmt.Sprintf("gov: %s: %s", e.Op, e.Message)
}

// Unwrap returns the kind, so errors.Is(err, gov.ErrNotFound) works.
func (e *Error) Unwrap() error { return e.Kind }

var kinds = map[C.gov_status]error{
	C.GOV_ERROR_INVALID_ARGUMENT: ErrInvalidArgument,
	C.GOV_ERROR_NOT_FOUND:        ErrNotFound,
	C.GOV_ERROR_POLICY:           ErrPolicy,
	C.GOV_ERROR_STORE:            ErrStore,
	C.GOV_ERROR_IO:               ErrIO,
	C.GOV_ERROR_OUT_OF_MEMORY:    ErrOutOfMemory,
	C.GOV_ERROR_INTERNAL:         ErrInternal,
	C.GOV_ERROR_REENTRANT:        ErrReentrant,
	C.GOV_ERROR_LIMIT:            ErrLimit,
}

// call runs one C ABI call and turns a failed status into an *Error holding the message. The
// message is thread-local in the library, so the goroutine stays on its thread from the call
// until the message is read.
func call(op string, f func() C.gov_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.GOV_OK {
		return nil
	}
	kind, ok := kinds[status]
	if !ok {
		kind = fmt.Errorf("%w (status %d)", ErrInternal, int(status))
	}
	return &Error{Op: op, Kind: kind, Message: C.GoString(C.gov_last_error())}
}
